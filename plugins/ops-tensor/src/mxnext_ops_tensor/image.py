"""Image tensor ops (MXNet's ``image/image_random.cc``): _image_to_tensor and
_image_normalize, ``mx.nd.image.to_tensor`` / ``normalize``."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from opsdk import ElemwiseGradUseIn, Field, Param, register_op
from opsdk.shape import dim_known, shape_known
from pydantic import BeforeValidator

from ._common import INPLACE_0, check_outs, put
from ._layout import fail, fixed_type, same_type


def _compute_dtype(x):
    """What MXNet's kernels compute ``x op float`` in: double for float64, else float."""
    return np.float64 if x.dtype == np.float64 else np.float32


# -- _image_to_tensor ----------------------------------------------------------------------
def _to_tensor_axes(ndim):
    return (2, 0, 1) if ndim == 3 else (0, 3, 1, 2)


def _to_tensor_shape(params, ins, outs):
    x = ins[0]
    if not shape_known(x):
        return list(ins), list(outs)
    if len(x) not in (3, 4):
        fail("_image_to_tensor", f"data must have shape (H, W, C) or (N, H, W, C), got "
                                 f"{tuple(x)}")
    return list(ins), check_outs("_image_to_tensor", outs,
                                 [tuple(x[a] for a in _to_tensor_axes(len(x)))])


def _to_tensor(ctx, inputs, req, outputs, params):
    x = inputs[0]
    w = x.astype(_compute_dtype(x), copy=False)
    put(outputs[0], req[0], w.transpose(_to_tensor_axes(x.ndim)) / w.dtype.type(255))


def _to_tensor_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    back = np.argsort(_to_tensor_axes(x.ndim))
    put(outputs[0], req[0], og.astype(np.float64).transpose(back) / 255)


def _to_tensor_backward_shape(params, ins, outs):
    return list(ins), check_outs("_backward_image_to_tensor", outs, [ins[1]])


def _to_tensor_ref(x):
    return (x.transpose(_to_tensor_axes(x.ndim)).astype(np.float32) / np.float32(255))


(register_op("_image_to_tensor").add_alias("_npx__image_to_tensor")
    .describe("Converts an image of shape (H, W, C) or (N, H, W, C) with values in [0, 255] to "
              "a float32 tensor of shape (C, H, W) or (N, C, H, W) with values in [0, 1].")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _to_tensor_shape)
    .set_attr("FInferType", fixed_type("_image_to_tensor", lambda p: "float32"))
    .set_attr("FCompute<cpu>", _to_tensor)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_image_to_tensor"))
    .set_attr("TExamples", [
        {"inputs": [(4, 2, 3)], "dtype": "uint8", "domain": (0, 256), "ref": _to_tensor_ref},
        {"inputs": [(2, 4, 2, 3)], "domain": (0, 255), "ref": _to_tensor_ref, "grad": False},
        # small values: the float32 output must resolve the central differences
        {"inputs": [(3, 2, 1)], "dtype": "float64", "domain": (0, 1)},
        {"inputs": [(1, 2, 2, 3)], "domain": (0, 1)}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))

(register_op("_backward_image_to_tensor")
    .describe("Gradient of _image_to_tensor: the output gradient moved back to the image layout "
              "and divided by 255.")
    .set_attr("TIsBackward", True).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _to_tensor_backward_shape)
    .set_attr("FInferType", lambda p, ins, outs: (list(ins), [ins[1] if ins[1] is not None
                                                              else outs[0]]))
    .set_attr("FCompute<cpu>", _to_tensor_backward)
    .set_attr("TExamples", [{"inputs": [(3, 4, 2), (4, 2, 3)]},
                            {"inputs": [(2, 1, 2, 3), (2, 2, 3, 1)], "dtype": "float64"}]))


# -- _image_normalize ----------------------------------------------------------------------
def _floats(value):
    """A scalar mean or std is one value for every channel."""
    return (float(value),) if isinstance(value, (float, np.floating)) else value


PerChannel = Annotated[tuple[float, ...], BeforeValidator(_floats)]


class NormalizeParam(Param):
    mean: PerChannel = Field((0.0, 0.0, 0.0, 0.0),
                             description="Sequence of means for each channel. Default value is 0.")
    std: PerChannel = Field((1.0, 1.0, 1.0, 1.0), description="Sequence of standard deviations "
                                                              "for each channel. Default value "
                                                              "is 1.")


def _channels(params, shape):
    """The channel count of a (C, H, W) or (N, C, H, W) shape, checked against mean and std
    (as MXNet: 1 or 3 channels; mean and std of 1 or that many values)."""
    op = "_image_normalize"
    if len(shape) not in (3, 4):
        fail(op, f"data must have shape (C, H, W) or (N, C, H, W), got {tuple(shape)}")
    c = shape[len(shape) - 3]
    if not dim_known(c):
        return None
    if c not in (1, 3):
        fail(op, f"the channel dimension {len(shape) - 3} of data must have 1 or 3 elements, "
                 f"got shape {tuple(shape)}")
    for name in ("mean", "std"):
        v = getattr(params, name)
        if len(v) not in (1, c):
            fail(op, f"{name} must have 1 or {c} elements for data of shape {tuple(shape)}, "
                     f"got {name}={v}")
    return c


def _normalize_shape(params, ins, outs):
    x = ins[0] if ins[0] is not None else outs[0]
    if x is None:
        return list(ins), list(outs)
    _channels(params, x)
    return [tuple(x)], check_outs("_image_normalize", outs, [tuple(x)])


def _per_channel(xp, values, c, dtype):
    """``values`` (1 or c of them, float32 as MXNet's params) shaped to broadcast over the
    channel axis of a (C, H, W) or (N, C, H, W) array, on the device of ``xp``."""
    v = np.broadcast_to(np.asarray(values, np.float32), (c,)).astype(dtype)
    return xp.asarray(v.reshape((c, 1, 1)))


def _normalize(ctx, inputs, req, outputs, params):
    x = inputs[0]
    c = _channels(params, x.shape)
    t = _compute_dtype(x)
    mean = _per_channel(ctx.xp, params.mean, c, t)
    std = _per_channel(ctx.xp, params.std, c, t)
    put(outputs[0], req[0], (x.astype(t, copy=False) - mean) / std)


def _normalize_backward(ctx, inputs, req, outputs, params):
    """out_grad / std per channel (1 / std in double, as MXNet)."""
    og, x = inputs
    c = _channels(params, x.shape)
    inv = 1.0 / _per_channel(ctx.xp, params.std, c, np.float64)
    put(outputs[0], req[0], og * inv)


def _normalize_ref(x, mean=(0.0,), std=(1.0,)):
    c = x.shape[-3]
    m = np.broadcast_to(np.float32(mean), (c,)).reshape(c, 1, 1)
    s = np.broadcast_to(np.float32(std), (c,)).reshape(c, 1, 1)
    return ((x - m) / s).astype(x.dtype)


(register_op("_image_normalize").add_alias("_npx__image_normalize")
    .describe("Normalizes each channel of a (C, H, W) or (N, C, H, W) tensor of 1 or 3 "
              "channels: out[c] = (data[c] - mean[c]) / std[c]; a single mean or std applies to "
              "every channel.")
    .set_attr_parser(NormalizeParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _normalize_shape)
    .set_attr("FInferType", same_type("_image_normalize"))
    .set_attr("FInplaceOption", INPLACE_0)
    .set_attr("FCompute<cpu>", _normalize)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_image_normalize"))
    .set_attr("TExamples", [
        {"inputs": [(3, 4, 2)], "params": {"mean": (0, 1, 2), "std": (3, 2, 1)},
         "ref": _normalize_ref},
        {"inputs": [(2, 3, 2, 2)], "params": {"mean": (0.5, 1, 2), "std": 0.5},
         "ref": _normalize_ref},
        {"inputs": [(1, 2, 3)], "params": {"mean": 1.0, "std": 2.0}, "dtype": "float64",
         "ref": _normalize_ref},
        {"inputs": [(2, 1, 2, 2)], "params": {"mean": "1", "std": "(2,)"}, "dtype": "int32",
         "domain": (-9, 9)}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))

(register_op("_backward_image_normalize")
    .describe("Gradient of _image_normalize: out_grad / std per channel.")
    .set_attr_parser(NormalizeParam).set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", lambda p, ins, outs: (list(ins), check_outs(
        "_backward_image_normalize", outs, [ins[1]])))
    .set_attr("FInferType", same_type("_backward_image_normalize"))
    .set_attr("FCompute<cpu>", _normalize_backward)
    .set_attr("TExamples", [{"inputs": [(3, 2, 2), (3, 2, 2)],
                             "params": {"mean": (0, 1, 2), "std": (3, 2, 1)}}]))
