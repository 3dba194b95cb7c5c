"""Faster R-CNN's region proposal ops of MXNet's contrib namespace: _contrib_Proposal (one
image) and _contrib_MultiProposal (a batch). Forward only: as MXNet, the gradients are zeros.

Per image: anchors (``scales`` x ``ratios`` around a ``feature_stride`` cell, shifted over the
H x W map, ordered (y, x, anchor)) are decoded by ``bbox_pred`` (centre/size deltas, or corner
deltas with ``iou_loss``), clipped to the image ``im_info = (height, width, scale)``; anchors of
cells past the real image and boxes smaller than ``rpn_min_size * scale`` get score -1 (small
boxes are also widened by half the minimum size each side, as MXNet does); the
``rpn_pre_nms_top_n`` best (stable sort) go through greedy NMS, and the first
``rpn_post_nms_top_n`` kept boxes are the output, padded by repeating the kept ones cyclically.
Arithmetic follows MXNet's float/double mix so the boxes match it to the last bit or so.
"""

from __future__ import annotations

import functools

import numpy as np
from opsdk import Field, MakeZeroGradNodes, Param, register_op

from ._layer_rules import fail, put, result_shapes
from .multibox import _float32

SINGLE = "_contrib_Proposal"
MULTI = "_contrib_MultiProposal"
_F = np.float32


class ProposalParam(Param):
    rpn_pre_nms_top_n: int = Field(6000, description="Best-scoring boxes kept before NMS "
                                                     "(<= 0: all).")
    rpn_post_nms_top_n: int = Field(300, ge=1, description="Boxes output per image after NMS.")
    threshold: float = Field(0.7, description="NMS overlap (IoU) above which a box is "
                                              "suppressed.")
    rpn_min_size: int = Field(16, description="Minimum box height and width, in input-image "
                                              "pixels (times im_info's scale).")
    scales: tuple[float, ...] = Field((4.0, 8.0, 16.0, 32.0), description="Anchor scales.")
    ratios: tuple[float, ...] = Field((0.5, 1.0, 2.0), description="Anchor aspect ratios "
                                                                   "(height / width).")
    feature_stride: int = Field(16, description="Image pixels per feature map cell.")
    output_score: bool = Field(False, description="Also output the score of each box.")
    iou_loss: bool = Field(False, description="bbox_pred holds corner offsets (x1, y1, x2, y2) "
                                              "instead of centre/size deltas.")


def base_anchors(p):
    """(len(ratios) * len(scales), 4) anchors of the cell at the origin, ratio-major."""
    side = _F(p.feature_stride - 1.0)
    w = h = side + _F(1)
    ctr = _F(0.5 * (float(w) - 1.0))
    rows = []
    for ratio in p.ratios:
        for scale in p.scales:
            ratio, scale = _F(ratio), _F(scale)
            size_ratio = np.floor(w * h / ratio)
            new_w = np.floor(np.sqrt(size_ratio) + _F(0.5)) * scale
            new_h = np.floor(new_w / scale * ratio + _F(0.5)) * scale
            half_w, half_h = _F(0.5) * (new_w - _F(1)), _F(0.5) * (new_h - _F(1))
            rows.append([ctr - half_w, ctr - half_h, ctr + half_w, ctr + half_h])
    return np.asarray(rows, _F)


def _shifted_anchors(p, height, width):
    """Anchors over the map, (H * W * A, 4) in (y, x, anchor) order."""
    base = base_anchors(p)
    sx = (np.arange(width) * p.feature_stride).astype(_F)
    sy = (np.arange(height) * p.feature_stride).astype(_F)
    shift = np.stack(np.broadcast_arrays(sx[None, :], sy[:, None], sx[None, :], sy[:, None]),
                     axis=-1)                                     # (H, W, 4)
    return (base[None, None] + shift[:, :, None]).reshape(-1, 4)


def _half(v):
    """``0.5 * (v - 1.0)`` in double, as MXNet's mixed float/double expressions."""
    return 0.5 * (v.astype(np.float64) - 1.0)


def _decode(anchors, deltas, iou_loss):
    """Predicted corners (K, 4) from anchors (K, 4) and deltas (K, 4)."""
    if iou_loss:
        return anchors + deltas
    x1, y1, x2, y2 = anchors.T
    width, height = x2 - x1 + _F(1), y2 - y1 + _F(1)
    ctr_x = (x1 + _half(width)).astype(_F)
    ctr_y = (y1 + _half(height)).astype(_F)
    dx, dy, dw, dh = deltas.T
    px, py = dx * width + ctr_x, dy * height + ctr_y
    pw, ph = np.exp(dw) * width, np.exp(dh) * height
    return np.stack([px - _half(pw), py - _half(ph), px + _half(pw), py + _half(ph)],
                    axis=1).astype(_F)


def _overlaps(a, b):
    """MXNet's NMS overlap of every box of ``a`` (5, P: corners and area) with every box of
    ``b`` (5, Q), (P, Q), in float32 and the C++ operation order."""
    (ax1, ay1, ax2, ay2, aa), (bx1, by1, bx2, by2, ba) = a[:, :, None], b[:, None, :]
    w = np.maximum(_F(0), np.minimum(ax2, bx2) - np.maximum(ax1, bx1) + _F(1))
    h = np.maximum(_F(0), np.minimum(ay2, by2) - np.maximum(ay1, by1) + _F(1))
    inter = w * h
    return inter / (aa + ba - inter)


def _nms(boxes, threshold, limit, block=256):
    """Greedy NMS over boxes sorted by score: indices of at most ``limit`` kept boxes. Boxes
    go in blocks: a block is first tested against every box kept before it at once, then
    its survivors are settled in order among themselves; nothing past the block that
    reaches ``limit`` is looked at."""
    area = (boxes[:, 2] - boxes[:, 0] + _F(1)) * (boxes[:, 3] - boxes[:, 1] + _F(1))
    cols = np.ascontiguousarray(np.concatenate([boxes, area[:, None]], axis=1).T)
    thresh = _F(threshold)
    kept = np.empty(0, np.int64)
    for start in range(0, len(boxes), block):
        if kept.size >= limit:
            break
        cand = np.arange(start, min(start + block, len(boxes)))
        if kept.size:
            cand = cand[~(_overlaps(cols[:, kept], cols[:, cand]) > thresh).any(axis=0)]
        inner = _overlaps(cols[:, cand], cols[:, cand]) > thresh
        alive = np.ones(cand.size, bool)
        for i in range(cand.size):
            if alive[i]:
                alive[i + 1:] &= ~inner[i, i + 1:]
        kept = np.concatenate([kept, cand[alive]])
    return kept[:limit]


def propose(p, op, anchors, scores, deltas, info):
    """One image: scores (A, H, W) foreground, deltas (4A, H, W), info (3,) -> boxes
    (post_nms, 4) and their scores (post_nms,)."""
    a, height, width = scores.shape
    count = a * height * width
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    post = min(p.rpn_post_nms_top_n, pre)
    d = deltas.reshape(a, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
    boxes = _decode(anchors, d, p.iou_loss)
    im_h, im_w, im_scale = (_F(v) for v in info)
    boxes[:, 0::2] = np.clip(boxes[:, 0::2], _F(0), im_w - _F(1))
    boxes[:, 1::2] = np.clip(boxes[:, 1::2], _F(0), im_h - _F(1))
    score = scores.transpose(1, 2, 0).reshape(-1).copy()
    real_h, real_w = int(im_h / _F(p.feature_stride)), int(im_w / _F(p.feature_stride))
    if real_h > height or real_w > width:
        fail(op, f"im_info's image ({float(im_h)}, {float(im_w)}) over feature_stride "
                 f"{p.feature_stride} exceeds the feature map ({height}, {width})")
    padded = np.zeros((height, width, a), bool)
    padded[real_h:], padded[:, real_w:] = True, True
    score[padded.reshape(-1)] = -1
    min_size = _F(p.rpn_min_size) * im_scale
    small = ((boxes[:, 2] - boxes[:, 0] + _F(1) < min_size)
             | (boxes[:, 3] - boxes[:, 1] + _F(1) < min_size))
    boxes[small] += np.asarray([-1, -1, 1, 1], _F) * (min_size / _F(2))
    score[small] = -1
    order = np.argsort(-score, kind="stable")[:pre]
    boxes, score = boxes[order], score[order]
    keep = _nms(boxes, p.threshold, post)
    pick = keep[np.arange(p.rpn_post_nms_top_n) % len(keep)]
    return boxes[pick], score[pick]


def _proposal_shape(op, per_image):
    def infer(p, ins, outs):
        ins = list(ins)
        cls = ins[0]
        if cls is None:
            return ins, list(outs)
        if len(cls) != 4 or cls[1] % 2:
            fail(op, f"input 'cls_prob' should be (batch, 2 * num_anchors, H, W), got "
                     f"{tuple(cls)}")
        if per_image and cls[0] != 1:
            fail(op, f"input 'cls_prob' must hold one image (use _contrib_MultiProposal for a "
                     f"batch), got batch {cls[0]}")
        for i, name, want in ((1, "bbox_pred", (cls[0], cls[1] * 2, cls[2], cls[3])),
                              (2, "im_info", (cls[0], 3))):
            if ins[i] is not None and tuple(ins[i]) != want:
                fail(op, f"input {name!r} should be {want}, got {tuple(ins[i])}")
            ins[i] = want
        rows = cls[0] * p.rpn_post_nms_top_n
        return ins, result_shapes(op, outs, [(rows, 5), (rows, 1)], ["output", "score"])
    return infer


def _host(xp, x):
    """The array on the host: the greedy steps run on numpy whatever the device."""
    return np.asarray(x if xp is np else xp.asnumpy(x), _F)


def _forward(op, ctx, inputs, req, outputs, p):
    xp = ctx.xp
    cls, deltas, info = (_host(xp, x) for x in inputs)
    n, two_a, height, width = cls.shape
    a = two_a // 2
    if a != len(p.scales) * len(p.ratios):
        fail(op, f"cls_prob has {a} anchors per cell, but scales x ratios give "
                 f"{len(p.scales) * len(p.ratios)}")
    anchors = _shifted_anchors(p, height, width)
    rois, scores = [], []
    for b in range(n):
        boxes, score = propose(p, op, anchors, cls[b, a:], deltas[b], info[b])
        rois.append(np.concatenate([np.full((len(boxes), 1), b, _F), boxes], axis=1))
        scores.append(score[:, None])
    put(outputs[0], req[0], xp.asarray(np.concatenate(rois)))
    put(outputs[1], req[1], xp.asarray(np.concatenate(scores)))


def _examples(batch):
    info = np.array([[60, 70, 1.0], [50, 80, 0.5]][:batch], _F)
    return [{"inputs": [(batch, 12, 4, 5), (batch, 24, 4, 5), info], "grad": False,
             "domain": [(0.0, 1.0), (-0.5, 0.5), (0.0, 1.0)],
             "params": {"scales": (2, 4), "ratios": (0.5, 1, 2), "rpn_pre_nms_top_n": 40,
                        "rpn_post_nms_top_n": 12, "rpn_min_size": 4, "output_score": True}},
            {"inputs": [(batch, 2, 3, 3), (batch, 4, 3, 3), info], "grad": False,
             "params": {"scales": "(8,)", "ratios": "(1,)", "feature_stride": 30,
                        "threshold": 0.5, "iou_loss": True, "rpn_post_nms_top_n": 5}}]


def _register(name, per_image, describe):
    (register_op(name)
        .describe(describe)
        .set_attr_parser(ProposalParam)
        .set_num_inputs(3).set_num_outputs(2)
        .set_attr("FNumVisibleOutputs", lambda p: 2 if p.output_score else 1)
        .set_attr("FListInputNames", lambda p: ["cls_prob", "bbox_pred", "im_info"])
        .set_attr("FListOutputNames", lambda p: ["output", "score"])
        .set_attr("FInferShape", _proposal_shape(name, per_image))
        .set_attr("FInferType", _float32(name, ["cls_prob", "bbox_pred", "im_info"]))
        .set_attr("FCompute<cpu>", functools.partial(_forward, name))
        .set_attr("FGradient", MakeZeroGradNodes)
        .set_attr("TExamples", _examples(1 if per_image else 2))
        .add_argument("cls_prob", "NDArray-or-Symbol", "Background then foreground scores "
                      "per anchor, (batch, 2 * num_anchors, H, W).")
        .add_argument("bbox_pred", "NDArray-or-Symbol", "Box deltas per anchor, (batch, "
                      "4 * num_anchors, H, W).")
        .add_argument("im_info", "NDArray-or-Symbol", "Per image (height, width, scale), "
                      "(batch, 3)."))


_register(SINGLE, True, "Region proposals of one image from an RPN's scores and box deltas: "
          "decoded anchors, clipped, small ones dropped, NMS. Output (rpn_post_nms_top_n, 5) "
          "rows [0, x1, y1, x2, y2] and, with output_score, their scores.")
_register(MULTI, False, "Region proposals of each image of a batch, as _contrib_Proposal: "
          "output (batch * rpn_post_nms_top_n, 5) rows [batch_index, x1, y1, x2, y2] and, "
          "with output_score, their scores.")
