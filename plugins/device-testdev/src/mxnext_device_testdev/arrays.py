"""testdev's arrays: numpy memory that keeps a GPU array library's host boundary, so code
that would fail on cupy fails here too, on any machine.

``DeviceArray`` (a numpy subclass) refuses what cupy refuses: mixing with host numpy arrays
in one operation (``TypeError``, cupy's "Unsupported type numpy.ndarray"), assigning a host
array into it (``d[...] = host``) or filling with one (``ValueError``), and ``.ctypes``
(cupy arrays have none). ``namespace(numpy)`` is the device's ``xp``: numpy's functions
handing out ``DeviceArray``s, with ``asarray``/``array`` as the only ways in from the host
and ``asnumpy`` (cupy's) the way out.
Not caught: ``numpy.asarray(device_array)`` (numpy takes its subclasses without asking).

What cupy allows but pays for with a wait for the device, turning a device value into a
host one (``int(a)``, ``float``, ``bool``, ``a.item()``, ``a.tolist()``), works and is
counted in ``host_reads``: a kernel doing so stalls the pushing thread on a GPU.
"""

from __future__ import annotations

import threading
import types

import numpy

__all__ = ["DeviceArray", "XP", "namespace", "device_array", "host_reads"]

_FROM_HOST = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})
_inside = threading.local()     # in a numpy function: its own calls are not the caller's


def _host(x) -> bool:
    return type(x) is numpy.ndarray and x.ndim > 0


def _refuse_host(what, items) -> None:
    for x in items:
        if _host(x) or (isinstance(x, (list, tuple)) and any(_host(y) for y in x)):
            raise TypeError(f"testdev: {what}: Unsupported type numpy.ndarray (a host array "
                            f"mixed with device arrays; copy it with xp.asarray first)")


def device_array(x):
    """``x`` (and arrays inside tuples, lists) as ``DeviceArray`` views; numpy scalars as
    0-d ones (cupy's reductions give 0-d arrays)."""
    if type(x) is numpy.ndarray:
        return x.view(DeviceArray)
    if isinstance(x, numpy.generic):
        return numpy.asarray(x).view(DeviceArray)
    if isinstance(x, (tuple, list)):
        items = [device_array(y) for y in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    return x


def _outermost(what, items, call):
    """``call()``, refusing host arrays in ``items`` unless already inside a numpy call."""
    if getattr(_inside, "on", False):
        return call()
    _refuse_host(what, items)
    _inside.on = True
    try:
        return call()
    finally:
        _inside.on = False


def _base(x):
    return x.view(numpy.ndarray) if isinstance(x, DeviceArray) else x


class _Reads:
    """Device values read on the host (``DeviceArray`` conversions), across threads."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def add(self):
        with self.lock:
            self.count += 1


host_reads = _Reads()


def _read(name):
    def method(self, *args):
        if not getattr(_inside, "on", False):
            host_reads.add()
        return getattr(numpy.ndarray, name)(_base(self), *args)
    method.__name__ = name
    return method


class DeviceArray(numpy.ndarray):
    __int__, __float__, __bool__, __index__ = (_read(n) for n in (
        "__int__", "__float__", "__bool__", "__index__"))
    item, tolist = _read("item"), _read("tolist")

    @property
    def ctypes(self):
        raise AttributeError("'DeviceArray' object has no attribute 'ctypes' (testdev "
                             "arrays are device memory, as cupy's)")

    def fill(self, value):
        if isinstance(value, numpy.ndarray) and value.ndim > 0:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        super().fill(value)

    def __getitem__(self, key):           # an element is a 0-d device array, as cupy's
        r = super().__getitem__(key)
        return numpy.asarray(r).view(DeviceArray) if isinstance(r, numpy.generic) else r

    def __setitem__(self, key, value):
        if _host(value):
            raise ValueError("testdev: assigning a host numpy.ndarray into a device array "
                             "(copy it onto the device first)")
        super().__setitem__(key, value)

    def __array_namespace__(self, api_version=None):
        return XP

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out", ())
        if out:
            kwargs["out"] = tuple(_base(o) for o in out)
        result = _outermost(f"numpy.{ufunc.__name__}", inputs + tuple(out), lambda: getattr(
            ufunc, method)(*(_base(i) for i in inputs), **kwargs))
        if out:
            return out[0] if len(out) == 1 else out
        return device_array(result)

    def __array_function__(self, func, types_, args, kwargs):
        return device_array(_outermost(
            f"numpy.{func.__name__}", tuple(args) + tuple(kwargs.values()),
            lambda: super(DeviceArray, self).__array_function__(func, types_, args, kwargs)))


class namespace:
    """``module`` (numpy, or one of its submodules or objects such as a ``Generator``) with
    its functions handing out ``DeviceArray``s and refusing host arrays (but ``asarray``)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name == "asnumpy" and self._module is numpy:
            return _asnumpy
        v = getattr(self._module, name)
        if isinstance(v, types.ModuleType) or isinstance(v, numpy.random.Generator):
            return namespace(v)
        if not callable(v) or isinstance(v, (type, numpy.ufunc)):
            return v                    # dtypes, constants; ufuncs dispatch on their own

        def call(*args, **kwargs):
            items = () if name in _FROM_HOST else tuple(args) + tuple(kwargs.values())
            r = _outermost(f"xp.{name}", items, lambda: v(*args, **kwargs))
            if isinstance(r, numpy.random.Generator):
                return namespace(r)
            return device_array(r)
        return call

    def __repr__(self):
        return f"<testdev namespace over {getattr(self._module, '__name__', self._module)}>"


def _asnumpy(x):
    """cupy's ``asnumpy``: a host copy of a device array, counted in ``host_reads`` as
    ``tolist`` is (it waits for the device)."""
    if isinstance(x, DeviceArray):
        host_reads.add()
        return numpy.array(_base(x))
    return numpy.asarray(x)


XP = namespace(numpy)         # testdev's ``xp``
