"""MXNet's ``mx.nd.op``: every registered op by its public name (generated on first access)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from . import _op_function
    try:
        fn = _op_function(name)
    except KeyError as exc:
        raise AttributeError(f"module 'mxnext.ndarray.op' has no attribute {name!r}: {exc}") from None
    globals()[name] = fn
    return fn
