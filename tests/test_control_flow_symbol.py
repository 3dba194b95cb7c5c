"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: graphs with subgraphs, run by
executors and hybridized blocks, checked against the imperative ``mx.nd.contrib`` versions
and against a file MXNet 1.9.1 wrote (``make_control_flow.py``)."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon

nd, sym = mx.nd, mx.sym
FIXTURES = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"


def _run(net, args, train=True):
    """Outputs and argument gradients (head gradients of ones) of ``net`` bound to ``args``."""
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    exe = net.bind(mx.cpu(), {k: nd.array(v) for k, v in args.items()}, args_grad=grads)
    outs = exe.forward(is_train=train)
    exe.backward([nd.ones(o.shape) for o in outs])
    return [o.asnumpy() for o in outs], {k: g.asnumpy() for k, g in grads.items()}


def _imperative(fn, args):
    arrays = {k: nd.array(v) for k, v in args.items()}
    for a in arrays.values():
        a.attach_grad()
    with mx.autograd.record():
        outs = fn(arrays)
    mx.autograd.backward(outs, [nd.ones(o.shape) for o in outs])
    return [o.asnumpy() for o in outs], {k: a.grad.asnumpy() for k, a in arrays.items()}


def _same(got, want):
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    for k in want[1]:
        np.testing.assert_allclose(got[1][k], want[1][k], rtol=1e-5, atol=1e-6, err_msg=k)


RNG = np.random.RandomState(0)
ARGS = {"x": RNG.rand(4, 2, 3).astype("f"), "h": RNG.rand(2, 3).astype("f"),
        "w": RNG.rand(3, 3).astype("f")}


def test_foreach_matches_the_imperative_loop_forward_and_backward():
    def step(F, w):
        return lambda d, s: (F.tanh(F.broadcast_add(F.dot(d, w), s[0])), [s[0] * 2 + d])
    x, h, w = sym.var("x"), sym.var("h"), sym.var("w")
    outs, states = sym.contrib.foreach(step(sym, w), x, [h])
    net = sym.Group([outs, states[0]])
    assert net.list_arguments() == ["x", "h", "w"]
    assert net.infer_shape(x=(4, 2, 3), h=(2, 3), w=(3, 3))[1] == [(4, 2, 3), (2, 3)]

    def imperative(a):
        o, s = nd.contrib.foreach(step(nd, a["w"]), a["x"], [a["h"]])
        return [o, s[0]]
    _same(_run(net, ARGS), _imperative(imperative, ARGS))


def test_while_loop_pads_to_max_iterations_and_matches_the_imperative_loop():
    args = {"i": np.array([1], "f"), "s": np.array([1, 2], "f"), "w": np.array([1.5, .5], "f")}

    def func(F, w):
        return lambda i, s: ([s * w, i + 1], [i + 1, s * w])
    i, s, w = sym.var("i"), sym.var("s"), sym.var("w")
    outs, final = sym.contrib.while_loop(lambda i, s: i < 4, func(sym, w), [i, s],
                                         max_iterations=5)
    net = sym.Group(outs + final)
    assert net.infer_shape(i=(1,), s=(2,), w=(2,))[1] == [(5, 2), (5, 1), (1,), (2,)]

    def imperative(a):
        o, f = nd.contrib.while_loop(lambda i, s: i < 4, func(nd, a["w"]), [a["i"], a["s"]],
                                     max_iterations=5)
        return o + f
    got = _run(net, args)
    _same(got, _imperative(imperative, args))
    assert got[0][1].ravel().tolist() == [2, 3, 4, 0, 0]      # 3 steps ran, then zeros


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_cond_runs_one_branch_and_differentiates_it(p):
    args = {"p": np.array([p], "f"), "a": np.array([3], "f"), "b": np.array([4], "f")}
    a, b = sym.var("a"), sym.var("b")
    net = sym.contrib.cond(sym.var("p") > 0, lambda: a * b, lambda: a - b)
    outs, grads = _run(net, args)
    assert outs[0].tolist() == ([12] if p > 0 else [-1])
    assert (grads["a"][0], grads["b"][0], grads["p"][0]) == ((4, 3, 0) if p > 0 else (1, -1, 0))


def test_json_round_trip_keeps_the_subgraphs():
    x, h = sym.var("x"), sym.var("h")
    outs, _ = sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), x, [h], name="fe")
    text = outs.tojson()
    node = [n for n in json.loads(text)["nodes"] if n["op"] == "_foreach"][0]
    assert node["attrs"] == {"in_data_locs": "[0]", "in_state_locs": "[1]", "num_args": "3",
                             "num_out_data": "1", "num_outputs": "2", "remain_locs": "[]"}
    assert [n["name"] for n in node["subgraphs"][0]["nodes"]][:2] == ["x-0", "h-0"]
    assert sym.load_json(text).tojson() == text


def test_a_file_mxnet_wrote_loads_runs_and_is_written_back_unchanged():
    text = (FIXTURES / "ctrlflow-symbol.json").read_text()
    net = sym.load_json(text)
    assert net.tojson() == text
    args = {k[4:]: v.asnumpy() for k, v in nd.load(str(FIXTURES / "ctrlflow-0000.params")).items()}
    outs, grads = _run(net, args)
    want = np.load(FIXTURES / "ctrlflow-expected.npz")
    for k, o in enumerate(outs):
        if k == 3:       # the while_loop's rows: 3 steps ran; MXNet leaves the rest unset
            assert not o[3:].any()
            o, w = o[:3], want["out3"][:3]
        else:
            w = want[f"out{k}"]
        np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-5, err_msg=f"output {k}")
    for k, g in grads.items():
        np.testing.assert_allclose(g, want[f"grad_{k}"], rtol=1e-5, atol=1e-5, err_msg=k)


def test_mxnets_errors():
    v = sym.var("v")
    with pytest.raises(ValueError, match="max_iterations should be specified"):
        sym.contrib.while_loop(lambda v: v < 1, lambda v: ([], [v + 1]), [v])
    with pytest.raises(ValueError, match="Number of outputs differs"):
        sym.contrib.cond(v > 0, lambda: [v, v], lambda: v)
    with pytest.raises(mx.MXNetError, match="state arrays have to be used"):
        sym.contrib.foreach(lambda d, s: (d, [d * 2]), v, [sym.var("u")])
    with pytest.raises(AssertionError, match="different format"):
        sym.contrib.foreach(lambda d, s: (d, [s[0], s[0]]), v, [v])
    with pytest.raises(ValueError, match="1-th loop_var doesn't involve"):
        sym.contrib.while_loop(lambda a, b: b < 1, lambda a, b: ([], [b, b + 1]), [v, v * 2],
                               max_iterations=3)


def test_backward_after_a_predict_mode_forward_records_the_run_again():
    v = sym.var("v")
    outs, _ = sym.contrib.foreach(lambda d, s: (d * s[0], [s[0] + d]), v, [sym.var("h")])
    args = {"v": np.array([[1, 2], [3, 4]], "f"), "h": np.array([1, 1], "f")}
    got = _run(outs, args, train=False)
    assert got[0][0].tolist() == [[1, 2], [6, 12]]
    assert got[1]["v"].tolist() == [[4, 5], [2, 3]]    # d0 h + d1 (h + d0)


class _Loop(gluon.HybridBlock):
    """An RNN cell stepped by ``F.contrib.foreach``, then a Dense layer on the last state."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.cell = gluon.rnn.RNNCell(4, input_size=3)
            self.out = gluon.nn.Dense(1, in_units=4)

    def hybrid_forward(self, F, x, h):
        outs, states = F.contrib.foreach(lambda item, s: self.cell(item, s), x, [h])
        return F.broadcast_add(self.out(states[0]), outs.mean())


def _train(hybridize):
    mx.random.seed(1)
    net = _Loop(prefix="loop_")
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x, h = nd.array(np.random.RandomState(0).rand(5, 2, 3)), nd.zeros((2, 4))
    losses = []
    for _ in range(3):
        with mx.autograd.record():
            loss = (net(x, h) ** 2).mean()
        loss.backward()
        trainer.step(2)
        losses.append(float(loss.asscalar()))
    return losses, {k: p.data().asnumpy() for k, p in net.collect_params().items()}


def test_a_hybridized_block_with_foreach_trains_as_the_imperative_one():
    (loss_a, params_a), (loss_b, params_b) = _train(False), _train(True)
    np.testing.assert_allclose(loss_b, loss_a, rtol=1e-5)
    assert loss_a[-1] < loss_a[0]
    for k in params_a:
        np.testing.assert_allclose(params_b[k], params_a[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_a_malformed_body_graph_is_refused_naming_the_node():
    x, h = sym.var("x"), sym.var("h")
    outs, _ = sym.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]), x, [h])
    doc = json.loads(outs.tojson())
    doc["nodes"][2]["subgraphs"][0]["heads"] = [[99, 0, 0]]
    with pytest.raises(mx.MXNetError, match=r"node '_foreach\d+' .*in its subgraphs: .*node 99"):
        sym.load_json(json.dumps(doc))


def test_a_while_loop_that_never_steps_gives_zeros_and_passes_its_vars_through():
    i, s = sym.var("i"), sym.var("s")
    outs, final = sym.contrib.while_loop(lambda i, s: i < 0, lambda i, s: ([s * 2], [i + 1, s]),
                                         [i, s], max_iterations=3)
    got, grads = _run(sym.Group(outs + final), {"i": np.array([1], "f"),
                                                "s": np.array([1, 2], "f")})
    assert got[0].tolist() == [[0, 0]] * 3 and got[2].tolist() == [1, 2]
    assert grads["s"].tolist() == [1, 1]


def test_an_exported_hybridized_loop_imports_as_a_symbol_block(tmp_path):
    net = _Loop(prefix="loop_")
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x, h = nd.array(np.random.RandomState(0).rand(5, 2, 3)), nd.zeros((2, 4))
    want = net(x, h).asnumpy()
    net.export(str(tmp_path / "loop"))
    block = gluon.SymbolBlock.imports(str(tmp_path / "loop-symbol.json"), ["data0", "data1"],
                                      str(tmp_path / "loop-0000.params"))
    np.testing.assert_allclose(block(x, h).asnumpy(), want, rtol=1e-6)


class _Deferred(gluon.HybridBlock):
    """An LSTM cell of unknown input size stepped by ``foreach``: hybridized, its weights'
    shapes are inferred through the body graph."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.cell = gluon.rnn.LSTMCell(4)

    def hybrid_forward(self, F, x, h, c):
        _, states = F.contrib.foreach(lambda item, s: self.cell(item, s), x, [h, c])
        return states[0]


def test_deferred_parameter_shapes_are_inferred_through_the_body():
    results = []
    for hybridize in (False, True):
        mx.random.seed(3)
        net = _Deferred(prefix="deferred_")
        net.initialize()
        if hybridize:
            net.hybridize()
        x = nd.array(np.random.RandomState(0).rand(5, 2, 3))
        results.append(net(x, nd.zeros((2, 4)), nd.zeros((2, 4))).asnumpy())
        assert net.cell.i2h_weight.shape == (16, 3)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_cached_op_runs_a_graph_given_as_json_as_one_operator():
    """MXNet's ``_CachedOp(*args, subgraph=js)``: shapes through the graph, forward and
    backward as the graph's, a JSON round trip, and a bad graph named as such."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    inner = mx.sym.broadcast_mul(a, b) + a
    y = mx.sym._internal._CachedOp(mx.sym.var("a"), mx.sym.var("b"), subgraph=inner.tojson()) * 2
    assert y.infer_shape(a=(2, 3), b=(1, 3))[1] == [(2, 3)]
    rng = np.random.default_rng(0)
    av, bv = rng.random((2, 3), dtype=np.float32), rng.random((1, 3), dtype=np.float32)
    grads = {"a": mx.nd.zeros((2, 3)), "b": mx.nd.zeros((1, 3))}
    ex = y.bind(mx.cpu(), {"a": mx.nd.array(av), "b": mx.nd.array(bv)}, args_grad=grads)
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), 2 * (av * bv + av),
                               rtol=1e-6)
    ex.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(grads["a"].asnumpy(), 2 * (bv + 1) * np.ones((2, 3)), rtol=1e-6)
    np.testing.assert_allclose(grads["b"].asnumpy(), 2 * av.sum(0, keepdims=True), rtol=1e-6)
    js = y.tojson()
    assert json.loads(js)["nodes"][2]["attrs"]["subgraph"] == inner.tojson()
    assert mx.sym.load_json(js).tojson() == js
    out = mx.nd._internal._CachedOp(mx.nd.array(av), mx.nd.array(bv), subgraph=inner.tojson())
    np.testing.assert_allclose(out.asnumpy(), av * bv + av, rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="subgraph.*symbol JSON"):
        mx.sym._internal._CachedOp(a, b, subgraph="{not json")
    with pytest.raises(mx.base.MXNetError, match="expected 2 input"):
        mx.nd._internal._CachedOp(mx.nd.array(av), subgraph=inner.tojson())


def test_cached_op_lists_its_graphs_auxiliary_states_as_its_own():
    """A BatchNorm inside: its moving statistics are the node's auxiliary states (mutable
    inputs, no gradient), the rest arguments whose gradients match the plain graph's."""
    data = mx.sym.var("data")
    inner = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                             fix_gamma=False, name="bn")
    node = mx.sym._internal._CachedOp(*[mx.sym.var(n) for n in inner.list_inputs()],
                                      subgraph=inner.tojson())
    assert node.list_arguments() == inner.list_arguments()
    assert node.list_auxiliary_states() == inner.list_auxiliary_states()
    arg_shapes, _, aux_shapes = inner.infer_shape(data=(4, 5))
    rng = np.random.default_rng(1)
    args = {n: rng.random(s, dtype=np.float32) for n, s in zip(inner.list_arguments(), arg_shapes)}
    grads = []
    for sym in (inner, node):
        g = {n: mx.nd.zeros(v.shape) for n, v in args.items()}
        ex = sym.bind(mx.cpu(), {n: mx.nd.array(v) for n, v in args.items()}, args_grad=g,
                      aux_states=[mx.nd.ones(s) for s in aux_shapes])
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4, 3)))
        grads.append({n: a.asnumpy() for n, a in g.items()})
    for n in args:
        np.testing.assert_allclose(grads[0][n], grads[1][n], rtol=1e-5, atol=1e-6)
