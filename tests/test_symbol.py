"""mx.sym: construction, names, attributes, composition, operators, indexing, internals and
the generated op functions (inference: test_infer.py; JSON: test_symbol_json.py; MXNet's own
answers: test_symbol_mxnet.py)."""

import copy
import inspect
import json
import pickle
import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, NotImplementedForSymbol, OpNotFound, ParamError


def _nodes(sym):
    return {n["name"]: n for n in json.loads(sym.tojson())["nodes"]}


# -- variables ----------------------------------------------------------------------------
def test_variable_attributes_are_stored_as_mxnet_stores_them():
    class Init:
        def dumps(self):
            return '["xavier", {}]'
    v = mx.sym.var("w", shape=(2, 3), dtype="float16", lr_mult=2, wd_mult=0.5, init=Init(),
                   stype="row_sparse", __layout__="NC")
    assert v.list_attr() == {"__shape__": "(2, 3)", "__dtype__": "2", "__lr_mult__": "2",
                             "__wd_mult__": "0.5", "__init__": '["xavier", {}]',
                             "__storage_type__": "1", "__layout__": "NC", "lr_mult": "2",
                             "wd_mult": "0.5"}
    assert v.attr("lr_mult") == "2" and v.attr("__shape__") == "(2, 3)" and v.attr("x") is None
    assert mx.sym.Variable is mx.sym.var and v.name == "w" and repr(v) == "<Symbol w>"
    assert mx.sym.var("c", attr={"lr_mult": "3", "mood": "calm"}).list_attr() == {
        "__lr_mult__": "3", "lr_mult": "3", "mood": "calm"}


@pytest.mark.parametrize("call, error, message", [
    (lambda: mx.sym.var(3), TypeError, "name must be a string"),
    (lambda: mx.sym.var("x", layout="NC"), ValueError, "double underscores"),
    (lambda: mx.sym.var("x", dtype="complex64"), TypeError, "dtype"),
    (lambda: mx.sym.var("x", stype="dense"), ValueError, "stype"),
    (lambda: mx.sym.var("x", attr={"k": 1}), ValueError, "must be a string"),
    (lambda: mx.sym.var("x", attr={"weight_lr_mult": "1"}), MXNetError, "weight_lr_mult"),
])
def test_variable_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- names ----------------------------------------------------------------------------------
def test_automatic_names_count_per_function_name():
    data = mx.sym.var("data")
    with mx.name.NameManager():
        names = [mx.sym.FullyConnected(data, num_hidden=2).name,
                 mx.sym.FullyConnected(data, num_hidden=2).name,
                 mx.sym.Activation(data, act_type="relu").name,
                 mx.sym.Softmax(data).name,                      # an alias names by itself
                 mx.sym.SoftmaxOutput(data).name,
                 mx.sym.sum(data).name, data.sum().name, mx.sym.sum_axis(data).name,
                 (data + data).name, (data * 2).name, (-data).name,
                 mx.sym.FullyConnected(data, num_hidden=2, name="given").name]
    assert names == ["fullyconnected0", "fullyconnected1", "activation0", "softmax0",
                     "softmaxoutput0", "sum0", "sum1", "sum_axis0", "_plus0", "_mulscalar0",
                     "_mulscalar1", "given"]


def test_prefix_and_nested_name_managers():
    data = mx.sym.var("data")
    with mx.name.Prefix("net_"):
        fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
        act = mx.sym.Activation(fc, act_type="relu")
        with mx.name.NameManager():
            inner = mx.sym.Activation(act, act_type="relu")
        again = mx.sym.Activation(act, act_type="relu")
    assert fc.list_arguments() == ["data", "net_fc1_weight", "net_fc1_bias"]
    assert (act.name, inner.name, again.name) == ("net_activation0", "activation0",
                                                  "net_activation1")


def test_name_manager_is_per_thread_and_current_is_deprecated():
    data = mx.sym.var("data")
    with mx.name.NameManager():
        first = mx.sym.Flatten(data).name
        seen = []
        t = threading.Thread(target=lambda: seen.append(mx.sym.Flatten(data).name))
        t.start()
        t.join()
        assert (first, seen, mx.sym.Flatten(data).name) == ("flatten0", ["flatten0"],
                                                            "flatten1")
        with pytest.warns(DeprecationWarning):
            assert isinstance(mx.name.NameManager.current, mx.name.NameManager)


# -- attributes -----------------------------------------------------------------------------
def test_attr_scope_applies_to_variables_and_ops_and_their_automatic_variables():
    data = mx.sym.var("data")
    with mx.AttrScope(ctx_group="dev1", __group__="outer"):
        v = mx.sym.var("v")
        with mx.AttrScope(__group__="inner"):
            fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc", lr_mult=2,
                                       attr={"__mood__": "calm"})
    assert v.list_attr() == {"__ctx_group__": "dev1", "ctx_group": "dev1",
                             "__group__": "outer"}
    want = {"num_hidden": "4", "__ctx_group__": "dev1", "ctx_group": "dev1",
            "__group__": "inner", "__lr_mult__": "2", "lr_mult": "2", "__mood__": "calm"}
    assert fc.list_attr() == want
    assert fc.attr_dict() == {"fc": want, "fc_weight": want, "fc_bias": want}
    assert mx.attribute.AttrScope is mx.AttrScope
    with pytest.raises(ValueError, match="must be a string"):
        mx.AttrScope(group=1)
    with pytest.raises(ParamError, match="unknown parameter 'mood'"):
        mx.sym.FullyConnected(data, num_hidden=4, attr={"mood": "calm"})
    with pytest.raises(MXNetError, match="weight_lr_mult"):
        mx.sym.FullyConnected(data, num_hidden=4, weight_lr_mult=2)


def test_parameters_keep_the_spelling_they_were_given():
    x = mx.sym.var("x")
    conv = mx.sym.Convolution(x, kernel=[3, 3], num_filter=4, no_bias=1, name="c")
    assert conv.list_attr() == {"kernel": "[3, 3]", "num_filter": "4", "no_bias": "1"}
    assert (x * 2).list_attr() == {"scalar": "2"} and (-x).list_attr() == {"scalar": "-1.0"}
    assert mx.sym.Cast(x, dtype=np.float16).list_attr() == {"dtype": "float16"}


def test_computed_attributes_and_set_attr():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    sp = mx.sym.split(x, num_outputs=3, name="sp")
    assert (fc.attr("name"), fc.attr("op_name"), x.attr("op_name")) == ("fc", "FullyConnected",
                                                                       "null")
    assert (fc.attr("_value_index"), sp.attr("_value_index")) == ("0", "0, 1, 2")
    fc._set_attr(num_hidden="7", lr_mult="0.1", __mood__="ok")
    assert fc.list_attr() == {"num_hidden": "7", "__lr_mult__": "0.1", "lr_mult": "0.1",
                              "__mood__": "ok"}
    assert fc.infer_shape(x=(2, 5))[0][1] == (7, 5)            # the op reads the new value
    fc._set_attr(name="renamed")
    assert fc.name == "renamed" and fc.list_outputs() == ["renamed_output"]
    with pytest.raises(ValueError, match="must be a string"):
        fc._set_attr(num_hidden=8)
    with pytest.raises(ParamError, match="mood"):
        fc._set_attr(mood="x")
    assert "mood" not in fc.list_attr()                          # a refused change leaves nothing
    with pytest.raises(MXNetError, match="non-grouped"):
        mx.sym.Group([x, fc])._set_attr(a="1")
    with pytest.raises(DeprecationWarning):
        fc.list_attr(recursive=True)


# -- composition ----------------------------------------------------------------------------
def test_missing_inputs_become_variables_named_after_the_op():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
    assert fc.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert mx.sym.FullyConnected(data, num_hidden=3, no_bias=True,
                                 name="f").list_arguments() == ["data", "f_weight"]
    with mx.name.NameManager():
        assert mx.sym.Activation(act_type="relu").list_arguments() == ["activation0_data"]
    w = mx.sym.var("shared_w")
    fc2 = mx.sym.FullyConnected(data, w, num_hidden=3, name="fc2")       # positional input
    fc3 = mx.sym.FullyConnected(data=data, bias=mx.sym.var("b"), num_hidden=3, name="fc3")
    assert fc2.list_arguments() == ["data", "shared_w", "fc2_bias"]
    assert fc3.list_arguments() == ["data", "fc3_weight", "b"]
    assert _nodes(fc)["fc1_weight"]["attrs"] == {"num_hidden": "3"}      # the op's attrs


def test_auxiliary_states_and_variable_versions():
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(data, name="bn")
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_inputs() == ["data", "bn_gamma", "bn_beta", "bn_moving_mean",
                                "bn_moving_var"]
    assert bn.list_outputs() == ["bn_output"] and len(bn) == 1     # 1 visible of 3 outputs
    assert _nodes(bn)["bn"]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1],
                                          [4, 0, 1]]
    internals = json.loads(bn.get_internals().tojson())["heads"]
    assert internals == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1], [5, 0, 0]]
    mean = bn.get_internals()["bn_moving_mean"]
    bn2 = mx.sym.BatchNorm(bn, moving_mean=mean, name="bn2")           # mutated twice
    assert _nodes(bn2)["bn2"]["inputs"][3] == [3, 0, 2]
    with pytest.raises(MXNetError, match="must be a variable"):
        mx.sym.BatchNorm(data, moving_mean=data * 2, name="bad")


def test_compose_rule_sets_variable_attributes():
    """An op's FSetInputVarAttrOnCompose rule sees every variable input (MXNet's BatchNorm
    sets __init__ on its moving statistics this way)."""
    from opsdk import ElemwiseShape, ElemwiseType, register_op
    (register_op("_test_symbol_init_hint").describe("Reads a state.").set_num_inputs(2)
     .set_attr("FInferShape", ElemwiseShape(2, 1)).set_attr("FInferType", ElemwiseType(2, 1))
     .set_attr("FListInputNames", lambda p: ["data", "state"])
     .set_attr("FSetInputVarAttrOnCompose",
               lambda p, var, i: i == 1 and var.attrs.setdefault("__init__", '["zero", {}]'))
     .add_argument("data", "NDArray-or-Symbol").add_argument("state", "NDArray-or-Symbol"))
    s = mx.sym._internal._test_symbol_init_hint(mx.sym.var("d"), name="t")
    assert s.attr_dict() == {"t_state": {"__init__": '["zero", {}]'}}
    given = mx.sym.var("st", init="one")
    assert mx.sym._internal._test_symbol_init_hint(mx.sym.var("d"), given).attr_dict() == {
        "st": {"__init__": "one"}}


def test_compose_by_call_replaces_variables_in_a_copy():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    other = mx.sym.Activation(mx.sym.var("x"), act_type="relu", name="act")
    composed = net(data=other)
    assert composed.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias"]      # unchanged
    assert composed.name == "fc" and net(data=other, name="g").name == "g"
    assert data(data=other).list_outputs() == ["act_output"]             # a variable output
    with pytest.raises(MXNetError, match="(?s)'foo' not found.*\\[0\\]data"):
        net(foo=other)
    with pytest.raises(MXNetError, match="by keyword"):
        net(other)
    with pytest.raises(TypeError, match="not both"):
        net(other, data=other)
    with pytest.raises(TypeError, match="must be a Symbol"):
        net(data=3)
    with pytest.raises(MXNetError, match="group of 2"):
        net(data=mx.sym.Group([data, other]))
    atom = net._gen_atomic_symbol()                  # MXNet's: the op alone, to compose
    assert atom.list_arguments() == [] and atom.list_attr() == net.list_attr()
    assert atom(data=other).list_arguments() == ["x", "fc_weight", "fc_bias"]


def test_op_inputs_are_checked():
    data = mx.sym.var("data")
    with pytest.raises(TypeError, match="'weight' must be a Symbol"):
        mx.sym.FullyConnected(data, 3, num_hidden=2)
    with pytest.raises(MXNetError, match="'data' is a group of 2 outputs"):
        mx.sym.FullyConnected(mx.sym.split(data, num_outputs=2), num_hidden=2)
    with pytest.raises(MXNetError, match="'bias' not found"):
        mx.sym.FullyConnected(data, bias=data, num_hidden=2, no_bias=True)
    with pytest.raises(MXNetError, match="takes 2 input"):
        mx.sym.add_n(data, data, data, num_args=2)
    with pytest.raises(TypeError, match="multiple values for input 'data'"):
        mx.sym.FullyConnected(data, data=data, num_hidden=2)


# -- operators ------------------------------------------------------------------------------
def test_operators_apply_mxnet_ops_and_names():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    cases = [(x + y, "elemwise_add", "_plus"), (x + 1, "_plus_scalar", "_plusscalar"),
             (1 + x, "_plus_scalar", "_plusscalar"), (x - y, "elemwise_sub", "_minus"),
             (2 - x, "_rminus_scalar", "_rminusscalar"), (x * y, "elemwise_mul", "_mul"),
             (x / y, "elemwise_div", "_div"), (1 / x, "_rdiv_scalar", "_rdivscalar"),
             (x % y, "_mod", "_mod"), (3 % x, "_rmod_scalar", "_rmodscalar"),
             (x ** y, "_power", "_power"), (x ** 2, "_power_scalar", "_powerscalar"),
             (2 ** x, "_rpower_scalar", "_rpower_scalar"), (-x, "_mul_scalar", "_mulscalar"),
             (abs(x), "abs", "abs"), (x == y, "_equal", "_equal"),
             (x != 1, "_not_equal_scalar", "_not_equal_scalar"),
             (x > y, "_greater", "_greater"), (1 > x, "_lesser_scalar", "_lesser_scalar"),
             (x <= np.float32(2), "_lesser_equal_scalar", "_lesser_equal_scalar"),
             (mx.sym.maximum(2, x), "_maximum_scalar", "_maximumscalar"),
             (mx.sym.pow(2, x), "_rpower_scalar", "_rpowerscalar"),
             (mx.sym.hypot(x, y), "_hypot", "_hypot")]
    with mx.name.NameManager():
        for sym, op, hint in cases:
            assert sym.attr("op_name") == op and sym.name.rstrip("0123456789") == hint
    assert (2 - x).list_attr() == {"scalar": "2"}
    assert mx.sym.maximum(3, 4) == 4 and mx.sym.pow(2, 3) == 8 and mx.sym.hypot(3, 4) == 5


def test_operator_errors_and_ndarray_only_methods():
    x = mx.sym.var("x")
    with pytest.raises(TypeError, match="not supported"):
        x + "a"
    with pytest.raises(TypeError, match="Symbols or numbers"):
        mx.sym.maximum("a", 1)
    for bad in (lambda: bool(x), lambda: x.asnumpy(), lambda: x.copy(), lambda: x.detach(),
                lambda: x.wait_to_read(), lambda: x.as_in_context(mx.cpu())):
        with pytest.raises(NotImplementedForSymbol, match="only available in NDArray"):
            bad()
    y = x
    with pytest.raises(NotImplementedForSymbol, match=r'"\+="'):
        y += 1
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_fluent_methods_are_the_module_functions():
    x = mx.sym.var("x")
    assert x.reshape((3, 2)).infer_shape(x=(2, 3))[1] == [(3, 2)]
    assert x.astype("int32").infer_type(x="float32")[1] == [np.int32]
    assert x.sum(axis=1).infer_shape(x=(2, 3))[1] == [(2,)]
    assert x.expand_dims(1).infer_shape(x=(2, 3))[1] == [(2, 1, 3)]
    pieces = x.split_v2((1,), axis=1)
    assert pieces.infer_shape(x=(2, 3))[1] == [(2, 1), (2, 2)]
    assert x.as_nd_ndarray() is x


# -- indexing, groups, internals --------------------------------------------------------------
def test_indexing_groups_and_iteration():
    x = mx.sym.var("x")
    sp = mx.sym.split(x, num_outputs=3, name="sp")
    assert len(sp) == 3 and sp.name == "sp" and repr(sp) == "<Symbol sp>"
    assert sp[1].list_outputs() == ["sp_output1"] and sp[-1].list_outputs() == ["sp_output2"]
    assert sp["sp_output2"].list_outputs() == ["sp_output2"]
    assert sp[0:2].list_outputs() == ["sp_output0", "sp_output1"]
    assert [s.list_outputs()[0] for s in sp] == ["sp_output0", "sp_output1", "sp_output2"]
    group = mx.sym.Group([x, sp[1], x + 1])
    assert group.name is None and len(group) == 3
    assert repr(group) == f"<Symbol group [x, sp, {(group[2]).name}]>"
    assert group.attr("name") is None and group.list_attr() == {}
    with pytest.raises(IndexError):
        sp[3]
    with pytest.raises(ValueError, match="no output named 'nope'"):
        sp["nope"]
    with pytest.raises(TypeError, match="output positions"):
        sp[1.5]
    with pytest.raises(TypeError, match="non-empty list of Symbols"):
        mx.sym.Group([])
    with pytest.raises(TypeError, match="non-empty list of Symbols"):
        mx.sym.Group([x, 1])


def test_internals_and_children():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    act = mx.sym.Activation(fc, act_type="relu", name="relu")
    internals = act.get_internals()
    assert internals.list_outputs() == ["data", "fc_weight", "fc_bias", "fc_output",
                                        "relu_output"]
    assert internals["fc_output"].infer_shape(data=(2, 5))[1] == [(2, 3)]
    assert act.get_children().list_outputs() == ["fc_output"]
    assert fc.get_children().list_outputs() == ["data", "fc_weight", "fc_bias"]
    assert data.get_children() is None


def test_copies_and_pickles_are_independent_graphs():
    data = mx.sym.var("data")
    fc = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=[3, 3], num_filter=2) * 2, name="fc")
    for other in (copy.copy(fc), copy.deepcopy(fc), pickle.loads(pickle.dumps(fc))):
        assert other.tojson() == fc.tojson()        # parameter spellings and versions too
        other._set_attr(name="changed")
        assert fc.name == "fc"


# -- generated functions and namespaces -----------------------------------------------------
def test_generated_functions_have_mxnet_signatures():
    sig = inspect.signature(mx.sym.FullyConnected)
    assert list(sig.parameters) == ["data", "weight", "bias", "num_hidden", "no_bias",
                                    "flatten", "name", "attr", "out"]
    assert "Symbol" in mx.sym.FullyConnected.__doc__ and "attr :" in mx.sym.FullyConnected.__doc__
    assert next(iter(inspect.signature(mx.sym.add_n).parameters.values())).kind is \
        inspect.Parameter.VAR_POSITIONAL
    x = mx.sym.var("x")
    assert mx.sym.clip(x, 0, 1).list_attr() == {"a_min": "0", "a_max": "1"}   # positional
    assert mx.sym.add_n(x, x, x).list_attr() == {"num_args": "3"}
    assert mx.sym.Concat(*[x, x], dim=0).infer_shape(x=(2, 3))[1] == [(4, 3)]


def test_namespaces():
    x = mx.sym.var("x")
    assert mx.sym.op.FullyConnected is not None and mx.sym.op.FullyConnected.opdef.name == \
        "FullyConnected"
    assert mx.sym._internal._plus_scalar(x, scalar=1).attr("op_name") == "_plus_scalar"
    assert mx.sym.contrib.CTCLoss.opdef.name == "CTCLoss"
    with mx.name.NameManager():
        assert mx.sym.contrib.ctc_loss(x, x).name == "ctc_loss0"
    with pytest.raises(AttributeError, match="only '_' ops"):
        mx.sym._internal.FullyConnected
    assert not hasattr(mx.sym, "no_such_operator_anywhere")
    assert not hasattr(mx.sym.linalg, "no_such_linalg_op")
    assert "FullyConnected" in dir(mx.sym) and "Symbol" in dir(mx.sym)
    import mxnext.symbol.symbol as symbol_module
    assert symbol_module.Symbol is mx.sym.Symbol is mx.symbol.Symbol
    assert mx.sym.Symbol.__module__ == "mxnext.symbol.symbol"
    assert isinstance(x, mx.symbol._bind.BindMethods)


def test_ops_registered_later_appear():
    from opsdk import ElemwiseShape, ElemwiseType, register_op
    (register_op("_test_symbol_late").describe("Later.").set_num_inputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", ElemwiseType(1, 1))
     .add_argument("data", "NDArray-or-Symbol", "input"))
    assert mx.sym._test_symbol_late(mx.sym.var("x")).infer_shape(x=(2,))[1] == [(2,)]
    assert "_test_symbol_late" in dir(mx.sym)


# -- module functions -------------------------------------------------------------------------
def test_constant_symbols():
    shapes = [s.infer_shape()[1][0] for s in (
        mx.sym.zeros((2, 3)), mx.sym.ones(4), mx.sym.full((2,), 7), mx.sym.arange(0, 5),
        mx.sym.eye(3), mx.sym.eye(2, 3))]
    assert shapes == [(2, 3), (4,), (2,), (5,), (3, 3), (2, 3)]
    assert mx.sym.zeros((2,), dtype="int32").infer_type()[1] == [np.int32]
    assert mx.sym.full((2,), 7).list_attr()["value"] == "7.0"


def test_split_v2_by_sections_and_indices():
    x = mx.sym.var("x")
    assert mx.sym.split_v2(x, 2, axis=1).infer_shape(x=(2, 4))[1] == [(2, 2), (2, 2)]
    assert mx.sym.split_v2(x, (1, 3), axis=1).infer_shape(x=(2, 4))[1] == [(2, 1), (2, 2),
                                                                           (2, 1)]
    pieces = mx.sym.split_v2(x, (1, 2), axis=1, squeeze_axis=True)
    assert pieces.infer_shape(x=(2, 3))[1] == [(2,), (2,), (2,)]
    with pytest.raises(ValueError, match="int or a tuple"):
        mx.sym.split_v2(x, [1, 2])


def test_random_symbols():
    x = mx.sym.var("x")
    u = mx.sym.random.uniform(0, 1, shape=(2, 3), dtype="float64")
    assert u.attr("op_name") == "_random_uniform"
    assert (u.infer_shape()[1], u.infer_type()[1]) == ([(2, 3)], [np.float64])
    s = mx.sym.random.normal(x, x, shape=(4,))
    assert s.attr("op_name") == "_sample_normal" and s.infer_shape(x=(2,))[1] == [(2, 4)]
    assert mx.sym.random.randn(2, 2).infer_shape()[1] == [(2, 2)]
    assert mx.sym.random.exponential(2, shape=(1,)).list_attr()["lam"] == "0.5"
    assert mx.sym.random.shuffle(x).attr("op_name") == "_shuffle"
    assert mx.sym.random.multinomial(x).attr("op_name") == "_sample_multinomial"
    with pytest.raises(TypeError, match="all Symbols or all numbers"):
        mx.sym.random.uniform(x, 1)
    like = mx.sym.random.normal_like(x, loc=1.0)      # the _random_*_like ops, as MXNet
    assert like.attr("op_name") == "_random_normal_like" and like.infer_shape(x=(3,))[1] == [(3,)]
    assert not hasattr(mx.sym.random, "pdf_normal")    # MXNet keeps only *_like here


def test_rand_zipfian_symbols():
    sampled, count_true, count_sampled = mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 5, 10)
    assert sampled.infer_type()[1] == [np.int64] and sampled.infer_shape()[1] == [(5,)]
    assert count_true.infer_shape(t=(3,))[1] == [(3,)]
    assert count_sampled.infer_type()[1] == [np.float64]
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.sym.contrib.rand_zipfian(np.ones(3), 5, 10)


def test_unregistered_op_functions_name_the_op():
    with pytest.raises(OpNotFound, match="_linspace"):
        mx.sym.linspace(0, 1, 5)


@pytest.mark.parametrize("method", ["get_backend_symbol", "optimize_for"])
def test_partitioning_backends_are_refused_by_name(method):
    # example/neural_collaborative_filtering/ncf.py --calibration calls
    # net.get_backend_symbol('MKLDNN_QUANTIZE'): an MXNetError naming it, not AttributeError
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    with pytest.raises(MXNetError, match=f"{method}: backend='MKLDNN_QUANTIZE' is not supported"):
        getattr(net, method)("MKLDNN_QUANTIZE")
