"""The executor's memory planner on hand-made graphs: liveness, in place, identity views,
unused outputs, packing, and the switches that turn planning off."""

import pytest

from mxnext._runtime.graph.memory import plan_memory
from mxnext.graph import IndexedGraph, NodeEntry, make_node, variable


def _chain(*ops, source=None):
    """x -> ops[0] -> ops[1] ... ; returns (graph, the node entries in order)."""
    e = NodeEntry(source or variable("x"), 0, 0)
    entries = [e]
    for op in ops:
        e = NodeEntry(make_node(op, [e]), 0, 0)
        entries.append(e)
    return IndexedGraph([e]), entries


def _plan(g, nbytes, claims, external=None, inplace=True, share=True):
    ext = set(external if external is not None else
              (g.entry_id(i) for i in g.input_ids))
    return plan_memory(g, nbytes, ext, set(g.outputs), lambda nid: claims.get(nid, ()),
                       inplace, share)


def test_a_chain_reuses_one_buffer_in_place():
    g, _ = _chain("relu", "sigmoid", "tanh", "relu")
    claims = {nid: [(0, 0, False)] for nid in range(1, 5)}
    p = _plan(g, [1024] * g.num_entries, claims)
    assert len(p.size) == 1 and p.total == 1024 and p.naive == 4 * 1024
    assert p.inplace == {(2, 0), (3, 0), (4, 0)}     # the first op reads the variable


def test_without_in_place_a_chain_alternates_two_buffers():
    g, _ = _chain("relu", "sigmoid", "tanh", "relu")
    p = _plan(g, [1024] * g.num_entries, {})
    assert len(p.size) == 4 and p.total == 2 * 1024 and p.naive == 4 * 1024
    offsets = [p.offset[p.group[g.entry_id(nid)]] for nid in range(1, 5)]
    assert offsets[0] != offsets[1] and offsets[0] == offsets[2] and offsets[1] == offsets[3]
    # a group and the groups reusing its bytes order each other through the engine
    for gid, over in enumerate(p.overlaps):
        assert all(gid in p.overlaps[h] for h in over)
        assert all(p.offset[h] < p.offset[gid] + p.size[gid] and
                   p.offset[gid] < p.offset[h] + p.size[h] for h in over)


def test_an_input_read_later_is_not_overwritten():
    x = variable("x")
    a = NodeEntry(make_node("relu", [NodeEntry(x, 0, 0)]), 0, 0)
    b = NodeEntry(make_node("sigmoid", [a]), 0, 0)          # could run over a ...
    c = NodeEntry(make_node("elemwise_add", [b, a]), 0, 0)   # ... but a is read here too
    g = IndexedGraph([c])
    p = _plan(g, [256] * g.num_entries, {g.node_id(b.node): [(0, 0, False)],
                                         g.node_id(c.node): [(0, 0, False), (1, 0, False)]})
    ea, eb = g.entry_id(g.node_id(a.node)), g.entry_id(g.node_id(b.node))
    assert p.group[ea] != p.group[eb]
    assert (g.node_id(c.node), 0) in p.inplace and p.total == 2 * 256


def test_identity_outputs_are_views_and_unused_outputs_get_nothing():
    g, entries = _chain("relu", "Reshape", "sigmoid")
    ids = [g.entry_id(g.node_id(e.node)) for e in entries]
    claims = {g.node_id(entries[2].node): [(0, 0, True)]}
    p = _plan(g, [512] * g.num_entries, claims)
    assert p.alias[ids[2]] == ids[1] and p.group[ids[2]] == p.group[ids[1]]
    assert p.naive == 2 * 512                               # the view costs nothing
    # a reshape of the variable is a view of the external array
    g2, e2 = _chain("Reshape", "relu")
    p2 = _plan(g2, [64] * g2.num_entries, {1: [(0, 0, True)]})
    assert p2.alias[g2.entry_id(1)] == g2.entry_id(0) and p2.group[g2.entry_id(1)] is None
    # an output nobody reads (and not a graph output) is not written
    x = variable("x")
    split = make_node("split", [NodeEntry(x, 0, 0)], {"num_outputs": 2})
    out = NodeEntry(make_node("relu", [NodeEntry(split, 0, 0)]), 0, 0)
    g3 = IndexedGraph([out])
    p3 = _plan(g3, [128] * g3.num_entries, {})
    assert g3.entry_id(g3.node_id(split), 1) in p3.unused


@pytest.mark.parametrize("inplace, share", [(False, False), (True, False), (False, True)])
def test_switches_turn_in_place_and_sharing_off(inplace, share):
    g, _ = _chain("relu", "sigmoid", "tanh", "relu")
    claims = {nid: [(0, 0, False)] for nid in range(1, 5)}
    p = _plan(g, [1000] * g.num_entries, claims, inplace=inplace, share=share)
    assert bool(p.inplace) == inplace
    if not share:
        spans = sorted((p.offset[k], p.offset[k] + p.size[k]) for k in range(len(p.size)))
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))   # no two share bytes


def test_packing_fits_a_small_group_into_a_dead_large_one():
    x = variable("x")
    big = NodeEntry(make_node("relu", [NodeEntry(x, 0, 0)]), 0, 0)
    small = NodeEntry(make_node("sum", [big]), 0, 0)          # big dies here
    later = NodeEntry(make_node("relu", [small]), 0, 0)
    g = IndexedGraph([later])
    nbytes = [0] * g.num_entries
    for e, n in ((big, 4096), (small, 64), (later, 64)):
        nbytes[g.entry_id(g.node_id(e.node))] = n
    p = _plan(g, nbytes, {})
    assert p.total == 4096 + 64 and p.naive == 4096 + 128


def test_a_dropped_executor_frees_its_planned_memory_without_the_garbage_collector():
    """What an executor ran on (its arena's views, held by the functions it pushed) goes
    when the executor does, by reference count: a loop binding executors for large shapes
    (bucketing, re-hybridized blocks) does not keep every arena until a collection."""
    import gc
    import weakref

    import mxnext as mx

    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=64, name="fc")
    net = mx.sym.SoftmaxOutput(mx.sym.Activation(net, act_type="relu"), name="out")
    gc.collect()
    gc.disable()
    try:
        ex = net.simple_bind(mx.cpu(), data=(8, 16))
        ex.forward(is_train=True)
        ex.backward()
        mx.nd.waitall()
        views = [weakref.ref(v) for v in ex._instance.views if v is not None]
        del ex
        assert sum(r() is not None for r in views) == 0
    finally:
        gc.enable()
