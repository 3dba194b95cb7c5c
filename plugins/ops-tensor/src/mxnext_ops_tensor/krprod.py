"""khatri_rao (MXNet's ``contrib/krprod.cc``): the column-wise Khatri-Rao product of any number
of matrices, and its gradient (an mxnext addition: MXNet 1.9 registers none)."""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseGradUseIn, Field, FloatOnly, Param, register_op
from opsdk.shape import dim_known, dims_prod, merge_shape, unknown_dim

from ._common import put
from ._layout import fail, merge, same_type

_OP = "khatri_rao"
_DTYPES = (np.float32, np.float64)     # MXNet's kernel (BLAS ger) has no other


class KhatriRaoParam(Param):
    num_args: int = Field(ge=1, description="Number of input matrices.")


def _names(p):
    return [f"arg{i}" for i in range(p.num_args)]


def _columns(ins, outs):
    """The one column count every input and the output share (unknown if none knows it)."""
    cols, where = unknown_dim(), None
    for what, s in [(f"arg{i}", s) for i, s in enumerate(ins)] + [("output", outs[0])]:
        if s is None or not dim_known(s[1]):
            continue
        if dim_known(cols) and s[1] != cols:
            fail(_OP, f"all matrices need the same number of columns: {where} has {cols}, "
                      f"{what} has {s[1]} (shape {tuple(s)})")
        cols, where = s[1], what
    return cols


def _rows(rows, out):
    """The inputs' row counts, one unknown among them deduced from the output's rows."""
    unknown = [i for i, r in enumerate(rows) if not dim_known(r)]
    if len(unknown) != 1 or out is None or not dim_known(out[0]):
        return rows
    rest = dims_prod(r for i, r in enumerate(rows) if i != unknown[0])
    if rest > 0:        # np_shape's empty matrices leave it undecided
        if out[0] % rest:
            fail(_OP, f"output rows {out[0]} are not a multiple of the other inputs' rows "
                      f"product {rest}")
        rows[unknown[0]] = out[0] // rest
    return rows


def _infer_shape(p, ins, outs):
    """Inputs (M_i, K) give an output (M_1 * ... * M_n, K); partial shapes fill what they
    can (the columns both ways, one input's rows from the output's)."""
    for i, s in enumerate(ins):
        if s is not None and len(s) != 2:
            fail(_OP, f"input arg{i} must be a matrix (2 dims), got shape {tuple(s)}")
    if outs[0] is not None and len(outs[0]) != 2:
        fail(_OP, f"the output is a matrix (2 dims), got shape {tuple(outs[0])}")
    cols = _columns(ins, outs)
    rows = _rows([unknown_dim() if s is None else s[0] for s in ins], outs[0])
    ins = [merge_shape(_OP, s, (r, cols), f"input arg{i}") for i, (s, r) in
           enumerate(zip(ins, rows))]
    return ins, merge(_OP, outs, [(dims_prod(rows), cols)])


def _khatri_rao(ctx, inputs, req, outputs, params):
    """Row (i_1, ..., i_n) of the result, i_n fastest, is the elementwise product of the rows
    i_1 of arg0, ..., i_n of arg(n-1)."""
    k = outputs[0].shape[1]
    acc = inputs[0]
    for m in inputs[1:]:
        acc = (acc[:, None, :] * m[None, :, :]).reshape(-1, k)
    put(outputs[0], req[0], acc)


def _khatri_rao_backward(ctx, inputs, req, outputs, params):
    """Input i's gradient: the head gradient, seen as (M_1, ..., M_n, K), times every other
    input broadcast along its own axis, summed over all axes but i's and K's."""
    og, mats = inputs[0], inputs[1:]
    dims = [m.shape[0] for m in mats]
    n, k = len(mats), og.shape[1]
    g = og.reshape(*dims, k)
    for i in range(n):
        acc = g
        for j, other in enumerate(mats):
            if j != i:
                acc = acc * other.reshape((1,) * j + (dims[j],) + (1,) * (n - 1 - j) + (k,))
        put(outputs[i], req[i], acc.sum(axis=tuple(j for j in range(n) if j != i)))


def _backward_shape(p, ins, outs):
    """Each gradient has its input's shape (inputs 1.. of the backward node)."""
    outs = [merge_shape(f"_backward_{_OP}", o, s, f"output {k}")
            for k, (o, s) in enumerate(zip(outs, ins[1:]))]
    return [ins[0]] + outs, outs


(register_op(_OP)
    .describe("Column-wise Khatri-Rao product of matrices A_1 (M_1, K), ..., A_n (M_n, K): the "
              "(M_1 * ... * M_n, K) matrix whose column k is the Kronecker product of the "
              "inputs' columns k. khatri_rao([[1, -1], [2, -3]], [[1, 4], [2, 5], [3, 6]]) = "
              "[[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]].")
    .set_attr_parser(KhatriRaoParam)
    .set_num_inputs(lambda p: p.num_args).set_num_outputs(1)
    .set_attr("FListInputNames", _names).set_attr("key_var_num_args", "num_args")
    .set_attr("FInferShape", _infer_shape)
    .set_attr("FInferType", FloatOnly(same_type(_OP), accepted=_DTYPES))
    .set_attr("FCompute<cpu>", _khatri_rao)
    .set_attr("FGradient", ElemwiseGradUseIn(f"_backward_{_OP}"))
    .set_attr("TExamples", [
        {"inputs": [(2, 4)], "params": {"num_args": 1}, "ref": lambda a, **p: a},
        {"inputs": [np.array([[1, -1], [2, -3]], np.float32),
                    np.array([[1, 4], [2, 5], [3, 6]], np.float32)], "params": {"num_args": 2},
         "ref": lambda a, b, **p: np.array([[1, -4], [2, -5], [3, -6], [2, -12], [4, -15],
                                            [6, -18]], np.float32)},
        {"inputs": [(3, 2), (1, 2), (2, 2)], "params": {"num_args": 3}, "dtype": "float64"}])
    .add_argument("args", "NDArray-or-Symbol[]", "Positional input matrices"))

(register_op(f"_backward_{_OP}")
    .describe("Gradient of khatri_rao: one gradient per input matrix.")
    .set_attr_parser(KhatriRaoParam).set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: p.num_args + 1).set_num_outputs(lambda p: p.num_args)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{_OP}"))
    .set_attr("FCompute<cpu>", _khatri_rao_backward)
    .set_attr("TExamples", [{"inputs": [(6, 2), (3, 2), (2, 2)], "params": {"num_args": 2}}]))
