"""GridGenerator, BilinearSampler and SpatialTransformer (the pieces of a spatial transformer
network, NCHW data).

A sampling grid holds, per output position, the source x (channel 0) and y (channel 1)
normalised to [-1, 1]; ``x_src = (gx + 1) * (W - 1) / 2``. Bilinear sampling reads the four
neighbours of each source point, a neighbour outside the data counting as zero. As in MXNet,
the destination grid of an affine transform is ``(-1 + 2 j / (W - 1), -1 + 2 i / (H - 1), 1)``
(a size of 1 divides by zero, giving nan), and the ops carry hidden outputs: GridGenerator's
``grid_dst``, BilinearSampler's ``tmp`` (the grid as (N, H, W, 2), read by no cpu kernel) and
SpatialTransformer's ``grid_dst`` and ``grid_src``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, out_entry, put,
                           result_shapes, same_type, set_shape)

GRID = "GridGenerator"
SAMPLER = "BilinearSampler"
STN = "SpatialTransformer"


# ---- shared kernels -------------------------------------------------------------------------

def affine_dst_grid(xp, h, w, dtype):
    """(3, h*w): the destination x, y (normalised) and 1 of every output position."""
    i = xp.arange(h * w)
    sx, sy = np.float64(2.0) / np.float64(w - 1), np.float64(2.0) / np.float64(h - 1)
    return xp.stack([-1.0 + (i % w) * sx, -1.0 + (i // w) * sy, xp.ones(h * w)]).astype(dtype)


def _corners(xp, grid, ih, iw):
    """The four bilinear neighbours of each grid point: (flat index, in-bounds mask,
    weight) for top-left, top-right, bottom-left, bottom-right, plus the top-left weights
    (wy, wx). ``grid`` is (N, 2, P) in the compute dtype."""
    x = (grid[:, 0] + 1) * (iw - 1) / 2
    y = (grid[:, 1] + 1) * (ih - 1) / 2
    fx, fy = xp.floor(x), xp.floor(y)
    wx, wy = 1 - (x - fx), 1 - (y - fy)
    finite = xp.isfinite(fx) & xp.isfinite(fy)
    x0 = xp.where(finite, fx, -2).astype(np.int64)
    y0 = xp.where(finite, fy, -2).astype(np.int64)
    out = []
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        xi, yi = x0 + dx, y0 + dy
        inside = (xi >= 0) & (xi <= iw - 1) & (yi >= 0) & (yi <= ih - 1)
        weight = (wy if dy == 0 else 1 - wy) * (wx if dx == 0 else 1 - wx)
        out.append((xp.where(inside, yi * iw + xi, 0), inside, weight))
    return out, wy, wx


def _gather(xp, flat, idx, inside):
    """flat (N, C, S) read at idx (N, P), zero where not inside: (N, C, P)."""
    full = xp.broadcast_to(idx[:, None, :], flat.shape[:2] + idx.shape[1:])
    return xp.take_along_axis(flat, full, axis=2) * inside[:, None, :]


def sample_forward(xp, data, grid):
    """Bilinear sampling of data (N, C, H, W) at grid (N, 2, P): (N, C, P)."""
    n, c, ih, iw = data.shape
    flat = data.reshape(n, c, ih * iw)
    corners, _, _ = _corners(xp, grid, ih, iw)
    return sum(_gather(xp, flat, idx, inside) * w[:, None, :] for idx, inside, w in corners)


def sample_backward(xp, og, data, grid, want_data=True):
    """Gradients of ``sample_forward`` given og (N, C, P): (d data or None, d grid (N, 2, P))."""
    n, c, ih, iw = data.shape
    flat = data.reshape(n, c, ih * iw)
    corners, wy, wx = _corners(xp, grid, ih, iw)
    gdata = None
    if want_data:
        base = (xp.arange(n * c).reshape(n, c, 1) * (ih * iw))
        idx = xp.concatenate([(base + i[:, None, :]).reshape(-1) for i, _, _ in corners])
        vals = xp.concatenate([(og * (w * inside)[:, None, :]).reshape(-1)
                               for _, inside, w in corners])
        gdata = xp.bincount(idx, weights=vals, minlength=n * c * ih * iw).reshape(data.shape)
    tl, tr, bl, br = (_gather(xp, flat, i, inside) for i, inside, _ in corners)
    cross = tl - tr - bl + br
    gy = -(og * (tr - br + cross * wx[:, None, :])).sum(axis=1) * ((ih - 1) / 2)
    gx = -(og * (bl - br + cross * wy[:, None, :])).sum(axis=1) * ((iw - 1) / 2)
    return gdata, xp.stack([gx, gy], axis=1)


def _cast(dtype, *arrays):
    dt = compute_dtype(dtype)
    return [a.astype(dt, copy=False) for a in arrays]


def _check_target(op, target):
    if len(target) != 2 or target[0] <= 0 or target[1] <= 0:
        fail(op, f"target_shape should be two positive sizes (H, W), got {tuple(target)}")


# ---- GridGenerator ---------------------------------------------------------------------------

class GridGeneratorParam(Param):
    transform_type: Literal["affine", "warp"] = Field(
        description="'affine': data is an affine matrix per sample, (batch, 6); 'warp': data "
                    "is an optical flow, (batch, 2, h, w).")
    target_shape: tuple[int, ...] = Field(
        (0, 0), description="Output (H, W); needed by 'affine', ignored by 'warp'.")


def _grid_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    x = ins[0]
    if p.transform_type == "affine":
        _check_target(GRID, p.target_shape)
        h, w = p.target_shape
        if x is None and outs[0] is not None:
            ins[0] = x = (outs[0][0], 6)
        if x is None:
            return ins, outs
        if len(x) != 2 or x[1] != 6:
            fail(GRID, f"transform_type='affine' needs data of shape (batch, 6), got {tuple(x)}")
        return ins, result_shapes(GRID, outs, [(x[0], 2, h, w), (3, h * w)],
                                  ["output", "grid_dst"])
    if x is None and outs[0] is not None:
        ins[0] = x = tuple(outs[0])
    if x is None:
        return ins, outs
    if len(x) != 4 or x[1] != 2:
        fail(GRID, f"transform_type='warp' needs a flow of shape (batch, 2, h, w), got "
                   f"{tuple(x)}")
    return ins, result_shapes(GRID, outs, [tuple(x), (2, x[2], x[3])], ["output", "grid_dst"])


def _warp_scale(xp, h, w, dtype):
    return xp.asarray([(w - 1) / 2, (h - 1) / 2], dtype=dtype).reshape(1, 2, 1, 1)


def _grid_forward(ctx, inputs, req, outputs, p):
    xp, out = ctx.xp, outputs[0]
    dt = compute_dtype(out.dtype)
    if p.transform_type == "affine":
        h, w = p.target_shape
        dst = affine_dst_grid(xp, h, w, dt)
        theta = inputs[0].astype(dt, copy=False).reshape(-1, 3)
        put(outputs[1], req[1], dst)
        put(out, req[0], (theta @ dst).reshape(out.shape))
        return
    flow = inputs[0].astype(dt, copy=False)
    h, w = flow.shape[2:]
    dst = xp.stack([xp.broadcast_to(xp.arange(w, dtype=dt), (h, w)),
                    xp.broadcast_to(xp.arange(h, dtype=dt)[:, None], (h, w))])
    put(outputs[1], req[1], dst)
    put(out, req[0], (flow + dst) / _warp_scale(xp, h, w, dt) - 1)


def _grid_backward(ctx, inputs, req, outputs, p):
    og = inputs[0]
    dt = compute_dtype(og.dtype)
    if p.transform_type == "affine":
        dst = inputs[1].astype(dt, copy=False)
        g = og.astype(dt, copy=False).reshape(-1, dst.shape[1]) @ dst.T
        put(outputs[0], req[0], g.reshape(outputs[0].shape))
        return
    h, w = og.shape[2:]
    put(outputs[0], req[0], og.astype(dt, copy=False) / _warp_scale(ctx.xp, h, w, dt))


def _grid_grad(node, og):
    reads = [og[0], out_entry(node, 1)] if node.params.transform_type == "affine" else [og[0]]
    return grad_entries(backward_node(f"_backward_{GRID}", node, reads), 1)


def _grid_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{GRID}"
    g = ins[0]
    if p.transform_type == "affine":
        _check_target(op, p.target_shape)
        h, w = p.target_shape
        set_shape(op, ins, 1, (3, h * w), "input 'grid_dst'")
        if g is None and outs[0] is not None:
            ins[0] = (outs[0][0], 2, h, w)
        elif g is not None:
            set_shape(op, outs, 0, (g[0], 6), "output 0")
        return ins, outs
    if g is None and outs[0] is not None:
        ins[0] = tuple(outs[0])
    elif g is not None:
        set_shape(op, outs, 0, tuple(g), "output 0")
    return ins, outs


_AFFINE = np.array([[0.9, 0.1, 0.05, -0.1, 1.1, -0.05], [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]],
                   np.float32)

(register_op(GRID)
    .describe("Generates a sampling grid for BilinearSampler: from an affine matrix per "
              "sample (applied to the normalised target grid) or from an optical flow (added "
              "to the pixel grid, then normalised to [-1, 1]).")
    .set_attr_parser(GridGeneratorParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "grid_dst"])
    .set_attr("FInferShape", _grid_shape)
    .set_attr("FInferType", FloatOnly(same_type(GRID, ["data"])))
    .set_attr("FCompute<cpu>", _grid_forward)
    .set_attr("FGradient", _grid_grad)
    .set_attr("TExamples", [
        {"inputs": [_AFFINE], "params": {"transform_type": "affine", "target_shape": (3, 4)}},
        {"inputs": [(1, 6)], "params": {"transform_type": "affine", "target_shape": "(2, 5)"},
         "dtype": "float64"},
        {"inputs": [(2, 2, 3, 4)], "params": {"transform_type": "warp"}, "domain": (-2, 2)}])
    .add_argument("data", "NDArray-or-Symbol", "Affine matrices (batch, 6) or optical flow "
                  "(batch, 2, h, w)."))

(register_op(f"_backward_{GRID}")
    .describe("Gradient of GridGenerator from the output gradient (and grid_dst, affine).")
    .set_attr_parser(GridGeneratorParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: 2 if p.transform_type == "affine" else 1).set_num_outputs(1)
    .set_attr("FInferShape", _grid_backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{GRID}"))
    .set_attr("FCompute<cpu>", _grid_backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 3, 4), (3, 12)],
         "params": {"transform_type": "affine", "target_shape": (3, 4)}},
        {"inputs": [(2, 2, 3, 4)], "params": {"transform_type": "warp"}}]))


# ---- BilinearSampler -------------------------------------------------------------------------

class BilinearSamplerParam(Param):
    cudnn_off: bool | None = Field(None, description="Avoid cuDNN (ignored on cpu).")


def _check_4d(op, shape, name, what):
    if len(shape) != 4:
        fail(op, f"input {name!r} should be 4-d {what}, got {tuple(shape)}")


def _sampler_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    data, grid = ins
    if data is not None:
        _check_4d(SAMPLER, data, "data", "(batch, channel, y, x)")
    if grid is None and outs[0] is not None:
        ins[1] = grid = (outs[0][0], 2) + tuple(outs[0][2:])
    if grid is None:
        return ins, outs
    _check_4d(SAMPLER, grid, "grid", "(batch, 2, y, x)")
    if grid[1] != 2:
        fail(SAMPLER, f"input 'grid' should have 2 channels (x_src, y_src), got shape "
                      f"{tuple(grid)}")
    if data is None:
        return ins, outs
    if data[0] != grid[0]:
        fail(SAMPLER, f"input 'grid' has batch {grid[0]}, data has batch {data[0]}")
    return ins, result_shapes(SAMPLER, outs, [(data[0], data[1], grid[2], grid[3]),
                                              (grid[0], grid[2], grid[3], 2)],
                              ["output", "tmp"])


def _sampler_forward(ctx, inputs, req, outputs, p):
    data, grid = _cast(inputs[0].dtype, *inputs)
    n, _, h, w = grid.shape
    flat_grid = grid.reshape(n, 2, h * w)
    put(outputs[0], req[0], sample_forward(ctx.xp, data, flat_grid).reshape(outputs[0].shape))
    put(outputs[1], req[1], grid.transpose(0, 2, 3, 1))


def _sampler_backward(ctx, inputs, req, outputs, p):
    if not (req[0] or req[1]):
        return
    og, data, grid = _cast(inputs[0].dtype, *inputs)
    n, c, h, w = og.shape
    gdata, ggrid = sample_backward(ctx.xp, og.reshape(n, c, h * w), data,
                                   grid.reshape(n, 2, h * w), want_data=bool(req[0]))
    if req[0]:
        put(outputs[0], req[0], gdata)
    put(outputs[1], req[1], ggrid.reshape(grid.shape))


def _sampler_grad(node, og):
    n = backward_node(f"_backward_{SAMPLER}", node, [og[0], node.inputs[0], node.inputs[1]])
    return grad_entries(n, 2)


def _sampler_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{SAMPLER}"
    for k in (0, 1):
        if ins[k + 1] is not None:
            set_shape(op, outs, k, tuple(ins[k + 1]), f"output {k}")
        elif outs[k] is not None:
            ins[k + 1] = tuple(outs[k])
    data, grid = ins[1], ins[2]
    if data is not None and grid is not None:
        set_shape(op, ins, 0, (data[0], data[1], grid[2], grid[3]), "input 0 (head gradient)")
    return ins, outs


_RNG = np.random.default_rng(3)
# Grid points kept away from pixel lines (where bilinear sampling has kinks) and partly
# outside [-1, 1], so numeric gradients are well defined and the zero padding is exercised.
_GRID = (np.round(_RNG.uniform(-1.3, 1.3, (2, 2, 3, 4)) * 4) / 4 + 0.06).astype(np.float32)

(register_op(SAMPLER)
    .describe("Samples data (N, C, H, W) bilinearly at a grid (N, 2, h, w) of normalised "
              "source coordinates (x then y, in [-1, 1]); points outside the data read zeros. "
              "Output (N, C, h, w).")
    .set_attr_parser(BilinearSamplerParam)
    .set_num_inputs(2).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data", "grid"])
    .set_attr("FListOutputNames", lambda p: ["output", "tmp"])
    .set_attr("FInferShape", _sampler_shape)
    .set_attr("FInferType", FloatOnly(same_type(SAMPLER, ["data", "grid"])))
    .set_attr("FCompute<cpu>", _sampler_forward)
    .set_attr("FGradient", _sampler_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4, 5), _GRID]},
        {"inputs": [(2, 1, 3, 3), _GRID.astype(np.float64)], "dtype": "float64",
         "params": {"cudnn_off": "True"}}])
    .add_argument("data", "NDArray-or-Symbol", "Input data, (batch, channel, height, width).")
    .add_argument("grid", "NDArray-or-Symbol", "Sampling grid, (batch, 2, h, w): x_src and "
                  "y_src normalised to [-1, 1]."))

(register_op(f"_backward_{SAMPLER}")
    .describe("Gradient of BilinearSampler for the data and the grid.")
    .set_attr_parser(BilinearSamplerParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", _sampler_backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{SAMPLER}"))
    .set_attr("FCompute<cpu>", _sampler_backward)
    .set_attr("TExamples", [{"inputs": [(2, 3, 3, 4), (2, 3, 4, 5), _GRID]}]))


# ---- SpatialTransformer ----------------------------------------------------------------------

class SpatialTransformerParam(Param):
    target_shape: tuple[int, ...] = Field((0, 0), description="Output (H, W).")
    transform_type: Literal["affine"] = Field(description="Transformation type.")
    sampler_type: Literal["bilinear"] = Field(description="Sampling type.")
    cudnn_off: bool | None = Field(None, description="Avoid cuDNN (ignored on cpu).")


def _stn_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    _check_target(STN, p.target_shape)
    h, w = p.target_shape
    data, loc = ins
    batch = data[0] if data is not None else outs[0][0] if outs[0] is not None else None
    if data is not None:
        _check_4d(STN, data, "data", "(batch, channel, y, x)")
    if loc is None and batch is not None:
        ins[1] = loc = (batch, 6)
    if loc is not None and (len(loc) != 2 or loc[1] != 6):
        fail(STN, f"input 'loc' should be (batch, 6) for an affine transform, got {tuple(loc)}")
    if data is None:
        return ins, outs
    if loc[0] != data[0]:
        fail(STN, f"input 'loc' has batch {loc[0]}, data has batch {data[0]}")
    return ins, result_shapes(STN, outs, [(data[0], data[1], h, w), (3, h * w),
                                          (data[0], 2, h * w)],
                              ["output", "grid_dst", "grid_src"])


def _stn_forward(ctx, inputs, req, outputs, p):
    data, loc = _cast(inputs[0].dtype, *inputs)
    h, w = p.target_shape
    dst = affine_dst_grid(ctx.xp, h, w, data.dtype)
    src = loc.reshape(-1, 2, 3) @ dst
    put(outputs[1], req[1], dst)
    put(outputs[2], req[2], src)
    put(outputs[0], req[0], sample_forward(ctx.xp, data, src).reshape(outputs[0].shape))


def _stn_backward(ctx, inputs, req, outputs, p):
    if not (req[0] or req[1]):
        return
    og, dst, src, data = _cast(inputs[0].dtype, *inputs)
    n, c = og.shape[:2]
    gdata, gsrc = sample_backward(ctx.xp, og.reshape(n, c, -1), data, src,
                                  want_data=bool(req[0]))
    if req[0]:
        put(outputs[0], req[0], gdata)
    put(outputs[1], req[1], (gsrc @ dst.T).reshape(outputs[1].shape))


def _stn_grad(node, og):
    reads = [og[0], out_entry(node, 1), out_entry(node, 2), node.inputs[0]]
    return grad_entries(backward_node(f"_backward_{STN}", node, reads), 2)


def _stn_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{STN}"
    _check_target(op, p.target_shape)
    h, w = p.target_shape
    set_shape(op, ins, 1, (3, h * w), "input 'grid_dst'")
    if ins[3] is None and outs[0] is not None:
        ins[3] = tuple(outs[0])
    data = ins[3]
    if data is not None:
        set_shape(op, ins, 0, (data[0], data[1], h, w), "input 0 (head gradient)")
        set_shape(op, ins, 2, (data[0], 2, h * w), "input 'grid_src'")
        set_shape(op, outs, 0, tuple(data), "output 0")
        set_shape(op, outs, 1, (data[0], 6), "output 1")
    return ins, outs


# Chosen so that no sample point of the examples lies within 0.06 pixel of a pixel line.
_LOC = np.array([[1.03, -0.07, -0.17, 0.13, 1.19, 0.01], [1.06, -0.03, -0.18, -0.01, 1.0, 0.2]],
                np.float32)

(register_op(STN)
    .describe("Spatial transformer: an affine grid per sample (from loc, (batch, 6)) sampled "
              "bilinearly from data (N, C, H, W) into (N, C, target_shape).")
    .set_attr_parser(SpatialTransformerParam)
    .set_num_inputs(2).set_num_outputs(3)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data", "loc"])
    .set_attr("FListOutputNames", lambda p: ["output", "grid_dst", "grid_src"])
    .set_attr("FInferShape", _stn_shape)
    .set_attr("FInferType", FloatOnly(same_type(STN, ["data", "loc"])))
    .set_attr("FCompute<cpu>", _stn_forward)
    .set_attr("FGradient", _stn_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 5, 4), _LOC],
         "params": {"target_shape": (3, 4), "transform_type": "affine",
                    "sampler_type": "bilinear"}},
        {"inputs": [(2, 1, 4, 4), _LOC.astype(np.float64)], "dtype": "float64",
         "params": {"target_shape": "(2, 3)", "transform_type": "affine",
                    "sampler_type": "bilinear", "cudnn_off": "False"}}])
    .add_argument("data", "NDArray-or-Symbol", "Input data, (batch, channel, height, width).")
    .add_argument("loc", "NDArray-or-Symbol", "Localisation net output, (batch, 6): the "
                  "affine matrix of each sample (initialise it to the identity)."))

(register_op(f"_backward_{STN}")
    .describe("Gradient of SpatialTransformer for the data and loc.")
    .set_attr_parser(SpatialTransformerParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(4).set_num_outputs(2)
    .set_attr("FInferShape", _stn_backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{STN}"))
    .set_attr("FCompute<cpu>", _stn_backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 3, 4), affine_dst_grid(np, 3, 4, np.float32), (2, 2, 12),
                    (2, 2, 5, 4)],
         "params": {"target_shape": (3, 4), "transform_type": "affine",
                    "sampler_type": "bilinear"}}]))
