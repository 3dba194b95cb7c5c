"""Region-of-interest pooling of NCHW feature maps: ROIPooling (max over quantised bins),
_contrib_ROIAlign (average of bilinear samples per bin, optionally position-sensitive or
pixel-centre aligned) and _contrib_RROIAlign (ROIAlign over rotated boxes, forward only as in
MXNet).

A roi row is ``[batch_index, x1, y1, x2, y2]`` in image coordinates (RROIAlign: ``[batch_index,
centre_x, centre_y, width, height, angle_degrees]``), scaled by ``spatial_scale`` onto the
feature map. A roi whose batch index is outside the batch gives zeros and no gradient (MXNet's
ROIAlign reads out of bounds for an index past the batch and zeroes one element for a negative
one; ROIPooling zeroes the roi as here).

ROIAlign's bilinear weights factor into a y part and an x part (the out-of-map test too), so
each roi's bins are two small interpolation matrices (PH, H) and (PW, W), and the pooling is
two matrix products: one GEMM over a chunk of rois' rows against the whole map, then a
batched (per roi) product for the columns; the gradient is their transpose. (A three-operand
einsum here ran without BLAS: a thousand FPN proposals took minutes.)
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, MXNetError, Param, register_op
from pydantic import model_validator

from ._infer import assign_type
from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, out_entry, put,
                           result_shapes, set_shape)

POOL = "ROIPooling"
ALIGN = "_contrib_ROIAlign"
RALIGN = "_contrib_RROIAlign"
_FLT_MAX = float(np.finfo(np.float32).max)


class _PooledParam(Param):
    pooled_size: tuple[int, ...] = Field(description="Output bins per roi, (h, w).")
    spatial_scale: float = Field(ge=0.0, le=1.0, description=(
        "Feature map size over image size (the reciprocal of the network's total stride): "
        "roi coordinates are multiplied by it."))

    @model_validator(mode="after")
    def _check_pooled(self):
        if len(self.pooled_size) != 2 or min(self.pooled_size) <= 0:
            raise ValueError(f"pooled_size must be two positive sizes (h, w), got "
                             f"{self.pooled_size}")
        return self


def _rois_shape(op, cols, out_names, channels_out=None):
    """FInferShape: data (N, C, H, W) and rois (R, cols) give outputs (R, C', PH, PW), C' =
    ``channels_out(params, C)`` (default C), one per name in ``out_names`` (an int
    ``pooled_size`` is square)."""
    def infer(p, ins, outs):
        ins = list(ins)
        data, rois = ins
        if data is not None and len(data) != 4:
            fail(op, f"input 'data' should be 4-d (batch, channel, y, x), got {tuple(data)}")
        if rois is None and outs[0] is not None:
            ins[1] = rois = (outs[0][0], cols)
        if rois is not None and (len(rois) != 2 or rois[1] != cols):
            fail(op, f"input 'rois' should be (num_rois, {cols}), got {tuple(rois)}")
        if data is None or rois is None:
            return ins, list(outs)
        c = channels_out(p, data[1]) if channels_out else data[1]
        size = p.pooled_size
        out = (rois[0], c) + ((size, size) if isinstance(size, int) else tuple(size))
        return ins, result_shapes(op, outs, [out] * len(out_names), out_names)
    return infer


def _roi_type(op, hidden=()):
    """data and rois share a dtype, the output takes it; hidden outputs have fixed dtypes."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        known = next((t for t in ins + outs[:1] if t is not None), None)
        for k, t in enumerate(hidden, 1):
            assign_type(op, outs, k, t, f"output {k}")
        if known is not None:
            for i, name in enumerate(("data", "rois")):
                assign_type(op, ins, i, known, f"input {name!r}")
            assign_type(op, outs, 0, known, "output 0")
        return ins, outs
    return infer


def _backward_type(op, n_in):
    """Backward rule: the gradients take the dtypes of the forward data and rois."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for i, k in ((n_in - 1, 0), (1, 1)):
            if ins[i] is not None:
                assign_type(op, outs, k, ins[i], f"output {k}")
            elif outs[k] is not None:
                ins[i] = outs[k]
        return ins, outs
    return infer


def _batch_index(rois, n):
    """Integer batch index per roi (truncated as C++ does) and whether it is in the batch."""
    b = rois[:, 0].astype(np.int64)
    return b, (b >= 0) & (b < n)


def _round_half_away(xp, v):
    return xp.sign(v) * xp.floor(xp.abs(v) + 0.5)


# ---- ROIPooling ------------------------------------------------------------------------------

class ROIPoolingParam(_PooledParam):
    pass


def _bins(xp, start, end, size, pooled, dt):
    """Per roi and bin, [lo, hi) of the window along one axis (clipped to the map)."""
    extent = xp.maximum(end - start + 1, 1).astype(dt)
    step = extent / dt.type(pooled)
    k = xp.arange(pooled, dtype=dt)
    lo = xp.floor(k * step[:, None]).astype(np.int64) + start[:, None]
    hi = xp.ceil((k + 1) * step[:, None]).astype(np.int64) + start[:, None]
    return xp.clip(lo, 0, size), xp.clip(hi, 0, size)


def _widest(sizes, least):
    """``max(least, *sizes)`` as an int (cupy's ``max`` has no ``initial``)."""
    return max(int(sizes.max()), least) if sizes.size else least


def _pool_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data, rois = inputs
    n, c, h, w = data.shape
    ph, pw = p.pooled_size
    r = rois.shape[0]
    dt = compute_dtype(rois.dtype)
    coords = _round_half_away(xp, rois[:, 1:5].astype(dt) * dt.type(p.spatial_scale))
    x1, y1, x2, y2 = (coords[:, i].astype(np.int64) for i in range(4))
    b, ok = _batch_index(rois, n)
    hlo, hhi = _bins(xp, y1, y2, h, ph, dt)
    wlo, whi = _bins(xp, x1, x2, w, pw, dt)
    kh, kw = _widest(hhi - hlo, 0), _widest(whi - wlo, 0)
    out = xp.zeros((r, c, ph, pw), data.dtype)
    idx = xp.full((r, c, ph, pw), -1, np.int64)
    if kh and kw and r:
        hh = hlo[:, :, None] + xp.arange(kh)                      # (R, PH, Kh)
        ww = wlo[:, :, None] + xp.arange(kw)                      # (R, PW, Kw)
        inside = ((hh < hhi[:, :, None])[:, :, None, :, None]
                  & (ww < whi[:, :, None])[:, None, :, None, :])  # (R, PH, PW, Kh, Kw)
        hh, ww = xp.minimum(hh, h - 1), xp.minimum(ww, w - 1)
        bb = xp.where(ok, b, 0)
        per_roi = c * ph * pw * kh * kw
        step = max(1, (1 << 22) // max(per_roi, 1))
        for s in range(0, r, step):
            sl = slice(s, s + step)
            win = data[bb[sl, None, None, None, None], :, hh[sl, :, None, :, None],
                       ww[sl, None, :, None, :]]                  # (r, PH, PW, Kh, Kw, C)
            win = xp.where(inside[sl, ..., None], win, -xp.inf)
            win = xp.moveaxis(win, -1, 1).reshape(win.shape[0], c, ph, pw, kh * kw)
            arg = win.argmax(axis=-1)       # first maximum in raster order, as MXNet scans
            best = xp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
            found = best > -_FLT_MAX        # MXNet starts from -FLT_MAX and keeps strict gains
            out[sl] = xp.where(found, best, -_FLT_MAX)
            ys = hlo[sl][:, None, :, None] + arg // kw
            xs = wlo[sl][:, None, None, :] + arg % kw
            chan = bb[sl, None, None, None] * c + xp.arange(c)[:, None, None]
            idx[sl] = xp.where(found, (chan * h + ys) * w + xs, -1)
        empty = ((hhi <= hlo)[:, None, :, None] | (whi <= wlo)[:, None, None, :]
                 | ~ok[:, None, None, None])
        out = xp.where(empty, 0, out)
        idx = xp.where(empty, -1, idx)
    put(outputs[0], req[0], out)
    put(outputs[1], req[1], idx)


def _pool_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, rois, idx = inputs[:3]
    if req[0]:
        g = outputs[0]
        hit = idx >= 0
        total = xp.bincount(idx[hit], weights=og[hit].astype(np.float64), minlength=g.size)
        put(g, req[0], total.reshape(g.shape))
    put(outputs[1], req[1], xp.zeros(rois.shape, outputs[1].dtype))


def _pool_grad(node, og):
    reads = [og[0], node.inputs[1], out_entry(node, 1), node.inputs[0]]
    return grad_entries(backward_node(f"_backward_{POOL}", node, reads), 2)


def _backward_shape(op, n_in):
    """Backward rule: the gradients take the shapes of the forward data and rois, the last
    and second inputs (the data is read for its shape only)."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for i, k in ((n_in - 1, 0), (1, 1)):
            if ins[i] is not None:
                set_shape(op, outs, k, tuple(ins[i]), f"output {k}")
            elif outs[k] is not None:
                ins[i] = tuple(outs[k])
        return ins, outs
    return infer


(register_op(POOL)
    .add_alias("_npx_roi_pooling")
    .describe("Max-pools each region of interest of 4-d data into pooled_size bins: roi "
              "corners are scaled by spatial_scale and rounded, the roi is split into bins of "
              "(roi size + 1) / pooled size, and each bin takes the maximum of its pixels (0 "
              "for an empty bin or a roi outside the batch). Output (num_rois, C, PH, PW).")
    .set_attr_parser(ROIPoolingParam)
    .set_num_inputs(2).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data", "rois"])
    .set_attr("FListOutputNames", lambda p: ["output", "maxidx"])
    .set_attr("FInferShape", _rois_shape(POOL, 5, ["output", "maxidx"]))
    .set_attr("FInferType", FloatOnly(_roi_type(POOL, hidden=(np.int32,))))
    .set_attr("FCompute<cpu>", _pool_forward)
    .set_attr("FGradient", _pool_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 6, 5), np.array([[0, 0.2, 1.1, 3.4, 4.2], [1, 2.2, 0, 4.4, 2.7],
                                            [1, 3, 3, 3, 3], [-1, 0, 0, 2, 2]], np.float32)],
         "params": {"pooled_size": (2, 2), "spatial_scale": 1.0}, "grad": [0]},
        {"inputs": [(1, 2, 8, 8), np.array([[0, 0, 0, 15, 12], [0, 4, 2, 30, 30]], np.float64)],
         "dtype": "float64", "params": {"pooled_size": "(3, 2)", "spatial_scale": "0.5"},
         "grad": [0]}])
    .add_argument("data", "NDArray-or-Symbol", "Feature maps, (batch, channel, height, width).")
    .add_argument("rois", "NDArray-or-Symbol", "Regions, (num_rois, 5): [batch_index, x1, y1, "
                  "x2, y2] with (x1, y1) the top-left and (x2, y2) the bottom-right corner."))

(register_op(f"_backward_{POOL}")
    .describe("Gradient of ROIPooling: each output gradient goes to its bin's maximum (rois "
              "get zeros). The data input is read for its shape.")
    .set_attr_parser(ROIPoolingParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(4).set_num_outputs(2)
    .set_attr("FInferShape", _backward_shape(f"_backward_{POOL}", 4))
    .set_attr("FInferType", _backward_type(f"_backward_{POOL}", 4))
    .set_attr("FCompute<cpu>", _pool_backward))


# ---- ROIAlign / RROIAlign --------------------------------------------------------------------

def _axis(xp, pos, size):
    """MXNet's bilinear rule along one axis for sample positions ``pos``: (low, high,
    weight of low, weight of high, in range); a position outside [-1, size] reads nothing and
    one past the last pixel reads the last pixel."""
    inb = (pos >= -1) & (pos <= size)
    q = xp.maximum(pos, 0)
    low = xp.floor(xp.where(inb, q, 0)).astype(np.int64)
    edge = low >= size - 1
    low = xp.where(edge, size - 1, low)
    high = xp.where(edge, size - 1, low + 1)
    frac = xp.where(edge, 0, q - low).astype(pos.dtype)
    return low, high, (1 - frac) * inb, frac * inb


def _samples(xp, start, extent, grid, pooled, dt):
    """Sample positions (R, pooled, G) along one axis of each roi and whether each is used
    (G is the largest per-roi sample count)."""
    g = _widest(grid, 1)
    step = extent / dt.type(pooled)
    k = xp.arange(pooled, dtype=dt)[None, :, None]
    i = xp.arange(g, dtype=dt)[None, None, :]
    pos = (start[:, None, None] + k * step[:, None, None]
           + (i + dt.type(0.5)) * step[:, None, None] / grid[:, None, None].astype(dt))
    return pos, xp.arange(g)[None, None, :] < grid[:, None, None]


def _grid_count(xp, extent, pooled, ratio, dt):
    if ratio > 0:
        return xp.full(extent.shape, ratio, np.int64)
    return xp.maximum(xp.ceil(extent / dt.type(pooled)), 1).astype(np.int64)


class ROIAlignParam(_PooledParam):
    sample_ratio: int = Field(-1, description="Samples per bin along each axis; <= 0 adapts "
                                              "it to the roi: ceil(roi size / pooled size).")
    position_sensitive: bool = Field(
        False, description="Position-sensitive pooling (R-FCN): bin (i, j) of output channel c "
                           "reads input channel (c * PH + i) * PW + j, so the input has PH*PW "
                           "times the output channels.")
    aligned: bool = Field(False, description="Detectron2's pixel-centre alignment: shift roi "
                                             "coordinates by -0.5 and keep sub-pixel sizes.")


def _align_channels(p, c):
    if not p.position_sensitive:
        return c
    bins = p.pooled_size[0] * p.pooled_size[1]
    if c % bins:
        fail(ALIGN, f"position_sensitive=True needs data channels divisible by pooled_size "
                    f"h*w = {bins}, got {c}")
    return c // bins


def _align_matrices(xp, rois, p, size_hw, dt):
    """Per roi, the (PH, H) and (PW, W) matrices averaging the bilinear samples of each bin."""
    offset = dt.type(0.5) if p.aligned else dt.type(0)
    box = rois[:, 1:5].astype(dt) * dt.type(p.spatial_scale) - offset
    start = box[:, 1], box[:, 0]
    extent = box[:, 3] - box[:, 1], box[:, 2] - box[:, 0]
    if p.aligned:
        bad = ~((extent[0] > 0) & (extent[1] > 0))
        if bool(bad.any()):
            k = int(xp.argmax(bad))
            raise MXNetError(f"Operator {ALIGN!r}: with aligned=True every roi needs a positive "
                             f"width and height after scaling, roi {k} is {rois[k].tolist()}")
    else:
        extent = tuple(xp.maximum(e, dt.type(1)) for e in extent)
    mats = []
    for axis in (0, 1):
        pooled, size = p.pooled_size[axis], size_hw[axis]
        grid = _grid_count(xp, extent[axis], pooled, p.sample_ratio, dt)
        pos, used = _samples(xp, start[axis], extent[axis], grid, pooled, dt)
        low, high, wl, wh = _axis(xp, pos, size)
        scale = used / grid[:, None, None].astype(dt)
        r = rois.shape[0]
        row = (xp.arange(r)[:, None, None] * pooled + xp.arange(pooled)[None, :, None]) * size
        idx = xp.concatenate([(row + low).reshape(-1), (row + high).reshape(-1)])
        wts = xp.concatenate([(wl * scale).reshape(-1), (wh * scale).reshape(-1)])
        m = xp.bincount(idx, weights=wts.astype(np.float64), minlength=r * pooled * size)
        mats.append(m.reshape(r, pooled, size).astype(dt))
    return mats


def _per_image(xp, rois, n):
    b, ok = _batch_index(rois, n)
    for image in np.unique(np.asarray(b[ok].tolist(), dtype=np.int64)):
        yield int(image), xp.nonzero(ok & (b == image))[0]


CHUNK_BYTES = 1 << 25


def _roi_chunks(sel, per_roi, itemsize):
    """``sel`` split so that each piece's (rois, PH, C, W) intermediate stays near 32 MiB."""
    step = max(1, CHUNK_BYTES // max(per_roi * itemsize, 1))
    return [sel[i:i + step] for i in range(0, len(sel), step)]


def _pool_rows_cols(xp, my, flat, mx, c):
    """out[r, c, p, q] = sum_hw my[r, p, h] d[c, h, w] mx[r, q, w] as two BLAS products:
    (R*PH, H) @ (H, C*W) (``flat`` is d laid out (H, C*W)), then per roi (PH*C, W) @ (W, PW)."""
    r, ph, h = my.shape
    w = mx.shape[2]
    rows = (my.reshape(r * ph, h) @ flat).reshape(r, ph * c, w)
    out = xp.matmul(rows, mx.transpose(0, 2, 1)).reshape(r, ph, c, -1)
    return out.transpose(0, 2, 1, 3)


def _scatter_rows_cols(xp, my, og, mx):
    """The transpose of _pool_rows_cols: g[c, h, w] = sum_rpq my[r, p, h] og[r, c, p, q]
    mx[r, q, w], per roi (C*PH, PW) @ (PW, W), then (H, R*PH) @ (R*PH, C*W)."""
    r, ph, h = my.shape
    c, w = og.shape[1], mx.shape[2]
    cols = xp.matmul(og.reshape(r, c * ph, -1), mx).reshape(r, c, ph, w)
    cols = cols.transpose(0, 2, 1, 3).reshape(r * ph, c * w)
    return (my.reshape(r * ph, h).T @ cols).reshape(h, c, w).transpose(1, 0, 2)


def _align_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data, rois = inputs
    dt = compute_dtype(data.dtype)
    n, c, h, w = data.shape
    ph, pw = p.pooled_size
    my, mx = _align_matrices(xp, rois, p, (h, w), dt)
    out = xp.zeros(outputs[0].shape, dt)
    for image, sel in _per_image(xp, rois, n):
        d = data[image].astype(dt, copy=False)
        if p.position_sensitive:
            d = d.reshape(c // (ph * pw), ph, pw, h, w)
            out[sel] = xp.einsum("rph,cpqhw,rqw->rcpq", my[sel], d, mx[sel], optimize=True)
        else:
            flat = d.transpose(1, 0, 2).reshape(h, c * w)
            for chunk in _roi_chunks(sel, ph * c * w, d.itemsize):
                out[chunk] = _pool_rows_cols(xp, my[chunk], flat, mx[chunk], c)
    put(outputs[0], req[0], out)


def _align_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, rois = inputs[:2]
    if req[0]:
        g = outputs[0]
        dt = compute_dtype(g.dtype)
        n, c, h, w = g.shape
        ph, pw = p.pooled_size
        my, mx = _align_matrices(xp, rois, p, (h, w), dt)
        total = xp.zeros(g.shape, dt)
        og = og.astype(dt, copy=False)
        for image, sel in _per_image(xp, rois, n):
            if p.position_sensitive:
                part = xp.einsum("rph,rcpq,rqw->cpqhw", my[sel], og[sel], mx[sel], optimize=True)
                total[image] = part.reshape(c, h, w)
            else:
                for chunk in _roi_chunks(sel, ph * c * w, dt.itemsize):
                    total[image] += _scatter_rows_cols(xp, my[chunk], og[chunk], mx[chunk])
        put(g, req[0], total)
    put(outputs[1], req[1], xp.zeros(rois.shape, outputs[1].dtype))


def _align_grad(node, og):
    reads = [og[0], node.inputs[1], node.inputs[0]]
    return grad_entries(backward_node("_backward_ROIAlign", node, reads), 2)


_ROIS = np.array([[0, 1.1, 1.1, 6.2, 6.2], [1, 6.1, 2.1, 8.2, 11.2], [1, 3.1, 1.1, 5.2, 10.2],
                  [0, -2.3, -1.7, 3.6, 2.9]], np.float64)

(register_op(ALIGN)
    .describe("ROI Align (Mask R-CNN): each bin of each roi is the average of bilinear "
              "samples of the data on a regular sample grid, with no rounding of coordinates. "
              "Rois with a negative batch index give zeros. Output (num_rois, C, PH, PW), or "
              "C / (PH*PW) channels when position_sensitive.")
    .set_attr_parser(ROIAlignParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "rois"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _rois_shape(ALIGN, 5, ["output"], _align_channels))
    .set_attr("FInferType", FloatOnly(_roi_type(ALIGN)))
    .set_attr("FCompute<cpu>", _align_forward)
    .set_attr("FGradient", _align_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 12, 10), _ROIS], "dtype": "float64", "grad": [0],
         "params": {"pooled_size": (3, 2), "spatial_scale": 1.0}},
        {"inputs": [(2, 1, 12, 10), _ROIS * [1, 2, 2, 2, 2]], "dtype": "float64", "grad": [0],
         "params": {"pooled_size": (2, 2), "spatial_scale": "0.5", "sample_ratio": "2",
                    "aligned": "True"}},
        {"inputs": [(2, 8, 12, 10), _ROIS.astype(np.float32)], "grad": [0],
         "params": {"pooled_size": (2, 2), "spatial_scale": 0.8, "position_sensitive": True}}])
    .add_argument("data", "NDArray-or-Symbol", "Feature maps, (batch, channel, height, width).")
    .add_argument("rois", "NDArray-or-Symbol", "Regions, (num_rois, 5): [batch_index, x1, y1, "
                  "x2, y2]; a negative batch index marks a roi to ignore."))

(register_op("_backward_ROIAlign")
    .describe("Gradient of ROIAlign: the output gradient spread back over each bin's bilinear "
              "samples (rois get zeros). The data input is read for its shape.")
    .set_attr_parser(ROIAlignParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", _backward_shape("_backward_ROIAlign", 3))
    .set_attr("FInferType", _backward_type("_backward_ROIAlign", 3))
    .set_attr("FCompute<cpu>", _align_backward))


class RROIAlignParam(_PooledParam):
    sampling_ratio: int = Field(-1, description="Samples per bin along each axis; <= 0 adapts "
                                                "it to the roi: ceil(roi size / pooled size).")


def _ralign_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data, rois = inputs
    dt = compute_dtype(data.dtype)
    n, c, h, w = data.shape
    ph, pw = p.pooled_size
    r = rois.shape[0]
    box = rois[:, 1:5].astype(dt) * dt.type(p.spatial_scale)
    cx, cy = box[:, 0], box[:, 1]
    rw, rh = xp.maximum(box[:, 2], dt.type(1)), xp.maximum(box[:, 3], dt.type(1))
    theta = (rois[:, 5].astype(np.float64) * np.pi / 180.0).astype(dt)
    gh = _grid_count(xp, rh, ph, p.sampling_ratio, dt)
    gw = _grid_count(xp, rw, pw, p.sampling_ratio, dt)
    yy, used_y = _samples(xp, -rh / 2, rh, gh, ph, dt)        # (R, PH, Gh)
    xx, used_x = _samples(xp, -rw / 2, rw, gw, pw, dt)        # (R, PW, Gw)
    yy, xx = yy[:, :, None, :, None], xx[:, None, :, None, :]
    cos, sin = (f(theta)[:, None, None, None, None] for f in (xp.cos, xp.sin))
    x = xx * cos + yy * sin + cx[:, None, None, None, None]
    y = yy * cos - xx * sin + cy[:, None, None, None, None]   # (R, PH, PW, Gh, Gw)
    yl, yh, wyl, wyh = _axis(xp, y, h)
    xl, xh, wxl, wxh = _axis(xp, x, w)
    inside = (wyl + wyh > 0) & (wxl + wxh > 0)                 # both axes in range
    used = (used_y[:, :, None, :, None] & used_x[:, None, :, None, :] & inside).astype(dt)
    b, ok = _batch_index(rois, n)
    flat = data.reshape(n, c, h * w).astype(dt, copy=False)
    bb = xp.where(ok, b, 0)[:, None]
    total = 0
    for yi, wy in ((yl, wyl), (yh, wyh)):
        for xi, wx in ((xl, wxl), (xh, wxh)):
            vals = flat[bb, :, (yi * w + xi).reshape(r, -1)]   # (R, S, C)
            total = total + vals * (wy * wx * used).reshape(r, -1, 1)
    count = (gh * gw).astype(dt)[:, None, None, None]
    out = total.reshape(r, ph, pw, -1, c).sum(axis=3).transpose(0, 3, 1, 2) / count
    put(outputs[0], req[0], xp.where(ok[:, None, None, None], out, 0))


(register_op(RALIGN)
    .describe("Rotated ROI Align: as ROIAlign, over boxes [batch_index, centre_x, centre_y, "
              "width, height, angle in degrees] rotated about their centre. Forward only "
              "(MXNet has no gradient for it). Output (num_rois, C, PH, PW).")
    .set_attr_parser(RROIAlignParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "rois"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _rois_shape(RALIGN, 6, ["output"]))
    .set_attr("FInferType", FloatOnly(_roi_type(RALIGN)))
    .set_attr("FCompute<cpu>", _ralign_forward)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 9, 8), np.array([[0, 4, 4, 5, 3, 30], [1, 2.5, 6, 8, 4, -75],
                                            [1, 7, 1, 2, 2, 180]], np.float32)],
         "params": {"pooled_size": (2, 3), "spatial_scale": 1.0}},
        {"inputs": [(1, 1, 6, 6), np.array([[0, 6, 6, 6, 4, 45]], np.float32)],
         "params": {"pooled_size": (2, 2), "spatial_scale": 0.5, "sampling_ratio": 2}}])
    .add_argument("data", "NDArray-or-Symbol", "Feature maps, (batch, channel, height, width).")
    .add_argument("rois", "NDArray-or-Symbol", "Rotated regions, (num_rois, 6): [batch_index, "
                  "centre_x, centre_y, width, height, angle_degrees]."))
