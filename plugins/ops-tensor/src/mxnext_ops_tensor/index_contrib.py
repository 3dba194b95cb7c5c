"""Index ops: _contrib_index_copy (``contrib/index_copy.cc``), _contrib_boolean_mask
(``contrib/boolean_mask.cc``), _contrib_index_array (``contrib/index_array.cc``),
_ravel_multi_index and _unravel_index (``tensor/ravel.cc``).

_contrib_boolean_mask's output length is the number of non-zero mask entries, known only from
the mask's values (MXNet sizes the output when the op runs). Its FInferShape leaves the output
unknown; ``FInferShapeFromData(params, input arrays) -> output shapes`` gives it to mx.nd,
which waits for the inputs first.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseType, Field, MakeZeroGradNodes, MXNetError, Param,
                   TypeInferError, assign, register_op)
from opsdk.shape import dim_known, merge_shape

from ._common import check_outs, put
from ._layout import fail, fixed_type, norm_axis


def _rows(op, index, n):
    """An index vector as int64 row numbers (floats truncated), each checked in [0, n)."""
    rows = index.astype(np.int64)
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n):
        raise MXNetError(f"Operator {op!r}: index_vector entries must lie in [0, {n}), got "
                         f"values from {rows.min()} to {rows.max()}")
    return rows


# -- _contrib_index_copy -------------------------------------------------------------------
def _index_copy_shape(params, ins, outs):
    op = "_contrib_index_copy"
    old, idx, new = ins
    old = merge_shape(op, old, outs[0], "old_tensor")
    if idx is not None and len(idx) != 1:
        fail(op, f"index_vector must be 1-D, got shape {tuple(idx)}")
    if old is not None and new is not None:
        if len(old) != len(new):
            fail(op, f"new_tensor must have as many dims as old_tensor {tuple(old)}, got shape "
                     f"{tuple(new)}")
        if dim_known(old[0]) and dim_known(new[0]) and old[0] < new[0]:
            fail(op, f"new_tensor {tuple(new)} has more rows than old_tensor {tuple(old)}")
        rest = merge_shape(op, new[1:], old[1:], "new_tensor (past dim 0, as old_tensor)")
        new, old = (new[0],) + rest, (old[0],) + rest
    if idx is not None and new is not None:
        n = merge_shape(op, idx, new[:1], "index_vector (one entry per row of new_tensor)")
        idx, new = n, n + tuple(new[1:])
    return [old, idx, new], check_outs(op, outs, [old])


def _index_copy_type(params, ins, outs):
    """The output, old_tensor and new_tensor share a dtype; index_vector keeps its own."""
    known = [np.dtype(t) for t in (ins[0], ins[2], outs[0]) if t is not None]
    if not known:
        return list(ins), list(outs)
    t = known[0]
    if any(k != t for k in known):
        raise TypeInferError(f"Operator '_contrib_index_copy': old_tensor, new_tensor and the "
                             f"output must share one dtype, got {[str(k) for k in known]}")
    return [t, ins[1], t], [t]


def _index_copy(ctx, inputs, req, outputs, params):
    old, idx, new = inputs
    rows = _rows("_contrib_index_copy", idx, old.shape[0])
    res = old.copy()
    res[rows] = new
    assign(outputs[0], req[0], res)


def _index_copy_backward(ctx, inputs, req, outputs, params):
    """old_tensor gets the output gradient with the copied rows zeroed, new_tensor those rows;
    index_vector gets zeros."""
    og, old, idx, new = inputs
    rows = _rows("_contrib_index_copy", idx, old.shape[0])
    g_old = og.copy()
    g_old[rows] = 0
    assign(outputs[0], req[0], g_old)
    put(outputs[1], req[1], ctx.xp.zeros(idx.shape, outputs[1].dtype))
    assign(outputs[2], req[2], og[rows])


def _index_copy_ref(old, idx, new):
    out = old.copy()
    out[idx.astype(np.int64)] = new
    return out


def _backward_shape(op, like):
    """Backward ops whose output ``k`` has the shape of input ``like[k]`` (forward inputs)."""
    def infer(params, ins, outs):
        return list(ins), check_outs(op, outs, [ins[i] for i in like])
    return infer


def _backward_type(like):
    def infer(params, ins, outs):
        return list(ins), [ins[i] if ins[i] is not None else o for i, o in zip(like, outs)]
    return infer


(register_op("_contrib_index_copy")
    .describe("Copies the rows of new_tensor into a copy of old_tensor: row i of new_tensor "
              "becomes row index_vector[i] of the output.")
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["old_tensor", "index_vector", "new_tensor"])
    .set_attr("FInferShape", _index_copy_shape)
    .set_attr("FInferType", _index_copy_type)
    .set_attr("FCompute<cpu>", _index_copy)
    .set_attr("FGradient", ElemwiseGradUseIn("_contrib_backward_index_copy"))
    .set_attr("TExamples", [
        {"inputs": [(5, 3), np.array([0, 4, 2], np.int64), (3, 3)], "ref": _index_copy_ref},
        {"inputs": [(4, 2, 2), np.array([3.0, 1.0], np.float32), (2, 2, 2)],
         "dtype": "float64", "ref": _index_copy_ref, "grad": [0, 2]},
        {"inputs": [(3,), np.array([1], np.int32), (1,)], "dtype": ["int32", "int32", "int32"],
         "domain": (-5, 5), "ref": _index_copy_ref}])
    .add_argument("old_tensor", "NDArray-or-Symbol", "Old tensor")
    .add_argument("index_vector", "NDArray-or-Symbol", "Index vector")
    .add_argument("new_tensor", "NDArray-or-Symbol", "New tensor to be copied"))

(register_op("_contrib_backward_index_copy")
    .describe("Gradient of _contrib_index_copy wrt old_tensor, index_vector (zeros) and "
              "new_tensor.")
    .set_attr("TIsBackward", True).set_num_inputs(4).set_num_outputs(3)
    .set_attr("FInferShape", _backward_shape("_contrib_backward_index_copy", (1, 2, 3)))
    .set_attr("FInferType", _backward_type((1, 2, 3)))
    .set_attr("FCompute<cpu>", _index_copy_backward)
    .set_attr("TExamples", [{"inputs": [(5, 3), (5, 3), np.array([0, 4, 2], np.int64),
                                        (3, 3)]}]))


# -- _contrib_boolean_mask -----------------------------------------------------------------
class BooleanMaskParam(Param):
    axis: int = Field(0, description="An integer that represents the axis in NDArray to mask "
                                     "from.")


def _mask_checks(op, params, data, index):
    """The checks MXNet makes when it runs: axis 0 only, a 1-D index of data.shape[0]."""
    if params.axis != 0:
        fail(op, f"only axis=0 is supported, got axis={params.axis}")
    if data is not None and len(data) < 1:
        fail(op, f"data must have at least 1 dim, got shape {tuple(data)}")
    if index is not None and len(index) != 1:
        fail(op, f"index must be 1-D, got shape {tuple(index)}")
    if data is not None and index is not None:
        return merge_shape(op, index, data[:1], "index (one entry per row of data)")
    return index


def _mask_shape(params, ins, outs):
    """Checks and fills the inputs; the output stays as given (its length is the count of
    non-zero mask entries, unknown from shapes alone)."""
    op = "_contrib_boolean_mask"
    data, index = ins
    index = _mask_checks(op, params, data, index)
    if data is not None and index is not None:
        data = tuple(index) + tuple(data[1:])
    if data is not None and outs[0] is not None:
        if len(outs[0]) != len(data):
            fail(op, f"the output must have as many dims as data {tuple(data)}, got "
                     f"{tuple(outs[0])}")
        rest = merge_shape(op, tuple(data[1:]), tuple(outs[0][1:]), "output (past dim 0)")
        data = (data[0],) + rest
    return [data, index], list(outs)


def _mask_shape_from_data(params, inputs):
    """The output shape from the input arrays: data's, with as many rows as index has
    non-zero entries."""
    data, index = inputs
    _mask_checks("_contrib_boolean_mask", params, data.shape, index.shape)
    return [(int(np.count_nonzero(index)),) + data.shape[1:]]


def _boolean_mask(ctx, inputs, req, outputs, params):
    data, index = inputs
    _mask_checks("_contrib_boolean_mask", params, data.shape, index.shape)
    rows = data[index != 0]
    if outputs[0].shape != rows.shape:
        raise MXNetError(f"Operator '_contrib_boolean_mask': index selects {rows.shape[0]} rows, "
                         f"so the output has shape {rows.shape}, got an output of shape "
                         f"{outputs[0].shape}")
    assign(outputs[0], req[0], rows)


def _boolean_mask_backward(ctx, inputs, req, outputs, params):
    """The output gradient scattered back to the selected rows of data, zeros elsewhere;
    zeros for index."""
    og, data, index = inputs
    g = ctx.xp.zeros(data.shape, og.dtype)
    g[index != 0] = og
    assign(outputs[0], req[0], g)
    put(outputs[1], req[1], ctx.xp.zeros(index.shape, outputs[1].dtype))


(register_op("_contrib_boolean_mask").add_alias("_npi_boolean_mask")
    .describe("The rows of data where index is non-zero: boolean_mask([[1, 2, 3], [4, 5, 6], "
              "[7, 8, 9]], [0, 1, 0]) is [[4, 5, 6]]. The output length depends on index's "
              "values.")
    .set_attr_parser(BooleanMaskParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "index"])
    .set_attr("FInferShape", _mask_shape)
    .set_attr("FInferShapeFromData", _mask_shape_from_data)
    .set_attr("FInferType", lambda p, ins, outs: (
        [ins[0] if ins[0] is not None else outs[0], ins[1]],
        [ins[0] if ins[0] is not None else outs[0]]))
    .set_attr("FCompute<cpu>", _boolean_mask)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_contrib_boolean_mask"))
    .set_attr("TExamples", [])      # the suite infers outputs from shapes: tests/test_index_contrib
    .add_argument("data", "NDArray-or-Symbol", "Data")
    .add_argument("index", "NDArray-or-Symbol", "Mask"))

(register_op("_backward_contrib_boolean_mask")
    .describe("Gradient of _contrib_boolean_mask wrt data (and zeros for index).")
    .set_attr_parser(BooleanMaskParam).set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", _backward_shape("_backward_contrib_boolean_mask", (1, 2)))
    .set_attr("FInferType", _backward_type((1, 2)))
    .set_attr("FCompute<cpu>", _boolean_mask_backward)
    .set_attr("TExamples", [{"inputs": [(2, 3), (4, 3), np.array([0, 1, 0, 1], np.float32)]},
                            {"inputs": [(0, 2), (2, 2), np.array([False, False])]}]))


# -- _contrib_index_array ------------------------------------------------------------------
class IndexArrayParam(Param):
    axes: Optional[tuple[int, ...]] = Field(
        None, description="The axes to include in the index array. Supports negative values.")


def _index_array_axes(params, ndim):
    if params.axes is None:
        return tuple(range(ndim))
    return tuple(norm_axis("_contrib_index_array", a, ndim, "axes entry") for a in params.axes)


def _index_array_shape(params, ins, outs):
    x = ins[0]
    if x is None:
        return list(ins), list(outs)
    n = len(_index_array_axes(params, len(x)))
    return list(ins), check_outs("_contrib_index_array", outs, [tuple(x) + (n,)])


def _index_array(ctx, inputs, req, outputs, params):
    """out[i_1, ..., i_n, j] = i_axes[j] (every axis by default)."""
    x = inputs[0]
    grid = ctx.xp.indices(x.shape, dtype=np.int64)
    axes = list(_index_array_axes(params, x.ndim))
    put(outputs[0], req[0], ctx.xp.moveaxis(grid[axes], 0, -1))


def _index_array_ref(x, axes=None):
    grid = np.stack(np.meshgrid(*[np.arange(n) for n in x.shape], indexing="ij"), axis=-1)
    return (grid if axes is None else grid[..., list(axes)]).astype(np.int64)


(register_op("_contrib_index_array")
    .describe("The index of every element of data: for data of shape (d_1, ..., d_n) an int64 "
              "array idx of shape (d_1, ..., d_n, n) with idx[i_1, ..., i_n, :] = [i_1, ..., "
              "i_n]; with axes, only those positions, in that order.")
    .set_attr_parser(IndexArrayParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _index_array_shape)
    .set_attr("FInferType", fixed_type("_contrib_index_array", lambda p: "int64"))
    .set_attr("FCompute<cpu>", _index_array)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(3, 2)], "ref": _index_array_ref},
        {"inputs": [(3, 2, 2)], "params": {"axes": (1, 0)}, "ref": _index_array_ref},
        {"inputs": [(2, 3, 4)], "params": {"axes": (-1,)}, "dtype": "int32",
         "ref": lambda x, axes: _index_array_ref(x, (2,))}])
    .add_argument("data", "NDArray-or-Symbol", "Input data"))


# -- _ravel_multi_index, _unravel_index ----------------------------------------------------
class RavelParam(Param):
    shape: tuple[int, ...] = Field((), description="Shape of the array into which the "
                                                   "multi-indices apply.")


def _dims(op, params):
    """The shape parameter; its first entry is never read (it may be -1)."""
    s = params.shape
    if not s:
        fail(op, "shape must name the array's dimensions, got shape=()")
    if any(d <= 0 for d in s[1:]):
        fail(op, f"shape entries after the first must be positive, got shape={s}")
    return s


def _ravel_shape(params, ins, outs):
    op = "_ravel_multi_index"
    k = len(_dims(op, params))
    x = ins[0]
    if x is not None:
        if len(x) != 2:
            fail(op, f"data must be 2-D (one column per multi-index), got shape {tuple(x)}")
        if dim_known(x[0]) and x[0] != k:
            fail(op, f"data has {x[0]} rows, expected one per entry of shape={params.shape}")
        x = (k, x[1])
    if outs[0] is not None:
        x = merge_shape(op, x, (k,) + tuple(outs[0]), "data")
    if x is None:
        return list(ins), list(outs)
    return [x], check_outs(op, outs, [(x[1],)])


def _unravel_shape(params, ins, outs):
    op = "_unravel_index"
    k = len(_dims(op, params))
    x = ins[0]
    if x is not None and len(x) != 1:
        fail(op, f"data must be 1-D (flat indices), got shape {tuple(x)}")
    if outs[0] is not None:
        if len(outs[0]) != 2 or (dim_known(outs[0][0]) and outs[0][0] != k):
            fail(op, f"the output must have shape ({k}, N), got {tuple(outs[0])}")
        x = merge_shape(op, x, tuple(outs[0][1:]), "data")
    if x is None:
        return list(ins), list(outs)
    return [x], check_outs(op, outs, [(k, x[0])])


def _ravel(ctx, inputs, req, outputs, params):
    """sum_j idx_j * prod(shape[j+1:]) computed as MXNet: ``r = r * shape[j] + idx_j`` from
    the first row, truncated to an integer at each step (float indices)."""
    x = inputs[0]
    work = x.astype(np.float64 if x.dtype.kind == "f" else np.int64)
    r = ctx.xp.zeros(x.shape[1:], np.int64)
    for j, n in enumerate(params.shape):
        r = (r * n + work[j]).astype(np.int64)
    put(outputs[0], req[0], r)


def _unravel(ctx, inputs, req, outputs, params):
    """Each flat index (truncated to an integer) split by C's truncating division from the
    last dimension on; what is left goes to the first row (shape[0] is not read)."""
    xp = ctx.xp
    idx = inputs[0].astype(np.int64)
    rows = []
    for n in params.shape[:0:-1]:
        q = xp.where(idx < 0, -((-idx) // n), idx // n)
        rows.append(idx - q * n)
        idx = q
    rows.append(idx)
    put(outputs[0], req[0], xp.stack(rows[::-1]))


_RAVEL_DATA = np.array([[3, 6, 6], [4, 5, 1]], np.int64)
_FLAT = np.array([22, 41, 37], np.float32)
(register_op("_ravel_multi_index").add_alias("ravel_multi_index")
    .describe("Flat indices of a batch of multi-indices, one per column of data (numpy's "
              "ravel_multi_index); shape's first entry may be -1: ravel([[3, 6, 6], [4, 5, 1]], "
              "shape=(7, 6)) is [22, 41, 37].")
    .set_attr_parser(RavelParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _ravel_shape)
    .set_attr("FInferType", ElemwiseType(1, 1))
    .set_attr("FCompute<cpu>", _ravel)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [_RAVEL_DATA], "params": {"shape": (7, 6)},
         "ref": lambda x, shape: np.ravel_multi_index(x, shape)},
        {"inputs": [_RAVEL_DATA.astype(np.float32)], "params": {"shape": "(-1, 6)"},
         "ref": lambda x, shape: np.array([22, 41, 37], np.float32), "grad": False},
        {"inputs": [np.array([[1], [2], [3]], np.int32)], "params": {"shape": (2, 3, 4)},
         "ref": lambda x, shape: np.array([23], np.int32)}])
    .add_argument("data", "NDArray-or-Symbol", "Batch of multi-indices"))

(register_op("_unravel_index").add_alias("unravel_index")
    .describe("Multi-indices of flat indices, one per column of the output (numpy's "
              "unravel_index); shape's first entry may be -1: unravel([22, 41, 37], "
              "shape=(7, 6)) is [[3, 6, 6], [4, 5, 1]].")
    .set_attr_parser(RavelParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", _unravel_shape)
    .set_attr("FInferType", ElemwiseType(1, 1))
    .set_attr("FCompute<cpu>", _unravel)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [_FLAT], "params": {"shape": (7, 6)},
         "ref": lambda x, shape: _RAVEL_DATA.astype(np.float32), "grad": False},
        {"inputs": [_FLAT.astype(np.int64)], "params": {"shape": (-1, 6)},
         "ref": lambda x, shape: _RAVEL_DATA},
        {"inputs": [np.array([23, 0, 5], np.int32)], "params": {"shape": (2, 3, 4)},
         "ref": lambda x, shape: np.array(np.unravel_index(x, shape), np.int32)}])
    .add_argument("data", "NDArray-or-Symbol", "Array of flat indices"))
