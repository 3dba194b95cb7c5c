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

from . import _winograd
from ._conv_parts import Scratch, crop_input, own_scratch, write  # noqa: F401  (kern.* of the ops)
from ._conv_parts import strided
from ._layer_rules import namespace
from ._layer_rules import compute_dtype

CHUNK_BYTES = 6 << 20     # scratch per batch chunk: the chunk's working set stays in cache


def out_size(n, k, stride, dilate):
    """Output positions along one padded axis of length ``n``."""
    return (n - (k - 1) * dilate - 1) // stride + 1


class _Grid:
    """Where the GEMM of one batch chunk computes and how the chunk's arrays are laid out.

    * ``flat`` (all strides 1, padded rows not much wider than the output's): positions are
      the grid (O0, *S1..) of the padded input, a kernel tap is a constant flat offset and
      the column copy moves long rows; positions outside the output are computed, dropped.
    * ``batch_last`` (short output rows): the exact output grid with the chunk's items as
      the innermost axis, so copies move rows of (row length x items).
    * otherwise the exact output grid, items outermost.
    Padded inputs are (C, m, *padded) (first ``mm`` items used), or (C, *padded, mm);
    GEMM operands and results are (rows, positions) with positions (mm, *grid) or
    (*out, mm)."""

    def __init__(self, padded, kernel, stride, dilate):
        self.kernel, self.stride, self.dilate = tuple(kernel), tuple(stride), tuple(dilate)
        self.padded = tuple(padded)
        self.out = tuple(out_size(s, k, st, d) for s, k, st, d in
                         zip(padded, kernel, stride, dilate))
        # the flat grid computes prod(padded[1:]) positions per output row of prod(out[1:])
        self.flat = all(s == 1 for s in stride) and \
            prod(self.padded[1:]) <= 1.15 * prod(self.out[1:])
        self.batch_last = not self.flat and self.out[-1] < 16
        self.grid = (self.out[0],) + self.padded[1:] if self.flat else self.out
        self.q = prod(self.grid)
        self.rows = tuple(prod(self.padded[i + 1:]) for i in range(len(self.padded)))
        # how far the last item's flat taps reach past its plane (kept readable)
        self.slack = sum((k - 1) * d * r for k, d, r in
                         zip(self.kernel[1:], self.dilate[1:], self.rows[1:])) if self.flat else 0

    def buffer_size(self, c, m):
        return c * m * prod(self.padded) + self.slack

    def padded_view(self, buf, c, m, mm):
        """The padded (C, m, *padded) or (C, *padded, mm) array of a chunk in ``buf``."""
        if self.batch_last:
            return buf[:c * prod(self.padded) * mm].reshape((c,) + self.padded + (mm,))
        return buf[:c * m * prod(self.padded)].reshape((c, m) + self.padded)

    def interior(self, view, lo, sizes, mm):
        """The (mm, C, *sizes) view of the data inside a chunk's padded array."""
        inner = tuple(slice(a, a + n) for a, n in zip(lo, sizes))
        if self.batch_last:
            return namespace(view).moveaxis(view[(slice(None),) + inner + (slice(None),)], -1, 0)
        return view[(slice(None), slice(0, mm)) + inner].swapaxes(0, 1)

    def columns(self, view, mm, c, dst):
        """Copy the columns of a chunk's padded array into ``dst`` (C, *kernel, positions)."""
        st, it = view.strides, view.itemsize
        sp = st[1:-1] if self.batch_last else st[2:]
        taps = tuple(s * d for s, d in zip(sp, self.dilate))
        steps = tuple(s * k for s, k in zip(sp, self.stride))
        if self.flat:
            shape, strides = self.kernel + (mm, self.q), taps + (st[1], it)
        elif self.batch_last:
            shape, strides = self.kernel + self.out + (mm,), taps + steps + (st[-1],)
        else:
            shape, strides = self.kernel + (mm,) + self.out, taps + (st[1],) + steps
        view = strided(view, (c,) + shape, (st[0],) + strides)
        namespace(dst).copyto(dst.reshape(view.shape), view)

    def result(self, buf, f, mm):
        """The (mm, F, *out) view of a chunk's (F, positions) buffer."""
        if self.batch_last:
            return namespace(buf).moveaxis(buf.reshape((f,) + self.out + (mm,)), -1, 0)
        a = buf.reshape((f, mm) + self.grid)
        if self.flat:
            a = a[(Ellipsis,) + tuple(slice(0, o) for o in self.out)]
        return a.swapaxes(0, 1)

    def scatter(self, view, buf, dcols, c, mm):
        """``view`` (a chunk's padded array in ``buf``) += the column gradient ``dcols``
        (C*K, positions) at every kernel tap."""
        everything = (slice(None),)
        for t in product(*(range(k) for k in self.kernel)):
            if self.flat:
                at = sum(ti * d * r for ti, d, r in zip(t, self.dilate, self.rows))
                dst = strided(buf[at:], (c, mm, self.q), view.strides[:2] + (view.itemsize,))
                dst += dcols.reshape((c,) + self.kernel + (mm, self.q))[everything + t]
                continue
            box = tuple(slice(ti * d, ti * d + s * (o - 1) + 1, s)
                        for ti, d, s, o in zip(t, self.dilate, self.stride, self.out))
            if self.batch_last:
                view[everything + box + everything] += \
                    dcols.reshape((c,) + self.kernel + self.out + (mm,))[everything + t]
            else:
                view[(slice(None), slice(0, mm)) + box] += \
                    dcols.reshape((c,) + self.kernel + (mm,) + self.out)[everything + t]


def _chunk(n, per_item):
    return max(1, min(n, CHUNK_BYTES // max(per_item, 1)))


def fill_padded(g, view, x, lo, hi, i, j):
    """Copy items ``i:j`` of ``x`` into the interior of a chunk's padded array."""
    src = crop_input(x, lo, hi, i, j)
    namespace(view).copyto(g.interior(view, tuple(max(a, 0) for a in lo), src.shape[2:], j - i),
                           src, casting="unsafe")


def _geometry(x_shape, kernel, stride, dilate, lo, hi):
    padded = tuple(s + a + b for s, a, b in zip(x_shape[2:], lo, hi))
    return _Grid(padded, kernel, stride, dilate)


def conv_forward(x, w, stride, dilate, lo, hi, groups, out, req, get_space, bias=None):
    """``out`` (N, F, *O) <- grouped cross-correlation of ``x`` (N, C, *S), zero-padded by
    ``lo``/``hi`` per side (negative: cropped), with ``w`` (F, C/groups, *k), plus ``bias``;
    ``req`` 1/2 writes, 3 adds. ``get_space(shape, dtype)`` supplies scratch memory."""
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    xp = namespace(x)
    wino = _winograd.variant(kernel, stride, dilate, groups, c, out.shape[2:]) \
        if xp is np else None       # host GEMMs sized for cache
    if wino is not None:
        _winograd.forward(wino, x, w, lo, hi, out, req, get_space, bias)
        return
    dt = compute_dtype(w.dtype)
    g = _geometry(x.shape, kernel, stride, dilate, lo, hi)
    k = prod(kernel)
    m = _chunk(n, dt.itemsize * (c * prod(g.padded) + (c * k + f) * g.q))
    s = Scratch(get_space, [(g.buffer_size(c, m),), (c * k * m * g.q,), (f * m * g.q,)], dt)
    pbuf, cols, y = s.take((g.buffer_size(c, m),)), s.take((c * k * m * g.q,)), \
        s.take((f * m * g.q,))
    wm = w.astype(dt, copy=False).reshape(groups, f // groups, -1)
    for i in range(0, n, m):
        j = min(n, i + m)
        if i == 0 or j - i < m:
            pbuf[...] = 0                   # the borders (a new layout for a short chunk)
        view = g.padded_view(pbuf, c, m, j - i)
        fill_padded(g, view, x, lo, hi, i, j)
        cm = cols[:c * k * (j - i) * g.q]
        g.columns(view, j - i, c, cm)
        ym = y[:f * (j - i) * g.q].reshape(groups, f // groups, -1)
        xp.matmul(wm, cm.reshape(groups, (c // groups) * k, -1), out=ym)
        write(out[i:j], g.result(ym, f, j - i), req, bias)


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
    """Data gradient as ``W^T @ gy`` scattered back into the padded data per kernel tap
    (along the flat grid at stride 1: zeros past the output, long rows at constant
    offsets)."""
    n, f = gy.shape[:2]
    c, kernel = out.shape[1], tuple(w.shape[2:])
    dt = compute_dtype(w.dtype)
    g = _Grid(tuple(s + 2 * p for s, p in zip(out.shape[2:], pad)), kernel, stride, dilate)
    k = prod(kernel)
    m = _chunk(n, dt.itemsize * (f * g.q + c * k * g.q + c * prod(g.padded)))
    s = Scratch(get_space, [(f * m * g.q,), (c * k * m * g.q,), (g.buffer_size(c, m),)], dt)
    gbuf, dcols, dxp = s.take((f * m * g.q,)), s.take((c * k * m * g.q,)), \
        s.take((g.buffer_size(c, m),))
    wt = w.astype(dt, copy=False).reshape(groups, f // groups, -1).swapaxes(1, 2)
    xp = namespace(gy)
    for i in range(0, n, m):
        j = min(n, i + m)
        gm = gbuf[:f * (j - i) * g.q]
        if g.flat and (i == 0 or j - i < m):
            gm[...] = 0                     # grid positions past the output stay zero
        xp.copyto(g.result(gm, f, j - i), gy[i:j], casting="unsafe")
        dm = dcols[:c * k * (j - i) * g.q].reshape(groups, (c // groups) * k, -1)
        xp.matmul(wt, gm.reshape(groups, f // groups, -1), out=dm)
        dxp[...] = 0
        view = g.padded_view(dxp, c, m, j - i)
        g.scatter(view, dxp, dm, c, j - i)
        write(out[i:j], g.interior(view, pad, out.shape[2:], j - i), req)


def conv_weight_grad(gy, x, w_shape, stride, dilate, pad, groups, get_space):
    """Gradient (shape ``w_shape``, compute dtype) of the convolution (symmetric ``pad``)
    wrt its weight, for the output gradient ``gy``."""
    n, c = x.shape[:2]
    f, kernel = w_shape[0], tuple(w_shape[2:])
    xp = namespace(x)
    wino = _winograd.variant(kernel, stride, dilate, groups, c, gy.shape[2:]) \
        if xp is np else None
    if wino is not None:
        return _winograd.weight_grad(wino, gy, x, pad, get_space)
    dt = compute_dtype(gy.dtype)
    g = _geometry(x.shape, kernel, stride, dilate, pad, pad)
    k = prod(kernel)
    m = _chunk(n, dt.itemsize * (c * prod(g.padded) + (c * k + f) * g.q))
    s = Scratch(get_space, [(g.buffer_size(c, m),), (c * k * m * g.q,), (f * m * g.q,)], dt)
    pbuf, cols, gflat = s.take((g.buffer_size(c, m),)), s.take((c * k * m * g.q,)), \
        s.take((f * m * g.q,))
    gw = xp.zeros((groups, f // groups, (c // groups) * k), dt)
    for i in range(0, n, m):
        j = min(n, i + m)
        gm = gflat[:f * (j - i) * g.q]
        if i == 0 or j - i < m:
            pbuf[...] = 0                   # borders, and grid positions past the output
            gm[...] = 0
        view = g.padded_view(pbuf, c, m, j - i)
        fill_padded(g, view, x, pad, pad, i, j)
        cm = cols[:c * k * (j - i) * g.q]
        g.columns(view, j - i, c, cm)
        xp.copyto(g.result(gm, f, j - i), gy[i:j], casting="unsafe")
        gw += xp.matmul(gm.reshape(groups, f // groups, -1),
                        cm.reshape(groups, (c // groups) * k, -1).swapaxes(1, 2))
    return gw.reshape(w_shape)

