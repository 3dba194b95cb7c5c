"""depth_to_space and space_to_depth (MXNet's ``tensor/matrix_op.cc``): NCHW data whose
channels are moved into ``block_size`` x ``block_size`` spatial blocks, and back. Each is the
other's gradient."""

from __future__ import annotations

from opsdk import ElemwiseGradUseNone, Field, Param, register_op
from opsdk.shape import dim_known, unknown_dim

from ._common import check_outs, put
from ._layout import fail, first_type


class DepthToSpaceParam(Param):
    block_size: int = Field(gt=0, description="Blocks of [block_size. block_size] are moved")


def _nchw(op, shape):
    if len(shape) != 4:
        fail(op, f"data must be a 4-D (N, C, H, W) array, got shape {tuple(shape)}")
    for axis, n in enumerate(shape):     # as MXNet, also outside np_shape (where 0 is unknown)
        if n == 0:
            fail(op, f"dimension {axis} of data must not be 0, got shape {tuple(shape)}")


def _d2s_out(op, shape, b):
    n, c, h, w = shape
    if dim_known(c) and c % (b * b):
        fail(op, f"the depth dimension 1 must be a multiple of block_size**2 = {b * b}, got "
                 f"shape {tuple(shape)}")
    return (n, c // (b * b) if dim_known(c) else unknown_dim(),
            h * b if dim_known(h) else unknown_dim(), w * b if dim_known(w) else unknown_dim())


def _s2d_out(op, shape, b):
    n, c, h, w = shape
    for axis, d in ((2, h), (3, w)):
        if dim_known(d) and d % b:
            fail(op, f"the spatial dimension {axis} must be a multiple of block_size = {b}, got "
                     f"shape {tuple(shape)}")
    return (n, c * b * b if dim_known(c) else unknown_dim(),
            h // b if dim_known(h) else unknown_dim(), w // b if dim_known(w) else unknown_dim())


def _rule(op, forward, back):
    """FInferShape from the output shape function ``forward`` and its inverse ``back`` (the
    other op's), which fills the data shape from a known output."""
    def infer(params, ins, outs):
        b = params.block_size
        x = ins[0]
        if x is None and outs[0] is not None:
            _nchw(op, outs[0])
            x = back(op, tuple(outs[0]), b)
        if x is None:
            return list(ins), list(outs)
        _nchw(op, x)
        return [tuple(x)], check_outs(op, outs, [forward(op, tuple(x), b)])
    return infer


def _depth_to_space(ctx, inputs, req, outputs, params):
    x, b = inputs[0], params.block_size
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    put(outputs[0], req[0], y.reshape(outputs[0].shape))


def _space_to_depth(ctx, inputs, req, outputs, params):
    x, b = inputs[0], params.block_size
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    put(outputs[0], req[0], y.reshape(outputs[0].shape))


def _d2s_ref(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    return (x.reshape(n, b, b, c // b ** 2, h, w).transpose(0, 3, 4, 1, 5, 2)
            .reshape(n, c // b ** 2, h * b, w * b))


def _s2d_ref(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    return (x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
            .reshape(n, c * b * b, h // b, w // b))


(register_op("depth_to_space")
    .describe("Moves depth into spatial blocks (ONNX DepthToSpace, DCR): data (N, C, H, W) "
              "is reshaped to (N, b, b, C/b^2, H, W), transposed to axes (0, 3, 4, 1, 5, 2) and "
              "reshaped to (N, C/b^2, H*b, W*b), b = block_size. The inverse of space_to_depth.")
    .set_attr_parser(DepthToSpaceParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _rule("depth_to_space", _d2s_out, _s2d_out))
    .set_attr("FInferType", first_type("depth_to_space"))
    .set_attr("FCompute<cpu>", _depth_to_space)
    .set_attr("FGradient", ElemwiseGradUseNone("space_to_depth"))
    .set_attr("TExamples", [
        {"inputs": [(1, 4, 2, 3)], "params": {"block_size": 2}, "ref": _d2s_ref},
        {"inputs": [(2, 18, 1, 2)], "params": {"block_size": 3}, "ref": _d2s_ref},
        {"inputs": [(1, 8, 2, 2)], "params": {"block_size": 2}, "dtype": "int32",
         "domain": (-50, 50), "ref": _d2s_ref}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))

(register_op("space_to_depth")
    .describe("Moves spatial blocks into depth (ONNX SpaceToDepth): data (N, C, H, W) is "
              "reshaped to (N, C, H/b, b, W/b, b), transposed to axes (0, 3, 5, 1, 2, 4) and "
              "reshaped to (N, C*b^2, H/b, W/b), b = block_size. The inverse of depth_to_space.")
    .set_attr_parser(DepthToSpaceParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _rule("space_to_depth", _s2d_out, _d2s_out))
    .set_attr("FInferType", first_type("space_to_depth"))
    .set_attr("FCompute<cpu>", _space_to_depth)
    .set_attr("FGradient", ElemwiseGradUseNone("depth_to_space"))
    .set_attr("TExamples", [
        {"inputs": [(1, 1, 4, 6)], "params": {"block_size": 2}, "ref": _s2d_ref},
        {"inputs": [(2, 2, 3, 6)], "params": {"block_size": 3}, "ref": _s2d_ref},
        {"inputs": [(1, 3, 2, 2)], "params": {"block_size": 1}, "dtype": "uint8",
         "domain": (0, 200), "ref": _s2d_ref}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))
