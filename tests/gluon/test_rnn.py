"""gluon.rnn: cells against hand-written numpy, layers against the same weights unrolled
through cells, hybridized against imperative, and MXNet 1.9.1's saved layers and
numbers (fixtures/rnn, written by fixtures/rnn/make_fixtures.py)."""

import os

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon.contrib.rnn import LSTMPCell, VariationalDropoutCell

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "rnn")
RNG = np.random.RandomState(3)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def randomize(block, scale=0.5):
    for p in block.collect_params().values():
        p.set_data(mx.nd.array(RNG.uniform(-scale, scale, p.shape)))


def weights(cell):
    return [getattr(cell, n).data().asnumpy()
            for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]


def numpy_step(kind, x, states, wi, wh, bi, bh):
    pre_i, pre_h = x @ wi.T + bi, states[0] @ wh.T + bh
    if kind == "rnn":
        h = np.tanh(pre_i + pre_h)
        return h, [h]
    if kind == "lstm":
        i, f, g, o = np.split(pre_i + pre_h, 4, axis=1)
        c = sigmoid(f) * states[1] + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return h, [h, c]
    (ir, iz, in_), (hr, hz, hn) = np.split(pre_i, 3, axis=1), np.split(pre_h, 3, axis=1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    h = (1 - z) * n + z * states[0]
    return h, [h]


CELLS = {"rnn": gluon.rnn.RNNCell, "lstm": gluon.rnn.LSTMCell, "gru": gluon.rnn.GRUCell}


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_unroll_matches_numpy(kind):
    cell = CELLS[kind](5, input_size=4)
    cell.initialize()
    randomize(cell)
    x = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
    states = [RNG.uniform(-1, 1, (2, 5)).astype("float32") for _ in cell.state_info()]
    out, new_states = cell.unroll(3, mx.nd.array(x), [mx.nd.array(s) for s in states],
                                  layout="NTC", merge_outputs=True)
    expected = []
    for t in range(3):
        h, states = numpy_step(kind, x[:, t], states, *weights(cell))
        expected.append(h)
    np.testing.assert_allclose(out.asnumpy(), np.stack(expected, axis=1), rtol=1e-5, atol=1e-6)
    for got, want in zip(new_states, states):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_cell_layouts_and_merge():
    cell = gluon.rnn.GRUCell(5, input_size=4)
    cell.initialize()
    x = mx.nd.array(RNG.uniform(-1, 1, (3, 2, 4)))
    merged, _ = cell.unroll(3, x, layout="TNC", merge_outputs=True)
    steps, _ = cell.unroll(3, x, layout="TNC", merge_outputs=False)
    ntc, _ = cell.unroll(3, x.swapaxes(0, 1), layout="NTC", merge_outputs=True)
    assert merged.shape == (3, 2, 5) and len(steps) == 3 and ntc.shape == (2, 3, 5)
    np.testing.assert_allclose(np.stack([s.asnumpy() for s in steps]), merged.asnumpy())
    np.testing.assert_allclose(ntc.asnumpy().swapaxes(0, 1), merged.asnumpy(), rtol=1e-6)


def test_cell_symbol_names_and_begin_state():
    cell = gluon.rnn.LSTMCell(6, prefix="rnn_")
    outputs, states = cell.unroll(2, [mx.sym.var("x0"), mx.sym.var("x1")])
    assert mx.sym.Group(outputs).list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output"]
    _, shapes, _ = mx.sym.Group(states).infer_shape(x0=(3, 4), x1=(3, 4))
    assert shapes == [(3, 6), (3, 6)]
    cell.reset()  # unroll made begin states 0 and 1 already
    begin = cell.begin_state(func=mx.sym.var)
    assert [s.name for s in begin] == ["rnn_begin_state_0", "rnn_begin_state_1"]
    assert begin[0].attr("__layout__") == "NC"
    assert [s.shape for s in cell.begin_state(batch_size=3)] == [(3, 6), (3, 6)]


def test_valid_length_masks_outputs_and_keeps_last_states():
    cell = gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(4, input_size=3),
                                       gluon.rnn.LSTMCell(4, input_size=3))
    cell.initialize()
    x = mx.nd.array(RNG.normal(size=(2, 5, 3)))
    outs, states = cell.unroll(5, x, valid_length=mx.nd.array([2, 5]), merge_outputs=True)
    short, short_states = cell.unroll(2, x[0:1, :2], merge_outputs=True)
    np.testing.assert_allclose(outs[0:1, :2].asnumpy(), short.asnumpy(), rtol=1e-5, atol=1e-6)
    assert not outs[0, 2:].asnumpy().any()
    for got, want in zip(states, short_states):
        np.testing.assert_allclose(got[0:1].asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_residual_and_sequential_cells():
    stack = gluon.rnn.SequentialRNNCell()
    stack.add(gluon.rnn.RNNCell(4, input_size=4))
    stack.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(4, input_size=4)))
    stack.initialize()
    randomize(stack)
    x = RNG.uniform(-1, 1, (2, 4)).astype("float32")
    out, states = stack(mx.nd.array(x), stack.begin_state(batch_size=2))
    h1, _ = numpy_step("rnn", x, [np.zeros((2, 4))], *weights(stack[0]))
    h2, _ = numpy_step("gru", h1, [np.zeros((2, 4))], *weights(stack[1].base_cell))
    np.testing.assert_allclose(out.asnumpy(), h2 + h1, rtol=1e-5, atol=1e-6)
    assert len(states) == 2 and len(stack) == 2


def test_modified_cell_is_used_through_the_modifier():
    base = gluon.rnn.LSTMCell(3)
    zoneout = gluon.rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    assert zoneout.collect_params().keys() == base.collect_params().keys()
    with pytest.raises(mx.base.MXNetError, match="modifier cell"):
        base.begin_state(batch_size=2)
    with pytest.raises(mx.base.MXNetError, match="only once"):
        gluon.rnn.ResidualCell(base)
    assert len(zoneout.begin_state(batch_size=2, func=mx.nd.zeros)) == 2


def test_dropout_cells_in_training_and_inference():
    x = mx.nd.ones((4, 6, 50))
    drop = gluon.rnn.DropoutCell(0.5)
    out, _ = drop.unroll(6, x, merge_outputs=True)
    assert (out.asnumpy() == 1).all()
    with autograd.train_mode():
        out, _ = drop.unroll(6, x, merge_outputs=True)
    assert set(np.unique(out.asnumpy())) == {0.0, 2.0}
    vd = VariationalDropoutCell(gluon.rnn.DropoutCell(0.0), drop_outputs=0.5)
    with autograd.train_mode():
        out, _ = vd.unroll(6, x, merge_outputs=True)
    out = out.asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0}
    assert (out == out[:, :1]).all()  # one mask for every step


def test_lstmp_cell_matches_numpy():
    cell = LSTMPCell(5, 2, input_size=3)
    cell.initialize()
    randomize(cell)
    x = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    r, c = np.zeros((2, 2)), np.zeros((2, 5))
    out, (new_r, new_c) = cell(mx.nd.array(x), [mx.nd.array(r), mx.nd.array(c)])
    _, (h, c) = numpy_step("lstm", x, [r, c], *weights(cell))
    r = h @ cell.h2r_weight.data().asnumpy().T
    np.testing.assert_allclose(out.asnumpy(), r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(new_c.asnumpy(), c, rtol=1e-5, atol=1e-6)
    assert cell.h2h_weight.shape == (20, 2)


LAYERS = {"lstm": (gluon.rnn.LSTM, gluon.rnn.LSTMCell, {}),
          "gru": (gluon.rnn.GRU, gluon.rnn.GRUCell, {}),
          "rnn_relu": (gluon.rnn.RNN, gluon.rnn.RNNCell, {"activation": "relu"}),
          "rnn_tanh": (gluon.rnn.RNN, gluon.rnn.RNNCell, {"activation": "tanh"})}


def stacked_cells(mode, num_layers, bidirectional, hidden):
    _, make_cell, kwargs = LAYERS[mode]
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="layer_")
    with stack.name_scope():
        for i in range(num_layers):
            if bidirectional:
                stack.add(gluon.rnn.BidirectionalCell(make_cell(hidden, prefix=f"l{i}_", **kwargs),
                                                      make_cell(hidden, prefix=f"r{i}_", **kwargs)))
            else:
                stack.add(make_cell(hidden, prefix=f"l{i}_", **kwargs))
    return stack


@pytest.mark.parametrize("mode,num_layers,bidirectional",
                         [("lstm", 2, True), ("gru", 2, False), ("rnn_relu", 1, True),
                          ("rnn_tanh", 3, False)])
def test_layer_equals_unrolled_cells_with_gradients(mode, num_layers, bidirectional):
    make_layer, _, kwargs = LAYERS[mode]
    layer = make_layer(4, num_layers=num_layers, bidirectional=bidirectional, layout="NTC",
                       prefix="layer_", **kwargs)
    stack = stacked_cells(mode, num_layers, bidirectional, 4)
    layer.initialize()
    stack.initialize()
    x = mx.nd.array(RNG.uniform(-1, 1, (2, 5, 3)))
    states = [mx.nd.array(RNG.uniform(-1, 1, s.shape)) for s in layer.begin_state(2)]
    layer.infer_shape(x, states)
    stack_params = stack.collect_params()
    for name, p in layer.collect_params().items():
        w = mx.nd.array(RNG.uniform(-0.5, 0.5, p.shape))
        p.set_data(w)
        stack_params[name].set_data(w)
    # the cells' states: per layer (and direction) h (and c), from the layer's stacked ones
    cell_states = [s[i] for i in range(states[0].shape[0]) for s in states]
    results = []
    for block, run in ((layer, lambda xx: layer(xx, states)),
                       (stack, lambda xx: stack.unroll(5, xx, cell_states, merge_outputs=True))):
        xx = x.copy()
        xx.attach_grad()
        with autograd.record():
            out, new_states = run(xx)
            loss = (out * out).sum()
        loss.backward()
        grads = {k: p.grad().asnumpy() for k, p in block.collect_params().items()}
        results.append((out.asnumpy(), [s.asnumpy() for s in new_states], xx.grad.asnumpy(),
                        grads))
    (l_out, l_states, l_dx, l_grads), (s_out, s_states, s_dx, s_grads) = results
    np.testing.assert_allclose(l_out, s_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(l_dx, s_dx, rtol=1e-4, atol=1e-5)
    for k in l_grads:
        np.testing.assert_allclose(l_grads[k], s_grads[k], rtol=1e-4, atol=1e-5, err_msg=k)
    per_state = len(l_states)
    for j, fused in enumerate(l_states):
        np.testing.assert_allclose(fused, np.stack(s_states[j::per_state]), rtol=1e-4,
                                   atol=1e-5)


def assert_hybridized_equals_imperative(block, run, x):
    """``run(block, x)`` -> arrays, recorded with ``x``'s gradient: equal before and after
    ``block.hybridize()``."""
    results = []
    for hybrid in (False, True):
        block.hybridize(hybrid)
        xx = x.copy()
        xx.attach_grad()
        with autograd.record():
            arrays = run(block, xx)
        arrays[0].backward()
        results.append([a.asnumpy() for a in arrays] + [xx.grad.asnumpy()])
    for imperative, hybridized in zip(*results):
        np.testing.assert_allclose(imperative, hybridized, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [lambda: gluon.rnn.LSTM(4, 2, bidirectional=True),
                                  lambda: gluon.rnn.GRU(4, layout="NTC"),
                                  lambda: gluon.rnn.LSTM(4, 2, projection_size=3,
                                                         state_clip_min=-0.5,
                                                         state_clip_max=0.5)])
def test_layer_hybridized_equals_imperative(make):
    layer = make()
    layer.initialize()
    assert_hybridized_equals_imperative(
        layer, lambda b, xx: [b(xx), b.l0_i2h_weight.grad()],
        mx.nd.array(RNG.uniform(-1, 1, (5, 3, 6))))


def test_cell_unroll_hybridized_equals_imperative():
    stack = gluon.rnn.HybridSequentialRNNCell()
    stack.add(gluon.rnn.LSTMCell(5, input_size=3))
    stack.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(5, input_size=5)))
    stack.initialize()

    def run(b, xx):
        out, states = b.unroll(4, xx, merge_outputs=True)
        return [out, states[-1]]
    assert_hybridized_equals_imperative(stack, run, mx.nd.array(RNG.uniform(-1, 1, (2, 4, 3))))


def test_layer_states_returned_only_when_given():
    layer = gluon.rnn.LSTM(4, num_layers=2)
    layer.initialize()
    x = mx.nd.ones((3, 2, 5))
    assert isinstance(layer(x), mx.nd.NDArray)
    out, states = layer(x, layer.begin_state(2))
    assert out.shape == (3, 2, 4) and [s.shape for s in states] == [(2, 2, 4)] * 2
    assert layer.l0_i2h_weight.shape == (16, 5)
    with pytest.raises(mx.base.MXNetError, match=r"expected \(2, 2, 4\)"):
        layer(x, [mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 3, 4))])


def test_layer_parameter_names_and_saved_keys(tmp_path):
    layer = gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, projection_size=2,
                           prefix="lstm0_")
    names = list(layer.collect_params().keys())
    assert names[:5] == ["lstm0_l0_i2h_weight", "lstm0_l0_h2h_weight", "lstm0_l0_i2h_bias",
                         "lstm0_l0_h2h_bias", "lstm0_l0_h2r_weight"]
    assert layer.r1_i2h_weight.shape == (12, 4) and layer.l0_h2h_weight.shape == (12, 2)
    gru = gluon.rnn.GRU(3, input_size=2)
    assert sorted(gru._collect_params_with_prefix()) == [
        "_unfused.0.h2h_bias", "_unfused.0.h2h_weight", "_unfused.0.i2h_bias",
        "_unfused.0.i2h_weight"]
    gru.initialize()
    path = str(tmp_path / "gru.params")
    gru.save_parameters(path)
    again = gluon.rnn.GRU(3, input_size=2)
    again.load_parameters(path)
    np.testing.assert_array_equal(again.l0_h2h_weight.data().asnumpy(),
                                  gru.l0_h2h_weight.data().asnumpy())


def test_layer_errors_name_the_argument():
    with pytest.raises(mx.base.MXNetError, match="layout must be 'TNC' or 'NTC', got 'CTN'"):
        gluon.rnn.GRU(3, layout="CTN")
    with pytest.raises(mx.base.MXNetError, match="set together"):
        gluon.rnn.LSTM(3, state_clip_min=-1)
    with pytest.raises(mx.base.MXNetError, match="state_clip_nan"):
        gluon.rnn.LSTM(3, state_clip_min=-1, state_clip_max=1, state_clip_nan=True)


def test_lstm_state_clip_bounds_the_cell_state():
    # as cuDNN does; MXNet 1.9.1's CPU build ignores the clip
    layer = gluon.rnn.LSTM(3, input_size=4, state_clip_min=-0.2, state_clip_max=0.2)
    layer.initialize()
    randomize(layer, 2.0)
    x = RNG.uniform(-1, 1, (4, 2, 4)).astype("float32")
    out, (h, c) = layer(mx.nd.array(x), layer.begin_state(2))
    w = [getattr(layer, f"l0_{n}").data().asnumpy()
         for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]
    states = [np.zeros((2, 3)), np.zeros((2, 3))]
    for t in range(4):
        pre = x[t] @ w[0].T + w[2] + states[0] @ w[1].T + w[3]
        i, f, g, o = np.split(pre, 4, axis=1)
        cell = np.clip(sigmoid(f) * states[1] + sigmoid(i) * np.tanh(g), -0.2, 0.2)
        states = [sigmoid(o) * np.tanh(cell), cell]
    np.testing.assert_allclose(c.asnumpy()[0], states[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[-1], states[0], rtol=1e-5, atol=1e-6)
    assert np.abs(c.asnumpy()).max() == pytest.approx(0.2)


@pytest.mark.parametrize("name,make", [
    ("lstm_bi2", lambda: gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=4)),
    ("gru_ntc", lambda: gluon.rnn.GRU(3, layout="NTC", input_size=4)),
    ("rnn_tanh2", lambda: gluon.rnn.RNN(3, num_layers=2, activation="tanh", input_size=4)),
    ("lstmp_bi2", lambda: gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=4,
                                         projection_size=2)),
])
def test_mxnet_saved_layer_loads_and_gives_mxnet_numbers(name, make):
    layer = make()
    layer.load_parameters(os.path.join(FIXTURES, f"{name}.params"))
    ref = np.load(os.path.join(FIXTURES, f"{name}-expected.npz"))
    states = [mx.nd.array(ref[f"s{i}"]) for i in range(len(layer.state_info()))]
    out, new_states = layer(mx.nd.array(ref["x"]), states)
    np.testing.assert_allclose(out.asnumpy(), ref["y"], rtol=1e-5, atol=1e-6)
    for i, s in enumerate(new_states):
        np.testing.assert_allclose(s.asnumpy(), ref[f"out_s{i}"], rtol=1e-5, atol=1e-6)


def test_mxnet_exported_lstm_imports_and_gives_mxnet_numbers():
    net = gluon.SymbolBlock.imports(os.path.join(FIXTURES, "lstm_export-symbol.json"), ["data"],
                                    os.path.join(FIXTURES, "lstm_export-0000.params"))
    ref = np.load(os.path.join(FIXTURES, "lstm_export-expected.npz"))
    np.testing.assert_allclose(net(mx.nd.array(ref["x"])).asnumpy(), ref["y"], rtol=1e-5,
                               atol=1e-6)


def test_bidirectional_layer_in_hybridized_net_infers_and_exports(tmp_path):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.rnn.GRU(4, num_layers=2, bidirectional=True, layout="NTC"))
        net.add(gluon.nn.Dense(2, flatten=False))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(RNG.uniform(-1, 1, (3, 5, 6)))
    y = net(x)
    assert net[0].r0_i2h_weight.shape == (12, 6) and y.shape == (3, 5, 2)
    net.export(str(tmp_path / "net"))
    again = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                      str(tmp_path / "net-0000.params"))
    np.testing.assert_allclose(again(x).asnumpy(), y.asnumpy(), rtol=1e-6)
