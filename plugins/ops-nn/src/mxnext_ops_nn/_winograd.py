"""Winograd F(4x4, 3x3) for 2-D 3x3 convolutions with stride 1, no dilation, one group: the
output in 4x4 tiles, each from a 6x6 input tile, with 36 GEMMs of (F, C) x (C, tiles)
instead of im2col's 9 taps per output: 4x fewer multiplications (Lavin & Gray, 2015).

Per batch chunk (sized for cache, in reusable scratch): the zero-bordered input as
(C, m, H', W'); its 6x6 tiles (one strided view) copied to (6, 6, C, tiles); the input
transform B^T d B as two small GEMMs (rows, then columns); the 36 GEMMs with the
transformed weight G g G^T; the output transform A^T M A as two small GEMMs; the 4x4 tiles
written into the output with the request, the bias and the crop. The weight gradient
reuses the input transform and transforms the output gradient tiles with A.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _conv_kernels as kern
from ._layer_rules import compute_dtype

BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64)
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64)
AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
               [0, 1, -1, 8, -8, 1]], np.float64)
GG = np.kron(G, G)          # (36, 9): vec(G g G^T) = GG vec(g)
TILE_BYTES = 3 << 20        # scratch per batch chunk


def applies(kernel, stride, dilate, groups, channels, out):
    """3x3, stride 1, no dilation, one group; measured faster than im2col from 8 input
    channels and an 8x8 output on (with fewer tiles per image the GEMMs get too thin)."""
    return (tuple(kernel) == (3, 3) and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1)
            and groups == 1 and channels >= 8 and min(out) >= 8)


class _Plan:
    """Tile geometry of one call: data (N, C, H, W) padded by lo/hi, F output channels."""

    def __init__(self, shape, f, lo, hi, dtype):
        n, c, h, w = shape
        self.n, self.c, self.f, self.dt = n, c, f, dtype
        self.out = (h + lo[0] + hi[0] - 2, w + lo[1] + hi[1] - 2)
        self.th, self.tw = -(-self.out[0] // 4), -(-self.out[1] // 4)
        self.padded = (4 * self.th + 2, 4 * self.tw + 2)
        per_item = 36 * (3 * c + 2 * f) * self.th * self.tw + c * self.padded[0] * self.padded[1]
        self.m = max(1, min(n, TILE_BYTES // (per_item * dtype.itemsize)))
        self.lo, self.hi = lo, hi

    def scratch(self, get_space, extra=()):
        t = self.m * self.th * self.tw
        c, f = self.c, self.f
        shapes = [(c * self.m * self.padded[0] * self.padded[1],), (36 * c * t,), (36 * c * t,),
                  (36 * c * t,), (36 * f * t,), (24 * f * t,), (16 * f * t,)] + list(extra)
        s = kern.Scratch(get_space, shapes, self.dt)
        pbuf = s.take(shapes[0])
        pbuf[...] = 0
        return s, pbuf.reshape((c, self.m) + self.padded)

    def transformed_input(self, s_bufs, pbuf, x, i, j):
        """V (36, C, T) of items i:j of ``x``."""
        d_buf, v1_buf, v_buf = s_bufs
        m, c = j - i, self.c
        src = kern.crop_input(x, self.lo, self.hi, i, j)
        np.copyto(pbuf[(slice(None), slice(0, m)) + tuple(
            slice(max(a, 0), max(a, 0) + n) for a, n in zip(self.lo, src.shape[2:]))],
            src.swapaxes(0, 1), casting="unsafe")
        st = pbuf.strides
        tiles = as_strided(pbuf, (6, 6, c, m, self.th, self.tw),
                           (st[2], st[3], st[0], st[1], 4 * st[2], 4 * st[3]), writeable=False)
        size = 36 * c * m * self.th * self.tw
        d = d_buf[:size].reshape(tiles.shape)
        np.copyto(d, tiles)
        bt = BT.astype(self.dt)
        v1 = v1_buf[:size].reshape(6, -1)
        np.matmul(bt, d.reshape(6, -1), out=v1)                       # rows: B^T d
        v = v_buf[:size].reshape(6, 6, -1)
        np.matmul(bt, v1.reshape(6, 6, -1), out=v)                    # columns: (.) B
        return v.reshape(36, c, -1)


def forward(x, w, lo, hi, out, req, get_space, bias=None):
    """``out`` (N, F, Ho, Wo) <- the 3x3 cross-correlation of ``x`` (zero-padded by lo/hi
    per side, negative: cropped) with ``w`` (F, C, 3, 3), plus ``bias``."""
    dt = compute_dtype(w.dtype)
    p = _Plan(x.shape, w.shape[0], lo, hi, dt)
    f, c = p.f, p.c
    u = (GG @ w.transpose(2, 3, 0, 1).reshape(9, f * c)).reshape(36, f, c).astype(dt)
    at = AT.astype(dt)
    exact = p.out == (4 * p.th, 4 * p.tw) and out.flags.c_contiguous
    extra = [] if exact else [(p.m * f * 16 * p.th * p.tw,)]
    s, pbuf = p.scratch(get_space, extra)
    bufs = [s.take((36 * c * p.m * p.th * p.tw,)) for _ in range(3)]
    m_buf, y1_buf, y_buf = (s.take((k * f * p.m * p.th * p.tw,)) for k in (36, 24, 16))
    full_buf = None if exact else s.take(extra[0])
    for i in range(0, p.n, p.m):
        j = min(p.n, i + p.m)
        t = (j - i) * p.th * p.tw
        v = p.transformed_input(bufs, pbuf, x, i, j)
        mm = m_buf[:36 * f * t].reshape(36, f, t)
        np.matmul(u, v, out=mm)
        y1 = y1_buf[:24 * f * t].reshape(4, -1)
        np.matmul(at, mm.reshape(6, -1), out=y1)                      # rows: A^T M
        y = y_buf[:16 * f * t].reshape(4, 4, -1)
        np.matmul(at, y1.reshape(4, 6, -1), out=y)                     # columns: (.) A
        tiles = y.reshape(4, 4, f, j - i, p.th, p.tw).transpose(3, 2, 4, 0, 5, 1)
        if exact:
            kern.write(out[i:j].reshape(tiles.shape), tiles, req, bias)
        else:
            full = full_buf[:tiles.size].reshape(tiles.shape)
            np.copyto(full, tiles)
            full = full.reshape(j - i, f, 4 * p.th, 4 * p.tw)[:, :, :p.out[0], :p.out[1]]
            kern.write(out[i:j], full, req, bias)


def weight_grad(gy, x, pad, get_space):
    """Gradient (F, C, 3, 3) of ``forward`` (symmetric ``pad``) wrt the weight, for the
    output gradient ``gy``."""
    dt = compute_dtype(gy.dtype)
    f = gy.shape[1]
    p = _Plan(x.shape, f, pad, pad, dt)
    c = p.c
    q_shape = (f, p.m, 4 * p.th, 4 * p.tw)
    s, pbuf = p.scratch(get_space, [(f * p.m * 16 * p.th * p.tw,)])
    bufs = [s.take((36 * c * p.m * p.th * p.tw,)) for _ in range(3)]
    m_buf, y1_buf, y_buf = (s.take((k * f * p.m * p.th * p.tw,)) for k in (36, 24, 16))
    qbuf = s.take((f * p.m * 16 * p.th * p.tw,)).reshape(q_shape)
    qbuf[...] = 0                            # the tiles' rows/columns past the output stay 0
    a = np.ascontiguousarray(AT.T.astype(dt))
    gu = np.zeros((36, f, c), dt)
    for i in range(0, p.n, p.m):
        j = min(p.n, i + p.m)
        t = (j - i) * p.th * p.tw
        v = p.transformed_input(bufs, pbuf, x, i, j)
        np.copyto(qbuf[:, :j - i, :p.out[0], :p.out[1]], gy[i:j].swapaxes(0, 1),
                  casting="unsafe")
        g = qbuf[:, :j - i].reshape(f, j - i, p.th, 4, p.tw, 4).transpose(3, 5, 0, 1, 2, 4)
        gt = y_buf[:16 * f * t].reshape(g.shape)
        np.copyto(gt, g)
        m1 = y1_buf[:24 * f * t].reshape(6, -1)
        np.matmul(a, gt.reshape(4, -1), out=m1)                      # rows: A Y
        mm = m_buf[:36 * f * t].reshape(6, 6, -1)
        np.matmul(a, m1.reshape(6, 4, -1), out=mm)                    # columns: (.) A^T
        gu += np.matmul(mm.reshape(36, f, t), v.swapaxes(1, 2))
    gw = GG.T.astype(dt) @ gu.reshape(36, f * c)
    return gw.reshape(3, 3, f, c).transpose(2, 3, 0, 1)
