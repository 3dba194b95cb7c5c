"""MXNet's DGL neighbour samplers: ``_contrib_dgl_csr_neighbor_uniform_sample`` and
``_contrib_dgl_csr_neighbor_non_uniform_sample`` (``mx.nd.contrib.dgl_csr_neighbor_*``).

From each seed array, a breadth-first walk of the CSR graph (values: int64 edge ids) up to
``num_hops`` hops, keeping at most ``num_neighbor`` neighbours of each vertex it expands
(all of them when it has no more; else drawn without replacement, uniformly or with the
probability of the neighbour vertex) and stopping at ``max_num_vertices`` vertices. Per
seed array, in MXNet's output order (every sample-id array first, then every sub-graph...):

- sample ids, int64 ``(max_num_vertices + 1,)``: the vertices sorted, their count last;
- the sub-graph, CSR ``(max_num_vertices, N)`` for an N-vertex graph: row ``i`` holds the kept edges
  of vertex ``ids[i]`` (columns: original vertex ids; values: edge ids);
- (non-uniform only) the probability of each vertex, float32 ``(max_num_vertices,)``;
- the layer (hop) at which each vertex was reached, int64 ``(max_num_vertices,)``.

Slots past the vertex count hold zeros (MXNet leaves them uninitialised). The non-uniform
sampler sorts a vertex's drawn columns and drawn edge ids each on their own, as MXNet's
does (they stay paired when edge ids grow with the column along a row, as DGL numbers
them). The draws come from the CPU's random generator (``mx.random.seed``).
"""

from __future__ import annotations

import logging

import numpy as np
from opsdk import Field, MXNetError, Param, ResourceRequest, register_op
from opsdk.sparse import CSRStorage, host_random

from ._dgl_checks import need_dtype, need_inputs, need_ndim, need_square, need_stypes, \
    need_vertices, refuse_dense
from ._layout import merge

_log = logging.getLogger(__name__)
_UNIFORM = "_contrib_dgl_csr_neighbor_uniform_sample"
_NON_UNIFORM = "_contrib_dgl_csr_neighbor_non_uniform_sample"


class NeighborSampleParam(Param):
    num_args: int = Field(ge=2, description="Number of input arrays (the graph, the "
                                            "probability if any, the seed arrays)")
    num_hops: int = Field(1, description="Number of hops")
    num_neighbor: int = Field(2, ge=0, description="Number of neighbours kept per vertex")
    max_num_vertices: int = Field(100, ge=0, description="Max number of vertices")


def _lead(op):
    """How many inputs come before the seed arrays."""
    return 2 if op == _NON_UNIFORM else 1


def _num_graphs(op, p):
    return p.num_args - _lead(op)


# -- the walk ------------------------------------------------------------------------------
def _walk(graph, seeds, p, pick):
    """MXNet's SampleSubgraph walk: ({vertex: layer} in visiting order, {expanded vertex:
    (columns, edge ids) kept})."""
    layer = dict.fromkeys(seeds.tolist(), 0)
    order, kept, idx = list(layer), {}, 0
    while idx < len(order) and len(layer) < p.max_num_vertices:
        v = order[idx]
        idx += 1
        if layer[v] >= p.num_hops:
            continue
        lo, hi = graph.indptr[v], graph.indptr[v + 1]
        cols, vals = pick(graph.indices[lo:hi], graph.data[lo:hi])
        kept[v] = (cols, vals)
        for c in cols.tolist():
            if len(layer) >= p.max_num_vertices:
                break
            if c not in layer:
                layer[c] = layer[v] + 1
                order.append(c)
    if any(layer[v] < p.num_hops for v in order[idx:]):
        _log.warning("The sampling is truncated because we have reached the max number of "
                     "vertices; use fewer seeds or a smaller neighbourhood")
    return layer, kept


def _outputs(graph, layer, kept, p, prob):
    """(sample ids, sub-graph[, probability], layer) of one walk, MXNet's layout."""
    m = p.max_num_vertices
    verts = np.array(sorted(layer), np.int64)
    n = len(verts)
    ids = np.zeros(m + 1, np.int64)
    ids[:n], ids[m] = verts, n
    layers = np.zeros(m, np.int64)
    layers[:n] = [layer[v] for v in verts.tolist()]
    rows = [kept.get(v, (np.zeros(0, np.int64),) * 2) for v in verts.tolist()]
    indptr = np.zeros(m + 1, np.int64)
    indptr[1:n + 1] = np.cumsum([len(c) for c, _ in rows])
    indptr[n + 1:] = indptr[n]
    cols = np.concatenate([c for c, _ in rows] + [np.zeros(0, np.int64)])
    vals = np.concatenate([v for _, v in rows] + [np.zeros(0, graph.data.dtype)])
    sub = CSRStorage(vals.astype(graph.data.dtype), cols.astype(np.int64), indptr,
                     (m, graph.shape[1]))
    if prob is None:
        return ids, sub, layers
    probs = np.zeros(m, prob.dtype)
    probs[:n] = prob[verts]
    return ids, sub, probs, layers


# -- picking a vertex's neighbours ----------------------------------------------------------
def _uniform_pick(rng, k):
    def pick(cols, vals):
        if len(cols) <= k:
            return cols, vals
        pos = np.sort(np.argpartition(rng.random(len(cols)), k)[:k])   # k random picks
        return cols[pos], vals[pos]
    return pick


def _weighted_pick(rng, k, prob):
    """Draws without replacement, each in proportion to the neighbour vertex's probability
    (MXNet's ArrayHeap): the ``k`` smallest of exponential variates over the weights (the
    first ``k`` arrivals of independent races, the law of successive draws). A neighbour of
    probability 0 never arrives, so a vertex with fewer than ``k`` neighbours of positive
    probability keeps just those."""
    def pick(cols, vals):
        if len(cols) <= k:
            return cols, vals
        w = prob[cols].astype(np.float64)
        positive = np.flatnonzero(w > 0)
        if len(positive) <= k:
            pos = positive
        else:
            with np.errstate(divide="ignore"):
                arrival = rng.exponential(size=len(cols)) / w
            pos = np.argpartition(arrival, k)[:k]
        return np.sort(cols[pos]), np.sort(vals[pos])
    return pick


# -- the ops --------------------------------------------------------------------------------
def _check_inputs(op, p, inputs):
    lead = _lead(op)
    names = ["csr_matrix", "probability"][:lead] + \
        [f"seed array {i}" for i in range(len(inputs) - lead)]
    need_stypes(op, names, inputs, 1)
    need_inputs(op, _infer_shape(op), p, inputs, (lead + 2) * (len(inputs) - lead))
    graph = inputs[0]
    need_dtype(op, "the graph's edge ids", graph.dtype, np.int64)
    for name, seeds in zip(names[lead:], inputs[lead:]):
        need_dtype(op, name, seeds.dtype, np.int64)
        need_vertices(op, name, seeds, graph.shape[0])
        if len(seeds) > p.max_num_vertices:
            raise _too_many(op, name, len(seeds), p.max_num_vertices)


def _too_many(op, name, n, m):
    return MXNetError(f"Operator {op!r}: {name} has {n} seeds, more than "
                      f"max_num_vertices={m}")


def _check_prob(op, prob, num_vertices):
    need_ndim(op, "probability", prob.shape, 1)
    need_dtype(op, "probability", prob.dtype, np.float32)
    if len(prob) < num_vertices:
        raise _bad_prob(op, f"holds {len(prob)} values for a graph of {num_vertices} vertices")
    if not np.all(np.isfinite(prob) & (prob >= 0)):
        raise _bad_prob(op, "must hold finite values >= 0")


def _bad_prob(op, msg):
    return MXNetError(f"Operator {op!r}: probability (input 1) {msg}")


def _sample_kernel(op):
    def kernel(params, inputs, dense):
        _check_inputs(op, params, inputs)
        graph, lead, rng = inputs[0], _lead(op), host_random()
        prob = inputs[1] if lead == 2 else None
        if prob is None:
            pick = _uniform_pick(rng, params.num_neighbor)
        else:
            _check_prob(op, prob, graph.shape[0])
            pick = _weighted_pick(rng, params.num_neighbor, prob)
        per_graph = [_outputs(graph, *_walk(graph, seeds, params, pick), params, prob)
                     for seeds in inputs[lead:]]
        return [out for group in zip(*per_graph) for out in group]
    return kernel


def _infer_shape(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        lead, n = _lead(op), _num_graphs(op, p)
        need_square(op, ins[0])
        for k in range(1, len(ins)):
            need_ndim(op, f"input {k}", ins[k], 1)
        if ins[0] is None:
            return ins, outs
        m = p.max_num_vertices
        per = [(m + 1,), (m, ins[0][1])] + [(m,)] * lead
        return ins, merge(op, outs, [s for s in per for _ in range(n)])
    return infer


def _infer_type(op):
    """MXNet's rule: sample ids and layers take the seeds' dtype, sub-graphs the graph's,
    probabilities the probability's (the kernel asks for int64 and float32)."""
    def infer(p, ins, outs):
        ins, lead, n = list(ins), _lead(op), _num_graphs(op, p)
        per = [ins[lead], ins[0]] + ([ins[1]] if lead == 2 else []) + [ins[lead]]
        if any(t is None for t in per):
            return ins, list(outs)
        return ins, [np.dtype(t) for t in per for _ in range(n)]
    return infer


def _register(op, describe, extra_args):
    builder = (register_op(op).describe(describe)
               .set_attr_parser(NeighborSampleParam)
               .set_num_inputs(lambda p: p.num_args)
               .set_num_outputs(lambda p: (_lead(op) + 2) * _num_graphs(op, p))
               .set_attr("key_var_num_args", "num_args")
               .set_attr("FInferShape", _infer_shape(op))
               .set_attr("FInferType", _infer_type(op))
               .set_attr("FResourceRequest", lambda p: [ResourceRequest.RANDOM])
               .set_attr("FCompute<cpu>", refuse_dense(op))
               .set_attr("FComputeSparse", _sample_kernel(op))
               .set_attr("TExamples", [])       # CSR graphs only: tests/test_dgl_graph.py
               .add_argument("csr_matrix", "NDArray-or-Symbol", "csr matrix"))
    for name, kind, text in extra_args:
        builder.add_argument(name, kind, text)


_register(_UNIFORM, "Sub-graphs of a CSR graph (values: int64 edge ids), by a breadth-first "
                    "walk from each seed array keeping up to num_neighbor neighbours per "
                    "vertex, drawn uniformly. Outputs, each kind grouped over the seed "
                    "arrays: sample ids (sorted, their count last), sub-graphs (CSR), layers.",
          [("seed_arrays", "NDArray-or-Symbol[]", "seed vertices")])
_register(_NON_UNIFORM, "Sub-graphs of a CSR graph (values: int64 edge ids), by a "
                        "breadth-first walk from each seed array keeping up to num_neighbor "
                        "neighbours per vertex, drawn in proportion to their probability. "
                        "Outputs, each kind grouped over the seed arrays: sample ids (sorted, "
                        "their count last), sub-graphs (CSR), probabilities, layers.",
          [("probability", "NDArray-or-Symbol", "probability vector"),
           ("seed_arrays", "NDArray-or-Symbol[]", "seed vertices")])
