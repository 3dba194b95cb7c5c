"""The graph executor: MXNet 1.9.1's checkpoints reproduce its outputs and gradients; results
never depend on the memory plan or the engine; bind/simple_bind/reshape/grad_req/aux states
behave as MXNet's."""

from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, ShapeError

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"


def _mlp():
    h = mx.sym.var("data")
    h = mx.sym.FullyConnected(h, num_hidden=16, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=4, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def _resblock():
    x = mx.sym.var("data")
    y = mx.sym.Convolution(x, num_filter=4, kernel=(3, 3), pad=(1, 1), no_bias=True, name="c1")
    y = mx.sym.BatchNorm(y, fix_gamma=False, name="bn1")
    y = mx.sym.Activation(y, act_type="relu", name="r1")
    y = mx.sym.Convolution(y, num_filter=4, kernel=(3, 3), pad=(1, 1), name="c2")
    y = mx.sym.Activation(y + x, act_type="relu", name="out")
    y = mx.sym.Pooling(y, global_pool=True, pool_type="avg", kernel=(1, 1), name="gap")
    y = mx.sym.FullyConnected(mx.sym.Flatten(y), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(y, name="softmax")


def _fill(ex, seed=0):
    rng = np.random.RandomState(seed)
    for name, arr in sorted(ex.arg_dict.items()):
        if name == "softmax_label":
            arr[:] = rng.randint(0, ex.outputs[0].shape[-1], arr.shape).astype(np.float32)
        else:
            arr[:] = rng.uniform(-0.5, 0.5, arr.shape).astype(np.float32)
    for arr in ex.aux_dict.values():
        arr[:] = rng.uniform(0.5, 1.5, arr.shape).astype(np.float32)


def _train_step(sym, shapes, grad_req="write", seed=0):
    ex = sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
    _fill(ex, seed)
    ex.forward(is_train=True)
    ex.backward()
    return ([o.asnumpy() for o in ex.outputs],
            {n: g.asnumpy() for n, g in ex.grad_dict.items()},
            {n: a.asnumpy() for n, a in ex.aux_dict.items()})


@pytest.mark.parametrize("net", ["mlp", "lenet"])
def test_mxnet_checkpoints_reproduce_mxnets_outputs_and_gradients(net):
    sym, args, aux = mx.model.load_checkpoint(str(FIX / net), 0)
    expected = np.load(FIX / f"{net}-expected.npz")
    ex = sym.simple_bind(mx.cpu(), grad_req="write", data=expected["data"].shape,
                         softmax_label=expected["softmax_label"].shape)
    ex.copy_params_from(args, aux)
    out = ex.forward(is_train=True, data=expected["data"],
                     softmax_label=expected["softmax_label"])
    np.testing.assert_allclose(out[0].asnumpy(), expected["output"], rtol=1e-4, atol=1e-6)
    ex.backward()
    for key in expected.files:
        if key.startswith("grad:"):
            np.testing.assert_allclose(ex.grad_dict[key[5:]].asnumpy(), expected[key],
                                       rtol=1e-4, atol=1e-6, err_msg=key)


def test_checkpoints_round_trip(tmp_path):
    sym, args, aux = mx.model.load_checkpoint(str(FIX / "lenet"), 0)
    prefix = str(tmp_path / "again")
    mx.model.save_checkpoint(prefix, 3, sym, args, aux)
    sym2, args2, aux2 = mx.model.load_checkpoint(prefix, 3)
    assert sym2.tojson() == sym.tojson() and set(args2) == set(args) and aux2 == {}
    for k in args:
        assert (args2[k].asnumpy() == args[k].asnumpy()).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again-0003.params",
                                                          "again-symbol.json"]


@pytest.mark.parametrize("build, shapes", [
    (_mlp, {"data": (8, 20)}), (_resblock, {"data": (2, 4, 6, 6)})])
@pytest.mark.parametrize("env", [{"MXNET_EXEC_ENABLE_INPLACE": "false"},
                                 {"MXNEXT_EXEC_SHARE_MEMORY": "0"},
                                 {"MXNET_EXEC_ENABLE_INPLACE": "false",
                                  "MXNEXT_EXEC_SHARE_MEMORY": "0"}])
def test_results_never_depend_on_the_memory_plan(build, shapes, env, monkeypatch):
    planned = _train_step(build(), shapes)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    plain = _train_step(build(), shapes)
    for a, b in zip(planned, plain):
        a, b = (a, b) if isinstance(a, list) else ([a[k] for k in sorted(a)],
                                                   [b[k] for k in sorted(b)])
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def _infer_step(sym, shapes):
    ex = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    _fill(ex)
    return ex, ex.forward(is_train=False)[0].asnumpy()


def _wide_mlp():
    h = mx.sym.var("data")
    for k in range(3):
        h = mx.sym.FullyConnected(h, num_hidden=16, name=f"fc{k}")
        h = mx.sym.Activation(h, act_type="relu", name=f"relu{k}")
    return mx.sym.SoftmaxOutput(h, name="softmax")


@pytest.mark.parametrize("build, shapes, in_place", [
    (_resblock, {"data": (3, 4, 6, 6)}, {"c2", "bn1"}),
    (_wide_mlp, {"data": (5, 16)}, {"fc1", "fc2"})])
@pytest.mark.parametrize("env", [{"MXNET_EXEC_ENABLE_INPLACE": "false"},
                                 {"MXNEXT_EXEC_SHARE_MEMORY": "0"}])
def test_inference_results_never_depend_on_the_memory_plan(build, shapes, in_place, env,
                                                           monkeypatch):
    """Inference writes convolutions, fully connected layers and batch norms over their
    dying data (no backward reads it): the same values as without the plan."""
    ex, planned = _infer_step(build(), shapes)
    p = ex._program
    assert in_place <= {p.graph.nodes[nid].name for nid, _ in p.plan.inplace}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _, plain = _infer_step(build(), shapes)
    np.testing.assert_array_equal(planned, plain)


@pytest.mark.parametrize("engine", ["NaiveEngine", "ThreadedEngine"])
def test_results_never_depend_on_the_engine(engine):
    ref = _train_step(_resblock(), {"data": (2, 4, 6, 6)})
    with mx.engine.use_engine(engine):
        got = _train_step(_resblock(), {"data": (2, 4, 6, 6)})
    np.testing.assert_array_equal(ref[0][0], got[0][0])
    for k in ref[1]:
        np.testing.assert_array_equal(ref[1][k], got[1][k])


def test_planning_saves_memory_and_debug_str_shows_the_plan():
    ex = _resblock().simple_bind(mx.cpu(), data=(4, 4, 8, 8))
    text = ex.debug_str()
    planned = int(text.split("Planned ")[1].split()[0])
    naive = int(text.split("naive ")[1].split()[0])
    assert 0 < planned < 0.8 * naive
    assert "Op:_backward_Convolution, Name=c2_backward" in text
    assert "storage " in text and "in place over an input" in text
    assert "written straight into the gradient of c1_weight" in text
    infer = _resblock().simple_bind(mx.cpu(), data=(4, 4, 8, 8), grad_req="null").debug_str()
    assert int(infer.split("Planned ")[1].split()[0]) < planned


def test_grad_req_add_accumulates_and_null_has_no_gradient():
    sym = _mlp()
    _, once, _ = _train_step(sym, {"data": (8, 20)})
    ex = sym.simple_bind(mx.cpu(), grad_req={"fc1_weight": "add", "fc2_weight": "write"},
                         data=(8, 20))
    _fill(ex)
    for g in ex.grad_dict.values():
        if g is not None:
            g[:] = 0
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward()
    # float32 tolerance: without the bias's gradient ops-onednn runs another primitive
    np.testing.assert_allclose(ex.grad_dict["fc1_weight"].asnumpy(), 2 * once["fc1_weight"],
                               rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["fc2_weight"].asnumpy(), once["fc2_weight"], rtol=1e-5)
    assert {n for n, g in ex.grad_dict.items() if g is not None} == {"fc1_weight",
                                                                      "fc2_weight"}
    assert ex.grad_arrays[0] is None            # data: no gradient


def test_batchnorm_updates_moving_statistics_only_in_training():
    ex = _resblock().simple_bind(mx.cpu(), data=(2, 4, 6, 6))
    _fill(ex)
    before = {n: a.asnumpy().copy() for n, a in ex.aux_dict.items()}
    ex.forward(is_train=False)
    mx.nd.waitall()
    assert all((ex.aux_dict[n].asnumpy() == v).all() for n, v in before.items())
    ex.forward(is_train=True)
    ex.backward()
    assert all((ex.aux_dict[n].asnumpy() != v).any() for n, v in before.items())


def test_non_loss_outputs_need_head_gradients():
    x = mx.sym.var("x")
    y = mx.sym.FullyConnected(x, num_hidden=3, name="fc") * 2
    ex = y.simple_bind(mx.cpu(), x=(4, 5))
    _fill(ex)
    ex.forward(is_train=True)
    with pytest.raises(MXNetError, match="head gradient is required"):
        ex.backward()
    ex.backward(mx.nd.ones((4, 3)))
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), np.full(3, 8.0))


def test_bind_takes_lists_or_dicts_and_checks_them():
    sym = _mlp()
    shapes = dict(zip(sym.list_arguments(), sym.infer_shape(data=(8, 20))[0]))
    args = [mx.nd.random.uniform(-1, 1, shapes[n]) for n in sym.list_arguments()]
    grads = {n: mx.nd.zeros(shapes[n]) for n in ("fc1_weight", "fc2_bias")}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    assert ex.arg_arrays == args
    assert {n for n, g in ex.grad_dict.items() if g is not None} == {"fc1_weight", "fc2_bias"}
    ex.forward(is_train=True)
    ex.backward()
    assert np.abs(grads["fc1_weight"].asnumpy()).sum() > 0
    with pytest.raises(ValueError, match="key 'fc2_weight' is missing in args"):
        sym.bind(mx.cpu(), {n: a for n, a in zip(sym.list_arguments(), args)
                            if n != "fc2_weight"})
    bad = dict(zip(sym.list_arguments(), args), fc1_weight=mx.nd.ones((3, 3)))
    with pytest.raises(MXNetError, match="fc1_weight"):
        sym.bind(mx.cpu(), bad)


def test_eval_reshape_copy_params_and_dicts():
    sym = _mlp()
    ex = sym.simple_bind(mx.cpu(), data=(8, 20))
    _fill(ex)
    assert list(ex.output_dict) == ["softmax_output"]
    small = ex.reshape(data=(2, 20), softmax_label=(2,))
    assert small.arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]
    assert small.arg_dict["data"].shape == (2, 20)
    with pytest.raises(MXNetError, match="allow_up_sizing"):
        ex.reshape(data=(16, 20), softmax_label=(16,))
    params = {n: a for n, a in ex.arg_dict.items() if n not in ("data", "softmax_label")}
    out = sym.eval(mx.cpu(), data=ex.arg_dict["data"], softmax_label=ex.arg_dict["softmax_label"],
                   **params)
    np.testing.assert_allclose(out[0].asnumpy(), ex.forward()[0].asnumpy(), rtol=1e-6)
    other = sym.simple_bind(mx.cpu(), data=(8, 20))
    other.copy_params_from(params)
    with pytest.raises(MXNetError, match="nope"):
        other.copy_params_from({"nope": mx.nd.ones((1,))})
    other.copy_params_from({"nope": mx.nd.ones((1,))}, allow_extra_params=True)
    with pytest.raises(ShapeError, match=r"copy_params_from: argument 'fc1_weight' has shape "
                                         r"\(20, 16\), the executor's is \(16, 20\)"):
        other.copy_params_from({"fc1_weight": mx.nd.ones((20, 16))})


def test_monitor_sees_every_output():
    ex = _mlp().simple_bind(mx.cpu(), data=(8, 20))
    _fill(ex)
    seen = {}
    ex.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.shape))
    ex.forward()
    assert seen == {"fc1_output": (8, 16), "relu1_output": (8, 16), "fc2_output": (8, 4),
                    "softmax_output": (8, 4)}
    data = mx.sym.var("data")
    cc = mx.sym.concat(data, mx.sym.FullyConnected(data, num_hidden=5, name="fc"), dim=1,
                       name="cc")
    ex = cc.simple_bind(mx.cpu(), data=(2, 5))
    names = []
    ex.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=True)
    ex.forward()                       # MXNet's order: per node, inputs (variables by name too)
    assert names == ["data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias",
                     "fc_output", "data", "cc_arg0", "cc_arg1", "cc_output"]


def test_cached_op_runs_the_graph_and_records_one_node():
    data, w = mx.sym.var("data"), mx.sym.var("w")
    sym = mx.sym.relu(mx.sym.dot(data, w)) * 3
    for flags in ((), (("static_alloc", True), ("static_shape", True))):
        op = mx.nd.CachedOp(sym, flags)
        x = mx.nd.array(np.random.RandomState(1).rand(4, 5))
        ws = [mx.nd.array(np.random.RandomState(k).rand(5, 3) - 0.5) for k in (2, 3)]
        for v in ws:
            v.attach_grad()
        with mx.autograd.record():
            outs = [op(x, v) for v in ws]        # two calls before any backward
            total = outs[0].sum() + outs[1].sum()
        total.backward()
        for v in ws:
            ref = v.copy()
            ref.attach_grad()
            with mx.autograd.record():
                (mx.nd.relu(mx.nd.dot(x, ref)) * 3).sum().backward()
            np.testing.assert_allclose(v.grad.asnumpy(), ref.grad.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(op(x, ws[0]).asnumpy(), outs[0].asnumpy(), rtol=1e-6)


def test_cached_op_calls_return_new_arrays_and_see_each_call_s_inputs():
    """static_alloc reuses the planned memory, never the arrays a call returned; an input
    read through a view (Flatten, an identity reshape) is the new call's input."""
    data, w = mx.sym.var("data"), mx.sym.var("w")
    sym = mx.sym.FullyConnected(mx.sym.Flatten(data), w, num_hidden=3, no_bias=True)
    op = mx.nd.CachedOp(sym, [("static_alloc", True)])
    rs = np.random.RandomState(0)
    xs = [rs.rand(4, 2, 3).astype(np.float32) for _ in range(3)]
    wv = rs.rand(3, 6).astype(np.float32)
    outs = [op(mx.nd.array(x), mx.nd.array(wv)) for x in xs]
    assert len({id(o) for o in outs}) == 3
    for x, o in zip(xs, outs):
        np.testing.assert_allclose(o.asnumpy(), x.reshape(4, 6) @ wv.T, rtol=1e-5)
    given = mx.nd.zeros((4, 3))
    assert op(mx.nd.array(xs[0]), mx.nd.array(wv), out=given) is given
    np.testing.assert_allclose(given.asnumpy(), outs[0].asnumpy())
    with pytest.raises(MXNetError, match="out= must be 1 NDArray"):
        op(mx.nd.array(xs[0]), mx.nd.array(wv), out=mx.nd.zeros((3, 3)))


def test_grad_dict_lists_every_argument_and_backward_takes_a_dict():
    """As MXNet: grad_dict has every argument (the array given, also with grad_req 'null',
    else None); backward's head gradients may be a dict by output name."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = mx.sym.elemwise_mul(a, b, name="mul")
    given = mx.nd.ones(3) * 5
    ex = c.bind(mx.cpu(), {"a": mx.nd.ones(3) * 2, "b": mx.nd.ones(3) * 3},
                args_grad={"a": given, "b": mx.nd.zeros(3)}, grad_req={"a": "null", "b": "write"})
    assert list(ex.grad_dict) == ["a", "b"] and ex.grad_arrays[0] is given
    ex.forward(is_train=True)
    ex.backward({"mul_output": mx.nd.ones(3) * 10})
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), np.full(3, 20.0))
    np.testing.assert_allclose(given.asnumpy(), np.full(3, 5.0))      # 'null': untouched
    ex2 = c.simple_bind(mx.cpu(), grad_req={"a": "write"}, a=(3,), b=(3,))
    assert ex2.grad_dict["b"] is None and ex2.grad_dict["a"].shape == (3,)


@pytest.mark.parametrize("flags", [(), (("static_alloc", True),)])
def test_cached_op_backward_twice_in_flight(flags):
    """A second backward rebinds new gradient arrays while the first one's operators may
    still be queued in the engine (MXNet's test_cached): both finish, both are right."""
    sym = mx.sym.Convolution(kernel=(3, 3), num_filter=4) + 2
    op = mx.nd.CachedOp(sym, flags)
    data, weight, bias = mx.nd.ones((2, 3, 6, 6)), mx.nd.ones((4, 3, 3, 3)), mx.nd.ones((4,))
    weight.attach_grad()
    with mx.autograd.record():
        o = op(data, weight, bias) * 2
    o.backward(retain_graph=True)
    first = weight.grad
    o.backward()
    mx.nd.waitall()
    np.testing.assert_allclose(weight.grad.asnumpy(), np.full((4, 3, 3, 3), 2 * 2 * 16.0))
    np.testing.assert_allclose(first.asnumpy(), weight.grad.asnumpy())


def test_reshape_views_smaller_arrays_and_shares_planned_memory():
    """As MXNet's: a smaller argument is a view of the old one, the new executor shares the
    old one's planned memory, and the engine orders the two executors' use of it."""
    x = mx.sym.var("x")
    y = mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=4, name="fc")) * 2
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_dict["fc_weight"][:] = mx.nd.ones((4, 4))
    exe.arg_dict["fc_bias"][:] = 0
    small = exe.reshape(x=(3, 4))
    assert small.arg_dict["fc_weight"] is exe.arg_dict["fc_weight"]
    assert small._instance.arena is exe._instance.arena
    a, b = np.arange(20, dtype=np.float32).reshape(5, 4), -np.ones((3, 4), np.float32)
    outs = []
    for _ in range(3):                        # no waits: the engine orders the shared bytes
        outs.append(exe.forward(x=mx.nd.array(a))[0].copy())
        outs.append(small.forward(x=mx.nd.array(b))[0].copy())
    want_a = np.maximum(a.sum(axis=1, keepdims=True), 0) * 2 * np.ones((1, 4))
    for k, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), want_a if k % 2 == 0 else np.zeros((3, 4)))
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy()[:3], b)     # a view: shared
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_dict["x"][:] = 0
    assert (exe.arg_dict["x"].asnumpy()[:3] == b).all()


def test_zero_gradients_are_not_propagated():
    """As NNVM's gradient pass: behind stop_gradient every gradient is zero, so no backward
    node runs and the forward values need not be kept: training plans what inference does."""
    data = mx.sym.var("data")
    for _ in range(4):
        data = data * data
    train = data.simple_bind(mx.cpu(), data=(4, 64))._program.plan.total
    infer = data.simple_bind(mx.cpu(), data=(4, 64), grad_req="null")._program.plan.total
    stopped = mx.sym.stop_gradient(data)
    ex = stopped.simple_bind(mx.cpu(), data=(4, 64))
    assert ex._program.plan.total == infer < train
    ex.arg_dict["data"][:] = 1.5
    ex.grad_dict["data"][:] = 7
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((4, 64)))
    assert (ex.grad_dict["data"].asnumpy() == 0).all()


def test_common_subexpressions_are_merged_unless_switched_off(monkeypatch):
    """MXNet's MXNET_ELIMINATE_COMMON_EXPR (on by default): equal nodes on equal inputs run
    once; random ops never merge; duplicated outputs stay separate arrays."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = (a + b) * (a + b)
    args = {"a": mx.nd.ones((2, 3)), "b": mx.nd.ones((2, 3)) * 2}
    ex = sym.bind(mx.cpu(), args)
    assert len(ex.get_optimized_symbol().get_internals()) == len(sym.get_internals()) - 1
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.full((2, 3), 9.0))
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    off = sym.bind(mx.cpu(), args)
    assert len(off.get_optimized_symbol().get_internals()) == len(sym.get_internals())
    monkeypatch.delenv("MXNET_ELIMINATE_COMMON_EXPR")
    drop = mx.sym.Dropout(a, p=0.5) + mx.sym.Dropout(a, p=0.5)
    ex = drop.simple_bind(mx.cpu(), a=(2, 3))
    assert len(ex.get_optimized_symbol().get_internals()) == len(drop.get_internals())
    twice = mx.sym.Group([a * b, a * b])
    outs = twice.bind(mx.cpu(), args).forward()
    assert outs[0] is not outs[1]
    np.testing.assert_allclose(outs[1].asnumpy(), np.full((2, 3), 2.0))


def test_gradient_arrays_of_another_dtype_receive_a_cast():
    x = mx.sym.var("x")
    ex = (x * 3).bind(mx.cpu(), {"x": mx.nd.ones((2, 2), dtype="float16")},
                      args_grad={"x": mx.nd.zeros((2, 2), dtype="float64")})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 2), dtype="float16"))
    g = ex.grad_dict["x"]
    assert g.dtype == np.float64 and (g.asnumpy() == 3).all()


# -- bulk execution ----------------------------------------------------------------------------
_BULK_OFF = {"MXNET_EXEC_BULK_EXEC_TRAIN": "0", "MXNET_EXEC_BULK_EXEC_INFERENCE": "0"}


def _counting_pushes(monkeypatch):
    """The operators the engine is pushed, by name (the real push runs them); the deletions
    of arrays an earlier test left to the garbage collector are not counted."""
    eng = mx.engine.get()
    names, push = [], eng.push

    def counted(opr, ctx, priority=0):
        if opr.name != "delete":
            names.append(opr.name)
        push(opr, ctx, priority)
    monkeypatch.setattr(eng, "push", counted)
    return names


def _two_steps(sym, shapes, grad_req):
    """Two training steps (so 'add' accumulates), then an inference forward."""
    ex = sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
    _fill(ex)
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward()
    got = [o.asnumpy() for o in ex.outputs] + [ex.grad_dict[n].asnumpy()
                                               for n in sorted(ex.grad_dict)]
    got += [ex.aux_dict[n].asnumpy() for n in sorted(ex.aux_dict)]
    infer = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    infer.copy_params_from(ex.arg_dict, ex.aux_dict)
    return got + [o.asnumpy() for o in infer.forward()]


@pytest.mark.parametrize("build, shapes", [
    (_mlp, {"data": (8, 20)}), (_resblock, {"data": (2, 4, 6, 6)})])
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_results_never_depend_on_bulk_execution(build, shapes, grad_req, monkeypatch):
    bulked = _two_steps(build(), shapes, grad_req)
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "3")
    short = _two_steps(build(), shapes, grad_req)
    for k, v in _BULK_OFF.items():
        monkeypatch.setenv(k, v)
    plain = _two_steps(build(), shapes, grad_req)
    assert len(bulked) == len(plain)
    for a, b, c in zip(bulked, short, plain):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


def test_bulk_execution_pushes_segments_of_consecutive_nodes(monkeypatch):
    """As MXNet's executor: training cuts forward and backward into segments of at most
    MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD/_BWD nodes (both default to ..._TRAIN, 15),
    inference runs the graph as one; the switches turn it off."""
    def pushed(grad_req="write"):
        ex = _mlp().simple_bind(mx.cpu(), grad_req=grad_req, data=(8, 20))
        names = _counting_pushes(monkeypatch)
        ex.forward(is_train=grad_req != "null")
        if grad_req != "null":
            ex.backward()
        mx.nd.waitall()
        monkeypatch.undo()
        return names

    assert pushed() == ["[fc1,relu1,fc2,softmax]",
                        "[softmax_backward,fc2_backward,relu1_backward,fc1_backward]"]
    assert pushed("null") == ["[fc1,relu1,fc2,softmax]"]
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "3")
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", "2")
    assert pushed() == ["[fc1,relu1]", "[fc2,softmax]",
                        "[softmax_backward,fc2_backward,relu1_backward]", "fc1_backward"]
    assert pushed("null") == ["[fc1,relu1,fc2,softmax]"]          # inference: one segment
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", "0")
    assert len(pushed()) == 8
    assert pushed("null") == ["[fc1,relu1,fc2,softmax]"]
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_INFERENCE", "0")
    assert pushed("null") == ["fc1", "relu1", "fc2", "softmax"]


def test_nodes_writing_more_than_64kb_run_alone():
    x = mx.sym.var("x")
    y = mx.sym.tanh(mx.sym.elemwise_add(x, x, name="a"), name="t")
    y = mx.sym.sum(mx.sym.relu(y, name="r"), name="s")
    for shape, names in (((4, 4), ["[a,t,r,s]"]),
                         ((64, 512), ["a", "t", "r", "s"])):              # 128 KB outputs
        ex = y.simple_bind(mx.cpu(), x=shape, grad_req="null")
        ex.arg_dict["x"][:] = 1
        assert ex.forward()[0].asnumpy() == pytest.approx(np.tanh(2) * np.prod(shape))
        got = [o.name for o in ex._instance._oprs[False, False, True]]
        assert got == names


@mx.operator.register("test_executor_twice")
class _TwiceProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Twice()


class _Twice(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


def test_async_nodes_run_alone_and_bulked_neighbours_stay_right(monkeypatch):
    x = mx.sym.var("x")
    y = mx.sym.relu(x * 3, name="r") + 1
    y = mx.sym.Custom(y, op_type="test_executor_twice", name="twice")
    y = mx.sym.sigmoid(y * 0.5, name="s")
    xv = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)

    def run():
        ex = y.simple_bind(mx.cpu(), x=(3, 4))
        ex.arg_dict["x"][:] = xv
        out = ex.forward(is_train=True)[0].asnumpy()
        ex.backward(mx.nd.ones((3, 4)))
        oprs = ex._instance._oprs
        return [o.name for o in oprs[True, False, True] + oprs[True, True, True]], out, \
            ex.grad_dict["x"].asnumpy()

    names, out, grad = run()             # the Custom node and its backward run alone
    assert [n.startswith("[") for n in names] == [True, False, True] * 2
    assert names[1::3] == ["twice", "twice_backward"]
    for k, v in _BULK_OFF.items():
        monkeypatch.setenv(k, v)
    names, ref_out, ref_grad = run()
    assert len(names) == 12
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(grad, ref_grad)
    s = 1 / (1 + np.exp(-(np.maximum(xv * 3, 0) + 1)))
    np.testing.assert_allclose(out, s, rtol=1e-6)


def _failing_op():
    """An elementwise test op that raises on a negative input."""
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    name = "_test_executor_no_negatives"
    if name not in {d.name for d in mx.ops.list_ops()}:
        def compute(c, i, r, o, p):
            if (i[0] < 0).any():
                raise ValueError("negative input")
            assign(o[0], r[0], i[0] + 1)
        (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
         .set_attr("FInferType", ElemwiseType(1, 1)).set_attr("FCompute<cpu>", compute)
         .add_argument("data", "NDArray-or-Symbol", "x"))
    return name


def test_an_error_inside_a_segment_surfaces_at_the_wait():
    op = getattr(mx.sym, _failing_op())
    x = mx.sym.var("x")
    y = mx.sym.relu(op(x * 2, name="check") * 3, name="last")
    ex = y.simple_bind(mx.cpu(), x=(2, 3), grad_req="null")
    ex.arg_dict["x"][:] = -1
    out = ex.forward()[0]                           # pushed: no error yet
    assert len(ex._instance._oprs[(False, False, True)]) == 1      # one segment, 4 nodes
    with pytest.raises(MXNetError, match="(?s)check.*negative input"):
        out.asnumpy()
    ex.arg_dict["x"][:] = 1                         # the engine goes on working
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), np.full((2, 3), 9.0))


def test_a_monitor_turns_bulking_off_and_sees_every_node(monkeypatch):
    ex = _mlp().simple_bind(mx.cpu(), data=(8, 20))
    _fill(ex)
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    names = _counting_pushes(monkeypatch)
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    # forward, then backward (MXNet's names, the label's gradient nothing keeps included)
    assert seen == ["fc1_output", "relu1_output", "fc2_output", "softmax_output",
                    "softmax_backward_output0", "softmax_backward_output1",
                    "fc2_backward_output0", "fc2_backward_output1", "fc2_backward_output2",
                    "relu1_backward_output", "fc1_backward_output0", "fc1_backward_output1",
                    "fc1_backward_output2"]
    assert names[:4] == ["fc1", "relu1", "fc2", "softmax"]
    assert not any(n.startswith("[") for n in names)


def _cached_steps(flags, calls=3):
    """static_alloc CachedOp training calls with new inputs each call (rebinding the
    segments), then one inference call."""
    data, w1, w2 = mx.sym.var("data"), mx.sym.var("w1"), mx.sym.var("w2")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, w1, num_hidden=8, no_bias=True),
                          act_type="tanh")
    sym = mx.sym.sum(mx.sym.FullyConnected(h, w2, num_hidden=3, no_bias=True) ** 2, axis=1)
    op = mx.nd.CachedOp(sym, [("static_alloc", True), *flags])
    rs = np.random.RandomState(0)
    ws = [mx.nd.array(rs.uniform(-1, 1, s)) for s in ((8, 5), (3, 8))]
    for w in ws:
        w.attach_grad()
    got = []
    for _ in range(calls):
        x = mx.nd.array(rs.uniform(-1, 1, (4, 5)))
        with mx.autograd.record():
            out = op(x, *ws)
        out.backward()
        got += [out.asnumpy()] + [w.grad.asnumpy() for w in ws]
    return got + [op(mx.nd.array(rs.uniform(-1, 1, (4, 5))), *ws).asnumpy()]


def test_cached_op_results_never_depend_on_bulk_execution(monkeypatch):
    bulked = _cached_steps(())
    per_node = _cached_steps((("forward_bulk_size", 1), ("backward_bulk_size", 1)))
    for k, v in _BULK_OFF.items():
        monkeypatch.setenv(k, v)
    plain = _cached_steps(())
    for a, b, c in zip(bulked, per_node, plain):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    monkeypatch.delenv("MXNET_EXEC_BULK_EXEC_TRAIN")
    op = mx.nd.CachedOp(mx.sym.var("a") * 2, [("forward_bulk_size", 4)])
    assert (op.flags["forward_bulk_size"], op.flags["backward_bulk_size"]) == (4, 15)


def test_graph_with_only_zero_size_entries_binds_and_runs():
    with mx.np_shape(True):
        ex = mx.sym.exp(mx.sym.var("x")).simple_bind(mx.cpu(), x=(0, 3))
        assert ex.forward(is_train=True)[0].shape == (0, 3)
        ex.backward(mx.nd.ones((0, 3)))
        assert ex.grad_dict["x"].shape == (0, 3)


def test_monitor_sees_each_output_before_later_nodes_overwrite_its_memory():
    """relu runs in place over FullyConnected's output; the monitor still reports the
    FullyConnected values (MXNet calls it as each node runs)."""
    d = mx.sym.var("data")
    h = d
    for i in range(3):
        h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=8, name=f"fc{i}"),
                              act_type="relu", name=f"relu{i}")
    ex = h.simple_bind(mx.cpu(), data=(4, 8), grad_req="null")
    rng = np.random.default_rng(0)
    for v in ex.arg_dict.values():
        v[:] = rng.standard_normal(v.shape)
    seen = {}
    ex.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()))
    ex.forward()
    x = ex.arg_dict["data"].asnumpy()
    for i in range(3):
        fc = x @ ex.arg_dict[f"fc{i}_weight"].asnumpy().T + ex.arg_dict[f"fc{i}_bias"].asnumpy()
        np.testing.assert_allclose(seen[f"fc{i}_output"], fc, rtol=1e-5, atol=1e-5)
        x = np.maximum(fc, 0)
        np.testing.assert_allclose(seen[f"relu{i}_output"], x, rtol=1e-5, atol=1e-5)


def test_simple_bind_makes_each_ctx_groups_arrays_on_its_cpu_context():
    with mx.AttrScope(ctx_group="stage1"):
        h = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc1")
    with mx.AttrScope(ctx_group="stage2"):
        out = mx.sym.BatchNorm(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"), name="bn")
    group2ctx = {"stage1": mx.cpu(1), "stage2": mx.cpu(2)}
    ex = out.simple_bind(mx.cpu(0), group2ctx=group2ctx, data=(2, 5))
    for name in out.list_arguments():
        want = group2ctx["stage1" if name.startswith(("data", "fc1")) else "stage2"]
        assert ex.arg_dict[name].context == want and ex.grad_dict[name].context == want
    assert all(a.context == mx.cpu(2) for a in ex.aux_arrays)
    plain = out.simple_bind(mx.cpu(0), data=(2, 5))
    for e in (ex, plain):
        for name, a in e.arg_dict.items():
            a[:] = np.arange(a.size).reshape(a.shape) / 10
        e.forward(is_train=True)
        e.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), plain.outputs[0].asnumpy())
    np.testing.assert_allclose(ex.grad_dict["fc1_weight"].asnumpy(),
                               plain.grad_dict["fc1_weight"].asnumpy())


@pytest.mark.parametrize("norm, value", [("null", 3.0), ("batch", 1.0)])
def test_make_loss_output_needs_no_head_gradient(norm, value):
    """As MXNet: MakeLoss's backward reads no head gradient (only the data with 'valid'), so
    ``backward()`` needs none; a plain output still does."""
    x, w = mx.sym.var("data"), mx.sym.var("weight")
    ones = mx.nd.ones((3, 5))
    ex = mx.sym.MakeLoss(mx.sym.dot(x, w), normalization=norm).simple_bind(
        mx.cpu(), data=(3, 5), weight=(5, 2))
    ex.forward(is_train=True, data=ones)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict["weight"].asnumpy(), np.full((5, 2), value))
    plain = mx.sym.dot(x, w).simple_bind(mx.cpu(), data=(3, 5), weight=(5, 2))
    plain.forward(is_train=True, data=ones)
    with pytest.raises(MXNetError, match="is not a loss function"):
        plain.backward()
