"""mx.rnn: symbolic RNN cells. The unrolled step cells and the fused RNN op are two
independent implementations of the same networks, so most checks run both on the same
weights (moved with unpack_weights/pack_weights) and compare outputs, final states and
gradients. Also: begin states, weight packing, checkpoints on disk, modifiers, errors, and
MXNet 1.9.1's own files when its reference interpreter is present."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, ParamError

MXNET_PYTHON = os.environ.get("MXNEXT_MXNET_PYTHON", "/opt/mxnet-ref/bin/python")
MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]
ntc_warning = pytest.mark.filterwarnings("ignore:FusedRNNCell. NTC layout")


def _run(exe, is_train):
    return [o.asnumpy() for o in exe.forward(is_train=is_train)]


def _fill(exe, rng, skip=()):
    for name, arr in exe.arg_dict.items():
        if name not in skip:
            arr[:] = rng.uniform(-0.5, 0.5, arr.shape).astype(np.float32)


def _params(exe):
    return {k: v for k, v in exe.arg_dict.items() if k != "data"}


def _fused_and_stack(fused, stack, steps, shape, layout, grad_req="write"):
    """Both networks bound on the same data and weights (the fused one's, random)."""
    data = mx.sym.var("data")
    y1, states1 = fused.unroll(steps, data, layout=layout, merge_outputs=True)
    y2, states2 = stack.unroll(steps, data, layout=layout, merge_outputs=True)
    e1 = mx.sym.Group([y1, *states1]).simple_bind(mx.cpu(), grad_req=grad_req, data=shape)
    e2 = mx.sym.Group([y2, *_flat(states2)]).simple_bind(mx.cpu(), grad_req=grad_req,
                                                         data=shape)
    _fill(e1, np.random.default_rng(7))
    for name, value in stack.pack_weights(fused.unpack_weights(_params(e1))).items():
        e2.arg_dict[name][:] = value
    e2.arg_dict["data"][:] = e1.arg_dict["data"]
    return e1, e2


def _backward(exe, dy):
    """Backward from ``dy`` on the first output, zeros on the states."""
    exe.backward([dy] + [mx.nd.zeros(o.shape) for o in exe.outputs[1:]])


def _flat(states):
    """A bidirectional stack's states are nested: [[l states], [r states]]."""
    out = []
    for s in states:
        out.extend(_flat(s) if isinstance(s, list) else [s])
    return out


@ntc_warning
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_fused_and_unfused_agree_forward_and_backward(mode, bidirectional, layout):
    steps, batch, width, hidden, layers = 4, 3, 5, 6, 2
    fused = mx.rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode,
                                bidirectional=bidirectional, prefix=f"{mode}_")
    stack = fused.unfuse()
    shape = (batch, steps, width) if layout == "NTC" else (steps, batch, width)
    e1, e2 = _fused_and_stack(fused, stack, steps, shape, layout)
    for is_train in (False, True):
        y1, y2 = _run(e1, is_train)[0], _run(e2, is_train)[0]
        assert y1.shape == shape[:2] + (hidden * (2 if bidirectional else 1),)
        np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-6)
    dy = mx.nd.array(np.random.default_rng(1).uniform(-1, 1, y1.shape))
    _backward(e1, dy)
    _backward(e2, dy)
    np.testing.assert_allclose(e1.grad_dict["data"].asnumpy(), e2.grad_dict["data"].asnumpy(),
                               rtol=1e-4, atol=1e-5)
    g1 = fused.unpack_weights({f"{mode}_parameters": e1.grad_dict[f"{mode}_parameters"]})
    g2 = stack.unpack_weights({k: e2.grad_dict[k] for k in _params(e2)})
    assert sorted(g1) == sorted(g2)
    for name in g1:
        np.testing.assert_allclose(g1[name].asnumpy(), g2[name].asnumpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


@pytest.mark.parametrize("grad_req", ["add", "null"])
def test_fused_and_stack_agree_under_grad_req(grad_req):
    # MXNet's own check: a hand-built stack (prefix '' on the fused cell) and add/null
    fused = mx.rnn.FusedRNNCell(5, num_layers=2, mode="gru", get_next_state=True, prefix="")
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.GRUCell(5, prefix="l0_"))
    stack.add(mx.rnn.GRUCell(5, prefix="l1_"))
    e1, e2 = _fused_and_stack(fused, stack, 3, (3, 2, 4), "TNC", grad_req=grad_req)
    dy = mx.nd.ones((3, 2, 5))
    for _ in range(2):          # each backward after its forward: 'add' sums the two
        for exe in (e1, e2):
            _run(exe, True)
            _backward(exe, dy)
    np.testing.assert_allclose(e1.outputs[0].asnumpy(), e2.outputs[0].asnumpy(), rtol=1e-5,
                               atol=1e-6)
    if grad_req == "null":
        assert e1.grad_dict.get("data") is None and e2.grad_dict.get("data") is None
        return
    twice = e1.grad_dict["data"].asnumpy()
    np.testing.assert_allclose(twice, e2.grad_dict["data"].asnumpy(), rtol=1e-4, atol=1e-5)
    _run(e1, True)
    _backward(e1, dy)
    np.testing.assert_allclose(e1.grad_dict["data"].asnumpy(), twice * 1.5, rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_fused_next_state_is_the_stacks_final_state(mode):
    hidden, layers = 4, 3
    fused = mx.rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode, get_next_state=True)
    stack = fused.unfuse()
    e1, e2 = _fused_and_stack(fused, stack, 3, (3, 2, 5), "TNC")
    out1, out2 = _run(e1, False), _run(e2, False)
    per_layer = 2 if mode == "lstm" else 1
    assert [o.shape for o in out1[1:]] == [(layers, 2, hidden)] * per_layer
    for layer in range(layers):
        for k in range(per_layer):      # LSTM: h then c
            np.testing.assert_allclose(out1[1 + k][layer], out2[1 + layer * per_layer + k],
                                       rtol=1e-5, atol=1e-6)
    states = fused.unroll(3, mx.sym.var("data"), layout="TNC")[1]
    assert all(s.list_attr()["__layout__"] == "LNC" for s in states)


def test_fused_without_next_state_returns_no_states_and_splits_outputs():
    fused = mx.rnn.FusedRNNCell(4, num_layers=2, mode="rnn_tanh")
    outputs, states = fused.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=False)
    assert states == [] and len(outputs) == 3
    shapes = mx.sym.Group(outputs).infer_shape(data=(3, 2, 5))[1]
    assert shapes == [(2, 4)] * 3
    with pytest.warns(UserWarning, match="NTC layout"):
        merged, _ = fused.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    assert merged.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 4)]


@pytest.mark.parametrize("mode", ["rnn_relu", "rnn_tanh"])
def test_one_layer_vanilla_fused_rnn_binds(mode):
    """Its RNN op keeps nothing for backward, yet the hidden reserve has 1 element (0 would
    read as an unknown shape)."""
    y, _ = mx.rnn.FusedRNNCell(4, mode=mode).unroll(3, mx.sym.var("data"), layout="TNC")
    assert y.infer_shape(data=(3, 2, 5))[1] == [(3, 2, 4)]
    ex = y.simple_bind(mx.cpu(), data=(3, 2, 5))
    assert ex.forward(is_train=True)[0].shape == (3, 2, 4)
    ex.backward(mx.nd.ones((3, 2, 4)))


def test_fused_dropout_goes_to_the_op_and_between_unfused_layers():
    fused = mx.rnn.FusedRNNCell(4, num_layers=3, mode="lstm", dropout=0.25, prefix="d_")
    y, _ = fused.unroll(2, mx.sym.var("data"), layout="TNC")
    assert y.get_internals()["d_rnn_output"].list_attr()["p"] == "0.25"
    cells = fused.unfuse()._cells
    assert [type(c).__name__ for c in cells] == ["LSTMCell", "DropoutCell", "LSTMCell",
                                                 "DropoutCell", "LSTMCell"]
    assert [c.dropout for c in cells[1::2]] == [0.25, 0.25]


def test_step_cells_on_a_list_agree_with_a_merged_sequence():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    steps = [mx.sym.var(f"x{i}") for i in range(3)]
    outputs, states = cell.unroll(3, steps)
    assert [o.name for o in outputs] == ["l_t0_out", "l_t1_out", "l_t2_out"]
    assert [s.name for s in states] == ["l_t2_out", "l_t2_state"]
    merged, _ = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3, 2, 4)).astype(np.float32)
    weights = {"l_i2h_weight": (12, 4), "l_i2h_bias": (12,), "l_h2h_weight": (12, 3),
               "l_h2h_bias": (12,)}
    weights = {k: mx.nd.array(rng.uniform(-1, 1, s)) for k, s in weights.items()}
    listed = mx.sym.Group(outputs).eval(**weights, **{f"x{i}": mx.nd.array(x[i])
                                                      for i in range(3)})
    whole = merged.eval(data=mx.nd.array(x), **weights)[0].asnumpy()
    assert whole.shape == (3, 2, 3)
    for i in range(3):
        np.testing.assert_allclose(whole[i], listed[i].asnumpy(), rtol=1e-6)


def test_begin_state_shapes_names_and_funcs():
    lstm = mx.rnn.LSTMCell(7, prefix="a_")
    assert lstm.state_info == [{"shape": (0, 7), "__layout__": "NC"}] * 2
    assert lstm.state_shape == [(0, 7), (0, 7)]
    first = lstm.begin_state()
    assert [s.name for s in first] == ["a_begin_state_0", "a_begin_state_1"]
    assert [s.name for s in lstm.begin_state()] == ["a_begin_state_2", "a_begin_state_3"]
    assert first[0].list_attr()["__layout__"] == "NC"
    fed = lstm.begin_state(func=mx.sym.Variable)
    assert fed[0].list_arguments() == ["a_begin_state_4"]
    assert fed[0].list_attr() == {"__shape__": "(0, 7)", "__layout__": "NC"}
    fused = mx.rnn.FusedRNNCell(6, num_layers=2, mode="lstm", bidirectional=True)
    assert fused.state_shape == [(4, 0, 6), (4, 0, 6)]
    assert [s["__layout__"] for s in fused.state_info] == ["LNC", "LNC"]
    assert mx.rnn.FusedRNNCell(6, mode="gru").state_shape == [(1, 0, 6)]
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.GRUCell(2, prefix="g_"))
    stack.add(mx.rnn.LSTMCell(3, prefix="l_"))
    assert stack.state_shape == [(0, 2), (0, 3), (0, 3)]
    states = stack.begin_state(func=mx.sym.zeros, dtype="float64")
    assert [s.infer_type()[1][0] for s in states] == [np.float64] * 3
    assert mx.rnn.DropoutCell(0.5).state_info == []


def test_unroll_fills_the_batch_of_zero_begin_states():
    # the states' batch axis is 0 (unknown) and comes from the data by shape inference;
    # GRU's split of h2h runs on that partial shape
    for cell in (mx.rnn.GRUCell(4), mx.rnn.LSTMCell(4), mx.rnn.RNNCell(4)):
        outputs, states = cell.unroll(2, mx.sym.var("data"), layout="NTC", merge_outputs=True)
        group = mx.sym.Group([outputs, *states])
        assert group.infer_shape(data=(5, 2, 3))[1] == [(5, 2, 4)] + [(5, 4)] * len(states)


def test_pack_and_unpack_round_trip_for_step_cells():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    rng = np.random.default_rng(0)
    args = {"l_i2h_weight": mx.nd.array(rng.random((12, 5))), "l_i2h_bias":
            mx.nd.array(rng.random(12)), "l_h2h_weight": mx.nd.array(rng.random((12, 3))),
            "l_h2h_bias": mx.nd.array(rng.random(12)), "other": mx.nd.ones((2,))}
    unpacked = cell.unpack_weights(args)
    assert sorted(unpacked) == sorted(
        ["other"] + [f"l_{g}{gate}_{k}" for g in ("i2h", "h2h") for gate in ("_i", "_f", "_c",
                                                                             "_o")
                     for k in ("weight", "bias")])
    np.testing.assert_array_equal(unpacked["l_i2h_f_weight"].asnumpy(),
                                  args["l_i2h_weight"].asnumpy()[3:6])
    assert "l_i2h_weight" in args           # the caller's dict is left alone
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(args)
    for k in args:
        np.testing.assert_array_equal(packed[k].asnumpy(), args[k].asnumpy())
    plain = mx.rnn.RNNCell(3, prefix="r_")
    same = {"r_i2h_weight": mx.nd.ones((3, 2)), "r_i2h_bias": mx.nd.ones((3,)),
            "r_h2h_weight": mx.nd.ones((3, 3)), "r_h2h_bias": mx.nd.ones((3,))}
    assert sorted(plain.unpack_weights(same)) == sorted(same)
    assert mx.rnn.DropoutCell(0.1).unpack_weights({"x": 1}) == {"x": 1}


@pytest.mark.parametrize("mode, bidirectional", [("lstm", True), ("gru", False),
                                                 ("rnn_relu", True)])
def test_pack_and_unpack_round_trip_for_fused_cells(mode, bidirectional):
    hidden, layers, width = 3, 2, 5
    fused = mx.rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode,
                                bidirectional=bidirectional, prefix="f_")
    y, _ = fused.unroll(2, mx.sym.var("data"), layout="TNC")
    size = y.infer_shape(data=(2, 1, width))[0][y.list_arguments().index("f_parameters")][0]
    vector = mx.nd.array(np.arange(size, dtype=np.float32))
    unpacked = fused.unpack_weights({"f_parameters": vector})
    dirs = "lr" if bidirectional else "l"
    gates = len({"lstm": "ifco", "gru": "rzo"}.get(mode, "x"))
    assert len(unpacked) == layers * len(dirs) * 2 * 2 * gates
    first = next(iter(unpacked))
    assert first == f"f_l0_i2h{fused._gate_names[0]}_weight"
    assert unpacked[first].shape == (hidden, width)
    assert unpacked[f"f_{dirs[-1]}1_i2h{fused._gate_names[-1]}_weight"].shape == \
        (hidden, len(dirs) * hidden)
    # the layout is MXNet's: all weights, layer by layer and direction by direction, then
    # all biases; the first weight is the vector's first elements
    np.testing.assert_array_equal(unpacked[first].asnumpy().ravel(), np.arange(hidden * width))
    np.testing.assert_array_equal(
        fused.pack_weights(unpacked)["f_parameters"].asnumpy(), vector.asnumpy())
    with pytest.raises(MXNetError, match="fits no input width"):
        fused.unpack_weights({"f_parameters": mx.nd.zeros((size + 1,))})
    del unpacked[f"f_l0_h2h{fused._gate_names[0]}_bias"]
    with pytest.raises(MXNetError, match="no array named 'f_l0_h2h.*_bias'"):
        fused.pack_weights(unpacked)


def _checkpoint_net():
    fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode="lstm", bidirectional=True, prefix="c_")
    y, _ = fused.unroll(2, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    net = mx.sym.FullyConnected(y, num_hidden=2, flatten=False, name="fc")
    exe = net.simple_bind(mx.cpu(), data=(2, 1, 4))
    _fill(exe, np.random.default_rng(5), skip=("data",))
    args = {k: v.copy() for k, v in exe.arg_dict.items() if k != "data"}
    return fused, net, args


def test_rnn_checkpoint_round_trip_on_disk(tmp_path):
    fused, net, args = _checkpoint_net()
    prefix = str(tmp_path / "lm")
    mx.rnn.save_rnn_checkpoint(fused, prefix, 3, net, args, {})
    on_disk = mx.nd.load(f"{prefix}-0003.params")
    assert "arg:c_parameters" not in on_disk
    assert {"arg:c_l0_i2h_i_weight", "arg:c_r1_h2h_o_bias", "arg:fc_weight"} <= set(on_disk)
    sym, loaded, aux = mx.rnn.load_rnn_checkpoint([fused], prefix, 3)
    assert sym.tojson() == net.tojson() and aux == {}
    assert sorted(loaded) == sorted(args)
    for k in args:
        np.testing.assert_array_equal(loaded[k].asnumpy(), args[k].asnumpy())
    # the same file loads into the unfused network, whose cells pack it their way
    stack = fused.unfuse()
    _, stack_args, _ = mx.rnn.load_rnn_checkpoint(stack, prefix, 3)
    assert {"c_l0_i2h_weight", "c_r1_h2h_bias", "fc_bias"} <= set(stack_args)
    assert stack_args["c_l1_i2h_weight"].shape == (12, 6)


def test_do_rnn_checkpoint_saves_every_period(tmp_path):
    fused, net, args = _checkpoint_net()
    prefix = str(tmp_path / "cb")
    callback = mx.rnn.do_rnn_checkpoint(fused, prefix, period=2)
    for epoch in range(5):
        callback(epoch, net, args, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["cb-0002.params", "cb-0004.params", "cb-symbol.json"]
    _, loaded, _ = mx.rnn.load_rnn_checkpoint(fused, prefix, 4)
    np.testing.assert_array_equal(loaded["c_parameters"].asnumpy(),
                                  args["c_parameters"].asnumpy())


def test_weights_are_shared_through_params():
    params = mx.rnn.RNNParams("shared_")
    a = mx.rnn.RNNCell(3, prefix="a_", params=params)
    b = mx.rnn.RNNCell(3, prefix="b_", params=params)
    assert params.get("i2h_weight") is a._iW is b._iW
    x = mx.sym.var("x")
    out = b(a(x, a.begin_state())[0], b.begin_state())[0]
    assert [n for n in out.list_arguments() if "weight" in n] == ["shared_i2h_weight",
                                                                  "shared_h2h_weight"]


def test_stack_and_bidirectional_collect_their_cells_params():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2, prefix="l_"),
                                       mx.rnn.GRUCell(2, prefix="r_"), output_prefix="bi_"))
    stack.add(mx.rnn.LSTMCell(2, prefix="top_"))
    assert sorted(stack.params._params) == sorted(
        f"{p}_{g}_{k}" for p in ("l", "r", "top") for g in ("i2h", "h2h")
        for k in ("weight", "bias"))
    outputs, states = stack.unroll(3, [mx.sym.var(f"x{i}") for i in range(3)])
    assert [o.name for o in outputs] == ["top_t0_out", "top_t1_out", "top_t2_out"]
    assert len(states) == 4 and isinstance(states[0], list)     # [l], [r], h, c
    shared = mx.rnn.RNNCell(2, prefix="s_")
    shared.params        # handed out: no longer the cell's own
    with pytest.raises(MXNetError, match="not both"):
        mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams("p_")).add(shared)
    owner = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams("p_"))
    owner.add(mx.rnn.RNNCell(2, prefix="fresh_"))
    assert "fresh_i2h_weight" in owner.params._params


def test_bidirectional_merged_output_reverses_the_backward_half():
    l_cell, r_cell = mx.rnn.RNNCell(2, prefix="l_"), mx.rnn.RNNCell(2, prefix="r_")
    bi = mx.rnn.BidirectionalCell(l_cell, r_cell)
    merged, _ = bi.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    listed, _ = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="l_"),
                                         mx.rnn.RNNCell(2, prefix="r_")).unroll(
        3, mx.sym.var("data"), layout="NTC", merge_outputs=False)
    assert merged.name == "bi_out" and [o.name for o in listed] == ["bi_t0", "bi_t1", "bi_t2"]
    rng = np.random.default_rng(2)
    feed = {"data": mx.nd.array(rng.uniform(-1, 1, (2, 3, 3)))}
    for p in "lr":
        feed.update({f"{p}_i2h_weight": mx.nd.array(rng.uniform(-1, 1, (2, 3))),
                     f"{p}_h2h_weight": mx.nd.array(rng.uniform(-1, 1, (2, 2))),
                     f"{p}_i2h_bias": mx.nd.zeros((2,)), f"{p}_h2h_bias": mx.nd.zeros((2,))})
    whole = merged.eval(**feed)[0].asnumpy()
    steps = [o.asnumpy() for o in mx.sym.Group(listed).eval(**feed)]
    assert whole.shape == (2, 3, 4)
    for t in range(3):
        np.testing.assert_allclose(whole[:, t], steps[t], rtol=1e-6)
    # the backward half at the last step has seen one input only: the last one
    x_last = feed["data"].asnumpy()[:, 2]
    r_first = np.tanh(x_last @ feed["r_i2h_weight"].asnumpy().T)
    np.testing.assert_allclose(steps[2][:, 2:], r_first, rtol=1e-5)


def test_residual_zoneout_and_dropout_cells():
    rng = np.random.default_rng(4)
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3, 4)))
    weights = {"g_i2h_weight": (12, 4), "g_h2h_weight": (12, 4), "g_i2h_bias": (12,),
               "g_h2h_bias": (12,)}
    weights = {k: mx.nd.array(rng.uniform(-1, 1, s)) for k, s in weights.items()}

    def run(cell, merge):
        y, _ = cell.unroll(3, mx.sym.var("data"), merge_outputs=merge)
        y = y if merge else mx.sym.Group(y)
        return [o.asnumpy() for o in y.eval(data=x, **weights)]

    plain = run(mx.rnn.GRUCell(4, prefix="g_"), True)[0]
    residual = mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix="g_"))
    np.testing.assert_allclose(run(residual, True)[0], plain + x.asnumpy(), rtol=1e-6)
    steps = run(mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix="g_")), False)
    np.testing.assert_allclose(np.stack(steps, 1), plain + x.asnumpy(), rtol=1e-6)
    # at inference Dropout keeps everything, so zoneout always takes the new values
    zoneout = mx.rnn.ZoneoutCell(mx.rnn.GRUCell(4, prefix="g_"), 0.5, 0.5)
    np.testing.assert_allclose(run(zoneout, True)[0], plain, rtol=1e-6)
    assert zoneout.params is zoneout.base_cell.params
    dropout = mx.rnn.DropoutCell(0.0)
    y, states = dropout.unroll(3, mx.sym.var("data"), merge_outputs=True)
    assert states == [] and y.name == "data"
    y, _ = mx.rnn.DropoutCell(0.3).unroll(3, mx.sym.var("data"), merge_outputs=True)
    assert y.list_attr()["p"] == "0.3"


def test_zoneout_in_training_mixes_new_and_previous_values():
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(50, prefix="z_"), zoneout_outputs=0.5)
    outputs, _ = cell.unroll(2, [mx.sym.var("x0"), mx.sym.var("x1")])
    exe = mx.sym.Group(outputs).simple_bind(mx.cpu(), x0=(20, 50), x1=(20, 50))
    _fill(exe, np.random.default_rng(6))
    first, second = _run(exe, True)
    new_first = _run(exe, False)[0]
    kept = first == new_first
    assert 0.3 < kept.mean() < 0.7                      # new value kept with p = 0.5
    np.testing.assert_array_equal(first[~kept], 0)      # else the previous output: zeros
    assert np.isin(second, [0]).sum() < second.size     # defined at every step


def test_modified_base_cell_is_used_through_its_modifier_only():
    base = mx.rnn.LSTMCell(2, prefix="b_")
    cell = mx.rnn.ResidualCell(base)
    with pytest.raises(MXNetError, match="wrapped by a modifier"):
        base.begin_state()
    assert [s.name for s in cell.begin_state()] == ["b_begin_state_0", "b_begin_state_1"]
    assert cell.begin_state(init_sym=mx.sym.Variable)[0].list_arguments() == ["b_begin_state_2"]
    with pytest.raises(MXNetError, match="wrapped by a modifier"):
        base.begin_state()
    with pytest.raises(ParamError, match="FusedRNNCell cannot take zoneout"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(2))
    bi = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="x_"), mx.rnn.RNNCell(2, prefix="y_"))
    with pytest.raises(ParamError, match="bidirectional"):
        mx.rnn.ZoneoutCell(bi)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(bi)
    with pytest.raises(ParamError, match="bidirectional"):
        mx.rnn.ZoneoutCell(stack)
    with pytest.raises(ParamError, match="must be an RNN cell"):
        mx.rnn.ResidualCell(mx.sym.var("x"))


def test_errors_name_what_is_wrong():
    x = mx.sym.var("x")
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        mx.rnn.FusedRNNCell(2)(x, [])
    with pytest.raises(MXNetError, match="cannot be stepped"):
        mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix="a_"),
                                 mx.rnn.RNNCell(2, prefix="b_"))(x, [])
    with pytest.raises(MXNetError, match="inputs is None"):
        mx.rnn.RNNCell(2).unroll(3, None)
    with pytest.raises(ParamError, match="length is 3 but 2 step inputs"):
        mx.rnn.RNNCell(2).unroll(3, [x, x])
    with pytest.raises(ParamError, match="layout must name the time axis"):
        mx.rnn.RNNCell(2).unroll(3, x, layout="NC")
    with pytest.raises(ParamError, match="puts time on axis 2"):
        mx.rnn.FusedRNNCell(2).unroll(3, x, layout="NCT")
    with pytest.raises(MXNetError, match="grouped symbol with 2 outputs"):
        mx.rnn.RNNCell(2).unroll(2, mx.sym.Group([x, x]))
    with pytest.raises(ParamError, match="mode must be one of"):
        mx.rnn.FusedRNNCell(2, mode="LSTM")
    with pytest.raises(ParamError, match="dropout must be a number"):
        mx.rnn.DropoutCell("0.5")
    with pytest.raises(ParamError, match="h2h_kernel must be odd"):
        mx.rnn.ConvRNNCell((1, 3, 8, 8), 4, h2h_kernel=(2, 3))
    with pytest.raises(MXNetError, match="no array named 'r_i2h_weight'"):
        mx.rnn.RNNCell(2, prefix="r_").unpack_weights({})


def test_bucket_sentence_iter_pads_shifts_and_buckets():
    sentences = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 10], [1, 2, 3, 4, 5, 6]]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, invalid_label=0)
    assert it.buckets == [2, 3] and it.default_bucket_key == 3      # 6 is too long: dropped
    assert it.provide_data[0].shape == (2, 3) and it.provide_label[0].name == "softmax_label"
    batches = {b.bucket_key: b for b in it}
    assert sorted(batches) == [2, 3]
    data, label = batches[3].data[0].asnumpy(), batches[3].label[0].asnumpy()
    assert sorted(map(tuple, data)) == [(5, 6, 7), (8, 9, 10)]
    np.testing.assert_array_equal(label[:, :2], data[:, 1:])
    assert (label[:, 2] == 0).all()
    assert batches[3].provide_data[0].shape == (2, 3)
    it.reset()
    assert len(list(it)) == 2
    tn = mx.rnn.BucketSentenceIter([[1, 2, 3, 4]] * 3, batch_size=3, buckets=[5], layout="TN")
    batch = next(tn)
    assert batch.data[0].shape == (5, 3) and tn.provide_data[0].shape == (5, 3)
    assert batch.data[0].asnumpy()[:, 0].tolist() == [1, 2, 3, 4, -1]
    with pytest.raises(ValueError, match="layout must be 'NT'"):
        mx.rnn.BucketSentenceIter(sentences, 2, layout="NTC")
    with pytest.raises(MXNetError, match="no sentence fits the buckets"):
        mx.rnn.BucketSentenceIter([[1, 2, 3]], 2, buckets=[2])


def test_bucketing_module_trains_a_language_model_from_bucket_sentence_iter():
    """MXNet's example/rnn/bucketing recipe: a repeating sequence is learnt."""
    mx.random.seed(1)
    np.random.seed(1)
    rows = [[(s + t) % 5 + 1 for t in range(n)] for s in range(5) for n in (4, 6) * 4]
    it = mx.rnn.BucketSentenceIter(rows, batch_size=8, invalid_label=0)

    def sym_gen(length):
        embed = mx.sym.Embedding(mx.sym.var("data"), input_dim=6, output_dim=8, name="embed")
        outputs, _ = mx.rnn.LSTMCell(16, prefix="lstm_").unroll(length, embed,
                                                               merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.reshape(outputs, shape=(-1, 16)), num_hidden=6,
                                     name="pred")
        label = mx.sym.reshape(mx.sym.var("softmax_label"), shape=(-1,))
        return (mx.sym.SoftmaxOutput(pred, label, ignore_label=0, use_ignore=True,
                                     name="softmax"), ("data",), ("softmax_label",))

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
    mod.fit(it, num_epoch=15, optimizer="adam", optimizer_params={"learning_rate": 0.05},
            eval_metric=mx.metric.Perplexity(ignore_label=0))
    score = dict(mod.score(it, mx.metric.Perplexity(ignore_label=0)))
    assert score["perplexity"] < 1.5


def test_encode_sentences():
    encoded, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=1)
    assert vocab == {"\n": 1, "a": 0, "b": 2, "c": 3} and encoded == [[0, 2], [2, 3, 0]]
    given = {"a": 0, "b": 1}
    encoded, vocab = mx.rnn.io.encode_sentences([["a", "x", "y"]], vocab=given,
                                                unknown_token="<unk>")
    assert vocab is given and vocab["<unk>"] == 2 and encoded == [[0, 2, 2]]
    with pytest.raises(MXNetError, match="token 'z' is not in the vocabulary"):
        mx.rnn.encode_sentences([["z"]], vocab={"a": 0})


def test_initializer_attributes_are_mxnets():
    cell = mx.rnn.LSTMCell(4, forget_bias=2.0, prefix="l_")
    assert cell._iB.list_attr() == {"__init__": '["lstmbias", {"forget_bias": 2.0}]'}
    assert "__init__" not in cell._hB.list_attr()
    fused = mx.rnn.FusedRNNCell(5, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    assert fused._parameter.list_attr()["__init__"] == (
        '["fusedrnn", {"init": null, "num_hidden": 5, "num_layers": 2, "mode": "gru", '
        '"bidirectional": true, "forget_bias": 1.0}]')


def test_conv_lstm_with_1x1_kernels_is_an_lstm():
    conv = mx.rnn.ConvLSTMCell((2, 3, 1, 1), 4, h2h_kernel=(1, 1), i2h_kernel=(1, 1),
                               i2h_pad=(0, 0), activation="tanh", prefix="c_")
    assert conv.state_shape == [(0, 4, 1, 1)] * 2
    dense = mx.rnn.LSTMCell(4, prefix="d_")
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    w = {g: rng.uniform(-1, 1, s).astype(np.float32)
         for g, s in (("i2h_weight", (16, 3)), ("h2h_weight", (16, 4)), ("i2h_bias", (16,)),
                      ("h2h_bias", (16,)))}
    y_conv, _ = conv.unroll(2, mx.sym.var("data"), merge_outputs=True)
    y_dense, _ = dense.unroll(2, mx.sym.var("data"), merge_outputs=True)
    got = y_conv.eval(data=mx.nd.array(x.reshape(2, 2, 3, 1, 1)),
                      **{f"c_{k}": mx.nd.array(v.reshape(v.shape + (1, 1) if "weight" in k
                                                         else v.shape)) for k, v in w.items()})
    want = y_dense.eval(data=mx.nd.array(x), **{f"d_{k}": mx.nd.array(v) for k, v in w.items()})
    np.testing.assert_allclose(got[0].asnumpy().reshape(2, 2, 4), want[0].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_conv_cells_infer_their_state_shapes():
    for cls, n in ((mx.rnn.ConvRNNCell, 1), (mx.rnn.ConvLSTMCell, 2), (mx.rnn.ConvGRUCell, 1)):
        cell = cls((1, 3, 16, 10), 6, i2h_kernel=(3, 3), i2h_stride=(2, 2), i2h_pad=(1, 1))
        assert cell.state_shape == [(0, 6, 8, 5)] * n
        assert cell._prefix == cls.__name__[:-4] + "_"          # ConvLSTM_ ...
        outputs, _ = cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
        assert mx.sym.Group(outputs).infer_shape(a=(1, 3, 16, 10), b=(1, 3, 16, 10))[1] == \
            [(1, 6, 8, 5)] * 2


def test_rnn_unroll_is_deprecated_cell_unroll():
    cell = mx.rnn.RNNCell(2, prefix="r_")
    with pytest.warns(DeprecationWarning, match="rnn_unroll is deprecated"):
        outputs, _ = mx.rnn.rnn_unroll(cell, 2, input_prefix="in_")
    assert sorted(n for n in mx.sym.Group(outputs).list_arguments() if "data" in n) == \
        ["in_t0_data", "in_t1_data"]


def test_mx_rnn_loads_on_first_use():
    code = ("import sys, mxnext as mx; print('mxnext.rnn' in sys.modules); "
            "print(mx.rnn.LSTMCell.__module__); print('mxnext.rnn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["False", "mxnext.rnn.cells", "True"]


# ------------------------------------------------------------------ MXNet 1.9.1 itself
MXNET_CHECKPOINT = """
import sys, json, numpy as np, mxnet as mx
prefix = sys.argv[1]
cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='lstm', bidirectional=True, prefix='m_',
                           get_next_state=True)
out, states = cell.unroll(4, mx.sym.var('data'), layout='TNC', merge_outputs=True)
net = mx.sym.Group([out] + states)
size = net.infer_shape(data=(4, 2, 5))[0][net.list_arguments().index('m_parameters')][0]
vec = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, size))
mx.rnn.save_rnn_checkpoint(cell, prefix, 1, net, {'m_parameters': vec}, {})
np.save(prefix + '-vec.npy', vec.asnumpy())
"""


def test_mxnet_rnn_checkpoint_loads_and_our_unroll_matches_its_graph(tmp_path):
    if not os.path.exists(MXNET_PYTHON):
        pytest.skip(f"MXNet 1.9.1 reference interpreter {MXNET_PYTHON} is absent")
    prefix = str(tmp_path / "ref")
    proc = subprocess.run([MXNET_PYTHON, "-c", MXNET_CHECKPOINT, prefix], capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0 and "No module named 'mxnet'" in proc.stderr:
        pytest.skip(f"{MXNET_PYTHON} cannot import mxnet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode="lstm", bidirectional=True, prefix="m_",
                               get_next_state=True)
    sym, args, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 1)
    np.testing.assert_array_equal(args["m_parameters"].asnumpy(), np.load(f"{prefix}-vec.npy"))
    out, states = cell.unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    ours = json.loads(mx.sym.Group([out, *states]).tojson())
    assert ours["nodes"] == json.loads(sym.tojson())["nodes"]
