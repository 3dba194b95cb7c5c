"""R-FCN's position-sensitive ROI pooling, _contrib_PSROIPooling: bin (i, j) of output channel
c of a roi averages its window of input channel (c * G + gi) * G + gj, where (gi, gj) is the
bin's cell on a G x G grid (G = group_size, by default pooled_size).

Roi corners are rounded (half away from zero), the far corner widened by one pixel, scaled by
``spatial_scale``; bins are floor/ceil windows clipped to the map, an empty bin gives 0. Window
sums are read from a per-channel summed-area table (in float64), and the gradient is the same
rectangle spread written as four corner impulses integrated back by two cumulative sums.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op

from ._layer_rules import backward_node, compute_dtype, fail, grad_entries, put
from .roi import (_backward_shape, _backward_type, _batch_index, _rois_shape, _roi_type,
                  _round_half_away)

OP = "_contrib_PSROIPooling"
BWD = "_backward_PSROIPooling"


class PSROIPoolingParam(Param):
    spatial_scale: float = Field(ge=0.0, le=1.0, description=(
        "Feature map size over image size: roi coordinates are multiplied by it."))
    output_dim: int = Field(ge=1, description="Output channels per roi.")
    pooled_size: int = Field(ge=1, description="Output bins per side of each roi.")
    group_size: int = Field(0, ge=0, description="Side of the position-sensitive grid of "
                                                 "input channels; 0 means pooled_size.")

    @property
    def groups(self):
        return self.group_size or self.pooled_size


def _out_channels(p, c):
    need = p.output_dim * p.groups ** 2
    if c < need:
        fail(OP, f"input 'data' needs output_dim * group_size^2 = {need} channels, got {c}")
    return p.output_dim


def _windows(xp, rois, p, height, width, dt):
    """Per roi and bin: row window [hs, he) (R, P) and column window [ws, we) (R, P)."""
    scale = dt.type(np.float32(p.spatial_scale))
    box = _round_half_away(xp, rois[:, 1:5].astype(dt))
    start = box[:, :2] * scale
    end = (box[:, 2:] + dt.type(1)) * scale
    size = xp.maximum(end - start, dt.type(0.1))
    bin_size = size / dt.type(p.pooled_size)
    k = xp.arange(p.pooled_size + 1, dtype=dt)
    edges = k[None, :, None] * bin_size[:, None, :] + start[:, None, :]   # (R, P+1, (x, y))
    lo = xp.floor(edges[:, :-1]).astype(np.int64)
    hi = xp.ceil(edges[:, 1:]).astype(np.int64)
    lo[..., 0], hi[..., 0] = xp.clip(lo[..., 0], 0, width), xp.clip(hi[..., 0], 0, width)
    lo[..., 1], hi[..., 1] = xp.clip(lo[..., 1], 0, height), xp.clip(hi[..., 1], 0, height)
    return lo[..., 1], hi[..., 1], lo[..., 0], hi[..., 0]


def _channels(xp, p):
    """(output_dim, P, P) input channel read by each output channel and bin."""
    g, size = p.groups, p.pooled_size
    cell = xp.clip((xp.arange(size) * g) // size, 0, g - 1)
    return (xp.arange(p.output_dim)[:, None, None] * g + cell[:, None]) * g + cell[None, :]


def _corners(xp, rois, p, shape, dt):
    """Flat indices into the (N, C, H+1, W+1) table of each bin's four window corners, their
    signs, 1 / bin area (0 for an empty bin or a roi outside the batch)."""
    n, c, h, w = shape
    hs, he, ws, we = _windows(xp, rois, p, h, w, dt)
    b, ok = _batch_index(rois, n)
    hs, he = hs[:, None, :, None], he[:, None, :, None]
    ws, we = ws[:, None, None, :], we[:, None, None, :]
    area = ((he - hs) * (we - ws)).astype(dt)
    inv = xp.where((area > 0) & ok[:, None, None, None], 1 / xp.maximum(area, 1), 0)
    base = (xp.where(ok, b, 0)[:, None, None, None] * c + _channels(xp, p)) * (h + 1)
    idx = [(base + y) * (w + 1) + x for y, x in ((he, we), (hs, we), (he, ws), (hs, ws))]
    return idx, (1, -1, -1, 1), inv


def _forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data, rois = inputs
    dt = compute_dtype(data.dtype)
    n, c, h, w = data.shape
    table = xp.zeros((n, c, h + 1, w + 1), np.float64)
    table[:, :, 1:, 1:] = data.astype(np.float64).cumsum(2).cumsum(3)
    flat = table.reshape(-1)
    idx, signs, inv = _corners(xp, rois, p, data.shape, dt)
    total = sum(s * flat[i] for i, s in zip(idx, signs))
    put(outputs[0], req[0], (total * inv).astype(dt))


def _backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, rois = inputs[:2]
    if req[0]:
        g = outputs[0]
        n, c, h, w = g.shape
        idx, signs, inv = _corners(xp, rois, p, g.shape, compute_dtype(g.dtype))
        val = (og.astype(np.float64) * inv).reshape(-1)
        flat = xp.concatenate([i.reshape(-1) for i in idx])
        wts = xp.concatenate([s * val for s in signs])
        impulses = xp.bincount(flat, weights=wts, minlength=n * c * (h + 1) * (w + 1))
        total = impulses.reshape(n, c, h + 1, w + 1).cumsum(2).cumsum(3)[:, :, :h, :w]
        put(g, req[0], total)
    put(outputs[1], req[1], xp.zeros(rois.shape, outputs[1].dtype))


def _grad(node, og):
    reads = [og[0], node.inputs[1], node.inputs[0]]
    return grad_entries(backward_node(BWD, node, reads), 2)


(register_op(OP)
    .describe("Position-sensitive ROI pooling (R-FCN): each of the pooled_size x pooled_size "
              "bins of output channel c averages its window of the input channel assigned to "
              "that bin's cell of a group_size grid. Output (num_rois, output_dim, pooled_size, "
              "pooled_size); data needs output_dim * group_size^2 channels.")
    .set_attr_parser(PSROIPoolingParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "rois"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _rois_shape(OP, 5, ["output"], _out_channels))
    .set_attr("FInferType", FloatOnly(_roi_type(OP)))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 18, 9, 8), np.array([[0, 10, 22, 101, 113], [1, 20, 15, 84, 60],
                                             [1, 40, 40, 41, 41]], np.float64)],
         "dtype": "float64", "grad": [0],
         "params": {"spatial_scale": 0.0625, "output_dim": 2, "pooled_size": 3}},
        {"inputs": [(1, 12, 7, 7), np.array([[0, 1.4, 2.6, 5.5, 6.2]], np.float32)],
         "grad": [0], "params": {"spatial_scale": 1.0, "output_dim": 3, "pooled_size": 3,
                                 "group_size": 2}}])
    .add_argument("data", "NDArray-or-Symbol", "Score maps, (batch, output_dim * group_size^2, "
                  "height, width).")
    .add_argument("rois", "NDArray-or-Symbol", "Regions, (num_rois, 5): [batch_index, x1, y1, "
                  "x2, y2] in image coordinates."))

(register_op(BWD)
    .describe("Gradient of PSROIPooling: each bin's output gradient spread evenly over its "
              "window (rois get zeros). The data input is read for its shape.")
    .set_attr_parser(PSROIPoolingParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", _backward_shape(BWD, 3))
    .set_attr("FInferType", _backward_type(BWD, 3))
    .set_attr("FCompute<cpu>", _backward))
