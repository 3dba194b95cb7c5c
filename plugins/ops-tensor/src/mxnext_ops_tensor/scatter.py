"""MXNet's scatter ops (``_internal._scatter_*``), which compute only where the left-hand
sparse input stores values and keep its storage pattern; on dense arrays they are the plain
elementwise ops.

- ``_scatter_elemwise_div(lhs, rhs)``: a row_sparse ``lhs`` gives a row_sparse result over
  its rows (``rhs`` of any storage type; rows ``lhs`` lacks stay zero, even where ``rhs``
  is zero); otherwise ``elemwise_div`` (a dense result).
- ``_scatter_plus_scalar`` / ``_scatter_minus_scalar``: a csr or row_sparse ``data`` keeps
  its type and stored positions (only the stored values move); dense data as
  ``_plus_scalar`` / ``_minus_scalar``.
"""

from __future__ import annotations

from opsdk import (ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseShape, ElemwiseType,
                   register_op)
from opsdk.sparse import stype_of, to_dense

from ._common import Ufunc, forward_compute
from .scalar import ScalarParam, scalar_forward, scalar_type
from .sparse import map_values


def _scatter_div_sparse(params, inputs, dense):
    lhs, rhs = inputs
    if stype_of(lhs) != "row_sparse":
        return None             # MXNet: the storage fallback, elemwise_div's dense result
    rows = to_dense(rhs)[lhs.indices]
    data = dense(lhs.data, rows)[0] if len(lhs.indices) else lhs.data.copy()
    return [lhs._replace(data=data)]


(register_op("_scatter_elemwise_div")
    .describe("lhs / rhs computed only at the rows a row_sparse lhs stores (a row_sparse "
              "result); otherwise elemwise_div.")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(2, 1)).set_attr("FInferType", ElemwiseType(2, 1))
    .set_attr("FCompute<cpu>", forward_compute(Ufunc("true_divide")))
    .set_attr("FComputeSparse", _scatter_div_sparse)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_div"))
    .set_attr("TExamples", [{"inputs": [(3, 4), (3, 4)], "domain": (0.5, 2.0)}])
    .add_argument("lhs", "NDArray-or-Symbol", "Dividend (its stored rows are computed).")
    .add_argument("rhs", "NDArray-or-Symbol", "Divisor."))

for _name, _ufunc in (("_scatter_plus_scalar", "add"), ("_scatter_minus_scalar", "subtract")):
    (register_op(_name)
        .describe(f"data {'+' if _ufunc == 'add' else '-'} scalar at the values a sparse "
                  f"data stores (same storage type and positions); every element of dense "
                  f"data.")
        .set_attr_parser(ScalarParam).set_num_inputs(1).set_num_outputs(1)
        .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", scalar_type(_name))
        .set_attr("FCompute<cpu>", scalar_forward(Ufunc(_ufunc)))
        .set_attr("FComputeSparse", map_values)
        .set_attr("FGradient", ElemwiseGradUseNone("_copy"))
        .set_attr("TExamples", [{"params": {"scalar": 2.5}}])
        .add_argument("data", "NDArray-or-Symbol", "The array operand."))
