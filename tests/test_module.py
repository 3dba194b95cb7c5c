"""mx.mod: Module training (fit/score/predict), checkpoints (ours and MXNet 1.9.1's),
data parallelism over several contexts, call-order errors, BucketingModule."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import ParamError, ShapeError
from mxnext.module import ModuleError
from mxnext.module.executor_group import split_input_slice

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet-1.9.1")


def mlp(hidden=16, classes=2):
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=hidden, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=classes, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def separable(n, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 10).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("float32")


def start_params(seed=1):
    rng = np.random.RandomState(seed)
    return {"fc1_weight": mx.nd.array(rng.randn(16, 10) * 0.3),
            "fc1_bias": mx.nd.zeros((16,)),
            "fc2_weight": mx.nd.array(rng.randn(2, 16) * 0.3),
            "fc2_bias": mx.nd.zeros((2,))}


def trained(context, kvstore="local", work_load_list=None, epochs=2):
    x, y = separable(100)
    it = mx.io.NDArrayIter(x, y, batch_size=30, last_batch_handle="pad")
    mod = mx.mod.Module(mlp(), context=context, work_load_list=work_load_list)
    mod.fit(it, num_epoch=epochs, kvstore=kvstore, arg_params=start_params(),
            optimizer_params={"learning_rate": 0.3, "momentum": 0.9, "wd": 0.01})
    return mod, it


def as_numpy(params):
    return {k: v.asnumpy() for k, v in params.items()}


def test_mod_is_loaded_lazily():
    code = ("import sys, mxnext as mx; assert 'mxnext.module' not in sys.modules; "
            "assert mx.mod is mx.module and mx.mod.Module.__name__ == 'Module'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fit_learns_and_logs(caplog):
    np.random.seed(0)                        # the shuffle
    mx.random.seed(0)                        # the initializer
    x, y = separable(500)
    train = mx.io.NDArrayIter(x, y, batch_size=20, shuffle=True)
    val = mx.io.NDArrayIter(*separable(200, seed=5), batch_size=20)
    mod = mx.mod.Module(mlp())
    seen = []
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, num_epoch=6, initializer=mx.init.Xavier(),
                optimizer_params={"learning_rate": 0.2},
                batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
                epoch_end_callback=lambda e, s, a, aux: seen.append(("end", e, len(a))))
    assert dict(mod.score(val, "acc"))["accuracy"] >= 0.95
    text = caplog.text
    for line in ("Epoch[0] Train-accuracy=", "Epoch[5] Time cost=",
                 "Epoch[5] Validation-accuracy="):
        assert line in text
    assert seen[:25] == [(0, i) for i in range(25)] and seen[25] == ("end", 0, 4)


def test_score_predict_and_iter_predict_shapes():
    mod, it = trained([mx.cpu()])
    assert mod.output_shapes == [("softmax_output", (30, 2))]
    out = mod.predict(it)                     # 100 rows: the last batch's padding is cut
    assert out.shape == (100, 2)
    per_batch = mod.predict(it, merge_batches=False)
    assert [o[0].shape[0] for o in per_batch] == [30, 30, 30, 10]
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert mod.predict(it, num_batch=2).shape == (60, 2)
    np.testing.assert_allclose(np.concatenate([o[0].asnumpy() for o in per_batch]),
                               out.asnumpy())
    got = [(outs[0].shape, n) for outs, n, _ in mod.iter_predict(it)]
    assert got == [((30, 2), 0), ((30, 2), 1), ((30, 2), 2), ((10, 2), 3)]
    names = [n for n, _ in mod.score(it, ["acc", "ce"])]
    assert names == ["accuracy", "cross-entropy"]
    single = mod.predict(separable(30)[0])                 # one numpy batch
    np.testing.assert_allclose(single.asnumpy(), out.asnumpy()[:30], rtol=1e-6)


def test_two_contexts_match_one():
    one, _ = trained([mx.cpu()])
    two, _ = trained([mx.cpu(0), mx.cpu(1)])
    three, _ = trained([mx.cpu(0), mx.cpu(1), mx.cpu(2)], work_load_list=[1, 2, 3])
    assert [e._ctx for e in two._exec_group.execs] == [mx.cpu(0), mx.cpu(1)]
    assert three._exec_group.slices == [slice(0, 5), slice(5, 15), slice(15, 30)]
    ref = as_numpy(one.get_params()[0])
    for other in (two, three):
        for name, value in as_numpy(other.get_params()[0]).items():
            np.testing.assert_allclose(value, ref[name], rtol=1e-5, atol=1e-6)


def test_split_input_slice():
    assert split_input_slice(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert split_input_slice(7, [1, 1, 1]) == [slice(0, 2), slice(2, 4), slice(4, 7)]
    with pytest.raises(ModuleError, match="empty"):
        split_input_slice(2, [1, 1, 1])


def test_outputs_and_input_grads_merge_over_devices():
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([("data", (6, 10))], [("softmax_label", (6,))], inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    x, y = separable(6)
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    assert mod.get_outputs()[0].shape == (6, 2)
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 2)] * 2
    grads = mod.get_input_grads()[0]
    single = mx.mod.Module(mlp())
    single.bind([("data", (6, 10))], [("softmax_label", (6,))], inputs_need_grad=True)
    single.set_params(*mod.get_params())
    single.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    np.testing.assert_allclose(grads.asnumpy(), single.get_input_grads()[0].asnumpy(),
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("context", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]],
                         ids=["updater", "kvstore"])
def test_checkpoint_round_trip_with_optimizer_states(tmp_path, context):
    mod, it = trained(context, epochs=1)
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ["mlp-0003.params", "mlp-0003.states",
                                            "mlp-symbol.json"]
    loaded = mx.mod.Module.load(prefix, 3, load_optimizer_states=True, context=context)
    loaded.bind(it.provide_data, it.provide_label)
    loaded.init_optimizer(optimizer_params={"learning_rate": 0.3, "momentum": 0.9,
                                            "wd": 0.01})
    for name, value in as_numpy(mod.get_params()[0]).items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value)
    # one more step on both: equal only if the momentum states came back too
    it.reset()
    batch = next(iter(it))
    for m in (mod, loaded):
        m.forward_backward(batch)
        m.update()
    after = as_numpy(loaded.get_params()[0])
    for name, value in as_numpy(mod.get_params()[0]).items():
        np.testing.assert_allclose(after[name], value, rtol=1e-6, atol=1e-7)
    # without the states: a different step
    fresh = mx.mod.Module.load(prefix, 3, context=context)
    fresh.bind(it.provide_data, it.provide_label)
    fresh.init_optimizer(optimizer_params={"learning_rate": 0.3, "momentum": 0.9,
                                           "wd": 0.01})
    fresh.forward_backward(batch)
    fresh.update()
    assert not np.allclose(fresh.get_params()[0]["fc1_weight"].asnumpy(),
                           after["fc1_weight"])


def test_save_and_load_params(tmp_path):
    mod, _ = trained([mx.cpu()], epochs=1)
    fname = str(tmp_path / "p.params")
    mod.save_params(fname)
    assert sorted(mx.nd.load(fname)) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias",
                                        "arg:fc2_weight"]
    other = mx.mod.Module(mlp())
    other.bind([("data", (30, 10))], [("softmax_label", (30,))])
    other.load_params(fname)
    for name, value in as_numpy(mod.get_params()[0]).items():
        np.testing.assert_array_equal(other.get_params()[0][name].asnumpy(), value)


def test_loads_mxnet_191_checkpoint():
    expected = np.load(os.path.join(FIXTURES, "mlp-expected.npz"))
    mod = mx.mod.Module.load(os.path.join(FIXTURES, "mlp"), 0)
    mod.bind([("data", (4, 20))], [("softmax_label", (4,))])
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(expected["data"])],
                                         [mx.nd.array(expected["softmax_label"])]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected["output"],
                               rtol=1e-5, atol=1e-6)
    group = mod._exec_group
    for name, grads in zip(group.param_names, group.grad_arrays):
        np.testing.assert_allclose(grads[0].asnumpy(), expected[f"grad:{name}"],
                                   rtol=1e-4, atol=1e-6)


def test_forward_reshapes_on_new_batch_size():
    mod = mx.mod.Module(mlp())
    mod.bind([("data", (8, 10))], [("softmax_label", (8,))])
    mod.init_params()
    x, y = separable(5)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]), is_train=False)
    assert mod.get_outputs()[0].shape == (5, 2)
    assert mod.data_shapes[0].shape == (5, 10) and mod.label_shapes[0].shape == (5,)


def test_initializer_attribute_wins_and_fixed_params_stay():
    w = mx.sym.var("fc1_weight", init=mx.init.Constant(0.25))
    net = mx.sym.FullyConnected(mx.sym.var("data"), weight=w, num_hidden=3, name="fc1")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, fixed_param_names=["fc1_bias"])
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Constant(-1.0))
    args = as_numpy(mod.get_params()[0])
    assert (args["fc1_weight"] == 0.25).all() and (args["fc1_bias"] == 0).all()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((4, 5))], [mx.nd.array([0, 1, 2, 0])]))
    mod.update()
    after = as_numpy(mod.get_params()[0])
    assert (after["fc1_bias"] == 0).all() and not (after["fc1_weight"] == 0.25).all()


def test_states():
    net = mx.sym.FullyConnected(mx.sym.var("data") + mx.sym.var("h"), num_hidden=4,
                                name="fc")
    mod = mx.mod.Module(net, label_names=None, state_names=["h"],
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([("data", (4, 4))], for_training=False)
    mod.init_params(mx.init.One())
    mod.set_states(value=1)
    mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 4))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((4, 4), 4.0))
    states = mod.get_states(merge_multi_context=False)
    assert len(states) == 1 and [s.shape for s in states[0]] == [(2, 4), (2, 4)]
    mod.set_states(states=[[mx.nd.full((2, 4), 2), mx.nd.full((2, 4), 3)]])
    mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 4))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy()[:, 0], [8, 8, 12, 12])


def test_call_order_errors():
    mod = mx.mod.Module(mlp())
    batch = mx.io.DataBatch([mx.nd.zeros((2, 10))], [mx.nd.zeros((2,))])
    with pytest.raises(ModuleError, match="bind"):
        mod.forward(batch)
    with pytest.raises(AssertionError):             # what MXNet raises there
        mod.init_params()
    mod.bind([("data", (2, 10))], [("softmax_label", (2,))])
    with pytest.raises(ModuleError, match="init_params"):
        mod.forward(batch)
    mod.init_params()
    mod.forward_backward(batch)
    with pytest.raises(ModuleError, match="init_optimizer"):
        mod.update()
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()


def test_argument_errors():
    with pytest.raises(ModuleError, match="'image'"):
        mx.mod.Module(mlp(), data_names=["image"])
    with pytest.raises(ModuleError, match="work_load_list"):
        mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    mod = mx.mod.Module(mlp())
    with pytest.raises(ModuleError, match="data_names"):
        mod.bind([("x", (2, 10))])
    with pytest.raises(ModuleError, match="inputs_need_grad"):
        mod.bind([("data", (2, 10))], for_training=False, inputs_need_grad=True)
    mod.bind([("data", (2, 10))], [("softmax_label", (2,))])
    params = start_params()
    missing = {k: v for k, v in params.items() if k != "fc2_bias"}
    with pytest.raises(ModuleError, match="fc2_bias"):
        mod.set_params(missing, {})
    # init_params fills what is missing with its default initializer, Uniform(0.01)
    mod.init_params(arg_params={"fc2_weight": params["fc2_weight"]}, allow_missing=True)
    fc1 = mod.get_params()[0]["fc1_weight"].asnumpy()
    assert 0 < np.abs(fc1).max() <= 0.01
    with_extra = dict(params, extra=mx.nd.zeros((1,)))
    with pytest.raises(ParamError, match="extra"):          # a ValueError, as MXNet's
        mod.set_params(with_extra, {}, allow_missing=True)
    mod.set_params(with_extra, {}, allow_missing=True, allow_extra=True)
    with pytest.raises(ModuleError, match="merge_multi_context"):
        mod.get_states()


def test_batch_sizes_that_differ_fail_at_bind_and_forward():
    mod = mx.mod.Module(mlp())
    with pytest.raises(ModuleError, match=r"bind: all data and labels must have the same batch "
                                          r"size; 'softmax_label' has shape \(7,\) \(batch size "
                                          r"7\), 'data' has shape \(4, 10\) \(batch size 4\)"):
        mod.bind([("data", (4, 10))], [("softmax_label", (7,))])
    assert not mod.binded
    mod.bind([("data", (4, 10))], [("softmax_label", (4,))])
    mod.init_params()
    x, y = separable(7)
    with pytest.raises(ModuleError, match=r"forward: label 'softmax_label' has shape \(7,\) "
                                          r"\(batch size 7\); the data batch size is 4"):
        mod.forward(mx.io.DataBatch([mx.nd.array(x[:4])], [mx.nd.array(y)]))
    with pytest.raises(ModuleError, match="bind: all data and labels must have the same batch"):
        mod.forward(mx.io.DataBatch([mx.nd.array(x[:5])], [mx.nd.array(y)]))   # a rebind
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:4])], [mx.nd.array(y[:4])]))   # still bound
    assert mod.get_outputs()[0].shape == (4, 2)


@pytest.mark.parametrize("call", ["init_params", "set_params", "set_params_allow_missing"])
def test_a_parameter_of_the_wrong_shape_is_named(call):
    mod = mx.mod.Module(mlp())
    mod.bind([("data", (4, 10))], [("softmax_label", (4,))])
    params = dict(start_params(), fc2_weight=mx.nd.zeros((16, 2)))
    with pytest.raises(ShapeError, match=r"'fc2_weight' has shape \(16, 2\), the (symbol "
                                         r"needs|executor's is) \(2, 16\)"):
        if call == "init_params":
            mod.init_params(arg_params=params)
        else:
            mod.set_params(params, {}, allow_missing=call.endswith("missing"))


def sym_gen(seq_len):
    data = mx.sym.var("data")
    emb = mx.sym.FullyConnected(mx.sym.reshape(data, shape=(-1, 1)), num_hidden=4,
                                name="emb")
    feat = mx.sym.sum(mx.sym.reshape(emb, shape=(-1, seq_len, 4)), axis=1)
    out = mx.sym.FullyConnected(feat, num_hidden=2, name="out")
    return mx.sym.SoftmaxOutput(out, name="softmax"), ("data",), ("softmax_label",)


def bucket_batch(seq_len, rng):
    x = rng.randn(6, seq_len).astype("float32")
    y = (x.sum(axis=1) > 0).astype("float32")
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=seq_len,
                           provide_data=[mx.io.DataDesc("data", x.shape)],
                           provide_label=[mx.io.DataDesc("softmax_label", y.shape)])


def test_bucketing_module_shares_parameters(tmp_path):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind([("data", (6, 5))], [("softmax_label", (6,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    rng = np.random.RandomState(0)
    for seq_len in (3, 5, 7, 3):
        mod.forward_backward(bucket_batch(seq_len, rng))
        mod.update()
        assert mod.get_outputs()[0].shape == (6, 2)
    assert sorted(mod._buckets) == [3, 5, 7]
    weights = {k: m._exec_group.param_arrays[0][0] for k, m in mod._buckets.items()}
    assert weights[3] is weights[5] is weights[7]
    mod.save_checkpoint(str(tmp_path / "b"), 1)
    loaded = mx.mod.BucketingModule.load(str(tmp_path / "b"), 1, sym_gen=sym_gen,
                                         default_bucket_key=5)
    loaded.bind([("data", (6, 5))], [("softmax_label", (6,))], for_training=False)
    batch = bucket_batch(7, rng)
    for m in (mod, loaded):
        m.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(),
                               mod.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_sequential_module_matches_one_module():
    first = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=16,
                                                    name="fc1"), act_type="relu")
    second = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2,
                                                        name="fc2"), name="softmax")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(first, label_names=None))
    seq.add(mx.mod.Module(second), take_labels=True, auto_wiring=True)
    with pytest.raises(ModuleError, match="unknown meta"):
        seq.add(mx.mod.Module(second), take_label=True)
    whole = mx.mod.Module(mlp())
    x, y = separable(100)
    for mod in (seq, whole):
        it = mx.io.NDArrayIter(x, y, batch_size=25)
        mod.fit(it, num_epoch=2, arg_params=start_params(),
                optimizer_params={"learning_rate": 0.3, "momentum": 0.9})
    assert seq.output_shapes == [("softmax_output", (25, 2))]
    ref = as_numpy(whole.get_params()[0])
    for name, value in as_numpy(seq.get_params()[0]).items():
        np.testing.assert_allclose(value, ref[name], rtol=1e-5, atol=1e-6)


def test_executor_groups_take_name_shape_pairs_and_share_input_arrays():
    """As MXNet's bucketing: a group made with ``shared_group`` binds its inputs as views of
    the first group's (``shared_data_arrays``: inputs only, never parameters) and shares
    the parameters and their gradients."""
    from mxnext.module.executor_group import DataParallelExecutorGroup

    def net(hidden):
        h = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=hidden, name="fc1")
        h = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
        return mx.sym.SoftmaxOutput(h, name="softmax")
    ctxs = [mx.cpu(0), mx.cpu(1)]
    params = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    first = DataParallelExecutorGroup(net(4), ctxs, [1, 1], [("data", (8, 5))],
                                      [("softmax_label", (8,))], params, True, False)
    second = DataParallelExecutorGroup(net(4), ctxs, [1, 1], [("data", (6, 5))],
                                       [("softmax_label", (6,))], params, True, False,
                                       shared_group=first)
    for i in range(2):
        assert sorted(first.shared_data_arrays[i]) == ["data", "softmax_label"]
        assert second.shared_data_arrays[i] is first.shared_data_arrays[i]
        a, b = first.execs[i], second.execs[i]
        assert b.arg_dict["data"].shape == (3, 5)
        a.arg_dict["data"][:] = 7
        assert (b.arg_dict["data"].asnumpy() == 7).all()      # a view of the larger array
        for name in params:
            assert mx.test_utils.same_array(a.arg_dict[name], b.arg_dict[name])
            assert mx.test_utils.same_array(a.grad_dict[name], b.grad_dict[name])


def test_a_variable_s_declared_storage_type_reaches_the_module_s_parameters():
    """``mx.sym.var(stype=...)`` is the storage type simple_bind gives that argument (unless
    stype_dict says otherwise), so a Module's parameters come out row_sparse (as MXNet's)."""
    x = mx.sym.var("data", stype="csr")
    v = mx.sym.var("v", shape=(6, 1), init=mx.init.Uniform(scale=0.1), stype="row_sparse")
    out = mx.sym.LinearRegressionOutput(mx.sym.dot(x, v), mx.sym.var("label"), name="out")
    ex = out.simple_bind(mx.cpu(), data=(4, 6), label=(4, 1))
    assert ex.arg_dict["data"].stype == "csr" and ex.arg_dict["v"].stype == "row_sparse"
    assert out.simple_bind(mx.cpu(), stype_dict={"v": "default"}, data=(4, 6),
                           label=(4, 1)).arg_dict["v"].stype == "default"
    mod = mx.mod.Module(out, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (4, 6))], label_shapes=[("label", (4, 1))])
    mod.init_params()
    arg_params, _ = mod.get_params()
    assert arg_params["v"].stype == "row_sparse" and np.abs(arg_params["v"].asnumpy()).sum() > 0


def test_prepare_calls_sparse_row_id_fn_only_with_a_kvstore_that_updates():
    """MXNet pulls the rows ``sparse_row_id_fn`` names; a module here keeps parameters whole,
    so the function is called and checked; without an updating KVStore MXNet warns."""
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2),
                               name="softmax")
    it = mx.io.NDArrayIter(np.ones((4, 3), np.float32), np.zeros(4, np.float32), 4)
    batch = next(iter(it))
    asked = []

    def rows(b):
        asked.append(b)
        return {"fullyconnected0_weight": mx.nd.array([0, 1])}

    mod = mx.mod.Module(net)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    mod.init_optimizer()
    with pytest.warns(UserWarning, match="not updated in the KVStore"):
        mod.prepare(batch, sparse_row_id_fn=rows)
    assert asked == []
    mod.init_optimizer(kvstore=mx.kv.create("local"), force_init=True)
    mod.prepare(batch, sparse_row_id_fn=rows)
    assert asked == [batch]
    with pytest.raises(ModuleError, match="must return a dict"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: [1])
