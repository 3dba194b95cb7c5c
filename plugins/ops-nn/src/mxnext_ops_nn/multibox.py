"""SSD's multibox ops of MXNet's contrib namespace: _contrib_MultiBoxPrior (anchor boxes),
_contrib_MultiBoxTarget (training targets of the anchors against labelled boxes) and
_contrib_MultiBoxDetection (decoded, suppressed detections), with MXNet's _npx_ aliases. All
three send zero gradients back and, as MXNet's legacy operators, take float32 only.

Boxes are corner-encoded [xmin, ymin, xmax, ymax] in image fractions. Anchors are shared by
the batch, (1, num_anchors, 4). The greedy steps (matching ground truths to anchors, non-maximum
suppression) loop over boxes with array operations over the rest.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, MakeZeroGradNodes, MXNetError, Param, register_op
from pydantic import model_validator

from ._infer import assign_type
from ._layer_rules import fail, put, result_shapes

PRIOR = "_contrib_MultiBoxPrior"
TARGET = "_contrib_MultiBoxTarget"
DETECT = "_contrib_MultiBoxDetection"
_VARIANCES = "Variances of the box regression: (x, y, width, height)."


def _need_dims(op, shape, name, ndim):
    if shape is not None and len(shape) != ndim:
        fail(op, f"input {name!r} should have {ndim} dims, got {tuple(shape)}")


def _check_anchor(op, shape):
    _need_dims(op, shape, "anchor", 3)
    if shape is not None and (shape[0] != 1 or shape[2] != 4 or shape[1] <= 0):
        fail(op, f"input 'anchor' should be (1, num_anchors, 4), shared by the batch, got "
                 f"{tuple(shape)}")


def _float32(op, names):
    """FInferType of MXNet's legacy operators: every input and output is float32."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for i, name in enumerate(names):
            assign_type(op, ins, i, np.float32, f"input {name!r}")
        for k in range(len(outs)):
            assign_type(op, outs, k, np.float32, f"output {k}")
        return ins, outs
    return infer


def _iou_table(xp, a, b):
    """IoU of every box of ``a`` (..., A, 4) with every box of ``b`` (..., G, 4), no clamping
    of inverted boxes, 0 where the union is not positive (MultiBox's rule)."""
    a, b = a[..., :, None, :], b[..., None, :, :]
    w = xp.maximum(xp.minimum(a[..., 2], b[..., 2]) - xp.maximum(a[..., 0], b[..., 0]), 0)
    h = xp.maximum(xp.minimum(a[..., 3], b[..., 3]) - xp.maximum(a[..., 1], b[..., 1]), 0)
    inter = w * h
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]) - inter)
    return xp.where(union > 0, inter / xp.where(union > 0, union, 1), 0)


# ---- MultiBoxPrior ---------------------------------------------------------------------------

class MultiBoxPriorParam(Param):
    sizes: tuple[float, ...] = Field((1.0,), description="Anchor sizes, fractions of the image "
                                                         "height.")
    ratios: tuple[float, ...] = Field((1.0,), description="Anchor aspect ratios (width / "
                                                          "height).")
    clip: bool = Field(False, description="Clip the anchors to the image, [0, 1].")
    steps: tuple[float, ...] = Field((-1.0, -1.0), description="Distance between anchor "
                                     "centres, (y, x); -1 for 1 / feature map size.")
    offsets: tuple[float, ...] = Field((0.5, 0.5), description="Anchor centre offset within a "
                                                               "cell, (y, x), in [0, 1].")

    @model_validator(mode="after")
    def _check(self):
        if not self.sizes or not self.ratios:
            raise ValueError("sizes and ratios need at least one value each")
        if len(self.steps) != 2 or len(self.offsets) != 2:
            raise ValueError(f"steps and offsets need 2 values (y, x), got {self.steps} and "
                             f"{self.offsets}")
        if not all(0 <= o <= 1 for o in self.offsets):
            raise ValueError(f"offsets must lie in [0, 1], got {self.offsets}")
        if self.steps[0] * self.steps[1] < 0:
            raise ValueError(f"steps must give both step_y and step_x (or neither), got "
                             f"{self.steps}")
        return self


def _prior_shape(p, ins, outs):
    data = ins[0]
    if data is None:
        return list(ins), list(outs)
    if len(data) < 4:
        fail(PRIOR, f"input 'data' should be 4-d (batch, channel, y, x), got {tuple(data)}")
    n = data[2] * data[3] * (len(p.sizes) + len(p.ratios) - 1)
    return list(ins), result_shapes(PRIOR, outs, [(1, n, 4)])


def _prior_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    f = np.float32                       # MXNet computes anchors in float whatever the dtype
    h, w = inputs[0].shape[2:4]
    step_y, step_x = (f(s) for s in p.steps)
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = f(1) / f(h), f(1) / f(w)
    cy = (xp.arange(h, dtype=f) + f(p.offsets[0])) * step_y
    cx = (xp.arange(w, dtype=f) + f(p.offsets[1])) * step_x
    sizes = [(s, p.ratios[0]) for s in p.sizes] + [(p.sizes[0], r) for r in p.ratios[1:]]
    size = xp.asarray([s for s, _ in sizes], dtype=f)
    root = xp.sqrt(xp.asarray([r for _, r in sizes], dtype=f))
    half_w = size * f(h) / f(w) * root / f(2)
    half_h = size / root / f(2)
    cy, cx = cy[:, None, None], cx[None, :, None]   # (H, W, anchors per location)
    boxes = xp.stack(xp.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w, cy + half_h),
                     axis=-1)
    if p.clip:
        boxes = xp.clip(boxes, 0, 1)
    put(outputs[0], req[0], boxes.reshape(outputs[0].shape))


(register_op(PRIOR)
    .add_alias("_npx_multibox_prior")
    .describe("Anchor boxes for every cell of a feature map (batch, channel, H, W): at each "
              "cell centre ((y + offset_y) * step_y, (x + offset_x) * step_x), one box per "
              "size with the first ratio, then one per further ratio with the first size; a "
              "box of size s and ratio r is s * H / W * sqrt(r) wide and s / sqrt(r) high. "
              "Output (1, H * W * (len(sizes) + len(ratios) - 1), 4), corner-encoded.")
    .set_attr_parser(MultiBoxPriorParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", _prior_shape)
    .set_attr("FInferType", _float32(PRIOR, ["data"]))
    .set_attr("FCompute<cpu>", _prior_forward)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(1, 2, 3, 4)], "grad": False,
         "params": {"sizes": (0.75, 0.5), "ratios": (1, 2, 0.5)}},
        {"inputs": [(2, 1, 2, 5)], "grad": False,
         "params": {"sizes": "(0.9,)", "ratios": "(2,)", "clip": True, "steps": (0.3, 0.2),
                    "offsets": (0.2, 0.7)}}])
    .add_argument("data", "NDArray-or-Symbol", "Feature map (batch, channel, H, W); only its "
                  "shape is read."))


# ---- MultiBoxTarget --------------------------------------------------------------------------

class MultiBoxTargetParam(Param):
    overlap_threshold: float = Field(0.5, description="IoU above which an anchor matches a "
                                                      "ground truth.")
    ignore_label: float = Field(-1.0, description="Class target of anchors that are neither "
                                                  "positive nor negative.")
    negative_mining_ratio: float = Field(-1.0, description="Negatives per positive kept by "
                                         "hard negative mining; <= 0 makes every unmatched "
                                         "anchor negative.")
    negative_mining_thresh: float = Field(0.5, description="Only anchors with IoU below it may "
                                                           "be mined as negatives.")
    minimum_negative_samples: int = Field(0, description="Minimum number of negatives (accepted; "
                                                         "unused, as in MXNet's CPU kernel).")
    variances: tuple[float, ...] = Field((0.1, 0.1, 0.2, 0.2), description=_VARIANCES)

    @model_validator(mode="after")
    def _check(self):
        if len(self.variances) != 4:
            raise ValueError(f"variances needs 4 values, got {self.variances}")
        return self


def _target_shape(p, ins, outs):
    anchor, label, pred = ins
    _check_anchor(TARGET, anchor)
    _need_dims(TARGET, label, "label", 3)
    _need_dims(TARGET, pred, "cls_pred", 3)
    if label is not None and (label[1] <= 0 or label[2] < 5):
        fail(TARGET, f"input 'label' should be (batch, num_labels > 0, width >= 5), got "
                     f"{tuple(label)}")
    if pred is not None and anchor is not None and pred[2] != anchor[1]:
        fail(TARGET, f"input 'cls_pred' (batch, classes, anchors) has {pred[2]} anchors, "
                     f"'anchor' has {anchor[1]}")
    if anchor is None or label is None:
        return list(ins), list(outs)
    b, a = label[0], anchor[1]
    return list(ins), result_shapes(TARGET, outs, [(b, a * 4), (b, a * 4), (b, a)],
                                    ["loc_target", "loc_mask", "cls_target"])


def _match(xp, iou, p):
    """Per anchor: (matched ground truth or -1, best IoU, positive). Ground truths first take
    their best anchor greedily, then anchors above overlap_threshold take their best truth."""
    a, g = iou.shape
    gt = xp.full(a, -1, np.int64)
    pos = xp.zeros(a, bool)
    free = iou.astype(np.float32)
    for _ in range(g):
        k = int(free.argmax())
        if not free.reshape(-1)[k] > np.float32(1e-6):
            break
        j, t = divmod(k, g)
        gt[j], pos[j] = t, True
        free[j, :] = -1
        free[:, t] = -1
    best = iou.astype(np.float32).max(axis=1)
    if p.overlap_threshold > 0:
        more = ~pos & (best > np.float32(p.overlap_threshold))
        gt = xp.where(more, iou.argmax(axis=1), gt)
        pos |= more
    return gt, best, pos


def _target_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    f = np.float32
    anchors, labels, preds = inputs
    anchors = anchors.reshape(-1, 4)
    b, a = labels.shape[0], anchors.shape[0]
    loc = xp.zeros((b, a, 4), f)
    mask = xp.zeros((b, a, 4), f)
    cls = xp.full((b, a), f(p.ignore_label), f)
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) * f(0.5), (anchors[:, 1] + anchors[:, 3]) * f(0.5)
    var = [f(v) for v in p.variances]
    for n in range(b):
        ends = xp.nonzero(labels[n, :, 0] == -1)[0]
        g = int(ends[0]) if ends.size else labels.shape[1]   # labels end at the first -1 row
        if g == 0:
            continue
        gts = labels[n, :g]
        gt, best, pos = _match(xp, _iou_table(xp, anchors, gts[:, 1:5]), p)
        if p.negative_mining_ratio > 0:
            num_pos = int(pos.sum())
            want = min(int(f(num_pos) * f(p.negative_mining_ratio)), a - num_pos)
            neg = xp.zeros(a, bool)
            if want > 0:
                cand = xp.nonzero(~pos & (best < f(p.negative_mining_thresh)))[0]
                if cand.size < want:
                    raise MXNetError(f"Operator {TARGET!r}: negative mining wants {want} "
                                     f"negatives, only {cand.size} anchors qualify")
                z = preds[n][:, cand]
                e = xp.exp(z - z.max(axis=0))
                background = e[0] / e.sum(axis=0)
                neg[cand[xp.argsort(background, kind="stable")[:want]]] = True
        else:
            neg = ~pos
        box = gts[xp.where(pos, gt, 0), 1:5]
        gw, gh = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
        gx, gy = (box[:, 0] + box[:, 2]) * f(0.5), (box[:, 1] + box[:, 3]) * f(0.5)
        t = xp.stack([(gx - ax) / aw / var[0], (gy - ay) / ah / var[1],
                      xp.log(gw / aw) / var[2], xp.log(gh / ah) / var[3]], axis=-1)
        loc[n] = xp.where(pos[:, None], t, 0)
        mask[n] = pos[:, None]
        cls[n] = xp.where(pos, gts[xp.where(pos, gt, 0), 0] + 1, xp.where(neg, 0, cls[n]))
    put(outputs[0], req[0], loc.reshape(b, -1))
    put(outputs[1], req[1], mask.reshape(b, -1))
    put(outputs[2], req[2], cls)


_ANCHOR = np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.0, 0.0, 0.4, 0.5],
                     [0.45, 0.55, 0.9, 0.95]]], np.float32)
_LABEL = np.array([[[1, 0.1, 0.1, 0.5, 0.6], [0, 0.5, 0.5, 0.8, 0.9], [-1, -1, -1, -1, -1]],
                   [[2, 0.0, 0.1, 0.3, 0.45], [-1, -1, -1, -1, -1], [-1, -1, -1, -1, -1]]],
                  np.float32)

(register_op(TARGET)
    .add_alias("_npx_multibox_target")
    .describe("Training targets of anchors (1, A, 4) for labels (batch, L, [class, xmin, ymin, "
              "xmax, ymax, ...], padded with -1 rows): each ground truth first claims its best "
              "anchor, then anchors whose best IoU exceeds overlap_threshold are matched too. "
              "Matched anchors get class target class + 1, a mask of ones and the regression "
              "target of their truth (centre offsets and log sizes over variances); negatives "
              "(all others, or with negative_mining_ratio the ones with the lowest background "
              "probability under softmax(cls_pred) and IoU below negative_mining_thresh) get "
              "class 0; the rest ignore_label. Outputs loc_target and loc_mask (batch, A * 4), "
              "cls_target (batch, A).")
    .set_attr_parser(MultiBoxTargetParam)
    .set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["anchor", "label", "cls_pred"])
    .set_attr("FListOutputNames", lambda p: ["loc_target", "loc_mask", "cls_target"])
    .set_attr("FInferShape", _target_shape)
    .set_attr("FInferType", _float32(TARGET, ["anchor", "label", "cls_pred"]))
    .set_attr("FCompute<cpu>", _target_forward)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [_ANCHOR, _LABEL, (2, 3, 4)], "grad": False},
        {"inputs": [_ANCHOR, _LABEL, (2, 3, 4)], "grad": False,
         "params": {"overlap_threshold": 0.3, "negative_mining_ratio": 1,
                    "negative_mining_thresh": 0.4, "ignore_label": -2,
                    "variances": (0.1, 0.1, 0.2, 0.3)}}])
    .add_argument("anchor", "NDArray-or-Symbol", "Anchors, (1, A, 4).")
    .add_argument("label", "NDArray-or-Symbol", "Labels, (batch, L, >= 5).")
    .add_argument("cls_pred", "NDArray-or-Symbol", "Class predictions, (batch, classes, A)."))


# ---- MultiBoxDetection -----------------------------------------------------------------------

class MultiBoxDetectionParam(Param):
    clip: bool = Field(True, description="Clip the decoded boxes to the image, [0, 1].")
    threshold: float = Field(0.01, description="Score a detection needs to be kept.")
    background_id: int = Field(0, description="Background class id (accepted; class 0 is the "
                                              "background, as in MXNet's kernel).")
    nms_threshold: float = Field(0.5, description="IoU at or above which the lower-scored of "
                                                  "two detections is dropped; outside (0, 1] "
                                                  "no suppression and no sorting.")
    force_suppress: bool = Field(False, description="Suppress across classes.")
    variances: tuple[float, ...] = Field((0.1, 0.1, 0.2, 0.2), description=_VARIANCES)
    nms_topk: int = Field(-1, description="Keep only the nms_topk best detections before nms; "
                                          "-1 for all.")

    @model_validator(mode="after")
    def _check(self):
        if len(self.variances) != 4:
            raise ValueError(f"variances needs 4 values, got {self.variances}")
        return self


def _detect_shape(p, ins, outs):
    prob, loc, anchor = ins
    _need_dims(DETECT, prob, "cls_prob", 3)
    _need_dims(DETECT, loc, "loc_pred", 2)
    _check_anchor(DETECT, anchor)
    if prob is not None and anchor is not None and prob[2] != anchor[1]:
        fail(DETECT, f"input 'cls_prob' has {prob[2]} anchors, 'anchor' has {anchor[1]}")
    if prob is not None and loc is not None and loc[1] != prob[2] * 4:
        fail(DETECT, f"input 'loc_pred' should hold 4 values per anchor ({prob[2] * 4}), got "
                     f"{loc[1]}")
    if prob is None or anchor is None:
        return list(ins), list(outs)
    return list(ins), result_shapes(DETECT, outs, [(prob[0], anchor[1], 6)])


def _decode(xp, anchors, loc, p, dt):
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2
    v = [dt.type(x) for x in p.variances]
    ox, oy = loc[..., 0] * v[0] * aw + ax, loc[..., 1] * v[1] * ah + ay
    ow, oh = xp.exp(loc[..., 2] * v[2]) * aw / 2, xp.exp(loc[..., 3] * v[3]) * ah / 2
    box = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    return xp.clip(box, 0, 1) if p.clip else box


def _detect_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dt = np.dtype(np.float32)
    prob, loc, anchors = inputs
    b, c, a = prob.shape
    anchors = anchors.reshape(-1, 4)
    box = _decode(xp, anchors, loc.reshape(b, a, 4), p, dt)
    if c > 1:
        cls = prob[:, 1:].argmax(axis=1) + 1
        score = prob[:, 1:].max(axis=1)
        score = xp.where(score > -1, score, -1)   # MXNet starts its search from -1
        cls = xp.where(score > -1, cls, 0)
    else:
        cls, score = xp.zeros((b, a), np.int64), xp.full((b, a), -1, dt)
    cls = xp.where((cls > 0) & (score < p.threshold), 0, cls)
    rows = xp.concatenate([(cls - 1).astype(dt)[..., None], score[..., None], box], axis=-1)
    out = xp.full((b, a, 6), -1, dt)
    nms = 0 < p.nms_threshold <= 1
    for n in range(b):
        kept = rows[n][rows[n, :, 0] >= 0]   # valid detections, in anchor order, to the front
        k = kept.shape[0]
        out[n, :k] = kept
        if k < 1 or not nms:
            continue
        top = kept[xp.argsort(-kept[:, 1], kind="stable")]
        keep = k if p.nms_topk <= 0 else min(k, p.nms_topk)
        out[n, keep:k, 0] = -1          # dropped by nms_topk: unsorted rows marked invalid
        top = top[:keep]
        alive = xp.ones(keep, bool)
        for i in range(keep - 1):        # greedy: a kept detection drops the later ones it hits
            if alive[i]:
                clash = _iou_table(xp, top[i:i + 1, 2:], top[i + 1:, 2:])[0] >= p.nms_threshold
                if not p.force_suppress:
                    clash &= top[i + 1:, 0] == top[i, 0]
                alive[i + 1:] &= ~clash
        top[:, 0] = xp.where(alive, top[:, 0], -1)
        out[n, :keep] = top
    put(outputs[0], req[0], out)


(register_op(DETECT)
    .add_alias("_npx_multibox_detection")
    .describe("Detections from class probabilities (batch, classes, A), box regressions "
              "(batch, A * 4) and anchors (1, A, 4): each anchor takes its best non-background "
              "class (dropped when its score is below threshold), its box is decoded with the "
              "variances (and clipped to [0, 1]); the kept detections are sorted by score, the "
              "best nms_topk taken, and non-maximum suppression marks overlapping ones of the "
              "same class (any class with force_suppress) with id -1. Output (batch, A, 6) "
              "rows [class_id, score, xmin, ymin, xmax, ymax], -1 where empty.")
    .set_attr_parser(MultiBoxDetectionParam)
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["cls_prob", "loc_pred", "anchor"])
    .set_attr("FInferShape", _detect_shape)
    .set_attr("FInferType", _float32(DETECT, ["cls_prob", "loc_pred", "anchor"]))
    .set_attr("FCompute<cpu>", _detect_forward)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4), (2, 16), _ANCHOR], "domain": [(0, 1), (-1, 1), (0, 1)],
         "grad": False, "params": {"threshold": 0.3}},
        {"inputs": [(1, 3, 4), (1, 16), _ANCHOR],
         "domain": [(0, 1), (-2, 2), (0, 1)], "grad": False,
         "params": {"clip": False, "force_suppress": True, "nms_topk": 2,
                    "nms_threshold": 0.1}}])
    .add_argument("cls_prob", "NDArray-or-Symbol", "Class probabilities, (batch, classes, A); "
                  "class 0 is the background.")
    .add_argument("loc_pred", "NDArray-or-Symbol", "Box regressions, (batch, A * 4).")
    .add_argument("anchor", "NDArray-or-Symbol", "Anchors, (1, A, 4)."))
