"""The pieces both convolution kernels (GEMM over columns, ``_conv_kernels``; Winograd,
``_winograd``) build on: scratch memory carved from the op's TEMP_SPACE, the input cropped
by negative pads, and the result written as the request says."""

from __future__ import annotations

from math import prod

import numpy as np

_ALIGN = 64


class Scratch:
    """Scratch arrays carved from one reusable buffer: ``take(shape)`` hands out the next
    part; ``get(shape, dtype)`` supplies the buffer (a TEMP_SPACE resource's ``get_space``)."""

    def __init__(self, get, shapes, dtype):
        dtype = np.dtype(dtype)
        sizes = [(-(-prod(s) * dtype.itemsize // _ALIGN)) * _ALIGN for s in shapes]
        self._buf = get((sum(sizes) + _ALIGN,), np.uint8)
        self._dtype, self._at = dtype, (-self._buf.ctypes.data) % _ALIGN

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
    if bias is not None:
        bias = bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    if req == 3:
        np.add(out, value, out=out, casting="unsafe")
        if bias is not None:
            np.add(out, bias, out=out, casting="unsafe")
    elif bias is not None:
        np.add(value, bias, out=out, casting="unsafe")
    else:
        np.copyto(out, value, casting="unsafe")


def crop_input(x, lo, hi, i, j):
    """Items ``i:j`` of ``x`` (N, C, *S) without what a negative pad crops."""
    return x[(slice(i, j), slice(None)) + tuple(slice(max(-a, 0), n - max(-b, 0))
                                                for a, b, n in zip(lo, hi, x.shape[2:]))]
