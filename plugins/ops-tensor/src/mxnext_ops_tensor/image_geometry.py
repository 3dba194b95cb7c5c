"""Image geometry ops (MXNet's ``image/image_random.cc`` and ``image/crop.cc``):
_image_flip_left_right, _image_flip_top_bottom and _image_crop over (H, W, C) or
(N, H, W, C) images, ``mx.nd.image.flip_left_right`` / ``flip_top_bottom`` / ``crop``."""

from __future__ import annotations

from opsdk import Field, NodeEntry, Param, make_node, register_op
from opsdk.shape import dim_known, shape_known

from ._common import check_outs, put
from ._layout import backward_shape, data_grad, fail, same_type


def _image_dims(op, shape):
    if len(shape) not in (3, 4):
        fail(op, f"data must have shape (H, W, C) or (N, H, W, C), got {tuple(shape)}")


# -- flips ---------------------------------------------------------------------------------
def _flip_op(name, axis, what):
    def shape(params, ins, outs):
        x = ins[0] if ins[0] is not None else outs[0]
        if x is None:
            return list(ins), list(outs)
        _image_dims(name, x)
        return [tuple(x)], check_outs(name, outs, [tuple(x)])

    def compute(ctx, inputs, req, outputs, params):
        put(outputs[0], req[0], ctx.xp.flip(inputs[0], axis))

    (register_op(name).add_alias(f"_npx_{name}")
        .describe(f"The image {what}: (H, W, C) or (N, H, W, C), axis {axis} reversed.")
        .set_num_inputs(1).set_num_outputs(1)
        .set_attr("FListInputNames", lambda p: ["data"])
        .set_attr("FInferShape", shape)
        .set_attr("FInferType", same_type(name))
        .set_attr("FCompute<cpu>", compute)
        .set_attr("FGradient", lambda node, og: [NodeEntry(make_node(name, [og[0]]), 0)])
        .set_attr("TExamples", [{"inputs": [(3, 4, 2)]},
                                {"inputs": [(2, 3, 2, 3)], "dtype": "uint8",
                                 "domain": (0, 256), "grad": False}])
        .add_argument("data", "NDArray-or-Symbol", "The input image."))


_flip_op("_image_flip_left_right", -2, "mirrored left to right")
_flip_op("_image_flip_top_bottom", -3, "flipped upside down")


# -- crop ----------------------------------------------------------------------------------
class CropParam(Param):
    x: int = Field(description="Left boundary of the cropping area.")
    y: int = Field(description="Top boundary of the cropping area.")
    width: int = Field(description="Width of the cropping area.")
    height: int = Field(description="Height of the cropping area.")


def _crop_box(params, shape):
    """The (rows, cols) slices of the crop, checked against ``shape``."""
    op = "_image_crop"
    _image_dims(op, shape)
    h, w = shape[-3], shape[-2]
    p = params
    if p.width <= 0 or p.height <= 0 or p.x < 0 or p.y < 0:
        fail(op, f"x and y must be >= 0 and width and height > 0, got x={p.x}, y={p.y}, "
                 f"width={p.width}, height={p.height}")
    if dim_known(w) and p.x + p.width > w:
        fail(op, f"x + width ({p.x} + {p.width}) must not exceed the image width {w}")
    if dim_known(h) and p.y + p.height > h:
        fail(op, f"y + height ({p.y} + {p.height}) must not exceed the image height {h}")
    return slice(p.y, p.y + p.height), slice(p.x, p.x + p.width)


def _crop_shape(params, ins, outs):
    x = ins[0]
    if x is None:
        return list(ins), list(outs)
    _crop_box(params, x)
    out = tuple(x[:-3]) + (params.height, params.width, x[-1])
    return list(ins), check_outs("_image_crop", outs, [out])


def _crop(ctx, inputs, req, outputs, params):
    rows, cols = _crop_box(params, inputs[0].shape)
    put(outputs[0], req[0], inputs[0][..., rows, cols, :])


def _crop_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    rows, cols = _crop_box(params, x.shape)
    grad = ctx.xp.zeros(x.shape, outputs[0].dtype)
    grad[..., rows, cols, :] = og
    put(outputs[0], req[0], grad)


def _crop_ref(data, x, y, width, height):
    return data[..., y:y + height, x:x + width, :]


(register_op("_image_crop").add_alias("_npx__image_crop")
    .describe("The width x height region of an (H, W, C) or (N, H, W, C) image whose top "
              "left corner is at column x, row y.")
    .set_attr_parser(CropParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _crop_shape)
    .set_attr("FInferType", same_type("_image_crop"))
    .set_attr("FCompute<cpu>", _crop)
    .set_attr("FGradient", data_grad("_backward_image_crop"))
    .set_attr("TExamples", [
        {"inputs": [(5, 4, 3)], "params": {"x": 1, "y": 2, "width": 3, "height": 2},
         "ref": _crop_ref},
        {"inputs": [(2, 3, 3, 1)], "params": {"x": 0, "y": 0, "width": 2, "height": 3},
         "dtype": "uint8", "domain": (0, 256), "grad": False,
         "ref": _crop_ref}])
    .add_argument("data", "NDArray-or-Symbol", "The input image."))

(register_op("_backward_image_crop")
    .describe("Gradient of _image_crop: the output gradient in the cropped region, zeros "
              "elsewhere.")
    .set_attr_parser(CropParam).set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_image_crop"))
    .set_attr("FInferType", same_type("_backward_image_crop"))
    .set_attr("FCompute<cpu>", _crop_backward)
    .set_attr("TExamples", [{"inputs": [(2, 3, 3), (5, 4, 3)],
                             "params": {"x": 1, "y": 2, "width": 3, "height": 2}}]))
