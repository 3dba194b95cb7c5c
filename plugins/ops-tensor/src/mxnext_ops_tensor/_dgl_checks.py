"""Input checks shared by the DGL graph ops (``dgl_sample.py``, ``dgl_graph.py``).

MXNet runs these ops only as ``FComputeEx`` kernels on CSR graphs whose values are int64
edge ids, with int64 vertex-id arrays; it refuses dense graphs at storage inference and
reads other dtypes as int64 (a crash). Here each refusal is an error naming the op, the
input, what it expected and what it got."""

from __future__ import annotations

import numpy as np
from opsdk import MXNetError, TypeInferError
from opsdk.sparse import stype_of

from ._layout import fail


def need_stypes(op, names, inputs, csr_count):
    """The first ``csr_count`` inputs are CSR arrays, the others dense."""
    for k, (name, x) in enumerate(zip(names, inputs)):
        want = "csr" if k < csr_count else "default"
        if stype_of(x) != want:
            raise MXNetError(f"Operator {op!r}: input {k} ({name}) must have storage type "
                             f"{want!r}, got {stype_of(x)!r}")


def need_inputs(op, infer, params, inputs, num_outputs):
    """The op's input count is ``params.num_args`` (for a variadic op) and its shape rule
    accepts the inputs' shapes: imperative calls reach a sparse kernel without inference."""
    want = getattr(params, "num_args", len(inputs))
    if len(inputs) != want:
        raise MXNetError(f"Operator {op!r}: expects {want} inputs (num_args), got "
                         f"{len(inputs)}")
    infer(params, [tuple(x.shape) for x in inputs], [None] * num_outputs)


def refuse_dense(op):
    """``FCompute<cpu>`` of an op MXNet computes only on a CSR graph: every call reaching the
    dense path has a dense graph, which MXNet refuses too."""
    def compute(ctx, inputs, req, outputs, params):
        raise MXNetError(f"Operator {op!r}: the graph (input 0) must have storage type "
                         f"'csr', got 'default'")
    return compute


def need_dtype(op, name, dtype, want):
    if dtype is not None and np.dtype(dtype) != np.dtype(want):
        raise TypeInferError(f"Operator {op!r}: {name} must be {np.dtype(want)}, got "
                             f"{np.dtype(dtype)}")


def need_ndim(op, name, shape, ndim):
    if shape is not None and len(shape) != ndim:
        fail(op, f"{name} must be {ndim}-D, got shape {tuple(shape)}")


def need_square(op, shape):
    need_ndim(op, "the graph (input 0)", shape, 2)
    if shape is not None and shape[0] != shape[1]:
        fail(op, f"the graph (input 0) must be square, got shape {tuple(shape)}")


def need_vertices(op, name, ids, num_vertices):
    """``ids`` are vertex ids of a graph of ``num_vertices`` vertices."""
    bad = ids[(ids < 0) | (ids >= num_vertices)]
    if bad.size:
        raise MXNetError(f"Operator {op!r}: {name} holds vertex id {int(bad[0])}, expected ids "
                         f"in [0, {num_vertices})")
