"""Bounding-box ops of MXNet's contrib namespace: _contrib_gradientmultiplier, _contrib_box_iou,
_contrib_box_encode and _contrib_box_decode, and the box helpers box_nms.py and multibox.py
share.

Boxes are ``corner`` ([xmin, ymin, xmax, ymax]) or ``center`` ([x, y, width, height]). Of
these ops only gradientmultiplier passes a gradient on; the others send zeros back, as MXNet
does.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import (ElemwiseShape, ElemwiseType, Field, FloatOnly, MakeZeroGradNodes, Param,
                   register_op)
from opsdk.shape import dim_known

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, put, result_shapes,
                           same_type, set_shape, set_type)

Format = Literal["corner", "center"]
BOX_FORMAT = ("Box encoding: 'corner' is [xmin, ymin, xmax, ymax], 'center' is [x, y, width, "
              "height].")


def _corners(box, fmt):
    """(left, top, right, bottom) of ``box[..., :4]`` in ``fmt``."""
    a, b, c, d = (box[..., k] for k in range(4))
    if fmt == "corner":
        return a, b, c, d
    return a - c / 2, b - d / 2, a + c / 2, b + d / 2


def area(xp, box, fmt):
    """MXNet's BoxArea: width * height, 0 when either is negative."""
    if fmt == "corner":
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    else:
        w, h = box[..., 2], box[..., 3]
    return xp.where((w < 0) | (h < 0), 0, w * h)


def intersection(xp, a, b, fmt):
    """Overlap area of boxes ``a`` and ``b`` (broadcast against each other)."""
    al, at, ar, ab = _corners(a, fmt)
    bl, bt, br, bb = _corners(b, fmt)
    w = xp.maximum(xp.minimum(ar, br) - xp.maximum(al, bl), 0)
    h = xp.maximum(xp.minimum(ab, bb) - xp.maximum(at, bt), 0)
    return w * h


# ---- gradientmultiplier ----------------------------------------------------------------------

GMUL = "_contrib_gradientmultiplier"
GMUL_BWD = "_contrib_backward_gradientmultiplier"


class GradientMultiplierParam(Param):
    scalar: float = Field(1.0, description="Factor lambda applied to the gradient.")
    is_int: bool = Field(True, description="MXNet's integer-scalar flag (accepted, unused).")


def _gmul_forward(ctx, inputs, req, outputs, p):
    if req[0] != 2:                      # in place, the output already is the input
        put(outputs[0], req[0], inputs[0])


def _gmul_backward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], inputs[0] * p.scalar)     # a Python float keeps the dtype


(register_op(GMUL)
    .describe("Identity in the forward pass; the backward pass multiplies the incoming gradient "
              "by ``scalar`` (lambda), e.g. -1 for a gradient reversal layer.")
    .set_attr_parser(GradientMultiplierParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1, GMUL))
    .set_attr("FInferType", ElemwiseType(1, 1, GMUL))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FInplaceIdentity", lambda p: [True])
    .set_attr("FCompute<cpu>", _gmul_forward)
    .set_attr("FGradient", lambda node, og: grad_entries(backward_node(GMUL_BWD, node, [og[0]]), 1))
    .set_attr("TExamples", [         # the gradient is scaled on purpose: no numeric check
        {"inputs": [(3, 4)], "params": {"scalar": -0.5}, "grad": False, "ref": lambda x, **k: x}])
    .add_argument("data", "NDArray-or-Symbol", "Input array."))

(register_op(GMUL_BWD)
    .describe("Gradient of gradientmultiplier: the head gradient times ``scalar``.")
    .set_attr_parser(GradientMultiplierParam).set_attr("TIsBackward", True)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1, GMUL_BWD))
    .set_attr("FInferType", ElemwiseType(1, 1, GMUL_BWD))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _gmul_backward)
    .set_attr("TExamples", [{"inputs": [(2, 3)], "params": {"scalar": 3.0},
                             "ref": lambda g, scalar, **k: g * np.float32(scalar)}]))


# ---- box_iou ---------------------------------------------------------------------------------

IOU = "_contrib_box_iou"
IOU_BWD = "_backward_contrib_box_iou"


class BoxIouParam(Param):
    format: Format = Field("corner", description=BOX_FORMAT)


def _last_is_4(op, shape, name):
    if shape is None:
        return
    if len(shape) < 2:
        fail(op, f"input {name!r} should have at least 2 dims (..., 4), got {tuple(shape)}")
    if dim_known(shape[-1]) and shape[-1] != 4:
        fail(op, f"input {name!r} should end in 4 coordinates, got {tuple(shape)}")


def _iou_shape(p, ins, outs):
    lhs, rhs = ins
    _last_is_4(IOU, lhs, "lhs")
    _last_is_4(IOU, rhs, "rhs")
    if lhs is None or rhs is None:
        return list(ins), list(outs)
    return list(ins), result_shapes(IOU, outs, [tuple(lhs[:-1]) + tuple(rhs[:-1])])


def _iou_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dt = compute_dtype(inputs[0].dtype)
    a = inputs[0].reshape(-1, 1, 4).astype(dt, copy=False)
    b = inputs[1].reshape(1, -1, 4).astype(dt, copy=False)
    inter = intersection(xp, a, b, p.format)
    union = area(xp, a, p.format) + area(xp, b, p.format) - inter
    iou = xp.where(inter > 0, inter / xp.where(inter > 0, union, 1), 0)
    put(outputs[0], req[0], iou.reshape(outputs[0].shape))


def zero_grads(ctx, inputs, req, outputs, p):
    for out, r in zip(outputs, req):
        put(out, r, ctx.xp.zeros(out.shape, out.dtype))


def zero_grad_rule(op, n_heads):
    """FGradient: a node of backward op ``op`` reading the head gradients and, for their
    shapes, the forward inputs; it returns one zero gradient per forward input."""
    def rule(node, og):
        n = len(node.inputs)
        return grad_entries(backward_node(op, node, list(og[:n_heads]) + list(node.inputs)), n)
    return rule


def like_forward_inputs(op, n_heads, assign):
    """Shape or type rule of such a backward op: output k is like its input n_heads + k
    (``assign`` is ``set_shape`` or ``set_type``)."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for k in range(len(outs)):
            if ins[n_heads + k] is not None:
                assign(op, outs, k, ins[n_heads + k], f"output {k}")
            elif outs[k] is not None:
                ins[n_heads + k] = outs[k]
        return ins, outs
    return infer


def _iou_ref(lhs, rhs, format="corner"):
    a, b = lhs.reshape(-1, 4).astype(np.float64), rhs.reshape(-1, 4).astype(np.float64)
    if format == "center":
        a = np.concatenate([a[:, :2] - a[:, 2:] / 2, a[:, :2] + a[:, 2:] / 2], axis=1)
        b = np.concatenate([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], axis=1)
    out = np.zeros((len(a), len(b)))
    for i, j in np.ndindex(out.shape):
        w = min(a[i, 2], b[j, 2]) - max(a[i, 0], b[j, 0])
        h = min(a[i, 3], b[j, 3]) - max(a[i, 1], b[j, 1])
        if w > 0 and h > 0:
            area = [max(x[2] - x[0], 0) * max(x[3] - x[1], 0) for x in (a[i], b[j])]
            out[i, j] = w * h / (sum(area) - w * h)
    return out.reshape(lhs.shape[:-1] + rhs.shape[:-1]).astype(lhs.dtype)


_BOXES = np.array([[[0.1, 0.1, 0.5, 0.6], [0.3, 0.2, 0.9, 0.8]], [[0.6, 0.6, 0.7, 0.9],
                   [0.2, 0.3, 0.25, 0.35]]], np.float32)

(register_op(IOU)
    .describe("Intersection-over-union of every box of ``lhs`` (a_1, ..., a_n, 4) with every "
              "box of ``rhs`` (b_1, ..., b_m, 4): output (a_1, ..., a_n, b_1, ..., b_m), 0 "
              "where boxes do not overlap. Zero gradients.")
    .set_attr_parser(BoxIouParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["lhs", "rhs"])
    .set_attr("FInferShape", _iou_shape)
    .set_attr("FInferType", FloatOnly(same_type(IOU, ["lhs", "rhs"])))
    .set_attr("FCompute<cpu>", _iou_forward)
    .set_attr("FGradient", zero_grad_rule(IOU_BWD, 1))
    .set_attr("TExamples", [
        {"inputs": [_BOXES, _BOXES[0]], "grad": False, "ref": _iou_ref},
        {"inputs": [_BOXES.astype(np.float64)[:, :1], _BOXES.astype(np.float64)[1]],
         "params": {"format": "center"}, "grad": False, "ref": _iou_ref}])
    .add_argument("lhs", "NDArray-or-Symbol", "Boxes (a_1, ..., a_n, 4).")
    .add_argument("rhs", "NDArray-or-Symbol", "Boxes (b_1, ..., b_m, 4)."))

(register_op(IOU_BWD)
    .describe("Gradient of box_iou: zeros for both inputs. Reads the head gradient and the "
              "forward lhs and rhs (for their shapes).")
    .set_attr_parser(BoxIouParam).set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", like_forward_inputs(IOU_BWD, 1, set_shape))
    .set_attr("FInferType", like_forward_inputs(IOU_BWD, 1, set_type))
    .set_attr("FCompute<cpu>", zero_grads)
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 4), (3, 4)]}]))


# ---- box_encode / box_decode -----------------------------------------------------------------

ENCODE = "_contrib_box_encode"
DECODE = "_contrib_box_decode"
_ENCODE_INPUTS = ["samples", "matches", "anchors", "refs", "means", "stds"]


def _ndim_at_least(op, shape, name, n, exact=False):
    if shape is not None and (len(shape) != n if exact else len(shape) < n):
        fail(op, f"input {name!r} should have {'' if exact else 'at least '}{n} dims, got "
                 f"{tuple(shape)}")


def _encode_shape(p, ins, outs):
    ins = list(ins)
    samples, matches, anchors, refs = ins[:4]
    if anchors is None:
        anchors = ins[2] = next((tuple(o) for o in outs if o is not None), None)
    _ndim_at_least(ENCODE, samples, "samples", 2, exact=True)
    _ndim_at_least(ENCODE, matches, "matches", 2)
    for name, s in (("anchors", anchors), ("refs", refs)):
        _ndim_at_least(ENCODE, s, name, 3)
        _last_is_4(ENCODE, s, name)
    for i in (4, 5):
        set_shape(ENCODE, ins, i, (4,), f"input {_ENCODE_INPUTS[i]!r}")
    if anchors is None:
        return ins, list(outs)
    return ins, result_shapes(ENCODE, outs, [tuple(anchors)] * 2)


def _encode_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dt = compute_dtype(inputs[2].dtype)
    samples, matches, anchors, refs, means, stds = (x.astype(dt, copy=False) for x in inputs)
    b, n = anchors.shape[:2]
    anchors = anchors.reshape(b, n, 4)
    refs = refs.reshape(b, -1, 4)
    m = refs.shape[1]
    idx = xp.clip(matches.reshape(b, n).astype(np.int64), 0, max(m - 1, 0))
    ref = xp.take_along_axis(refs, idx[..., None], axis=1)
    valid = samples.reshape(b, n) > dt.type(0.5)

    def centre_size(box):
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
        return box[..., 0] + w * dt.type(0.5), box[..., 1] + h * dt.type(0.5), w, h

    rx, ry, rw, rh = centre_size(ref)
    ax, ay, aw, ah = centre_size(anchors)
    t = xp.stack([(rx - ax) / aw, (ry - ay) / ah, xp.log(rw / aw), xp.log(rh / ah)], axis=-1)
    t = (t - means) / stds
    mask = xp.broadcast_to(valid[..., None], t.shape)
    put(outputs[0], req[0], xp.where(mask, t, 0).reshape(outputs[0].shape))
    put(outputs[1], req[1], mask.astype(dt).reshape(outputs[1].shape))


_ANCHORS = np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.2, 0.1, 0.6, 0.5]]],
                    np.float32)
_REFS = np.array([[[0.15, 0.25, 0.35, 0.5], [0.4, 0.5, 0.8, 0.9]]], np.float32)

(register_op(ENCODE)
    .describe("Encodes training targets of anchors (B, N, 4) against their matched reference "
              "boxes refs (B, M, 4), both corner-encoded: ((x_r - x_a) / w_a, (y_r - y_a) / "
              "h_a, log(w_r / w_a), log(h_r / h_a)), minus ``means``, divided by ``stds``. "
              "Anchors whose sample is not positive (> 0.5) get zero targets; outputs are the "
              "targets and their mask (B, N, 4). Zero gradients.")
    .set_num_inputs(6).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: list(_ENCODE_INPUTS))
    .set_attr("FInferShape", _encode_shape)
    .set_attr("FInferType", FloatOnly(same_type(ENCODE, _ENCODE_INPUTS)))
    .set_attr("FCompute<cpu>", _encode_forward)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [np.array([[1, -1, 1]], np.float32), np.array([[0, -1, 1]], np.float32),
                    _ANCHORS, _REFS, np.zeros(4, np.float32),
                    np.array([0.1, 0.1, 0.2, 0.2], np.float32)], "grad": False}])
    .add_argument("samples", "NDArray-or-Symbol", "(B, N): +1 positive, -1 negative, 0 "
                  "ignored.")
    .add_argument("matches", "NDArray-or-Symbol", "(B, N): index of the matched ref, in [0, M).")
    .add_argument("anchors", "NDArray-or-Symbol", "(B, N, 4) corner-encoded anchors.")
    .add_argument("refs", "NDArray-or-Symbol", "(B, M, 4) corner-encoded reference boxes.")
    .add_argument("means", "NDArray-or-Symbol", "(4,) means subtracted from the targets.")
    .add_argument("stds", "NDArray-or-Symbol", "(4,) deviations dividing the targets."))


class BoxDecodeParam(Param):
    std0: float = Field(1.0, description="Multiplier of the 1st encoded value (x offset).")
    std1: float = Field(1.0, description="Multiplier of the 2nd encoded value (y offset).")
    std2: float = Field(1.0, description="Multiplier of the 3rd encoded value (log width).")
    std3: float = Field(1.0, description="Multiplier of the 4th encoded value (log height).")
    clip: float = Field(-1.0, description="When > 0, the scaled log width and height are "
                                          "clipped to at most this value.")
    format: Format = Field("center", description="Encoding of the anchors. " + BOX_FORMAT)


def _decode_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and outs[0] is not None:
        ins[0] = tuple(outs[0])
    data, anchors = ins
    _ndim_at_least(DECODE, data, "data", 3, exact=True)
    _last_is_4(DECODE, data, "data")
    _ndim_at_least(DECODE, anchors, "anchors", 3)
    _last_is_4(DECODE, anchors, "anchors")
    if data is None:
        return ins, list(outs)
    return ins, result_shapes(DECODE, outs, [tuple(data)])


def _decode_forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dt = compute_dtype(inputs[0].dtype)
    x = inputs[0].astype(dt, copy=False)
    n = x.shape[1]
    a = inputs[1].reshape(-1, 4)[:n].astype(dt, copy=False)      # anchors are (1, N, 4)
    ax, ay, aw, ah = (a[:, k] for k in range(4))
    if p.format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw * dt.type(0.5), ay + ah * dt.type(0.5)
    stds = [dt.type(s) for s in (p.std0, p.std1, p.std2, p.std3)]
    ox = x[..., 0] * stds[0] * aw + ax
    oy = x[..., 1] * stds[1] * ah + ay
    dw, dh = x[..., 2] * stds[2], x[..., 3] * stds[3]
    if p.clip > 0:
        dw, dh = xp.minimum(dw, dt.type(p.clip)), xp.minimum(dh, dt.type(p.clip))
    ow, oh = xp.exp(dw) * aw * dt.type(0.5), xp.exp(dh) * ah * dt.type(0.5)
    put(outputs[0], req[0], xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1))


(register_op(DECODE)
    .describe("Decodes box offsets data (B, N, 4) against anchors (1, N, 4): centre x + "
              "std0 * data0 * width, centre y + std1 * data1 * height, width * exp(std2 * "
              "data2), height * exp(std3 * data3) (the exponents clipped to ``clip`` when it "
              "is positive); output corner-encoded (B, N, 4). Zero gradients.")
    .set_attr_parser(BoxDecodeParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "anchors"])
    .set_attr("FInferShape", _decode_shape)
    .set_attr("FInferType", FloatOnly(same_type(DECODE, ["data", "anchors"])))
    .set_attr("FCompute<cpu>", _decode_forward)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4), _ANCHORS], "grad": False,
         "params": {"std0": 0.1, "std1": 0.1, "std2": 0.2, "std3": 0.2, "format": "corner"}},
        {"inputs": [(1, 3, 4), (1, 3, 4)], "dtype": "float64", "domain": (0.2, 1.5),
         "grad": False, "params": {"clip": "0.1"}}])
    .add_argument("data", "NDArray-or-Symbol", "(B, N, 4) encoded box offsets.")
    .add_argument("anchors", "NDArray-or-Symbol", "(1, N, 4) anchors, corner or center."))
