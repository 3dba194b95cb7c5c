"""im2col and col2im: sliding blocks of channels-first data (1-3 spatial dims) as columns, and
columns summed back into an image; each is the other's gradient.

The column array is (N, C * prod(kernel), L): row ``c * K + t`` holds channel ``c`` at kernel
tap ``t`` (taps in row-major order), column ``l`` the output position ``l`` (row-major) of the
convolution with the same kernel, stride, dilate and pad. Both directions loop over the
kernel taps only, each one strided view of the zero-padded image.

MXNet 1.9.1 declares 1-d and 3-d support but its cpu kernels assume 4-d data; here all three
work.
"""

from __future__ import annotations

from itertools import product
from math import prod

from opsdk import Field, FloatOnly, Param, register_op
from pydantic import model_validator

from ._layer_rules import (backward_node, check_spatial, fail, grad_entries, put,
                           result_shapes, same_type, set_shape, spatial)

IM2COL = "im2col"
COL2IM = "col2im"


_KERNEL = "Sliding kernel size: (w,), (h, w) or (d, h, w)."
_STRIDE = "Step between adjacent blocks per spatial axis; empty means 1."
_DILATE = "Spacing between kernel points per spatial axis; empty means 1."
_PAD = "Zero padding on both sides of each spatial axis; empty means none."


class _SlidingParam(Param):
    """Checks and defaults shared by the two ops (their fields are declared in MXNet's order,
    which fixes the positional order of the frontend functions)."""

    @model_validator(mode="after")
    def _check(self):
        check_spatial(self.kernel, {"stride": self.stride, "dilate": self.dilate,
                                    "pad": self.pad}, positive=("kernel", "stride", "dilate"))
        return self

    def geometry(self):
        n = len(self.kernel)
        return (self.kernel, spatial(self.stride, n, 1), spatial(self.dilate, n, 1),
                spatial(self.pad, n, 0))


class Im2colParam(_SlidingParam):
    kernel: tuple[int, ...] = Field(description=_KERNEL)
    stride: tuple[int, ...] = Field((), description=_STRIDE)
    dilate: tuple[int, ...] = Field((), description=_DILATE)
    pad: tuple[int, ...] = Field((), description=_PAD)


class Col2imParam(_SlidingParam):
    output_size: tuple[int, ...] = Field(description="Spatial size of the image: (w,), (h, w) "
                                                     "or (d, h, w).")
    kernel: tuple[int, ...] = Field(description=_KERNEL)
    stride: tuple[int, ...] = Field((), description=_STRIDE)
    dilate: tuple[int, ...] = Field((), description=_DILATE)
    pad: tuple[int, ...] = Field((), description=_PAD)

    @model_validator(mode="after")
    def _check_output(self):
        if len(self.output_size) != len(self.kernel) or min(self.output_size) <= 0:
            raise ValueError(f"output_size must have one positive size per kernel dimension "
                             f"{self.kernel}, got {self.output_size}")
        return self


def _blocks(op, p, image_spatial):
    """Output positions per spatial axis of the sliding blocks over ``image_spatial``."""
    kernel, stride, dilate, pad = p.geometry()
    sizes = []
    for axis, (n, k, s, d, q) in enumerate(zip(image_spatial, kernel, stride, dilate, pad)):
        span = d * (k - 1) + 1
        if span > n + 2 * q:
            fail(op, f"dilated kernel extent {span} exceeds the padded image size {n + 2 * q} "
                     f"on spatial axis {axis}")
        sizes.append((n + 2 * q - span) // s + 1)
    return tuple(sizes)


def _col_shape(op, p, image):
    return (image[0], image[1] * prod(p.kernel), prod(_blocks(op, p, image[2:])))


def _check_image(op, p, shape, name):
    if len(shape) != len(p.kernel) + 2:
        fail(op, f"{name} should have {len(p.kernel) + 2} dims (batch, channel, then one per "
                 f"kernel dimension {p.kernel}), got {tuple(shape)}")


def _taps(p, blocks):
    """(tap index, tuple of slices into the padded image) for every kernel tap."""
    kernel, stride, dilate, _ = p.geometry()
    for t, offs in enumerate(product(*(range(k) for k in kernel))):
        yield t, tuple(slice(o * d, o * d + s * (b - 1) + 1, s)
                       for o, d, s, b in zip(offs, dilate, stride, blocks))


def im2col(xp, x, p):
    pad = p.geometry()[3]
    xpad = xp.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    blocks = _blocks(IM2COL, p, x.shape[2:])
    n, c = x.shape[:2]
    cols = xp.empty((n, c, prod(p.kernel)) + blocks, x.dtype)
    for t, where in _taps(p, blocks):
        cols[:, :, t] = xpad[(slice(None), slice(None)) + where]
    return cols.reshape(n, c * prod(p.kernel), -1)


def col2im(xp, col, p, image_spatial, dtype):
    pad = p.geometry()[3]
    blocks = _blocks(COL2IM, p, image_spatial)
    n, rows = col.shape[:2]
    c = rows // prod(p.kernel)
    cols = col.reshape((n, c, prod(p.kernel)) + blocks)
    padded = xp.zeros((n, c) + tuple(s + 2 * q for s, q in zip(image_spatial, pad)), dtype)
    for t, where in _taps(p, blocks):
        padded[(slice(None), slice(None)) + where] += cols[:, :, t]
    return padded[(slice(None), slice(None)) + tuple(slice(q, q + s) for q, s in
                                                     zip(pad, image_spatial))]


# ---- im2col ----------------------------------------------------------------------------------

def _im2col_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None:
        return ins, list(outs)
    _check_image(IM2COL, p, ins[0], "input 'data'")
    return ins, result_shapes(IM2COL, outs, [_col_shape(IM2COL, p, ins[0])])


def _im2col_forward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], im2col(ctx.xp, inputs[0], p))


def _im2col_backward(ctx, inputs, req, outputs, p):
    g = outputs[0]
    put(g, req[0], col2im(ctx.xp, inputs[0], p, g.shape[2:], g.dtype))


def _im2col_grad(node, og):
    n = backward_node(f"_backward_{IM2COL}", node, [og[0], node.inputs[0]])
    return grad_entries(n, 1)


def _im2col_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{IM2COL}"
    if ins[1] is None and outs[0] is not None:
        ins[1] = tuple(outs[0])
    if ins[1] is not None:
        set_shape(op, outs, 0, tuple(ins[1]), "output 0")
        set_shape(op, ins, 0, _col_shape(op, p, ins[1]), "input 0 (head gradient)")
    return ins, outs


(register_op(IM2COL)
    .describe("Extracts the sliding blocks of channels-first data (N, C, *spatial; 1-3 "
              "spatial dims) as columns: output (N, C * prod(kernel), L), L the number of "
              "blocks, i.e. the output positions of a convolution with the same kernel, "
              "stride, dilate and pad.")
    .set_attr_parser(Im2colParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _im2col_shape)
    .set_attr("FInferType", FloatOnly(same_type(IM2COL, ["data"])))
    .set_attr("FCompute<cpu>", _im2col_forward)
    .set_attr("FGradient", _im2col_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 5, 4)], "params": {"kernel": (3, 2)}},
        {"inputs": [(1, 2, 7, 6)], "params": {"kernel": "(3, 3)", "stride": "(2, 1)",
                                              "dilate": "(1, 2)", "pad": "(1, 1)"}},
        {"inputs": [(2, 3, 7)], "params": {"kernel": (3,), "stride": (2,), "pad": (2,)}},
        {"inputs": [(1, 1, 3, 4, 4)], "params": {"kernel": (2, 2, 2), "dilate": (1, 2, 1)}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array to extract sliding blocks from."))

(register_op(f"_backward_{IM2COL}")
    .describe("Gradient of im2col: col2im of the head gradient. Reads the forward data for "
              "its shape.")
    .set_attr_parser(Im2colParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _im2col_backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{IM2COL}"))
    .set_attr("FCompute<cpu>", _im2col_backward)
    .set_attr("TExamples", [{"inputs": [(2, 12, 6), (2, 2, 5, 4)],
                             "params": {"kernel": (3, 2), "stride": (1, 2)}}]))


# ---- col2im ----------------------------------------------------------------------------------

def _image_shape(op, p, col):
    k = prod(p.kernel)
    blocks = prod(_blocks(op, p, p.output_size))
    if len(col) != 3 or col[1] % k or col[2] != blocks:
        fail(op, f"input 'data' should be (batch, channels * {k}, {blocks}) for kernel "
                 f"{p.kernel} over output_size {p.output_size}, got {tuple(col)}")
    return (col[0], col[1] // k) + tuple(p.output_size)


def _col2im_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and outs[0] is not None:
        _check_image(COL2IM, p, outs[0], "output 0")
        ins[0] = _col_shape(COL2IM, p, outs[0])
    if ins[0] is None:
        return ins, list(outs)
    return ins, result_shapes(COL2IM, outs, [_image_shape(COL2IM, p, ins[0])])


def _col2im_forward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], col2im(ctx.xp, inputs[0], p, p.output_size, outputs[0].dtype))


def _col2im_backward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], im2col(ctx.xp, inputs[0], p))


def _col2im_grad(node, og):
    return grad_entries(backward_node(f"_backward_{COL2IM}", node, [og[0]]), 1)


def _col2im_backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{COL2IM}"
    if ins[0] is None and outs[0] is not None:
        ins[0] = _image_shape(op, p, outs[0])
    if ins[0] is not None:
        _check_image(op, p, ins[0], "input 0 (head gradient)")
        set_shape(op, outs, 0, _col_shape(op, p, ins[0]), "output 0")
    return ins, outs


(register_op(COL2IM)
    .describe("Sums columns (N, C * prod(kernel), L), as im2col lays them out, back into an "
              "image (N, C, *output_size): overlapping blocks add up, so col2im is the "
              "gradient of im2col, not its inverse.")
    .set_attr_parser(Col2imParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _col2im_shape)
    .set_attr("FInferType", FloatOnly(same_type(COL2IM, ["data"])))
    .set_attr("FCompute<cpu>", _col2im_forward)
    .set_attr("FGradient", _col2im_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 12, 9)], "params": {"output_size": (5, 4), "kernel": (3, 2)}},
        {"inputs": [(1, 18, 16)], "params": {"output_size": "(7, 6)", "kernel": "(3, 3)",
                                             "stride": "(2, 1)", "dilate": "(1, 2)",
                                             "pad": "(1, 1)"}},
        {"inputs": [(2, 6, 5)], "params": {"output_size": (7,), "kernel": (3,),
                                           "stride": (2,), "pad": (2,)}}])
    .add_argument("data", "NDArray-or-Symbol", "Columns to sum back into an image."))

(register_op(f"_backward_{COL2IM}")
    .describe("Gradient of col2im: im2col of the head gradient.")
    .set_attr_parser(Col2imParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", _col2im_backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{COL2IM}"))
    .set_attr("FCompute<cpu>", _col2im_backward)
    .set_attr("TExamples", [{"inputs": [(2, 2, 5, 4)],
                             "params": {"output_size": (5, 4), "kernel": (3, 2)}}]))
