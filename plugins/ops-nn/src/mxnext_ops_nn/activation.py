"""Activation (relu, sigmoid, tanh, softrelu, softsign) and its backward.

The backward reads the output gradient and only what it needs: the forward *output* for
relu, sigmoid, tanh and softrelu (so the input can be freed or overwritten in place), the
input for softsign.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import AMP_FLOAT_DTYPES, ElemwiseShape, Field, FloatOnly, Param, register_op

from ._layer_rules import backward_node, grad_entries, out_entry, same_type

OP = "Activation"


class ActivationParam(Param):
    act_type: Literal["relu", "sigmoid", "tanh", "softrelu", "softsign"] = Field(
        description="Which nonlinearity to apply.")


def _sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


_ZERO_BLOCK = 1 << 16
_zeros: dict = {}           # dtype -> a read-only block of zeros


def _relu(x, out):
    """``max(x, 0)`` block by block against a block of zeros: numpy's maximum runs its
    vector loop only when both operands are arrays (with the scalar 0 it took 2-3x as long,
    numpy 2.4); the same ufunc, so the same values and NaNs."""
    if not (type(x) is np.ndarray and type(out) is np.ndarray and x.dtype == out.dtype
            and x.flags.c_contiguous and out.flags.c_contiguous):
        np.maximum(x, 0, out=out)       # a device's arrays (this body runs on them too)
        return
    z = _zeros.get(x.dtype)
    if z is None:
        z = np.zeros(_ZERO_BLOCK, x.dtype)
        z.flags.writeable = False
        _zeros[x.dtype] = z
    x, out = x.reshape(-1), out.reshape(-1)
    for i in range(0, x.size, _ZERO_BLOCK):
        j = min(x.size, i + _ZERO_BLOCK)
        np.maximum(x[i:j], z[:j - i], out=out[i:j])


_FORWARD = {  # act_type: f(x, out) writing f(x) into out (out may be x itself)
    "relu": _relu,
    "sigmoid": _sigmoid,
    "tanh": lambda x, out: np.tanh(x, out=out),
    "softrelu": lambda x, out: np.logaddexp(x, 0, out=out),
    "softsign": lambda x, out: np.divide(x, 1 + np.abs(x), out=out),
}

_DERIVATIVE = {  # act_type: f'(v), v the output (or the input for softsign)
    "relu": lambda y: y > 0,
    "sigmoid": lambda y: y * (1 - y),
    "tanh": lambda y: 1 - y * y,
    "softrelu": lambda y: -np.expm1(-y),
    "softsign": lambda x: 1 / np.square(1 + np.abs(x)),
}


def _forward(ctx, inputs, req, outputs, p):
    r, x, out = req[0], inputs[0], outputs[0]
    if r == 1 or r == 2:
        _FORWARD[p.act_type](x, out)
    elif r == 3:
        tmp = np.empty_like(out)
        _FORWARD[p.act_type](x, tmp)
        out += tmp


def _backward(ctx, inputs, req, outputs, p):
    r, og, v, gx = req[0], inputs[0], inputs[1], outputs[0]
    d = _DERIVATIVE[p.act_type](v)
    if r == 1 or r == 2:
        np.multiply(og, d, out=gx, casting="unsafe")
    elif r == 3:
        gx += og * d


def _grad(node, og):
    keep = node.inputs[0] if node.params.act_type == "softsign" else out_entry(node, 0)
    return grad_entries(backward_node(f"_backward_{OP}", node, [og[0], keep]), 1)


_EXAMPLES = [{"inputs": [(3, 4)], "params": {"act_type": a}, "domain": d}
             for a, d in (("relu", (-1, 1)), ("sigmoid", (-3, 3)), ("tanh", (-2, 2)),
                          ("softrelu", (-3, 3)), ("softsign", (-3, 3)))]

(register_op(OP).add_alias("_npx_activation")
    .describe("Element-wise nonlinearity chosen by act_type: relu max(x, 0), sigmoid "
              "1/(1+exp(-x)), tanh, softrelu log(1+exp(x)), softsign x/(1+|x|).")
    .set_attr_parser(ActivationParam)
    .set_num_inputs(1).set_num_outputs(1)
    # no FListInputNames, as MXNet: the argument is 'data', the monitor calls it 'input0'
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", ElemwiseShape(1, 1))
    .set_attr("FInferType", FloatOnly(same_type(OP, ["data"]), accepted=AMP_FLOAT_DTYPES))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", _EXAMPLES + [{"inputs": [(2, 3)], "dtype": "float16",
                                         "params": {"act_type": "tanh"}, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "The input array."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Activation from the output gradient and the forward output "
              "(the input for softsign).")
    .set_attr_parser(ActivationParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(2, 1))
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [(3, 4), (3, 4)], "params": {"act_type": a}}
                            for a in ("relu", "sigmoid", "softsign")]))
