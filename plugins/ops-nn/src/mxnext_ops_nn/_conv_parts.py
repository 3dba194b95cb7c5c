"""The pieces both convolution kernels (GEMM over columns, ``_conv_kernels``; Winograd,
``_winograd``) build on: scratch memory carved from the op's TEMP_SPACE, the input cropped
by negative pads, and the result written as the request says."""

from __future__ import annotations

from math import prod

import numpy as np

from ._layer_rules import namespace

_ALIGN = 64


def address(a) -> int:
    """The address of ``a``'s first byte, host or device (cupy's ``data.ptr``: its
    ``__cuda_array_interface__`` would synchronize the stream)."""
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def strided(a, shape, strides):
    """A view of ``a``'s memory with ``shape`` and byte ``strides`` (host or device)."""
    if isinstance(a, np.ndarray):           # numpy's own, or a subclass of it
        return np.lib.stride_tricks.as_strided(a, shape, strides, subok=True)
    return namespace(a).lib.stride_tricks.as_strided(a, shape, strides)


class Scratch:
    """Scratch arrays carved from one reusable buffer: ``take(shape)`` hands out the next
    part; ``get(shape, dtype)`` supplies the buffer (a TEMP_SPACE resource's ``get_space``)."""

    def __init__(self, get, shapes, dtype):
        dtype = np.dtype(dtype)
        sizes = [(-(-prod(s) * dtype.itemsize // _ALIGN)) * _ALIGN for s in shapes]
        self._buf = get((sum(sizes) + _ALIGN,), np.uint8)
        self._dtype, self._at = dtype, (-address(self._buf)) % _ALIGN

    def take(self, shape):
        n = prod(shape) * self._dtype.itemsize
        part = self._buf[self._at:self._at + n].view(self._dtype).reshape(shape)
        self._at += (-(-n // _ALIGN)) * _ALIGN
        return part


def own_scratch(shape, dtype):
    """A ``get`` for ``Scratch`` outside an op (tests, scripts): fresh memory."""
    return np.empty(shape, dtype)


def write(out, value, req, bias=None):
    """``out (m, F, *O) <- value`` (+ ``bias`` per channel) honouring req 1/2 (write) and
    3 (add); casts to ``out``'s dtype."""
    xp = namespace(out)
    if bias is not None:
        bias = bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    if req == 3:
        xp.add(out, value, out=out, casting="unsafe")
        if bias is not None:
            xp.add(out, bias, out=out, casting="unsafe")
    elif bias is not None:
        xp.add(value, bias, out=out, casting="unsafe")
    else:
        xp.copyto(out, value, casting="unsafe")


def crop_input(x, lo, hi, i, j):
    """Items ``i:j`` of ``x`` (N, C, *S) without what a negative pad crops."""
    return x[(slice(i, j), slice(None)) + tuple(slice(max(-a, 0), n - max(-b, 0))
                                                for a, b, n in zip(lo, hi, x.shape[2:]))]
