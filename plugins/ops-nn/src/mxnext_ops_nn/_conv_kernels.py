"""N-d (1-3 spatial dims) grouped convolution arithmetic on channels-first arrays, shared by
Convolution, Deconvolution and bilinear UpSampling.

Every product is one BLAS GEMM per group over a column matrix. The batch is processed in
chunks of a few items, sized so that a chunk's padded input, columns and GEMM output stay
in cache, in scratch memory reused across chunks and calls (the op's TEMP_SPACE resource):

* the chunk is copied into a zero-bordered buffer laid out channels-major (C, m, *S), so
  the columns of every channel are one strided view of it, copied once to
  (groups, C/groups * K, m * Q) (K kernel taps, Q positions per item);
* for stride 1 the positions are the *flat* padded grid (first spatial axis exact, the
  others padded): each kernel tap is then a constant offset into the flattened buffer and
  the column copy moves long contiguous rows; the few positions outside the image are
  computed and dropped. Strided convolutions, and those whose padded rows are much wider
  than their output rows, take the exact output grid instead;
* ``W (F/g, C/g*K) @ columns`` gives (F, m, *grid), written into the output with the crop,
  the transpose back to (m, F, *O), the bias and the request (write/add) in one pass.

The data gradient of a stride-1 convolution is such a convolution again (of the padded
output gradient with the flipped, transposed weight) unless the data has few channels;
other ones multiply by the transposed weight and add the column gradient back with one
strided add per kernel tap.
No Python loop runs over pixels or single batch items.
"""

from __future__ import annotations

from itertools import product
from math import prod

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ._layer_rules import compute_dtype

CHUNK_BYTES = 6 << 20     # scratch per batch chunk: the chunk's working set stays in cache
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


def out_size(n, k, stride, dilate):
    """Output positions along one padded axis of length ``n``."""
    return (n - (k - 1) * dilate - 1) // stride + 1


def _everything(n):
    return (slice(None),) * n


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


class _Grid:
    """Where the GEMM of one chunk computes: positions per item and the crop to the output.

    ``flat`` (all strides 1, little padding beyond the output): the grid is (O0, *S1..) of
    the padded input, a tap is a flat offset; else the exact output grid."""

    def __init__(self, padded, kernel, stride, dilate):
        self.kernel, self.stride, self.dilate = tuple(kernel), tuple(stride), tuple(dilate)
        self.padded = tuple(padded)
        self.out = tuple(out_size(s, k, st, d) for s, k, st, d in
                         zip(padded, kernel, stride, dilate))
        # the flat grid computes prod(padded[1:]) positions per output row of prod(out[1:])
        self.flat = all(s == 1 for s in stride) and \
            prod(self.padded[1:]) <= 1.15 * prod(self.out[1:])
        self.grid = (self.out[0],) + self.padded[1:] if self.flat else self.out
        self.q = prod(self.grid)
        # how far the last item's flat taps reach past its plane (kept readable)
        self.slack = sum((k - 1) * d * prod(self.padded[i + 1:]) for i, (k, d) in
                         enumerate(zip(self.kernel, self.dilate)) if i) if self.flat else 0

    def crop(self, a):
        """The output part of a (..., *grid) array."""
        return a[(Ellipsis,) + tuple(slice(0, o) for o in self.out)] if self.flat else a

    def columns(self, pbuf, m, c, dst):
        """Copy the columns of ``pbuf`` (C, M, *padded; first ``m`` items used) into ``dst``
        (C, *kernel, m, *grid)."""
        it = pbuf.itemsize
        sc, sm = pbuf.strides[:2]
        sp = pbuf.strides[2:]
        if self.flat:
            taps = tuple(s * d for s, d in zip(sp, self.dilate))
            view = as_strided(pbuf, (c,) + self.kernel + (m, self.q),
                              (sc,) + taps + (sm, it), writeable=False)
        else:
            view = as_strided(pbuf, (c,) + self.kernel + (m,) + self.out,
                              (sc,) + tuple(s * d for s, d in zip(sp, self.dilate)) + (sm,)
                              + tuple(s * st for s, st in zip(sp, self.stride)),
                              writeable=False)
        np.copyto(dst.reshape(view.shape), view)


def _chunk(n, per_item):
    return max(1, min(n, CHUNK_BYTES // max(per_item, 1)))


def _padded_buffer(scratch, c, m, padded, slack):
    """Zeroed (C, m, *padded) buffer followed by ``slack`` readable zeros."""
    flat = scratch.take((c * m * prod(padded) + slack,))
    flat[...] = 0
    return flat[:c * m * prod(padded)].reshape((c, m) + padded)


def fill_padded(pbuf, x, lo, hi, i, j):
    """Copy items ``i:j`` of ``x`` (N, C, *S) into the interior of ``pbuf`` (C, m, *padded),
    cropping where a pad is negative."""
    src = x[(slice(i, j), slice(None)) + tuple(slice(max(-a, 0), n - max(-b, 0))
                                               for a, b, n in zip(lo, hi, x.shape[2:]))]
    dst = pbuf[(slice(None), slice(0, j - i))
               + tuple(slice(max(a, 0), max(a, 0) + s) for a, s in zip(lo, src.shape[2:]))]
    np.copyto(dst, src.swapaxes(0, 1), casting="unsafe")


def _geometry(x_shape, kernel, stride, dilate, lo, hi):
    padded = tuple(s + a + b for s, a, b in zip(x_shape[2:], lo, hi))
    return _Grid(padded, kernel, stride, dilate)


def conv_forward(x, w, stride, dilate, lo, hi, groups, out, req, get_space, bias=None):
    """``out`` (N, F, *O) <- grouped cross-correlation of ``x`` (N, C, *S), zero-padded by
    ``lo``/``hi`` per side (negative: cropped), with ``w`` (F, C/groups, *k), plus ``bias``;
    ``req`` 1/2 writes, 3 adds. ``get_space(shape, dtype)`` supplies scratch memory."""
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    if _winograd.applies(kernel, stride, dilate, groups, c, out.shape[2:]):
        _winograd.forward(x, w, lo, hi, out, req, get_space, bias)
        return
    dt = compute_dtype(w.dtype)
    g = _geometry(x.shape, kernel, stride, dilate, lo, hi)
    k = prod(kernel)
    per_item = dt.itemsize * (c * prod(g.padded) + (c * k + f) * g.q)
    m = _chunk(n, per_item)
    s = Scratch(get_space, [(c * m * prod(g.padded) + g.slack,), (c * k * m * g.q,),
                            (f * m * g.q,)], dt)
    pbuf = _padded_buffer(s, c, m, g.padded, g.slack)
    cols = s.take((c * k * m * g.q,))
    y = s.take((f * m * g.q,))
    wm = w.astype(dt, copy=False).reshape(groups, f // groups, -1)
    for i in range(0, n, m):
        j = min(n, i + m)
        fill_padded(pbuf, x, lo, hi, i, j)
        cm = cols[:c * k * (j - i) * g.q]
        g.columns(pbuf, j - i, c, cm)
        ym = y[:f * (j - i) * g.q].reshape(groups, f // groups, -1)
        np.matmul(wm, cm.reshape(groups, (c // groups) * k, -1), out=ym)
        res = g.crop(ym.reshape((f, j - i) + g.grid)).swapaxes(0, 1)
        write(out[i:j], res, req, bias)


def flipped_transpose(w, groups):
    """The weight of the data-gradient convolution: (C, F/groups, *k), spatially flipped."""
    f, cg = w.shape[:2]
    k = w.shape[2:]
    wt = w.reshape((groups, f // groups, cg) + k).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(k)]
    return wt.reshape((groups * cg, f // groups) + k)


def conv_data_grad(gy, w, stride, dilate, pad, groups, out, req, get_space):
    """``out`` (N, C, *S) <- gradient of the convolution (symmetric ``pad``) wrt its data,
    for the output gradient ``gy`` (N, F, *O)."""
    kernel = w.shape[2:]
    sx = out.shape[2:]
    # stride 1: the correlation moves F*K*prod(sx) column values, col2im's adds C*K*P
    # (slower per element); the first wins for wide inputs, the second for few channels
    if all(s == 1 for s in stride) and \
            gy.shape[1] * prod(sx) <= 2 * out.shape[1] * prod(gy.shape[2:]):
        # x[i] = sum_t gy[i + pad - t*d] w[t]: a correlation of the padded gy with flipped w
        ext = tuple((k - 1) * d for k, d in zip(kernel, dilate))
        lo = tuple(e - p for e, p in zip(ext, pad))
        hi = tuple(s + e - o - a for s, e, o, a in zip(sx, ext, gy.shape[2:], lo))
        conv_forward(gy, flipped_transpose(w, groups), stride, dilate, lo, hi, groups, out, req,
                     get_space)
        return
    _col2im_data_grad(gy, w, stride, dilate, pad, groups, out, req, get_space)


def _col2im_data_grad(gy, w, stride, dilate, pad, groups, out, req, get_space):
    """Data gradient as ``W^T @ gy`` scattered back per kernel tap. For stride 1 the head
    is laid on the flat padded grid (zeros past the output), so each tap adds long rows at a
    constant flat offset; strided taps add strided blocks."""
    n, f = gy.shape[:2]
    c, kernel, osz = out.shape[1], tuple(w.shape[2:]), gy.shape[2:]
    dt = compute_dtype(w.dtype)
    padded = tuple(s + 2 * p for s, p in zip(out.shape[2:], pad))
    flat = all(s == 1 for s in stride)
    grid = (osz[0],) + padded[1:] if flat else osz
    k, q, plane = prod(kernel), prod(grid), prod(padded)
    rows = [prod(padded[i + 1:]) for i in range(len(padded))]       # flat step of each axis
    slack = sum((kk - 1) * d * r for kk, d, r in zip(kernel[1:], dilate[1:], rows[1:])) \
        if flat else 0
    m = _chunk(n, dt.itemsize * (f * q + c * k * q + c * plane))
    s = Scratch(get_space, [(f * m * q,), (c * k * m * q,), (c * m * plane + slack,)], dt)
    gbuf, dcols, dxp = s.take((f * m * q,)), s.take((c * k * m * q,)), \
        s.take((c * m * plane + slack,))
    wt = w.astype(dt, copy=False).reshape(groups, f // groups, -1).swapaxes(1, 2)
    inner = tuple(slice(p, p + sz) for p, sz in zip(pad, out.shape[2:]))
    for i in range(0, n, m):
        j = min(n, i + m)
        gm = gbuf[:f * (j - i) * q].reshape((f, j - i) + grid)
        if flat and (i == 0 or j - i < m):
            gm[...] = 0                     # grid positions past the output stay zero
        np.copyto(gm[_everything(2) + tuple(slice(0, o) for o in osz)],
                  gy[i:j].swapaxes(0, 1), casting="unsafe")
        dm = dcols[:c * k * (j - i) * q].reshape(groups, (c // groups) * k, -1)
        np.matmul(wt, gm.reshape(groups, f // groups, -1), out=dm)
        xflat = dxp[:c * (j - i) * plane + slack]
        xflat[...] = 0
        xm = xflat[:c * (j - i) * plane].reshape((c, j - i) + padded)
        if flat:
            taps = dm.reshape((c,) + kernel + (j - i, q))
            for t in product(*(range(kk) for kk in kernel)):
                at = sum(ti * d * r for ti, d, r in zip(t, dilate, rows))
                dst = as_strided(xflat[at:], (c, j - i, q), xm.strides[:2] + (xm.itemsize,))
                dst += taps[(slice(None),) + t]
        else:
            col2im(xm, dm.reshape((c,) + kernel + (j - i,) + osz), kernel, stride, dilate, osz)
        write(out[i:j], xm[_everything(2) + inner].swapaxes(0, 1), req)


def col2im(dxp, dcols, kernel, stride, dilate, osz):
    """``dxp[c, m, o*s + t*d] += dcols[c, t, m, o]``: one strided add per kernel tap."""
    for t in product(*(range(k) for k in kernel)):
        dst = tuple(slice(ti * d, ti * d + s * (o - 1) + 1, s)
                    for ti, d, s, o in zip(t, dilate, stride, osz))
        dxp[_everything(2) + dst] += dcols[(slice(None),) + t]


def conv_weight_grad(gy, x, w_shape, stride, dilate, pad, groups, get_space):
    """Gradient (shape ``w_shape``, compute dtype) of the convolution (symmetric ``pad``)
    wrt its weight, for the output gradient ``gy``."""
    n, c = x.shape[:2]
    f, kernel = w_shape[0], tuple(w_shape[2:])
    if _winograd.applies(kernel, stride, dilate, groups, c, gy.shape[2:]):
        return _winograd.weight_grad(gy, x, pad, get_space)
    dt = compute_dtype(gy.dtype)
    g = _geometry(x.shape, kernel, stride, dilate, pad, pad)
    k = prod(kernel)
    m = _chunk(n, dt.itemsize * (c * prod(g.padded) + (c * k + f) * g.q))
    s = Scratch(get_space, [(c * m * prod(g.padded) + g.slack,), (c * k * m * g.q,),
                            (f * m * g.q,)], dt)
    pbuf = _padded_buffer(s, c, m, g.padded, g.slack)
    cols = s.take((c * k * m * g.q,))
    gflat = s.take((f * m * g.q,))
    gw = np.zeros((groups, f // groups, (c // groups) * k), dt)
    for i in range(0, n, m):
        j = min(n, i + m)
        fill_padded(pbuf, x, pad, pad, i, j)
        cm = cols[:c * k * (j - i) * g.q]
        g.columns(pbuf, j - i, c, cm)
        gm = gflat[:f * (j - i) * g.q]
        if i == 0 or j - i < m:
            gm[...] = 0                     # grid positions outside the output stay zero
        np.copyto(g.crop(gm.reshape((f, j - i) + g.grid)), gy[i:j].swapaxes(0, 1),
                  casting="unsafe")
        gw += np.matmul(gm.reshape(groups, f // groups, -1),
                        cm.reshape(groups, (c // groups) * k, -1).swapaxes(1, 2))
    return gw.reshape(w_shape)


from . import _winograd  # noqa: E402  (it builds on this module, so it comes last)
