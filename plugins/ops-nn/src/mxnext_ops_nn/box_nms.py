"""Non-maximum suppression and bipartite matching of MXNet's contrib namespace:
_contrib_box_nms (alias _contrib_box_non_maximum_suppression; its hidden second output records
where each kept box came from, and the gradient follows that record back) and
_contrib_bipartite_matching (zero gradients).

Both are greedy: suppression walks the candidates in score order, matching takes the best free
pair; each step handles every batch in one array operation.
"""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseType, Field, FloatOnly, Param, register_op
from opsdk.shape import dim_known

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, out_entry, put,
                           result_shapes, set_shape, set_type)
from .detection import (BOX_FORMAT, Format, area, intersection, like_forward_inputs,
                        zero_grad_rule, zero_grads)

# ---- box_nms ---------------------------------------------------------------------------------

NMS = "_contrib_box_nms"
NMS_BWD = "_backward_contrib_box_nms"


class BoxNMSParam(Param):
    overlap_thresh: float = Field(0.5, description="IoU above which the lower-scored of two "
                                                   "boxes is suppressed.")
    valid_thresh: float = Field(0.0, description="Only boxes scoring above this take part.")
    topk: int = Field(-1, description="Run nms on the topk best-scored boxes of each batch "
                                      "only (the rest are dropped); -1 for all.")
    coord_start: int = Field(2, description="Index of the first of the 4 coordinates.")
    score_index: int = Field(1, description="Index of the score.")
    id_index: int = Field(-1, description="Index of the class id, -1 for none.")
    background_id: int = Field(-1, description="Class id of background boxes, dropped before "
                                               "nms (with id_index >= 0).")
    force_suppress: bool = Field(False, description="Suppress across classes; when False and "
                                                    "id_index >= 0, only within a class.")
    in_format: Format = Field("corner", description="Input box encoding. " + BOX_FORMAT)
    out_format: Format = Field("corner", description="Output box encoding. " + BOX_FORMAT)


def _nms_check_width(p, width):
    need = 6 if p.id_index >= 0 else 5
    if width < need:
        fail(NMS, f"the last dim holds a box of (score, 4 coordinates{', id' * (need == 6)}): "
                  f"at least {need} elements expected, got {width}")
    coords = range(p.coord_start, p.coord_start + 4)
    if p.coord_start < 0 or coords[-1] >= width:
        fail(NMS, f"coordinates {coords[0]}..{coords[-1]} out of range [0, {width})")
    for name in ("score_index", "id_index"):
        k = getattr(p, name)
        if name == "id_index" and k < 0:
            continue
        if not 0 <= k < width:
            fail(NMS, f"{name}={k} out of range [0, {width})")
        if k in coords:
            fail(NMS, f"{name}={k} conflicts with coordinates {coords[0]}..{coords[-1]}")
    if p.id_index >= 0 and p.id_index == p.score_index:
        fail(NMS, f"id_index={p.id_index} conflicts with score_index")


def _nms_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and outs[0] is not None:
        ins[0] = tuple(outs[0])
    data = ins[0]
    if data is None:
        return ins, list(outs)
    if len(data) < 2:
        fail(NMS, f"input 'data' should have at least 2 dims (..., num_box, box_width), got "
                  f"{tuple(data)}")
    if dim_known(data[-1]):
        _nms_check_width(p, data[-1])
    return ins, result_shapes(NMS, outs, [tuple(data), tuple(data[:-1]) + (1,)])


def _convert(xp, box, to):
    """corner <-> center of rows ``box`` (..., 4), skipping rows whose first coordinate is
    negative (MXNet's test for a -1 row, which also skips real boxes left of 0)."""
    a, b, c, d = (box[..., k] for k in range(4))
    if to == "center":
        new = xp.stack([(a + c) / 2, (b + d) / 2, c - a, d - b], axis=-1)
    else:
        new = xp.stack([a - c / 2, b - d / 2, a + c / 2, b + d / 2], axis=-1)
    return xp.where(box[..., :1] < 0, box, new)


def _nms_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data = inputs[0]
    width = data.shape[-1]
    n = data.shape[-2]
    x = data.reshape(-1, n, width)
    b = x.shape[0]
    topk = n if p.topk < 0 else min(n, p.topk)
    if topk < 1:
        put(outputs[0], req[0], data)
        put(outputs[1], req[1], xp.arange(b * n).reshape(outputs[1].shape))
        return
    dt = compute_dtype(data.dtype)
    scores = x[..., p.score_index]
    valid = scores > p.valid_thresh
    if p.id_index >= 0:
        valid &= x[..., p.id_index] != p.background_id
    # per batch: valid boxes by descending score (ties in input order), then the rest
    order = xp.argsort(xp.where(valid, -scores.astype(dt), xp.inf), axis=1, kind="stable")
    count = valid.sum(axis=1, keepdims=True)
    k = int(min(topk, int(count.max())))     # candidates: at most topk valid boxes per batch
    cand = order[:, :k]
    alive = xp.arange(k) < count
    rows = xp.take_along_axis(x, cand[..., None], axis=1).astype(dt, copy=False)
    boxes = rows[..., p.coord_start:p.coord_start + 4]
    size = area(xp, boxes, p.in_format)
    per_class = not p.force_suppress and p.id_index >= 0
    ids = rows[..., p.id_index].astype(np.int64) if per_class else None
    for i in range(k - 1):               # greedy: a kept box suppresses the later ones it hits
        ref = alive[:, i]
        if not bool(ref.any()):
            continue
        inter = intersection(xp, boxes[:, i:i + 1], boxes[:, i + 1:], p.in_format)
        clash = inter / (size[:, i:i + 1] + size[:, i + 1:] - inter) > p.overlap_thresh
        if per_class:
            clash &= ids[:, i:i + 1] == ids[:, i + 1:]
        alive[:, i + 1:] &= ~(ref[:, None] & clash)
    slot = xp.cumsum(alive, axis=1) - 1
    bi, ki = xp.nonzero(alive)
    out = xp.full(x.shape, -1, data.dtype)
    record = xp.full((b, n), -1, np.int64)
    out[bi, slot[bi, ki]] = x[bi, cand[bi, ki]]
    record[bi, slot[bi, ki]] = bi * n + cand[bi, ki]
    if p.in_format != p.out_format:
        c = slice(p.coord_start, p.coord_start + 4)
        out[..., c] = _convert(xp, out[..., c].astype(dt), p.out_format)
    put(outputs[0], req[0], out.reshape(data.shape))
    put(outputs[1], req[1], record.reshape(outputs[1].shape))


def _nms_backward(ctx, inputs, req, outputs, p):
    """inputs: head gradients of (out, record), then out and record; each kept output row's
    gradient goes back to the input row it came from, suppressed rows get zeros."""
    xp = ctx.xp
    og, record = inputs[0], inputs[3]
    width = og.shape[-1]
    rec = record.reshape(-1).astype(np.int64)
    kept = rec >= 0
    g = xp.zeros((rec.size, width), outputs[0].dtype)
    g[rec[kept]] = og.reshape(-1, width)[kept]
    put(outputs[0], req[0], g.reshape(outputs[0].shape))


def _nms_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if ins[0] is not None:
        set_shape(NMS_BWD, outs, 0, tuple(ins[0]), "output 0")
    return ins, outs


def _nms_grad(node, og):
    reads = [og[0], og[1], out_entry(node, 0), out_entry(node, 1)]
    return grad_entries(backward_node(NMS_BWD, node, reads), 1)


_NMS_DATA = np.array([[[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                       [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]],
                      [[1, 0.2, 0.3, 0.3, 0.6, 0.6], [1, 0.9, 0.32, 0.3, 0.6, 0.61],
                       [0, 0.05, 0.1, 0.1, 0.3, 0.3], [1, 0.7, 0.0, 0.0, 0.1, 0.1]]])

(register_op(NMS)
    .add_alias("_contrib_box_non_maximum_suppression")
    .describe("Non-maximum suppression over boxes (..., num_box, width) laid out as [id, "
              "score, xmin, ymin, xmax, ymax, ...] by default (see coord_start, score_index, "
              "id_index): in each batch, boxes scoring above valid_thresh (and not of "
              "background_id) are sorted by descending score, the topk best kept as "
              "candidates, and a box overlapping a better kept one by IoU > overlap_thresh "
              "(of the same class unless force_suppress) is dropped. The kept boxes come "
              "first, in score order, the rest of the rows are -1. The gradient follows each "
              "kept box back to its input row (zeros elsewhere).")
    .set_attr_parser(BoxNMSParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FInferShape", _nms_shape)
    .set_attr("FInferType", FloatOnly(ElemwiseType(1, 2, NMS)))
    .set_attr("FCompute<cpu>", _nms_forward)
    .set_attr("FGradient", _nms_grad)
    .set_attr("TExamples", [
        {"inputs": [_NMS_DATA], "dtype": "float64", "grad": [0],
         "params": {"overlap_thresh": 0.1, "id_index": 0, "force_suppress": True}},
        # ids and the background test are step functions: no numeric gradient across them
        {"inputs": [_NMS_DATA.astype(np.float32)], "grad": False,
         "params": {"overlap_thresh": 0.3, "id_index": 0, "topk": 3, "valid_thresh": 0.1}},
        {"inputs": [_NMS_DATA[0]], "dtype": "float64", "grad": False,
         "params": {"id_index": 0, "background_id": 2, "in_format": "center",
                    "out_format": "corner"}}])
    .add_argument("data", "NDArray-or-Symbol", "Boxes, (..., num_box, box_width)."))

(register_op(NMS_BWD)
    .describe("Gradient of box_nms: each kept output row's head gradient is written to the "
              "input row the record names; other rows get zeros.")
    .set_attr_parser(BoxNMSParam).set_attr("TIsBackward", True)
    .set_num_inputs(4).set_num_outputs(1)
    .set_attr("FInferShape", _nms_backward_shape)
    .set_attr("FInferType", ElemwiseType(4, 1, NMS_BWD))
    .set_attr("FCompute<cpu>", _nms_backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 6), (2, 3, 1), (2, 3, 6), np.array([[[4], [-1], [-1]],
                                                                 [[1], [0], [-1]]], np.float32)],
         "grad": False}]))


# ---- bipartite_matching ----------------------------------------------------------------------

MATCH = "_contrib_bipartite_matching"
MATCH_BWD = "_backward_contrib_bipartite_matching"


class BipartiteMatchingParam(Param):
    is_ascend: bool = Field(False, description="Match the lowest scores first (then only "
                                               "scores below threshold match).")
    threshold: float = Field(description="Only scores above it match (below it when "
                                         "is_ascend).")
    topk: int = Field(-1, description="Stop after topk matches (MXNet makes one more before "
                                      "stopping); -1 for no limit.")


def _match_shape(p, ins, outs):
    data = ins[0]
    if data is None:
        return list(ins), list(outs)
    if len(data) < 2:
        fail(MATCH, f"input 'data' should have at least 2 dims (..., rows, cols), got "
                    f"{tuple(data)}")
    return list(ins), result_shapes(MATCH, outs, [tuple(data[:-1]),
                                                  tuple(data[:-2]) + (data[-1],)])


def _match_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    data = inputs[0]
    r, c = data.shape[-2:]
    s = data.reshape(-1, r * c)
    b = s.shape[0]
    order = xp.argsort(s if p.is_ascend else -s, axis=1, kind="stable")
    rank = xp.empty_like(order)
    xp.put_along_axis(rank, order, xp.arange(r * c)[None], axis=1)
    ok = (s < p.threshold) if p.is_ascend else (s > p.threshold)
    big = r * c
    rank = xp.where(ok, rank, big).reshape(b, r, c)   # a failing score is never matched
    row = xp.full((b, r), -1, np.int64)
    col = xp.full((b, c), -1, np.int64)
    count = xp.zeros(b, np.int64)
    batch = xp.arange(b)
    for _ in range(min(r, c)):          # each step matches the best free pair of each batch
        best = rank.reshape(b, -1).argmin(axis=1)
        go = (rank.reshape(b, -1)[batch, best] < big)
        if p.topk > 0:
            go &= count <= p.topk
        if not bool(go.any()):
            break
        bi, i, j = batch[go], best[go] // c, best[go] % c
        row[bi, i], col[bi, j] = j, i
        count[bi] += 1
        rank[bi, i, :] = big
        rank[bi, :, j] = big
    put(outputs[0], req[0], row.reshape(outputs[0].shape))
    put(outputs[1], req[1], col.reshape(outputs[1].shape))


(register_op(MATCH)
    .describe("Greedy bipartite matching of a score matrix (..., N, M): repeatedly the best "
              "remaining score above threshold (below it with is_ascend) matches its row and "
              "column, which then leave the pool. Outputs the matched column of each row (..., "
              "N) and the matched row of each column (..., M), -1 where unmatched. Zero "
              "gradients.")
    .set_attr_parser(BipartiteMatchingParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FInferShape", _match_shape)
    .set_attr("FInferType", FloatOnly(ElemwiseType(1, 2, MATCH)))
    .set_attr("FCompute<cpu>", _match_forward)
    .set_attr("FGradient", zero_grad_rule(MATCH_BWD, 2))
    .set_attr("TExamples", [
        {"inputs": [np.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]], np.float32)], "grad": False,
         "params": {"threshold": 1e-12}},
        {"inputs": [(2, 4, 3)], "dtype": "float64", "grad": False,
         "params": {"threshold": 0.3, "is_ascend": True, "topk": 1}}])
    .add_argument("data", "NDArray-or-Symbol", "Scores, (..., N, M)."))

(register_op(MATCH_BWD)
    .describe("Gradient of bipartite_matching: zeros. Reads the two head gradients and the "
              "forward scores (for their shape).")
    .set_attr_parser(BipartiteMatchingParam).set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", like_forward_inputs(MATCH_BWD, 2, set_shape))
    .set_attr("FInferType", like_forward_inputs(MATCH_BWD, 2, set_type))
    .set_attr("FCompute<cpu>", zero_grads)
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 4), (2, 3, 4)],
                             "params": {"threshold": 0.5}}]))
