"""``multi_sum_sq``: the sum of squares of each of ``num_arrays`` arrays, in one float32 output
of shape ``(num_arrays,)`` (MXNet's global-norm helper, used by gradient clipping such as
GluonNLP's BERT scripts). The inputs share one floating dtype; the sums are float32."""

from __future__ import annotations

import numpy as np

from opsdk import Field, FloatOnly, Param, TypeInferError, assign, register_op

from ._infer import out_shapes


class MultiSumSqParam(Param):
    num_arrays: int = Field(ge=1, description="How many arrays to reduce")


def _infer_shape(p, ins, outs):
    return list(ins), out_shapes("multi_sum_sq", outs, [(p.num_arrays,)])


def _uniform_type(p, ins, outs):
    known = next((d for d in ins if d is not None), None)
    if known is None:
        return list(ins), [np.dtype(np.float32)]
    for i, d in enumerate(ins):
        if d is not None and np.dtype(d) != np.dtype(known):
            raise TypeInferError(f"Operator 'multi_sum_sq': array_{i} has dtype "
                                 f"{np.dtype(d).name}, expected {np.dtype(known).name} "
                                 f"(as array_0)")
    return [known] * len(ins), [np.dtype(np.float32)]


def _compute(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    sums = [xp.sum(xp.square(a.astype(np.float32, copy=False))) for a in inputs]
    assign(outputs[0], req[0], xp.stack(sums).astype(np.float32))


(register_op("multi_sum_sq")
 .describe(__doc__.split("\n\n")[0].replace("\n", " ").strip('"'))
 .set_attr_parser(MultiSumSqParam)
 .set_num_inputs(lambda p: p.num_arrays).set_num_outputs(1)
 .set_attr("FListInputNames", lambda p: [f"array_{i}" for i in range(p.num_arrays)])
 .set_attr("FInferShape", _infer_shape)
 .set_attr("FInferType", FloatOnly(_uniform_type, op="multi_sum_sq"))
 .set_attr("FCompute<cpu>", _compute)
 .set_attr("TExamples", [{"inputs": [(3, 4), (5,), (2, 2, 2)], "params": {"num_arrays": 3},
                          "grad": False},
                         {"inputs": [(7,)], "params": {"num_arrays": 1}, "grad": False}])
 .add_argument("data", "NDArray-or-Symbol[]", "Arrays"))
