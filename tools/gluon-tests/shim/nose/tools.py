"""``raises``, ``assert_raises`` and ``make_decorator`` as nose 1.3 defines them."""
import functools
import unittest

assert_raises = unittest.TestCase("__init__").assertRaises


def make_decorator(func):
    """Give the wrapping test the wrapped test's name, docs and attributes."""
    def decorate(newfunc):
        newfunc = functools.wraps(func)(newfunc)
        newfunc.compat_func_name = func.__name__
        return newfunc
    return decorate


def raises(*exceptions):
    """The test passes only if it raises one of ``exceptions``."""
    def decorate(func):
        @make_decorator(func)
        def newfunc(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except exceptions:
                return
            names = " or ".join(e.__name__ for e in exceptions)
            raise AssertionError("%s() did not raise %s" % (func.__name__, names))
        return newfunc
    return decorate
