"""MXNet's DGL graph ops on CSR graphs whose values are edge ids: ``_contrib_dgl_subgraph``
(induced sub-graphs), ``_contrib_edge_id``, ``_contrib_dgl_adjacency`` and
``_contrib_dgl_graph_compact`` (``mx.nd.contrib.dgl_subgraph``, ``edge_id``, ...).

- ``dgl_subgraph(graph, *vertex_arrays, return_mapping)``: per sorted int64 vertex array
  ``v``, the CSR ``(len(v), len(v))`` of the edges between those vertices (row and column
  ``i`` are ``v[i]``; a row keeps the graph's order), valued with new edge ids ``0..``; with
  ``return_mapping`` a second CSR per array (after all the first ones) holds the graph's
  own edge ids. A vertex listed twice takes its last position as column.
- ``edge_id(data, u, v)``: ``data[u[i], v[i]]`` where the CSR stores that entry, else -1,
  in ``data``'s dtype (``u``, ``v``: 1-D, one dtype, truncated to integers).
- ``dgl_adjacency(graph)``: the int64 CSR's pattern valued 1.0 (float32 CSR).
- ``dgl_graph_compact(*graphs, *sample_ids, graph_sizes, return_mapping)``: a sampler's
  sub-graph with its columns renumbered to positions in its sample ids (count last), cut
  to ``graph_sizes[i]`` square, valued ``0..``. MXNet never writes the ``return_mapping``
  outputs; here they are empty CSRs of the same shape.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, MXNetError, Param, register_op
from opsdk.sparse import CSRStorage

from ._dgl_checks import need_dtype, need_inputs, need_ndim, need_stypes, need_vertices, \
    refuse_dense
from ._layout import fail, merge
from .sparse import sparse_keys
from .sparse_index import csr_rows

_SUBGRAPH, _EDGE_ID = "_contrib_dgl_subgraph", "_contrib_edge_id"
_ADJACENCY, _COMPACT = "_contrib_dgl_adjacency", "_contrib_dgl_graph_compact"


def _indptr(row_of_value, num_rows):
    indptr = np.zeros(num_rows + 1, np.int64)
    np.cumsum(np.bincount(row_of_value, minlength=num_rows), out=indptr[1:])
    return indptr


# -- dgl_subgraph --------------------------------------------------------------------------
class SubgraphParam(Param):
    num_args: int = Field(ge=2, description="Number of inputs: the graph and the vertex "
                                            "arrays")
    return_mapping: bool = Field(description="Also return each sub-graph valued with the "
                                             "graph's edge ids")


def _subgraph(graph, vids):
    """(the induced sub-graph with new edge ids, the graph's edge ids of its values)."""
    n = len(vids)
    if np.any(vids[1:] < vids[:-1]):
        raise MXNetError(f"Operator {_SUBGRAPH!r}: the vertex array must be sorted, got "
                         f"{vids[:8].tolist()}...")
    column = np.full(graph.shape[1], -1, np.int64)
    last = np.r_[vids[1:] != vids[:-1], True]           # a repeated vertex: its last place
    column[vids[last]] = np.flatnonzero(last)
    rows = csr_rows(graph, vids)
    new_cols = column[rows.indices]
    keep = new_cols >= 0
    indptr = _indptr(np.repeat(np.arange(n), np.diff(rows.indptr))[keep], n)
    indices = new_cols[keep]
    new_ids = CSRStorage(np.arange(len(indices), dtype=graph.data.dtype), indices, indptr,
                         (n, n))
    return new_ids, CSRStorage(rows.data[keep], indices, indptr, (n, n))


def _subgraph_kernel(params, inputs, dense):
    names = ["graph"] + [f"varray{i}" for i in range(len(inputs) - 1)]
    need_stypes(_SUBGRAPH, names, inputs, 1)
    n_out = (len(inputs) - 1) * (2 if params.return_mapping else 1)
    need_inputs(_SUBGRAPH, _subgraph_shape, params, inputs, n_out)
    graph = inputs[0]
    need_dtype(_SUBGRAPH, "the graph's edge ids", graph.dtype, np.int64)
    for name, vids in zip(names[1:], inputs[1:]):
        need_dtype(_SUBGRAPH, name, vids.dtype, np.int64)
        need_vertices(_SUBGRAPH, name, vids, graph.shape[0])
    pairs = [_subgraph(graph, vids) for vids in inputs[1:]]
    news, olds = [p[0] for p in pairs], [p[1] for p in pairs]
    return news + olds if params.return_mapping else news


def _subgraph_shape(p, ins, outs):
    ins = list(ins)
    need_ndim(_SUBGRAPH, "the graph (input 0)", ins[0], 2)
    for k, s in enumerate(ins[1:]):
        need_ndim(_SUBGRAPH, f"varray{k}", s, 1)
        if s is not None and s[0] == 0:
            fail(_SUBGRAPH, f"varray{k} is empty")
    if any(s is None for s in ins[1:]):
        return ins, list(outs)
    shapes = [(s[0], s[0]) for s in ins[1:]]
    return ins, merge(_SUBGRAPH, outs, shapes * (2 if p.return_mapping else 1))


def _subgraph_type(p, ins, outs):
    for k, t in enumerate(ins[1:]):
        need_dtype(_SUBGRAPH, f"varray{k}", t, np.int64)
    return list(ins), [ins[0]] * len(outs)


(register_op(_SUBGRAPH)
    .describe("The sub-graphs a CSR graph (values: int64 edge ids) induces on sorted int64 "
              "vertex arrays, valued with new edge ids; with return_mapping, then the same "
              "valued with the graph's edge ids.")
    .set_attr_parser(SubgraphParam)
    .set_num_inputs(lambda p: p.num_args)
    .set_num_outputs(lambda p: (p.num_args - 1) * (2 if p.return_mapping else 1))
    .set_attr("FListInputNames", lambda p: ["graph"] + [f"varray{i}"
                                                        for i in range(p.num_args - 1)])
    .set_attr("key_var_num_args", "num_args")
    .set_attr("FInferShape", _subgraph_shape)
    .set_attr("FInferType", _subgraph_type)
    .set_attr("FCompute<cpu>", refuse_dense(_SUBGRAPH))
    .set_attr("FComputeSparse", _subgraph_kernel)
    .set_attr("TExamples", [])          # CSR graphs only: tests/test_dgl_graph.py
    .add_argument("graph", "NDArray-or-Symbol", "Input graph where we sample vertices.")
    .add_argument("data", "NDArray-or-Symbol[]", "The vertex arrays"))


# -- edge_id -------------------------------------------------------------------------------
def _edge_id_kernel(params, inputs, dense):
    need_stypes(_EDGE_ID, ["data", "u", "v"], inputs, 1)
    need_inputs(_EDGE_ID, _edge_id_shape, params, inputs, 1)
    data, u, v = inputs
    if u.dtype != v.dtype:
        raise MXNetError(f"Operator {_EDGE_ID!r}: u and v must share a dtype, got {u.dtype} "
                         f"and {v.dtype}")
    rows, cols = u.astype(np.int64), v.astype(np.int64)
    need_vertices(_EDGE_ID, "u", rows, data.shape[0])
    ncols = data.shape[1]
    stored = sparse_keys(data)
    order = np.argsort(stored, kind="stable")            # the first match, as a row scan
    keys = stored[order]
    wanted = rows * ncols + cols
    at = np.searchsorted(keys, wanted)
    found = (cols >= 0) & (cols < ncols) & (at < len(keys))
    found[found] = keys[at[found]] == wanted[found]
    out = np.full(len(rows), -1, data.dtype)
    out[found] = data.data[order[at[found]]]
    return [out]


def _edge_id_shape(p, ins, outs):
    ins = list(ins)
    need_ndim(_EDGE_ID, "u", ins[1], 1)
    need_ndim(_EDGE_ID, "v", ins[2], 1)
    known = [s for s in (ins[1], ins[2], outs[0]) if s is not None]
    if any(s != known[0] for s in known):
        fail(_EDGE_ID, f"u, v and the output must have one length, got {known}")
    if not known:
        return ins, list(outs)
    return [ins[0], known[0], known[0]], [known[0]]


def _edge_id_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    return [t, ins[1], ins[2]], [t]


(register_op(_EDGE_ID)
    .describe("data[u[i], v[i]] where the CSR data stores that entry, else -1.")
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "u", "v"])
    .set_attr("FInferShape", _edge_id_shape)
    .set_attr("FInferType", _edge_id_type)
    .set_attr("FCompute<cpu>", refuse_dense(_EDGE_ID))
    .set_attr("FComputeSparse", _edge_id_kernel)
    .set_attr("TExamples", [])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_argument("u", "NDArray-or-Symbol", "u ndarray")
    .add_argument("v", "NDArray-or-Symbol", "v ndarray"))


# -- dgl_adjacency -------------------------------------------------------------------------
def _adjacency_kernel(params, inputs, dense):
    need_stypes(_ADJACENCY, ["data"], inputs, 1)
    (g,) = inputs
    need_dtype(_ADJACENCY, "data", g.dtype, np.int64)
    return [CSRStorage(np.ones(len(g.indices), np.float32), g.indices, g.indptr, g.shape)]


def _adjacency_type(p, ins, outs):
    need_dtype(_ADJACENCY, "data", ins[0], np.int64)
    return list(ins), [np.dtype(np.float32)]


(register_op(_ADJACENCY)
    .describe("The pattern of an int64 CSR graph, valued 1.0 (a float32 CSR).")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", lambda p, ins, outs: (
        [ins[0] or outs[0]], merge(_ADJACENCY, outs, [ins[0] or outs[0]])))
    .set_attr("FInferType", _adjacency_type)
    .set_attr("FCompute<cpu>", refuse_dense(_ADJACENCY))
    .set_attr("FComputeSparse", _adjacency_kernel)
    .set_attr("TExamples", [])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))


# -- dgl_graph_compact ---------------------------------------------------------------------
class CompactParam(Param):
    num_args: int = Field(ge=2, description="Number of inputs: the graphs, then their "
                                            "sample ids")
    return_mapping: bool = Field(description="Also return a second CSR per graph")
    graph_sizes: tuple[int, ...] = Field(description="The number of vertices in each graph")


def _sizes(p):
    """The vertex count of each graph: ``graph_sizes`` holds one per graph."""
    n = p.num_args // 2
    if len(p.graph_sizes) < n:
        raise MXNetError(f"Operator {_COMPACT!r}: graph_sizes={p.graph_sizes} gives fewer "
                         f"sizes than the {n} graphs")
    return p.graph_sizes[:n]


def _check_sample_ids(graph, ids, size):
    """``ids`` are a sampler's sample ids for ``graph``: one per row and the count last. The
    count is checked only on a graph storing edges: an executor probes the kernel at bind
    with arrays that store nothing (zeros)."""
    if len(ids) != len(graph.indptr):
        raise MXNetError(f"Operator {_COMPACT!r}: {len(ids)} sample ids for a graph of "
                         f"{graph.shape[0]} rows, expected {len(graph.indptr)} (count last)")
    if graph.indptr[-1] and ids[-1] != size:
        raise MXNetError(f"Operator {_COMPACT!r}: the sample ids count {ids[-1]} vertices, "
                         f"graph_sizes gives {size}")
    if np.any(ids[:size] < 0):
        raise MXNetError(f"Operator {_COMPACT!r}: the first {size} sample ids must be vertex "
                         f"ids, got {ids[:size].min()}")


def _compact(graph, ids, size):
    _check_sample_ids(graph, ids, size)
    verts = ids[:size]
    known, first = np.unique(verts, return_index=True)    # a repeated id maps to its first
    nnz = int(graph.indptr[size])
    cols = graph.indices[:nnz]
    at = np.minimum(np.searchsorted(known, cols), max(len(known) - 1, 0))
    missing = cols[known[at] != cols] if len(known) else cols
    if missing.size:
        raise MXNetError(f"Operator {_COMPACT!r}: the graph has an edge to vertex "
                         f"{missing[0]}, which its sample ids do not list")
    indices = first[at].astype(np.int64)
    return CSRStorage(np.arange(nnz, dtype=np.int64), indices, graph.indptr[:size + 1].copy(),
                      (size, size))


def _compact_kernel(params, inputs, dense):
    n = params.num_args // 2
    need_inputs(_COMPACT, _compact_shape, params, inputs,
                n * (2 if params.return_mapping else 1))
    names = [f"graph{i}" for i in range(n)] + [f"varray{i}" for i in range(n)]
    need_stypes(_COMPACT, names, inputs, n)
    for name, x in zip(names, inputs):
        need_dtype(_COMPACT, name, x.dtype, np.int64)
    outs = [_compact(g, ids, s) for g, ids, s in zip(inputs[:n], inputs[n:], _sizes(params))]
    if params.return_mapping:
        outs += [CSRStorage(np.zeros(0, np.int64), np.zeros(0, np.int64),
                            np.zeros(s + 1, np.int64), (s, s)) for s in _sizes(params)]
    return outs


def _compact_shape(p, ins, outs):
    ins, n = list(ins), p.num_args // 2
    if len(ins) != 2 * n:
        fail(_COMPACT, f"needs as many graphs as sample-id arrays, got {len(ins)} inputs")
    for k, (s, size) in enumerate(zip(ins[:n] + ins[n:], _sizes(p) * 2)):
        need_ndim(_COMPACT, f"input {k}", s, 2 if k < n else 1)
        if s is not None and min(s) < size:
            fail(_COMPACT, f"input {k} of shape {tuple(s)} is smaller than its graph size "
                           f"{size}")
    shapes = [(s, s) for s in _sizes(p)]
    return ins, merge(_COMPACT, outs, shapes * (2 if p.return_mapping else 1))


def _compact_type(p, ins, outs):
    for k, t in enumerate(ins):
        need_dtype(_COMPACT, f"input {k}", t, np.int64)
    return list(ins), [np.dtype(np.int64)] * len(outs)


(register_op(_COMPACT)
    .describe("A sampler's sub-graphs cut to graph_sizes vertices, their columns renumbered "
              "to positions in their sample ids, valued with new edge ids.")
    .set_attr_parser(CompactParam)
    .set_num_inputs(lambda p: p.num_args)
    .set_num_outputs(lambda p: p.num_args // 2 * (2 if p.return_mapping else 1))
    .set_attr("FListInputNames", lambda p: [f"graph{i}" for i in range(p.num_args // 2)]
              + [f"varray{i}" for i in range(p.num_args - p.num_args // 2)])
    .set_attr("key_var_num_args", "num_args")
    .set_attr("FInferShape", _compact_shape)
    .set_attr("FInferType", _compact_type)
    .set_attr("FCompute<cpu>", refuse_dense(_COMPACT))
    .set_attr("FComputeSparse", _compact_kernel)
    .set_attr("TExamples", [])
    .add_argument("graph_data", "NDArray-or-Symbol[]", "Input graphs and input vertex Ids."))
