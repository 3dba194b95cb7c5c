"""Kernels of the deformable convolutions: each kernel tap of each output position reads
the data at its grid place plus a learnt offset, by bilinear interpolation; the sampled
values form im2col columns that one grouped GEMM turns into the output.

Two samplers, as MXNet 1.9 computes on cpu:

- ``clamp`` (DeformableConvolution): a point inside ``[0, size)`` on both axes interpolates
  its four neighbours; past the last row or column the last one holds (no interpolation
  along that axis, and no gradient for that coordinate); a point outside gives 0.
- ``zero`` (ModulatedDeformableConvolution): a point inside ``(-1, size)`` interpolates its
  neighbours, those outside the data reading 0 (zero padding); a point outside gives 0.

Shapes: data (N, C, H, W); offsets (N, G, K, 2, L) with K = kh*kw taps, the (dy, dx) pair
per tap and L = Ho*Wo output positions, G deformable groups of C/G channels each.
"""

from __future__ import annotations

from typing import NamedTuple


class Corner(NamedTuple):
    """One of the four neighbours of every sample point, each (N, G, K*L): its flat index
    into H*W, its interpolation weight (0 where it does not count) and that weight's
    derivatives with respect to the point's row and column."""
    index: object
    weight: object
    d_row: object
    d_col: object


def _axis(xp, pos, size, clamp):
    """Per axis: the low and high neighbour coordinates, their weights, the weights'
    derivatives along the axis, and whether the point itself is inside."""
    low = xp.floor(pos)
    frac = pos - low
    if clamp:
        edge = low >= size - 1
        frac = xp.where(edge, 0, frac)
        high, slope = xp.where(edge, low, low + 1), xp.where(edge, 0, 1).astype(pos.dtype)
        inside = (pos >= 0) & (pos < size)
    else:
        high, slope = low + 1, 1
        inside = (pos > -1) & (pos < size)
    return (low, high), (1 - frac, frac), (-slope, slope), inside


def corners(xp, rows, cols, height, width, clamp):
    """The four ``Corner``s of the sample points at ``rows`` / ``cols`` (N, G, K*L)."""
    (r_idx, r_w, r_d, r_in) = _axis(xp, rows, height, clamp)
    (c_idx, c_w, c_d, c_in) = _axis(xp, cols, width, clamp)
    inside = r_in & c_in
    out = []
    for a in (0, 1):
        for b in (0, 1):
            ok = inside & (r_idx[a] >= 0) & (r_idx[a] <= height - 1) \
                & (c_idx[b] >= 0) & (c_idx[b] <= width - 1)
            ok = ok.astype(rows.dtype)
            r = xp.clip(r_idx[a], 0, height - 1).astype(xp.intp)
            c = xp.clip(c_idx[b], 0, width - 1).astype(xp.intp)
            out.append(Corner(r * width + c, r_w[a] * c_w[b] * ok, r_d[a] * c_w[b] * ok,
                              r_w[a] * c_d[b] * ok))
    return out


def sample_points(xp, offset, kernel, out_hw, stride, dilate, pad):
    """(rows, cols), each (N, G, K*L): the tap positions on the output grid plus the
    offsets (N, G, K, 2, L)."""
    (kh, kw), (ho, wo) = kernel, out_hw
    dt = offset.dtype
    tap_r = (xp.arange(kh, dtype=dt) * dilate[0]).repeat(kw)              # (K,)
    tap_c = xp.tile(xp.arange(kw, dtype=dt) * dilate[1], kh)
    grid_r = (xp.arange(ho, dtype=dt) * stride[0] - pad[0]).repeat(wo)     # (L,)
    grid_c = xp.tile(xp.arange(wo, dtype=dt) * stride[1] - pad[1], ho)
    n, g = offset.shape[:2]
    rows = tap_r[:, None] + grid_r[None, :] + offset[:, :, :, 0, :]
    cols = tap_c[:, None] + grid_c[None, :] + offset[:, :, :, 1, :]
    return rows.reshape(n, g, -1), cols.reshape(n, g, -1)


def _gather(xp, grouped, corner):
    """The data at ``corner`` for every channel: (N, G, C/G, K*L)."""
    return xp.take_along_axis(grouped, corner.index[:, :, None, :], axis=3)


def columns(xp, data, plan):
    """Bilinear samples (N, G, C/G, K*L) of ``data`` at the points of ``plan`` (corners)."""
    n, c, h, w = data.shape
    grouped = data.reshape(n, plan[0].index.shape[1], -1, h * w)
    return sum(_gather(xp, grouped, k) * k.weight[:, :, None, :] for k in plan)


def columns_grads(xp, data, plan, d_cols):
    """From the columns' gradient (N, G, C/G, K*L): the data gradient (N, C, H, W) and the
    gradients wrt the sample rows and cols (N, G, K*L)."""
    n, c, h, w = data.shape
    g = plan[0].index.shape[1]
    grouped = data.reshape(n, g, -1, h * w)
    d_rows = d_cols_pos = 0
    base = (xp.arange(n * c, dtype=xp.intp) * (h * w)).reshape(n, g, -1, 1)
    targets, amounts = [], []
    for k in plan:
        v = _gather(xp, grouped, k)
        d_rows = d_rows + (d_cols * v * k.d_row[:, :, None, :]).sum(axis=2)
        d_cols_pos = d_cols_pos + (d_cols * v * k.d_col[:, :, None, :]).sum(axis=2)
        targets.append((base + k.index[:, :, None, :]).ravel())
        amounts.append((d_cols * k.weight[:, :, None, :]).ravel())
    d_data = xp.bincount(xp.concatenate(targets), weights=xp.concatenate(amounts),
                         minlength=n * c * h * w)
    return d_data.reshape(data.shape), d_rows, d_cols_pos


def grouped_product(xp, weight, cols, num_group):
    """Output (N, F, L) of filters ``weight`` (F, C/num_group, kh, kw) over columns
    (N, C, K, L)."""
    n, c, k, l = cols.shape
    f = weight.shape[0]
    w = weight.reshape(num_group, f // num_group, -1)
    return xp.matmul(w[None], cols.reshape(n, num_group, -1, l)).reshape(n, f, l)


def grouped_product_grads(xp, weight, cols, d_out, num_group):
    """(d cols (N, C, K, L), d weight) from the output gradient (N, F, L)."""
    n, c, k, l = cols.shape
    f = weight.shape[0]
    w = weight.reshape(num_group, f // num_group, -1)
    d_out = d_out.reshape(n, num_group, f // num_group, l)
    d_cols = xp.matmul(w.transpose(0, 2, 1)[None], d_out).reshape(cols.shape)
    d_w = xp.matmul(d_out, cols.reshape(n, num_group, -1, l).transpose(0, 1, 3, 2)).sum(0)
    return d_cols, d_w.reshape(weight.shape)
