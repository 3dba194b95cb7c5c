"""ONNX ops -> mxnext ops: elementwise, reductions, shapes and indexing.

Each converter is ``fn(g, node)`` with ``g`` the ``GraphImporter``; it returns a Symbol, a
list of them (one per node output), or numpy arrays for values it computes outright.
``CONVERTERS`` (the table the importer reads) also holds the network ops of ``_ops_nn``.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import symbol as S
from ..._runtime.base import MXNetError, ParamError
from ._proto import np_dtype
from ._ops_nn import NN_CONVERTERS

__all__ = ["CONVERTERS", "CONST_INPUTS", "MXNET_1_9_OPS"]

# The ONNX ops MXNet 1.9's importer maps (onnx2mx/_import_helper.py).
MXNET_1_9_OPS = frozenset("""
    Constant RandomUniform RandomNormal RandomUniformLike RandomNormalLike Multinomial
    Add Sub Mul Div Abs Neg Sum Tanh Ceil Floor Concat Sigmoid Relu Pad MatMul Conv
    ConvTranspose BatchNormalization SpatialBN LeakyRelu Elu PRelu Selu Softmax FC
    GlobalAveragePool GlobalMaxPool GlobalLpPool Gemm LRN Dropout Reshape Cast Split Slice
    Transpose Squeeze Unsqueeze Flatten Identity Reciprocal Sqrt Pow Exp Log ReduceMax
    ReduceMean ReduceMin ReduceSum ReduceProd AveragePool MaxPool ArgMax ArgMin Max Min Clip
    ReduceLogSum ReduceLogSumExp ReduceSumSquare ReduceL1 ReduceL2 MaxRoiPool
    InstanceNormalization LogSoftmax Softsign Less Greater Equal And Xor Not Or Mean Acos
    Asin Atan Cos Sin Softplus Tan Shape Size Gather HardSigmoid LpPool DepthToSpace
    SpaceToDepth Hardmax LpNormalization TopK""".split())

# inputs that must be known at import time, by op (positions): shapes, axes, sizes, bounds
CONST_INPUTS = {"Reshape": (1,), "Slice": (1, 2, 3, 4), "Squeeze": (1,), "Unsqueeze": (1,),
                "Split": (1,), "Pad": (1, 2, 3), "TopK": (1,), "Tile": (1,), "Expand": (1,),
                "ConstantOfShape": (0,), "Range": (0, 1, 2), "Resize": (1, 2, 3),
                "Upsample": (1,), "Dropout": (1, 2),
                **{op: (1,) for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean",
                                       "ReduceProd", "ReduceLogSum", "ReduceLogSumExp",
                                       "ReduceSumSquare", "ReduceL1", "ReduceL2")}}


def _where(node):
    return f"ONNX node {node.name or node.output[0]!r} ({node.op_type})"


def unsupported(node, what, value, allowed):
    """A ParamError naming the node, the attribute, its value and what is converted."""
    return ParamError(f"{_where(node)}: {what}={value!r} is not converted; {allowed}")


def axes_of(g, node, since_input_opset):
    """The ``axes`` of a node: an input from ``since_input_opset`` on, an attribute before."""
    if g.opset >= since_input_opset:
        axes = g.const(node, 1)
        return None if axes is None else tuple(int(a) for a in np.ravel(axes))
    axes = g.attrs(node).get("axes")
    return None if axes is None else tuple(axes)


def _positive(axis, rank):
    return axis + rank if axis < 0 else axis


# -- elementwise ----------------------------------------------------------------------------
_UNARY = {"Abs": "abs", "Neg": "negative", "Ceil": "ceil", "Floor": "floor", "Sqrt": "sqrt",
          "Exp": "exp", "Log": "log", "Reciprocal": "reciprocal", "Tanh": "tanh",
          "Sigmoid": "sigmoid", "Relu": "relu", "Acos": "arccos", "Asin": "arcsin",
          "Atan": "arctan", "Cos": "cos", "Sin": "sin", "Tan": "tan", "Softsign": "softsign",
          "Identity": "identity", "Not": "logical_not", "Erf": "erf", "Sign": "sign",
          "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
          "Atanh": "arctanh", "Round": "rint"}
_BINARY = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul",
           "Div": "broadcast_div", "Pow": "broadcast_power"}
_COMPARE = {"Less": "broadcast_lesser", "Greater": "broadcast_greater",
            "Equal": "broadcast_equal", "LessOrEqual": "broadcast_lesser_equal",
            "GreaterOrEqual": "broadcast_greater_equal", "And": "broadcast_logical_and",
            "Or": "broadcast_logical_or", "Xor": "broadcast_logical_xor"}
_VARIADIC = {"Sum": "broadcast_add", "Max": "broadcast_maximum", "Min": "broadcast_minimum",
             "Mean": "broadcast_add"}


def _unary(op, g, node):
    return getattr(S, op)(g.inp(node, 0), name=g.name(node))


def _binary(op, g, node):
    return getattr(S, op)(g.inp(node, 0), g.inp(node, 1), name=g.name(node))


def _compare(op, g, node):
    out = getattr(S, op)(g.inp(node, 0), g.inp(node, 1), name=g.name(node, "_cmp"))
    return S.cast(out, dtype="bool", name=g.name(node))


def _variadic(op, g, node):
    ins = [g.inp(node, i) for i in range(len(node.input))]
    out = functools.reduce(lambda a, b: getattr(S, op)(a, b), ins)
    if node.op_type == "Mean":
        out = out / len(ins)
    return S.identity(out, name=g.name(node))


def _pow(g, node):
    x = g.inp(node, 0)
    y = S.cast(g.inp(node, 1), dtype=g.dtype(node, 0)) \
        if g.dtype(node, 1) != g.dtype(node, 0) else g.inp(node, 1)
    return S.broadcast_power(x, y, name=g.name(node))


def _mod(g, node):
    if not g.attrs(node).get("fmod", 0):
        return S.broadcast_mod(g.inp(node, 0), g.inp(node, 1), name=g.name(node))
    a, b = g.inp(node, 0), g.inp(node, 1)     # C fmod: the sign of the dividend
    return S.broadcast_sub(a, S.broadcast_mul(S.trunc(S.broadcast_div(a, b)), b),
                           name=g.name(node))


def _clip(g, node):
    """Clip: bounds as attributes before opset 11, as optional inputs (constant or not) after."""
    x, a, dtype = g.inp(node, 0), g.attrs(node), g.dtype(node, 0)
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    if g.opset < 11:
        return S.clip(x, a_min=a.get("min", info.min), a_max=a.get("max", info.max),
                      name=g.name(node))
    bounds = []
    for i, default in ((1, info.min), (2, info.max)):
        if not g.has(node, i):
            bounds.append(default)
        elif node.input[i] in g.consts:
            bounds.append(g.const(node, i).item())
        else:
            bounds.append(g.inp(node, i))
    lo, hi = bounds
    if not isinstance(lo, S.Symbol) and not isinstance(hi, S.Symbol):
        return S.clip(x, a_min=lo, a_max=hi, name=g.name(node))
    if isinstance(lo, S.Symbol):
        x = S.broadcast_maximum(x, lo)
    elif lo != info.min:
        x = S.maximum(x, lo)
    out = S.broadcast_minimum(x, hi) if isinstance(hi, S.Symbol) else S.minimum(x, hi)
    return S.identity(out, name=g.name(node))


def _cast(g, node):
    dtype = np_dtype(g.attrs(node)["to"])
    return S.cast(g.inp(node, 0), dtype=dtype.name, name=g.name(node))


def _cast_like(g, node):
    return S.cast(g.inp(node, 0), dtype=g.dtype(node, 1).name, name=g.name(node))


def _where_op(g, node):
    shapes = [g.shape(node, i) for i in range(3)]
    if None in shapes:
        raise MXNetError(f"{_where(node)}: the input shapes must be known at import time")
    out = np.broadcast_shapes(*shapes)
    ins = [_broadcast(g.inp(node, i), s, out) for i, s in enumerate(shapes)]
    return S.where(ins[0], ins[1], ins[2], name=g.name(node))


def _broadcast(x, shape, out):
    if tuple(shape) == tuple(out):
        return x
    x = S.reshape(x, shape=(1,) * (len(out) - len(shape)) + tuple(shape))
    return S.broadcast_to(x, shape=tuple(out))


# -- reductions -----------------------------------------------------------------------------
# ONNX's value of a max, min or log-sum-exp over an empty set (MXNet's max/min refuse one)
_EMPTY_IDENTITY = {"max": float("-inf"), "min": float("inf"), "logsumexp": float("-inf")}


def _reduces_empty_axis(g, node, axes):
    """Whether the input's static shape, float, has a 0 on a reduced axis: the result is then
    the reduction's identity, spread over the reduced shape by an (all-zero) empty sum."""
    shape = g.shape(node, 0)
    if shape is None or not np.issubdtype(g.dtype(node, 0), np.floating):
        return False
    reduced = range(len(shape)) if axes is None else (_positive(k, len(shape)) for k in axes)
    return any(shape[k] == 0 for k in reduced)


def _reduce(kind, g, node):
    a = g.attrs(node)
    axes = axes_of(g, node, 13 if node.op_type == "ReduceSum" else 18)
    if axes is not None and len(axes) == 0:
        axes = None
    if axes is None and a.get("noop_with_empty_axes", 0):
        return S.identity(g.inp(node, 0), name=g.name(node))
    x, keep = g.inp(node, 0), bool(a.get("keepdims", 1))
    kw = {"axis": axes, "keepdims": keep}
    if kind in _EMPTY_IDENTITY and _reduces_empty_axis(g, node, axes):
        return S._plus_scalar(S.sum(x, **kw), scalar=_EMPTY_IDENTITY[kind], name=g.name(node))
    if kind == "logsumexp":
        m = S.max(x, axis=axes, keepdims=True)
        r = S.log(S.sum(S.exp(S.broadcast_sub(x, m)), axis=axes, keepdims=True)) + m
        return S.sum(r, name=g.name(node), **kw)
    pre, op, post = {"sum": (None, "sum", None), "mean": (None, "mean", None),
                     "max": (None, "max", None), "min": (None, "min", None),
                     "prod": (None, "prod", None), "logsum": (None, "sum", "log"),
                     "sumsquare": ("square", "sum", None), "l1": ("abs", "sum", None),
                     "l2": ("square", "sum", "sqrt")}[kind]
    if pre:
        x = getattr(S, pre)(x)
    out = getattr(S, op)(x, name=g.name(node, "_r" if post else ""), **kw)
    return getattr(S, post)(out, name=g.name(node)) if post else out


def _arg(op, g, node):
    a = g.attrs(node)
    axis, keep = a.get("axis", 0), bool(a.get("keepdims", 1))
    x = g.inp(node, 0)
    if a.get("select_last_index", 0):
        dim = g.shape(node, 0)[axis]
        idx = getattr(S, op)(S.reverse(x, axis=axis), axis=axis, keepdims=keep)
        return S.cast((dim - 1) - idx, dtype="int64", name=g.name(node))
    return S.cast(getattr(S, op)(x, axis=axis, keepdims=keep), dtype="int64", name=g.name(node))


# -- shapes ---------------------------------------------------------------------------------
def _reshape(g, node):
    shape = g.attrs(node).get("shape") if g.opset < 5 else g.const(node, 1)
    shape = tuple(int(s) for s in np.ravel(shape))
    if g.attrs(node).get("allowzero", 0) and 0 in shape:
        return _empty_reshape(g, node, shape)
    return S.reshape(g.inp(node, 0), shape=shape, name=g.name(node))


def _empty_reshape(g, node, shape):
    """Reshape ``allowzero=1`` to a shape holding a 0 (so no -1, and the input is empty too):
    ``reshape`` reads a 0 as "copy the input's dim", so the empty output is cut from the
    input's (empty, so zero) sum broadcast to ``shape`` with each 0 made 1 (keeps the dtype)."""
    if -1 in shape:
        raise unsupported(node, "allowzero", 1, "a shape holding both 0 and -1 is invalid")
    total = S.reshape(S.sum(g.inp(node, 0)), shape=(1,) * len(shape))
    full = S.broadcast_to(total, shape=tuple(max(d, 1) for d in shape))
    return S.slice(full, begin=(0,) * len(shape), end=shape, name=g.name(node))


def _flatten(g, node):
    axis = g.attrs(node).get("axis", 1)
    if axis == 1:
        return S.flatten(g.inp(node, 0), name=g.name(node))
    shape = g.shape(node, 0)
    if shape is None:
        raise MXNetError(f"{_where(node)}: axis={axis} needs the input's shape at import time")
    axis = _positive(axis, len(shape))
    lead = int(np.prod(shape[:axis], dtype=np.int64))
    return S.reshape(g.inp(node, 0), shape=(lead, -1), name=g.name(node))


def _transpose(g, node):
    perm = g.attrs(node).get("perm")
    return S.transpose(g.inp(node, 0), axes=tuple(perm) if perm else (), name=g.name(node))


def _squeeze(g, node):
    axes = axes_of(g, node, 13)
    return S.squeeze(g.inp(node, 0), axis=axes, name=g.name(node))


def _unsqueeze(g, node):
    axes = axes_of(g, node, 13)
    if any(a < 0 for a in axes):
        rank = g.rank(node, 0) + len(axes)
        axes = tuple(_positive(a, rank) for a in axes)
    x = g.inp(node, 0)
    for a in sorted(axes):
        x = S.expand_dims(x, axis=a)
    return S.identity(x, name=g.name(node))


def _concat(g, node):
    ins = [g.inp(node, i) for i in range(len(node.input)) if g.has(node, i)]
    return S.concat(*ins, dim=g.attrs(node).get("axis", 1), name=g.name(node))


def _split(g, node):
    a, axis = g.attrs(node), g.attrs(node).get("axis", 0)
    sizes = g.const(node, 1) if g.opset >= 13 else a.get("split")
    n = len(node.output)
    if sizes is None:
        shape = g.shape(node, 0)
        n = a.get("num_outputs", n)
        if shape is None or shape[axis] % n == 0:
            return list(S.split(g.inp(node, 0), num_outputs=n, axis=axis, name=g.name(node)))
        step = -(-shape[axis] // n)       # opset 18: the last part is smaller
        sizes = [step] * (n - 1) + [shape[axis] - step * (n - 1)]
    sizes = [int(n) for n in np.ravel(sizes)]
    if len(sizes) > 1 and 0 in sizes:
        return _split_with_empty(g, node, axis, sizes)
    bounds = tuple(int(b) for b in np.cumsum(sizes)[:-1])
    if not bounds:
        return [S.identity(g.inp(node, 0), name=g.name(node))]
    return list(S.split_v2(g.inp(node, 0), bounds, axis=axis))


def _split_with_empty(g, node, axis, sizes):
    """Split into parts some of which are empty, as ``slice`` pieces: ``split_v2``'s pieces
    are ``slice_axis``, which refuses an empty range (MXNet 1.9's ``slice`` gives one under
    ``np_shape``)."""
    x, lead = g.inp(node, 0), (None,) * _positive(axis, g.rank(node, 0))
    ends = np.cumsum(sizes).tolist()
    return [S.slice(x, begin=lead + (end - size,), end=lead + (end,))
            for size, end in zip(sizes, ends)]


def _slice(g, node):
    if g.opset < 10:
        a = g.attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts, ends = g.const(node, 1), g.const(node, 2)
        axes, steps = g.const(node, 3), g.const(node, 4)
    starts, ends = np.ravel(starts).tolist(), np.ravel(ends).tolist()
    axes = list(range(len(starts))) if axes is None else np.ravel(axes).tolist()
    steps = [1] * len(starts) if steps is None else np.ravel(steps).tolist()
    shape = g.shape(node, 0)
    rank = g.rank(node, 0) if shape is None else len(shape)
    begin, end, step = [None] * rank, [None] * rank, [None] * rank
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax = _positive(int(ax), rank)
        if shape is not None:
            s, e, st = slice(int(s), int(e), int(st)).indices(shape[ax])
            e = None if e < 0 else e
        else:
            s = None if abs(s) >= 2 ** 31 else int(s)
            e = None if abs(e) >= 2 ** 31 else int(e)
        begin[ax], end[ax], step[ax] = s, e, int(st)
    return S.slice(g.inp(node, 0), begin=tuple(begin), end=tuple(end), step=tuple(step),
                   name=g.name(node))


def _pad(g, node):
    a = g.attrs(node)
    mode = a.get("mode", "constant")
    if g.opset < 11:
        pads, value = a.get("pads", a.get("paddings")), a.get("value", 0.0)
        axes = None
    else:
        pads, value, axes = g.const(node, 1), g.const(node, 2), g.const(node, 3)
        value = 0.0 if value is None else np.ravel(value)[0].item()
    rank = g.rank(node, 0)
    pads = [int(p) for p in np.ravel(pads)]
    axes = range(rank) if axes is None else [_positive(int(x), rank) for x in np.ravel(axes)]
    width = [0] * (2 * rank)
    for k, ax in enumerate(axes):
        width[2 * ax], width[2 * ax + 1] = pads[k], pads[k + len(axes)]
    if mode == "wrap":
        return _wrap_pad(g, node, width)
    if mode not in ("constant", "reflect", "edge"):
        raise unsupported(node, "mode", mode, "modes: constant, reflect, edge, wrap")
    x, dtype = g.inp(node, 0), g.dtype(node, 0)
    if np.issubdtype(dtype, np.floating):
        return S.pad(x, mode=mode, pad_width=tuple(width), constant_value=value,
                     name=g.name(node))
    out = S.pad(S.cast(x, dtype="float64"), mode=mode, pad_width=tuple(width),
                constant_value=value)           # Pad computes in floats; exact for ints
    return S.cast(out, dtype=dtype.name, name=g.name(node))


def _wrap_pad(g, node, width):
    """Pad mode 'wrap': each axis extended before by its last entries and after by its
    first ones (a concat of slices; pads up to the axis' length)."""
    x = g.inp(node, 0)
    for axis, (before, after) in enumerate(zip(width[::2], width[1::2])):
        if before < 0 or after < 0:
            raise unsupported(node, "pads", width, "non-negative pads with mode 'wrap'")
        parts = [S.slice_axis(x, axis=axis, begin=-before, end=None)] if before else []
        parts += [x] + ([S.slice_axis(x, axis=axis, begin=0, end=after)] if after else [])
        if len(parts) > 1:
            x = S.concat(*parts, dim=axis)
    return S.identity(x, name=g.name(node))


def _shape(g, node):
    a = g.attrs(node)
    out = S.shape_array(g.inp(node, 0))
    if "start" in a or "end" in a:
        out = S.slice_axis(out, axis=0, begin=a.get("start", 0), end=a.get("end"))
    return S.identity(out, name=g.name(node))


def _gather(g, node):
    return S.take(g.inp(node, 0), g.inp(node, 1), axis=g.attrs(node).get("axis", 0),
                  mode="wrap", name=g.name(node))


def _constant(g, node):
    a = g.attrs(node)
    for key, dtype in (("value", None), ("value_float", np.float32),
                       ("value_floats", np.float32), ("value_int", np.int64),
                       ("value_ints", np.int64)):
        if key in a:
            return np.asarray(a[key], dtype=dtype)
    raise unsupported(node, "attributes", sorted(a), "value, value_float(s), value_int(s)")


def _expand(g, node):
    shape = g.shape(node, 0)
    target = tuple(int(s) for s in g.const(node, 1))
    if shape is None:
        raise MXNetError(f"{_where(node)}: the input's shape must be known at import time")
    return S.identity(_broadcast(g.inp(node, 0), shape, np.broadcast_shapes(shape, target)),
                      name=g.name(node))


def _tile(g, node):
    return S.tile(g.inp(node, 0), reps=tuple(int(r) for r in g.const(node, 1)),
                  name=g.name(node))


def _constant_of_shape(g, node):
    value = g.attrs(node).get("value", np.zeros(1, np.float32))
    return np.full(tuple(int(s) for s in g.const(node, 0)), value.ravel()[0], value.dtype)


def _range(g, node):
    start, limit, delta = (g.const(node, i) for i in range(3))
    return np.arange(start, limit, delta, dtype=np.asarray(start).dtype)


def _size(g, node):
    return S.size_array(g.inp(node, 0), name=g.name(node))


CONVERTERS = {
    **{k: functools.partial(_unary, v) for k, v in _UNARY.items()},
    **{k: functools.partial(_binary, v) for k, v in _BINARY.items()},
    **{k: functools.partial(_compare, v) for k, v in _COMPARE.items()},
    **{k: functools.partial(_variadic, v) for k, v in _VARIADIC.items()},
    **{f"Reduce{k}": functools.partial(_reduce, v) for k, v in {
        "Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min", "Prod": "prod",
        "LogSum": "logsum", "LogSumExp": "logsumexp", "SumSquare": "sumsquare", "L1": "l1",
        "L2": "l2"}.items()},
    "Pow": _pow, "Mod": _mod, "Clip": _clip, "Cast": _cast, "CastLike": _cast_like, "Where": _where_op,
    "ArgMax": functools.partial(_arg, "argmax"), "ArgMin": functools.partial(_arg, "argmin"),
    "Reshape": _reshape, "Flatten": _flatten, "Transpose": _transpose, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Concat": _concat, "Split": _split, "Slice": _slice, "Pad": _pad,
    "Shape": _shape, "Size": _size, "Gather": _gather, "Constant": _constant,
    "Expand": _expand, "Tile": _tile, "ConstantOfShape": _constant_of_shape, "Range": _range,
    **NN_CONVERTERS,
}
