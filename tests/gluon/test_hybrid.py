"""hybridize(): the graph from hybrid_forward on Symbols, run through one CachedOp, gives
the imperative results and gradients; shapes, types, export, SymbolBlock, summary."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon import nn


def _net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(8), nn.BatchNorm(), nn.Dense(3, flatten=False), nn.LayerNorm())
    return net


def _step(net, x):
    with autograd.record():
        y = net(x)
    y.backward(mx.nd.array(np.arange(y.size).reshape(y.shape) % 5))
    return y.asnumpy(), {k: p.grad().asnumpy() for k, p in net.collect_params().items()
                         if p.grad_req != "null"}


@pytest.mark.parametrize("flags", [{}, {"static_alloc": True},
                                   {"static_alloc": True, "static_shape": True}])
def test_hybridized_results_and_gradients_equal_imperative(flags):
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (4, 5)))
    net = _net()
    net.initialize(mx.init.Xavier())
    y0, g0 = _step(net, x)
    stats0 = net[1].running_mean.data().asnumpy()
    net.hybridize(**flags)
    for _ in range(2):               # the first call builds the graph, the second reuses it
        y1, g1 = _step(net, x)
        np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
        for k in g0:
            np.testing.assert_allclose(g1[k], g0[k], rtol=1e-4, atol=1e-5, err_msg=k)
    assert net._cached_op is not None and net[0]._cached_op is None
    # each training step moves the running mean the same way: momentum 0.9 twice more
    mean = x.asnumpy() @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy()
    expect = stats0 * 0.81 + mean.mean(0) * (1 - 0.81)
    np.testing.assert_allclose(net[1].running_mean.data().asnumpy(), expect, rtol=1e-5,
                               atol=1e-6)


def test_the_graph_names_inputs_and_ops_as_mxnet():
    class Two(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return F.broadcast_add(a, b, name="sum"), a * 2

    with mx.name.NameManager():
        two = Two()
        net = _net()
    two.hybridize()
    out = two(mx.nd.ones((2, 3)), mx.nd.ones((1, 3)))
    assert [o.shape for o in out] == [(2, 3), (2, 3)]
    inputs, sym = two._cached_graph
    assert [i.name for i in inputs] == ["data0", "data1"]
    assert sym.list_outputs()[0] == "two0_sum_output"
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2, 5)))
    assert net._cached_graph[1].list_inputs()[:2] == ["data",
                                                       "hybridsequential0_dense0_weight"]


def test_deferred_shapes_and_types_come_from_the_symbol_graph():
    net = _net()
    net.initialize()
    net.infer_shape(mx.nd.ones((2, 7)))
    assert net[0].weight.shape == (8, 7) and net[1].gamma.shape == (8,)
    assert net[3].gamma.shape == (3,)
    net.cast("float16")
    net.infer_type(mx.nd.ones((2, 7), dtype="float16"))
    assert net[0].weight.dtype == np.float16
    with pytest.raises(mx.base.MXNetError, match="FullyConnected.*float16"):
        net.infer_type(mx.nd.ones((2, 7), dtype="float64"))


def test_rehybridize_clears_the_cache_and_hybrid_off_runs_imperatively():
    net = _net()
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2, 5)))
    graph = net._cached_graph
    net.hybridize(static_alloc=True)
    assert net._cached_graph == () and net._cached_op is None
    net(mx.nd.ones((2, 5)))
    assert net._cached_graph is not graph
    net.hybridize(False)
    calls = []
    net[0].register_forward_hook(lambda b, i, o: calls.append(o.shape))
    net(mx.nd.ones((2, 5)))
    assert calls == [(2, 8)]          # children run one by one again


def test_hybrid_children_of_a_plain_block_and_input_checks():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.body = _net()

        def forward(self, x):
            return self.body(x) + 1

    net = Net()
    net.initialize()
    y0 = net(mx.nd.ones((2, 5))).asnumpy()
    net.hybridize()
    assert net.body._active
    np.testing.assert_allclose(net(mx.nd.ones((2, 5))).asnumpy(), y0, rtol=1e-5)
    with pytest.raises(ValueError, match="do not support mixed NDArrays and Symbols"):
        net.body(mx.nd.ones((2, 5)), mx.sym.var("x"))
    with pytest.raises(ValueError, match="argument structure of HybridBlock does not match"):
        net.body([mx.nd.ones((2, 5))])


def test_export_symbol_block_and_shared_params(tmp_path):
    net = _net()
    net.initialize()
    with pytest.raises(RuntimeError, match="call block.hybridize\\(\\) and then run forward"):
        net.export(str(tmp_path / "net"))
    net.hybridize()
    x = mx.nd.ones((2, 5))
    y = net(x).asnumpy()
    net.export(str(tmp_path / "net"))
    out = net(mx.sym.var("data"))
    sb = gluon.SymbolBlock(out, mx.sym.var("data"), params=net.collect_params())
    assert sb.collect_params()[net[0].weight.name] is net[0].weight
    np.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-5)
    sb.hybridize()
    np.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-5)
    imported = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                         str(tmp_path / "net-0000.params"))
    np.testing.assert_allclose(imported(x).asnumpy(), y, rtol=1e-5)
    fresh = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"])
    fresh.initialize()
    assert fresh(mx.nd.ones((3, 5))).shape == (3, 3)      # deferred shapes inferred


def test_summary_prints_layers_and_counts(capsys):
    net = _net()
    net.initialize()
    net.summary(mx.nd.ones((2, 5)))
    out = capsys.readouterr().out
    assert "Dense-1" in out and "BatchNorm-2" in out and "(2, 8)" in out
    assert "   Total params: 113" in out and "   Trainable params: 97" in out
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized to print summary"):
        net.summary(mx.nd.ones((2, 5)))


def test_several_contexts_each_use_their_copy_of_the_parameters():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net = _net()
    net.initialize(ctx=ctxs)
    net.optimize_for(mx.nd.ones((2, 5), ctx=ctxs[1]), static_alloc=True)
    assert net._active and net._cached_op is not None
    x = mx.nd.array(np.random.RandomState(1).uniform(size=(4, 5)))
    parts = gluon.utils.split_and_load(x, ctxs)
    with autograd.record():
        outs = [net(p) for p in parts]
    for o in outs:
        o.backward()
    assert [o.context for o in outs] == ctxs and mx.current_context() == mx.cpu(0)
    w = net[0].weight
    assert w.grad(ctxs[0]).context == ctxs[0]
    assert not np.allclose(w.grad(ctxs[0]).asnumpy(), w.grad(ctxs[1]).asnumpy())
    with pytest.raises(ValueError, match="only supports one input context"):
        net(mx.nd.ones((2, 5), ctx=ctxs[0]), mx.nd.ones((2, 5), ctx=ctxs[1]))
    with pytest.raises(mx.base.MXNetError, match="backend='MKLDNN' is not supported"):
        net.optimize_for(x, backend="MKLDNN")


@pytest.mark.parametrize("hybrid", [False, True])
def test_grad_req_add_accumulates_over_steps(hybrid):
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    net.collect_params().setattr("grad_req", "add")
    if hybrid:
        net.hybridize(static_alloc=True)
    for _ in range(3):
        with autograd.record():
            y = net(mx.nd.ones((1, 3)))
        y.backward()
    np.testing.assert_array_equal(net.weight.grad().asnumpy(), np.full((2, 3), 3.0))
    net.collect_params().zero_grad()
    assert net.bias.grad().asnumpy().tolist() == [0.0, 0.0]


def test_nested_and_none_inputs_and_outputs_keep_their_structure():
    class Cell(gluon.HybridBlock):
        def hybrid_forward(self, F, x, states, mask=None):
            h = F.broadcast_add(x, states[0]) * states[1]
            if mask is not None:
                h = h * mask
            return h, [h + 1, states[1]]

    x, s = mx.nd.ones((2, 3)), [mx.nd.full((1, 3), 2), mx.nd.full((2, 3), 3)]
    cell = Cell()
    expect = cell(x, s)
    cell.hybridize()
    for _ in range(2):
        out, states = cell(x, s)
        np.testing.assert_array_equal(out.asnumpy(), expect[0].asnumpy())
        assert len(states) == 2 and states[0].asnumpy()[0, 0] == 10
    assert [v.name for v in cell._cached_graph[0]] == ["data0", "data1", "data2"]
    masked = Cell()
    masked.hybridize()
    out, _ = masked(x, s, mx.nd.zeros((2, 3)))
    assert out.asnumpy().sum() == 0


def test_op_hook_sees_each_nodes_values_under_mxnets_names():
    """register_op_hook on a hybridized block: MXNet's node and op names (inputs first with
    monitor_all) and each node's own values, relu's input being Dense's output."""
    net = mx.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.Activation("relu"), mx.gluon.nn.Dense(2))
    net.initialize(mx.init.Normal(1.0))
    net.hybridize(static_alloc=True)
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.asnumpy())),
                         monitor_all=True)
    x = mx.nd.array(np.linspace(-2, 2, 8).reshape(2, 4))
    y = net(x)
    fc = [f"net_dense{i}_fwd_{n}" for i in (0, 1) for n in ("data", "weight", "bias", "output")]
    assert [(n, o) for n, o, _ in seen] == (
        [(n, "FullyConnected") for n in fc[:4]]
        + [("net_relu0_fwd_input0", "Activation"), ("net_relu0_fwd_output", "Activation")]
        + [(n, "FullyConnected") for n in fc[4:]])
    dense = x.asnumpy() @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy()
    assert (dense < 0).any()                # relu changes it
    for k, want in ((3, dense), (4, dense), (5, np.maximum(dense, 0)), (9, y.asnumpy())):
        np.testing.assert_allclose(seen[k][2], want, rtol=1e-5)


class _Masked(gluon.HybridBlock):
    """boolean_mask (output rows known only from the mask's values) between two layers."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x, index):
        return F.tanh(F.contrib.boolean_mask(self.dense(x), index)).sum(axis=1)


def test_a_dynamic_shape_op_runs_hybridized_with_gradients():
    rng = np.random.default_rng(4)
    x = mx.nd.array(rng.standard_normal((5, 4)))
    index = mx.nd.array([1, 0, 1, 1, 0])
    results = []
    for hybrid in (False, True):
        net = _Masked()
        net.initialize(mx.init.Constant(0.25))
        if hybrid:
            net.hybridize()
        x.attach_grad()
        with autograd.record():
            y = net(x, index)
        y.backward()
        results.append((y.asnumpy(), x.grad.asnumpy(), net.dense.weight.grad().asnumpy()))
    assert results[1][0].shape == (3,)
    for imperative, hybridized in zip(*results):
        np.testing.assert_allclose(hybridized, imperative, rtol=1e-6)
    assert not results[1][1][[1, 4]].any() and results[1][1][[0, 2, 3]].all()
