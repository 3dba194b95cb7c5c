"""MXNet's DGL graph ops (dgl_sample.py, dgl_graph.py): deterministic outputs as MXNet 1.9.1
gave them (literals), invariants of random sampling, symbols, errors."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import MXNetError, ShapeError

nd = mx.nd.contrib


def _complete_graph():
    """MXNet's example: 5 vertices, every pair joined, edge ids 1..20 in CSR order."""
    indices = np.array([1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3], np.int64)
    return mx.nd.sparse.csr_matrix((np.arange(1, 21, dtype=np.int64), indices,
                                    np.arange(0, 21, 4, dtype=np.int64)), shape=(5, 5))


def _ids(*values):
    return mx.nd.array(values, dtype="int64")


def _parts(csr):
    return [csr.data.asnumpy().tolist(), csr.indices.asnumpy().tolist(),
            csr.indptr.asnumpy().tolist()]


# -- samplers: deterministic cases (num_neighbor >= degree, or no room to expand) -----------
def test_uniform_sample_takes_every_neighbour_like_mxnet():
    ids, sub, layer = nd.dgl_csr_neighbor_uniform_sample(
        _complete_graph(), _ids(1), num_args=2, num_hops=1, num_neighbor=10, max_num_vertices=7)
    assert ids.dtype == np.int64 and ids.shape == (8,) and ids.stype == "default"
    assert sub.stype == "csr" and sub.shape == (7, 5) and sub.dtype == np.int64
    assert ids.asnumpy()[[0, 1, 2, 3, 4, 7]].tolist() == [0, 1, 2, 3, 4, 5]
    assert _parts(sub) == [[5, 6, 7, 8], [0, 2, 3, 4], [0, 0, 4, 4, 4, 4, 4, 4]]
    assert layer.shape == (7,) and layer.asnumpy()[:5].tolist() == [1, 0, 1, 1, 1]
    # past the count MXNet leaves memory uninitialised; mxnext writes zeros
    assert ids.asnumpy()[5:7].tolist() == [0, 0] and layer.asnumpy()[5:].tolist() == [0, 0]


def test_sampling_stops_at_max_num_vertices_like_mxnet():
    g = _complete_graph()
    ids, sub, layer = nd.dgl_csr_neighbor_uniform_sample(
        g, _ids(0), num_args=2, num_hops=1, num_neighbor=4, max_num_vertices=3)
    assert ids.asnumpy().tolist() == [0, 1, 2, 3]
    assert _parts(sub) == [[1, 2, 3, 4], [1, 2, 3, 4], [0, 4, 4, 4]]
    assert layer.asnumpy().tolist() == [0, 1, 1]
    ids, sub, layer = nd.dgl_csr_neighbor_uniform_sample(      # every seed: nothing expands
        g, _ids(0, 1, 2, 3, 4), num_args=2, num_hops=1, num_neighbor=4, max_num_vertices=5)
    assert ids.asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert _parts(sub) == [[], [], [0] * 6] and layer.asnumpy().tolist() == [0] * 5


def test_seed_arrays_give_grouped_outputs_like_mxnet():
    g, prob = _complete_graph(), mx.nd.array([0.9, 0.8, 0.2, 0.4, 0.1])
    out = nd.dgl_csr_neighbor_non_uniform_sample(g, prob, _ids(0), _ids(1, 2), num_hops=1,
                                                 num_neighbor=4, max_num_vertices=5)
    assert len(out) == 8            # num_args filled in: 4 inputs
    assert [o.stype for o in out] == ["default"] * 2 + ["csr"] * 2 + ["default"] * 4
    assert _parts(out[2]) == [[1, 2, 3, 4], [1, 2, 3, 4], [0, 4, 4, 4, 4, 4]]
    assert _parts(out[3]) == [[5, 6, 7, 8], [0, 2, 3, 4], [0, 0, 4, 4, 4, 4]]
    assert out[4].dtype == np.float32
    np.testing.assert_allclose(out[4].asnumpy(), [0.9, 0.8, 0.2, 0.4, 0.1])
    assert out[6].asnumpy().tolist() == [0, 1, 1, 1, 1]
    assert out[7].asnumpy().tolist() == [1, 0, 0, 1, 1]


def test_duplicate_seeds_count_once():
    ids, sub, layer = nd.dgl_csr_neighbor_uniform_sample(
        _complete_graph(), _ids(3, 0, 3), num_args=2, num_hops=0, max_num_vertices=4)
    assert ids.asnumpy()[[0, 1, 4]].tolist() == [0, 3, 2]
    assert _parts(sub) == [[], [], [0] * 5]


# -- samplers: invariants of random draws ---------------------------------------------------
def _random_graph(n=40, seed=0):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < 0.3).astype(np.int64)
    np.fill_diagonal(dense, 0)
    rows, cols = np.nonzero(dense)
    dense[rows, cols] = np.arange(1, len(rows) + 1)      # edge ids ascend along each row
    return dense, mx.nd.array(dense, dtype="int64").tostype("csr")


def _check_sample(dense, ids, sub, layer, hops, k, max_v):
    count = int(ids.asnumpy()[-1])
    verts, sub_np = ids.asnumpy()[:count], sub.asnumpy()
    assert 0 < count <= max_v and np.all(np.diff(verts) > 0)
    assert np.all(sub.indptr.asnumpy()[count:] == sub.indptr.asnumpy()[count])
    assert np.all(layer.asnumpy()[:count] <= hops)
    for row, v in enumerate(verts):
        kept = np.flatnonzero(sub_np[row])
        assert len(kept) in (0, min(k, np.count_nonzero(dense[v])))
        np.testing.assert_array_equal(sub_np[row, kept], dense[v, kept])   # real edges


def test_uniform_sample_draws_real_edges():
    dense, g = _random_graph()
    for seeds in ([0], [3, 7, 11], list(range(0, 40, 5))):
        out = nd.dgl_csr_neighbor_uniform_sample(g, _ids(*seeds), num_hops=2, num_neighbor=3,
                                                 max_num_vertices=30)
        _check_sample(dense, *out, hops=2, k=3, max_v=30)
        compact = nd.dgl_graph_compact(out[1], out[0], graph_sizes=int(out[0][-1].asscalar()),
                                       return_mapping=False)
        verts = out[0].asnumpy()
        np.testing.assert_array_equal(verts[compact.indices.asnumpy()], out[1].indices.asnumpy())


def test_non_uniform_sample_draws_real_edges_by_probability():
    dense, g = _random_graph()
    prob = np.full(40, 0.001, np.float32)
    prob[1::2] = 1.0                # odd vertices all but certain to be drawn first
    prob[::10] = 0.0                # never drawn
    out = nd.dgl_csr_neighbor_non_uniform_sample(g, mx.nd.array(prob), _ids(0, 5), num_hops=1,
                                                 num_neighbor=3, max_num_vertices=40)
    ids, sub, sub_prob, layer = out
    _check_sample(dense, ids, sub, layer, hops=1, k=3, max_v=40)
    count = int(ids.asnumpy()[-1])
    np.testing.assert_array_equal(sub_prob.asnumpy()[:count], prob[ids.asnumpy()[:count]])
    drawn = sub.indices.asnumpy()
    assert not np.any(drawn % 10 == 0) and np.mean(drawn % 2 == 1) > 0.9


def test_weighted_draws_follow_successive_sampling():
    """Two of three neighbours of probability .5, .3, .2: each is kept with the chance that
    two successive draws without replacement give it."""
    from mxnext_ops_tensor.dgl_sample import _weighted_pick
    pick = _weighted_pick(np.random.default_rng(0), 2, np.array([0.5, 0.3, 0.2], np.float32))
    kept = np.zeros(3)
    for _ in range(4000):
        kept[pick(np.arange(3), np.arange(3))[0]] += 1
    want = [0.5 + 0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8, 0.3 + 0.5 * 0.3 / 0.5 + 0.2 * 0.3 / 0.8,
            0.2 + 0.5 * 0.2 / 0.5 + 0.3 * 0.2 / 0.7]
    np.testing.assert_allclose(kept / 4000, want, atol=0.03)


def test_sampling_follows_mx_random_seed():
    _, g = _random_graph()
    runs = []
    for _ in range(2):
        mx.random.seed(42)
        out = nd.dgl_csr_neighbor_uniform_sample(g, _ids(0, 1), num_hops=2, num_neighbor=2,
                                                 max_num_vertices=20)
        runs.append([o.asnumpy() for o in out])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


# -- dgl_subgraph, edge_id, dgl_adjacency, dgl_graph_compact --------------------------------
_X = [[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]]


def _x():
    return mx.nd.array(_X, dtype="int64").tostype("csr")


def test_subgraph_like_mxnet():
    new, old = nd.dgl_subgraph(_x(), _ids(0, 1, 2), return_mapping=True)
    assert new.stype == old.stype == "csr" and new.shape == (3, 3) and new.dtype == np.int64
    assert _parts(new) == [[0, 1, 2, 3], [0, 0, 2, 1], [0, 1, 3, 4]]
    assert _parts(old) == [[1, 3, 4, 5], [0, 0, 2, 1], [0, 1, 3, 4]]
    a, b, a_old, b_old = nd.dgl_subgraph(_x(), _ids(1, 3), _ids(0, 2, 3), return_mapping=True)
    assert _parts(a) == [[0], [0], [0, 0, 1]] and _parts(a_old) == [[6], [0], [0, 0, 1]]
    assert _parts(b) == [[0, 1, 2], [0, 2, 1], [0, 2, 2, 3]]
    assert _parts(b_old) == [[1, 2, 7], [0, 2, 1], [0, 2, 2, 3]]
    new, old = nd.dgl_subgraph(_x(), _ids(1, 1, 2), return_mapping=True)   # repeated vertex
    assert _parts(new) == [[0, 1, 2], [2, 2, 1], [0, 1, 2, 3]]
    assert _parts(old) == [[4, 4, 5], [2, 2, 1], [0, 1, 2, 3]]
    only = nd.dgl_subgraph(_x(), _ids(1, 3), return_mapping=False)
    assert _parts(only) == [[0], [0], [0, 0, 1]]


def test_edge_id_like_mxnet():
    y = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]]).tostype("csr")
    u, v = mx.nd.array([0, 0, 1, 1, 2, 2]), mx.nd.array([0, 1, 1, 2, 0, 2])
    got = nd.edge_id(y, u, v)
    assert got.dtype == np.float32 and got.asnumpy().tolist() == [1, -1, 2, -1, -1, 3]
    truncated = nd.edge_id(y, mx.nd.array([0.9, 2.2, 1.5]), mx.nd.array([0.7, 2.9, 7]))
    assert truncated.asnumpy().tolist() == [1, 3, -1]
    assert nd.edge_id(y, mx.nd.array([0, 2]), mx.nd.array([-1, 2])).asnumpy().tolist() == [-1, 3]
    as_int = nd.edge_id(y.astype("int64"), _ids(0, 0, 1), _ids(0, 1, 1))
    assert as_int.dtype == np.int64 and as_int.asnumpy().tolist() == [1, -1, 2]
    empty = mx.nd.sparse.zeros("csr", (3, 3))
    assert nd.edge_id(empty, u[:2], v[:2]).asnumpy().tolist() == [-1, -1]


def test_adjacency_like_mxnet():
    adj = nd.dgl_adjacency(_x())
    assert adj.stype == "csr" and adj.dtype == np.float32 and adj.shape == (4, 4)
    assert _parts(adj) == [[1.0] * 7, [0, 3, 0, 2, 1, 1, 2], [0, 2, 4, 5, 7]]


def _sampled():
    """A sampler's output as MXNet gave it: vertices 0, 3, 4 (count 3; a stale -1 past it)."""
    sub = mx.nd.sparse.csr_matrix((np.array([4, 20]), np.array([4, 3]),
                                   np.array([0, 1, 1, 2, 2])), shape=(4, 5)).astype("int64")
    return sub, _ids(0, 3, 4, -1, 3)


def test_graph_compact_like_mxnet():
    sub, ids = _sampled()
    compact = nd.dgl_graph_compact(sub, ids, graph_sizes=3, return_mapping=False)
    assert compact.stype == "csr" and compact.shape == (3, 3) and compact.dtype == np.int64
    assert _parts(compact) == [[0, 1], [2, 1], [0, 1, 1, 2]]
    a, b = nd.dgl_graph_compact(sub, sub, ids, ids, graph_sizes=(3, 3), return_mapping=False)
    assert _parts(a) == _parts(b) == _parts(compact)
    same, mapping = nd.dgl_graph_compact(sub, ids, graph_sizes=(3,), return_mapping=True)
    assert _parts(same) == _parts(compact)
    assert mapping.shape == (3, 3) and mapping.indices.shape == (0,)    # MXNet leaves it empty


def test_symbols_bind_csr_graphs():
    g, s = mx.sym.var("g", stype="csr"), mx.sym.var("s")
    ids, sub, _ = mx.sym.contrib.dgl_csr_neighbor_uniform_sample(
        g, s, num_args=2, num_hops=1, num_neighbor=5, max_num_vertices=6)
    net = mx.sym.Group([ids, mx.sym.contrib.dgl_graph_compact(sub, ids, graph_sizes=5,
                                                              return_mapping=False)])
    assert net.infer_shape(g=(5, 5), s=(1,))[1] == [(7,), (5, 5)]
    assert net.infer_type(g=np.int64, s=np.int64)[1] == [np.int64, np.int64]
    out = net.bind(mx.cpu(), {"g": _complete_graph(), "s": _ids(0)}).forward()
    assert out[0].asnumpy()[[0, 1, 2, 3, 4, 6]].tolist() == [0, 1, 2, 3, 4, 5]
    assert out[1].stype == "csr"
    assert _parts(out[1]) == [[0, 1, 2, 3], [1, 2, 3, 4], [0, 4, 4, 4, 4, 4]]   # MXNet's
    adj = mx.sym.contrib.dgl_adjacency(g).bind(mx.cpu(), {"g": _x()}).forward()[0]
    assert adj.stype == "csr" and _parts(adj)[1] == [0, 3, 0, 2, 1, 1, 2]


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, match", [
    (lambda g: nd.dgl_adjacency(g.tostype("default")), "storage type 'csr'"),
    (lambda g: nd.dgl_adjacency(g.astype("float32")), "must be int64, got float32"),
    (lambda g: nd.dgl_csr_neighbor_uniform_sample(g, _ids(0), num_args=3), "expects 3 inputs"),
    (lambda g: nd.dgl_csr_neighbor_uniform_sample(g, mx.nd.array([0])), "int64, got float32"),
    (lambda g: nd.dgl_csr_neighbor_uniform_sample(g, _ids(9)), "vertex id 9"),
    (lambda g: nd.dgl_csr_neighbor_uniform_sample(g, _ids(0, 1, 2), max_num_vertices=2),
     "3 seeds, more than max_num_vertices=2"),
    (lambda g: nd.dgl_csr_neighbor_non_uniform_sample(g, mx.nd.array([1, -1, 1, 1, 1]),
                                                      _ids(0)), "finite values >= 0"),
    (lambda g: nd.dgl_subgraph(g, _ids(3, 1), return_mapping=False), "must be sorted"),
    (lambda g: nd.dgl_subgraph(g, _ids(1, 3)), "return_mapping"),
    (lambda g: nd.edge_id(g, mx.nd.array([0.0]), _ids(0)), "share a dtype"),
    (lambda g: nd.edge_id(g, mx.nd.array([7.0]), mx.nd.array([0.0])), "vertex id 7"),
    (lambda g: nd.dgl_graph_compact(*_sampled(), graph_sizes=2, return_mapping=False),
     "count 3 vertices, graph_sizes gives 2"),
])
def test_errors_name_op_and_input(call, match):
    with pytest.raises(MXNetError, match=match):
        call(_complete_graph())
        mx.nd.waitall()         # a dense graph's refusal comes from the engine


def test_shape_errors():
    bad = mx.nd.sparse.csr_matrix((np.ones(1, np.int64), [0], [0, 1, 1]), shape=(2, 3))
    with pytest.raises(ShapeError, match="must be square"):
        nd.dgl_csr_neighbor_uniform_sample(bad, _ids(0))
    with pytest.raises(ShapeError, match="one length"):
        nd.edge_id(_x(), mx.nd.array([0, 1]), mx.nd.array([0]))
