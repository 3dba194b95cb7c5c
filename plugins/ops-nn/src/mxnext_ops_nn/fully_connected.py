"""FullyConnected: ``Y = X W^T + b`` on a flattened (or last-axis) view of the data."""

from __future__ import annotations

import numpy as np
from opsdk import (AMP_FLOAT_DTYPES, Field, FloatOnly, NodeEntry, Param, ShapeError, make_node,
                   register_op)
from opsdk.shape import dims_prod
from opsdk.sparse import csr_dot, csr_pattern_product, csr_t_dot, stype_of, to_dense

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, put,
                           result_shapes, same_type, set_shape, writes_into)
from ._threads import parallel, row_parts, worth_threads

OP = "FullyConnected"


class FullyConnectedParam(Param):
    num_hidden: int = Field(ge=1, description="Size of the output's last axis.")
    no_bias: bool = Field(False, description="Leave out the bias input.")
    flatten: bool = Field(True, description="Treat the data as (batch, features) by merging "
                                            "every axis after the first; otherwise multiply "
                                            "along the last axis only.")


def _input_names(p):
    return ["data", "weight"] if p.no_bias else ["data", "weight", "bias"]


def _shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and not p.flatten and outs[0] is not None and ins[1] is not None:
        ins[0] = tuple(outs[0][:-1]) + (ins[1][1],)       # the data the output implies
    x = ins[0]
    if x is None:
        return ins, list(outs)
    if not x:
        fail(OP, "data must have at least 1 dim, got a scalar")
    k = dims_prod(x[1:]) if p.flatten else x[-1]
    set_shape(OP, ins, 1, (p.num_hidden, k), "input 'weight'")
    if not p.no_bias:
        try:
            set_shape(OP, ins, 2, (p.num_hidden,), "input 'bias'")
        except ShapeError:                                # (H, 1) is accepted too
            try:
                set_shape(OP, ins, 2, (p.num_hidden, 1), "input 'bias'")
            except ShapeError:
                fail(OP, f"input 'bias' has shape {tuple(ins[2])}, expected {(p.num_hidden,)} "
                         f"(or {(p.num_hidden, 1)})")
    out = (x[0], p.num_hidden) if p.flatten else tuple(x[:-1]) + (p.num_hidden,)
    outs = result_shapes(OP, outs, [out])
    set_shape(OP, ins, 0, (outs[0][0],) + tuple(x[1:]) if p.flatten else
              tuple(outs[0][:-1]) + (x[-1],), "input 'data'")     # the batch from the output
    return ins, outs


def _rows(p, a):
    """The data (or its gradient) as the (batch, features) matrix of the product."""
    return a.reshape(a.shape[0], -1) if p.flatten else a.reshape(-1, a.shape[-1])


def _product_into(out, req, a, b, dt, host):
    """``out <- a @ b`` (2-d ``out`` view) honouring req, straight into ``out`` when it can."""
    _run(host, _product_parts(out, req, a, b, dt, host))


def _run(host, parts):
    """Host products go to the kernel threads; a device's (and a gradient's small products,
    ``host`` False) run in order."""
    if host:
        parallel(*parts)
    else:
        for fn in parts:
            fn()


def _product_parts(out, req, a, b, dt, host):
    """``_product_into`` as functions that may run at once: blocks of a large host product
    written straight into ``out``, else the whole. Each block packs the operand it does
    not cut whole, so the smaller one is packed again: row blocks when ``a`` has more rows
    than ``b`` columns, else column blocks (an MLP's forward: 128 rows, 1024 columns)."""
    if not writes_into(out, req, dt):
        return [lambda: put(out, req, a @ b)]
    (m, k), n = a.shape, b.shape[1]
    if not host or m >= n:
        parts = row_parts(m, k, n) if host else 1
        cuts = [m * i // parts for i in range(parts + 1)]
        return [lambda lo=lo, hi=hi: np.matmul(a[lo:hi], b, out=out[lo:hi])
                for lo, hi in zip(cuts, cuts[1:])]
    parts = row_parts(n, k, m)
    cuts = [n * i // parts for i in range(parts + 1)]
    return [lambda lo=lo, hi=hi: np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
            for lo, hi in zip(cuts, cuts[1:])]


_BLOCK_BYTES = 1 << 18      # rows of an in-place product computed at a time (in cache)


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    x, w = inputs[0], inputs[1]
    dt = compute_dtype(x.dtype)
    x2, w = _rows(p, x).astype(dt, copy=False), w.astype(dt, copy=False)
    out = outputs[0].reshape(x2.shape[0], p.num_hidden)
    if np.may_share_memory(out, x2):
        _product_over_rows(out, x2, w.T)
    else:
        _product_into(out, req[0], x2, w.T, dt, ctx.xp is np)
    if not p.no_bias:
        out += inputs[2].reshape(1, -1).astype(out.dtype, copy=False)


def _product_over_rows(out, x2, wt):
    """``out <- x2 @ wt`` where ``out`` is ``x2``'s own memory (WRITE_INPLACE, as large as
    the data): row r of the product reads row r of ``x2`` only, so blocks of rows go
    through a small buffer (numpy would copy the whole of ``x2`` first)."""
    rows = max(1, _BLOCK_BYTES // (out.shape[1] * out.itemsize))
    buf = np.empty_like(out, shape=(min(rows, out.shape[0]), out.shape[1]))   # out's device
    for i in range(0, out.shape[0], rows):
        j = min(out.shape[0], i + rows)
        np.matmul(x2[i:j], wt, out=buf[:j - i])
        out[i:j] = buf[:j - i]


def _backward(ctx, inputs, req, outputs, p):
    og, x, w = inputs[:3]
    dt = compute_dtype(og.dtype)
    g = og.reshape(-1, p.num_hidden).astype(dt, copy=False)
    x2, w2 = _rows(p, x).astype(dt, copy=False), w.astype(dt, copy=False)
    dx = _rows(p, outputs[0]) if req[0] else None
    host = ctx.xp is np and worth_threads(*x2.shape, p.num_hidden)   # else parts in turn
    parts = _product_parts(outputs[1], req[1], g.T, x2, dt, host) if req[1] else []
    if not p.no_bias and req[2]:
        parts.append(lambda: put(outputs[2], req[2], g.sum(axis=0).reshape(outputs[2].shape)))
    if dx is not None and (np.may_share_memory(dx, x2) or np.may_share_memory(dx, g)):
        _run(host, parts)       # the data gradient overwrites what the others read: after them
        parts = []
    if dx is not None:
        parts += _product_parts(dx, req[0], g, w2, dt, host)
    _run(host, parts)


def _csr_data(x, others) -> bool:
    """Whether the sparse kernels take the call: CSR data, every other input dense (MXNet's
    FullyConnected takes CSR data with a dense weight and bias)."""
    return stype_of(x) == "csr" and all(stype_of(a) == "default" for a in others)


def _forward_sparse(p, inputs, dense):
    """CSR data: ``x @ W.T + b`` from the stored values alone (a dense output)."""
    x, w = inputs[0], inputs[1]
    if not _csr_data(x, inputs[1:]):
        return None
    out = csr_dot(x, w.T)
    if not p.no_bias:
        out += inputs[2].reshape(1, -1).astype(out.dtype, copy=False)
    return [out]


def _backward_sparse(p, inputs, dense):
    """CSR data: the weight's gradient ``g.T @ x`` from the stored values (dense, as the
    weight), the bias's ``sum(g)``, and the data's on its own pattern (the product's value
    where it stores one): no dense copy of the data."""
    og, x, w = inputs[:3]
    if not _csr_data(x, [og, *inputs[2:]]):
        return None
    g = og.reshape(-1, p.num_hidden)
    d_w = to_dense(csr_t_dot(x, g)).T.astype(w.dtype)
    grads = [csr_pattern_product(x, g, w.T), np.ascontiguousarray(d_w)]
    return grads if p.no_bias else grads + [g.sum(axis=0).reshape(inputs[3].shape)]


def _grad(node, og):
    # the bias (a parameter, alive anyway) only gives its gradient's shape: (H,) or (H, 1)
    n = backward_node(f"_backward_{OP}", node, [og[0]] + list(node.inputs))
    return grad_entries(n, len(node.inputs))


def _grad_of_backward(node, og):
    """Second order: the backward node maps (g, x, w) to (g W, g^T X, sum g), so with head
    gradients (a, c, e) for those: d/dg = FC(a, W) + FC(X, c) + e, d/dx = g c and d/dw = g^T a
    (the backward op itself, fed (g, a, c)); the bias gets zeros (it only gave a shape)."""
    g, x, w = node.inputs[:3]
    p, bias = node.params, not node.params.no_bias
    plain = p.model_copy(update={"no_bias": True})
    from_a = make_node(OP, [og[0], w] + ([og[2]] if bias else []), p if bias else plain,
                       name=f"{node.name}_backward_data")
    from_c = make_node(OP, [x, og[1]], plain, name=f"{node.name}_backward_weight")
    d_g = make_node("elemwise_add", [NodeEntry(from_a, 0, 0), NodeEntry(from_c, 0, 0)],
                    name=f"{node.name}_backward_grad")
    again = backward_node(f"_backward_{OP}", node, [g, og[0], og[1]] + node.inputs[3:])
    grads = [NodeEntry(d_g, 0, 0)] + grad_entries(again, 2)
    if bias:
        grads.append(NodeEntry(make_node("zeros_like", [node.inputs[3]]), 0, 0))
    return grads


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    for k in range(len(outs)):
        if ins[k + 1] is not None:
            set_shape(OP, outs, k, ins[k + 1], f"output {k}")
        elif outs[k] is not None:
            ins[k + 1] = tuple(outs[k])
    return ins, outs


(register_op(OP).add_alias("_npx_fully_connected").add_alias("_sparse_FullyConnected")
    .describe("Affine map Y = X W^T + b. With flatten=True the data is "
              "(batch, x1, ..., xn) and weight (num_hidden, x1*...*xn); with flatten=False the "
              "product runs over the last axis only.")
    .set_attr_parser(FullyConnectedParam)
    .set_num_inputs(lambda p: 2 if p.no_bias else 3).set_num_outputs(1)
    .set_attr("FListInputNames", _input_names)
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, _input_names), accepted=AMP_FLOAT_DTYPES))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])   # where the data dies (inference)
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FComputeSparse", _forward_sparse)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(3, 2, 2), (4, 4), (4,)], "params": {"num_hidden": 4}},
        {"inputs": [(2, 3, 5), (2, 5)], "params": {"num_hidden": "2", "no_bias": "True",
                                                   "flatten": "False"}},
        {"inputs": [(4, 3), (2, 3), (2, 1)], "params": {"num_hidden": 2}},
        {"inputs": [(3,), (2, 1), (2,)], "params": {"num_hidden": 2}},
        {"inputs": [(5, 6), (6, 6), (6,)], "params": {"num_hidden": 6}}])   # in place
    .add_argument("data", "NDArray-or-Symbol", "Input array X.")
    .add_argument("weight", "NDArray-or-Symbol", "Matrix W, (num_hidden, features).")
    .add_argument("bias", "NDArray-or-Symbol", "Offset b, (num_hidden,) (absent with no_bias)."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of FullyConnected wrt data, weight and bias, from the output gradient, "
              "the data and the weight (and the bias, for its shape).")
    .set_attr_parser(FullyConnectedParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: 3 if p.no_bias else 4)
    .set_num_outputs(lambda p: 2 if p.no_bias else 3)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FInplaceOption", lambda p: [(1, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("FComputeSparse", _backward_sparse)
    .set_attr("FGradient", _grad_of_backward)
    .set_attr("TExamples", [
        {"inputs": [(3, 4), (3, 2, 2), (4, 4), (4,)], "params": {"num_hidden": 4}},
        {"inputs": [(2, 3, 2), (2, 3, 5), (2, 5)],
         "params": {"num_hidden": 2, "no_bias": True, "flatten": False}}]))
