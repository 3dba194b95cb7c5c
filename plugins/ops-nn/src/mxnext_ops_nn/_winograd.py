"""Winograd F(4x4, 3x3) for 2-D 3x3 convolutions with stride 1, no dilation, one group
(Lavin & Gray, 2015): the output in 4x4 tiles, each from a 6x6 input tile, with 36 GEMMs of
(F, C) x (C, tiles) instead of im2col's 9 taps per output: 4x fewer multiplications.

Per batch chunk (sized for cache, in reusable scratch): the zero-bordered input as
(C, m, H', W'); its input tiles (one strided view) copied to (a, a, C, tiles); the input
transform B^T d B as two small GEMMs (rows, then columns); the 36 GEMMs with the
transformed weight G g G^T; the output transform A^T M A as two small GEMMs; the 4x4 tiles
written into the output with the request, the bias and the crop. The weight gradient
reuses the input transform and transforms the output gradient tiles with A.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _conv_parts as kern
from ._layer_rules import compute_dtype

class Variant:
    """One F(r x r, 3x3): input transform BT (a x a), filter transform G (a x 3), output
    transform AT (r x a), a = r + 2."""

    def __init__(self, bt, g, at):
        self.bt, self.g, self.at = (np.array(m, np.float64) for m in (bt, g, at))
        self.a, self.r = self.bt.shape[0], self.at.shape[0]
        self.gg = np.kron(self.g, self.g)           # (a*a, 9): vec(G g G^T) = gg vec(g)


F4 = Variant([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
             [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
             [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
              [0, 1, -1, 8, -8, 1]])
TILE_BYTES = 3 << 20        # scratch per batch chunk


def variant(kernel, stride, dilate, groups, channels, out):
    """The Winograd variant for a layer, or None: 3x3, stride 1, no dilation, one group,
    from 8 input channels and 8x8 outputs, where it measured faster than im2col (with fewer
    tiles per image the GEMMs get too thin and the 4x larger transformed weight outweighs
    the saving; F(2x2, 3x3) on 4x4 - 7x7 maps measured no better than im2col either)."""
    if tuple(kernel) == (3, 3) and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1) \
            and groups == 1 and channels >= 8 and min(out) >= 8:
        return F4
    return None


class _Plan:
    """Tile geometry of one call: data (N, C, H, W) padded by lo/hi, F output channels."""

    def __init__(self, v, shape, f, lo, hi, dtype):
        n, c, h, w = shape
        self.v, self.n, self.c, self.f, self.dt = v, n, c, f, dtype
        self.out = (h + lo[0] + hi[0] - 2, w + lo[1] + hi[1] - 2)
        self.th, self.tw = -(-self.out[0] // v.r), -(-self.out[1] // v.r)
        self.padded = (v.r * self.th + 2, v.r * self.tw + 2)
        aa = v.a * v.a
        per_item = aa * (3 * c + 2 * f) * self.th * self.tw + c * self.padded[0] * self.padded[1]
        self.items = max(1, min(n, TILE_BYTES // (per_item * dtype.itemsize)))
        self.lo, self.hi = lo, hi

    def tiles(self, k):
        """Scratch elements of ``k`` values per (channel, tile) of a full chunk."""
        return k * self.items * self.th * self.tw

    def scratch(self, get_space, extra=()):
        v, c, f = self.v, self.c, self.f
        aa, ra = v.a * v.a, v.r * v.a
        shapes = [(c * self.items * self.padded[0] * self.padded[1],)] \
            + [(self.tiles(aa * c),)] * 3 \
            + [(self.tiles(aa * f),), (self.tiles(ra * f),), (self.tiles(v.r * v.r * f),)] \
            + list(extra)
        s = kern.Scratch(get_space, shapes, self.dt)
        pbuf = s.take(shapes[0])
        pbuf[...] = 0
        bufs = [s.take(sh) for sh in shapes[1:7]]
        return s, pbuf.reshape((c, self.items) + self.padded), bufs

    def transformed_input(self, bufs, pbuf, x, i, j):
        """V (a*a, C, T) of items i:j of ``x``."""
        d_buf, v1_buf, v_buf = bufs
        v, m, c = self.v, j - i, self.c
        src = kern.crop_input(x, self.lo, self.hi, i, j)
        np.copyto(pbuf[(slice(None), slice(0, m)) + tuple(
            slice(max(a, 0), max(a, 0) + n) for a, n in zip(self.lo, src.shape[2:]))],
            src.swapaxes(0, 1), casting="unsafe")
        st = pbuf.strides
        tiles = as_strided(pbuf, (v.a, v.a, c, m, self.th, self.tw),
                           (st[2], st[3], st[0], st[1], v.r * st[2], v.r * st[3]),
                           writeable=False)
        size = v.a * v.a * c * m * self.th * self.tw
        d = d_buf[:size].reshape(tiles.shape)
        np.copyto(d, tiles)
        bt = v.bt.astype(self.dt)
        v1 = v1_buf[:size].reshape(v.a, -1)
        np.matmul(bt, d.reshape(v.a, -1), out=v1)                     # rows: B^T d
        out = v_buf[:size].reshape(v.a, v.a, -1)
        np.matmul(bt, v1.reshape(v.a, v.a, -1), out=out)              # columns: (.) B
        return out.reshape(v.a * v.a, c, -1)


def forward(v, x, w, lo, hi, out, req, get_space, bias=None):
    """``out`` (N, F, Ho, Wo) <- the 3x3 cross-correlation of ``x`` (zero-padded by lo/hi
    per side, negative: cropped) with ``w`` (F, C, 3, 3), plus ``bias``, by variant ``v``."""
    dt = compute_dtype(w.dtype)
    p = _Plan(v, x.shape, w.shape[0], lo, hi, dt)
    f, c, a, r = p.f, p.c, v.a, v.r
    u = (v.gg @ w.transpose(2, 3, 0, 1).reshape(9, f * c)).reshape(a * a, f, c).astype(dt)
    at = v.at.astype(dt)
    exact = p.out == (r * p.th, r * p.tw) and out.flags.c_contiguous
    extra = [] if exact else [(p.tiles(r * r * f),)]
    s, pbuf, bufs = p.scratch(get_space, extra)
    m_buf, y1_buf, y_buf = bufs[3:]
    full_buf = None if exact else s.take(extra[0])
    for i in range(0, p.n, p.items):
        j = min(p.n, i + p.items)
        t = (j - i) * p.th * p.tw
        vin = p.transformed_input(bufs[:3], pbuf, x, i, j)
        mm = m_buf[:a * a * f * t].reshape(a * a, f, t)
        np.matmul(u, vin, out=mm)
        y1 = y1_buf[:r * a * f * t].reshape(r, -1)
        np.matmul(at, mm.reshape(a, -1), out=y1)                      # rows: A^T M
        y = y_buf[:r * r * f * t].reshape(r, r, -1)
        np.matmul(at, y1.reshape(r, a, -1), out=y)                     # columns: (.) A
        tiles = y.reshape(r, r, f, j - i, p.th, p.tw).transpose(3, 2, 4, 0, 5, 1)
        if exact:
            kern.write(out[i:j].reshape(tiles.shape), tiles, req, bias)
        else:
            full = full_buf[:tiles.size].reshape(tiles.shape)
            np.copyto(full, tiles)
            full = full.reshape(j - i, f, r * p.th, r * p.tw)[:, :, :p.out[0], :p.out[1]]
            kern.write(out[i:j], full, req, bias)


def weight_grad(v, gy, x, pad, get_space):
    """Gradient (F, C, 3, 3) of ``forward`` (symmetric ``pad``) wrt the weight, for the
    output gradient ``gy``, by variant ``v``."""
    dt = compute_dtype(gy.dtype)
    f = gy.shape[1]
    p = _Plan(v, x.shape, f, pad, pad, dt)
    c, a, r = p.c, v.a, v.r
    s, pbuf, bufs = p.scratch(get_space, [(p.tiles(r * r * f),)])
    m_buf, y1_buf, y_buf = bufs[3:]
    qbuf = s.take((p.tiles(r * r * f),)).reshape(f, p.items, r * p.th, r * p.tw)
    qbuf[...] = 0                            # the tiles' rows/columns past the output stay 0
    am = np.ascontiguousarray(v.at.T.astype(dt))
    gu = np.zeros((a * a, f, c), dt)
    for i in range(0, p.n, p.items):
        j = min(p.n, i + p.items)
        t = (j - i) * p.th * p.tw
        vin = p.transformed_input(bufs[:3], pbuf, x, i, j)
        np.copyto(qbuf[:, :j - i, :p.out[0], :p.out[1]], gy[i:j].swapaxes(0, 1),
                  casting="unsafe")
        g = qbuf[:, :j - i].reshape(f, j - i, p.th, r, p.tw, r).transpose(3, 5, 0, 1, 2, 4)
        gt = y_buf[:r * r * f * t].reshape(g.shape)
        np.copyto(gt, g)
        m1 = y1_buf[:a * r * f * t].reshape(a, -1)
        np.matmul(am, gt.reshape(r, -1), out=m1)                     # rows: A Y
        mm = m_buf[:a * a * f * t].reshape(a, a, -1)
        np.matmul(am, m1.reshape(a, r, -1), out=mm)                   # columns: (.) A^T
        gu += np.matmul(mm.reshape(a * a, f, t), vin.swapaxes(1, 2))
    gw = v.gg.T.astype(dt) @ gu.reshape(a * a, f * c)
    return gw.reshape(3, 3, f, c).transpose(2, 3, 0, 1)
