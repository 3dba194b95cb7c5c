"""mxnext.test_utils' gradient and consistency checks on Symbols, run as MXNet runs them."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import test_utils as tu
from mxnext.base import MXNetError, ParamError

sym = mx.sym


def _needs_ops(*names):
    missing = [n for n in names if not hasattr(sym, n)]
    if missing:
        pytest.skip(f"ops {missing} are not registered (op plugins not loaded)")


def _message(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------- custom ops of these tests

class _Cube(mx.operator.CustomOp):
    def __init__(self, wrong):
        self.wrong = wrong

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        self.assign(out_data[0], req[0], x * x * x)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0]
        grad = out_grad[0] * x * x * (2 if self.wrong else 3)    # wrong: 2x^2 for 3x^2
        self.assign(in_grad[0], req[0], grad)


@mx.operator.register("tu_sym_cube")
class _CubeProp(mx.operator.CustomOpProp):
    def __init__(self, wrong="False"):
        super().__init__(need_top_grad=True)
        self.wrong = wrong == "True"

    def create_operator(self, ctx, shapes, dtypes):
        return _Cube(self.wrong)


class _AuxScale(mx.operator.CustomOp):
    """out = x * aux; in training the aux state then doubles, so a forward that does not start
    from the given aux state computes another function."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.scale = aux[0].copy()
        self.assign(out_data[0], req[0], in_data[0] * self.scale)
        if is_train:
            aux[0][:] = self.scale * 2

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale)


@mx.operator.register("tu_sym_aux_scale")
class _AuxScaleProp(mx.operator.CustomOpProp):
    def list_auxiliary_states(self):
        return ["scale"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _AuxScale()


def _fc_tanh():
    _needs_ops("FullyConnected", "Activation")
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=3, name="fc")
    return sym.Activation(fc, act_type="tanh", name="act")


def _fc_tanh_location(rng):
    return {"x": rng.uniform(-1, 1, (2, 4)), "fc_weight": rng.uniform(-1, 1, (3, 4)),
            "fc_bias": rng.uniform(-1, 1, (3,))}


def _fc_tanh_grads(loc, head):
    out = np.tanh(loc["x"] @ loc["fc_weight"].T + loc["fc_bias"])
    d = head * (1 - out ** 2)
    return out, {"x": d @ loc["fc_weight"], "fc_weight": d.T @ loc["x"], "fc_bias": d.sum(0)}


# ---------------------------------------------------------------- check_numeric_gradient

def test_numeric_gradient_of_a_layer_in_every_argument_form():
    net = _fc_tanh()
    np.random.seed(0)
    loc = _fc_tanh_location(np.random)
    tu.check_numeric_gradient(net, loc)                             # dict, float32 tolerances
    tu.check_numeric_gradient(net, [loc[n] for n in net.list_arguments()], dtype=np.float64)
    tu.check_numeric_gradient(net, loc, grad_nodes=["x", "fc_bias"], dtype=np.float64)
    tu.check_numeric_gradient(net, loc, grad_nodes={"x": "add", "fc_weight": "null",
                                                    "fc_bias": "write"}, dtype=np.float64)
    tu.check_numeric_gradient(net, {k: mx.nd.array(v) for k, v in loc.items()},
                              use_forward_train=False, ctx=mx.cpu(0),
                              grad_stype_dict={"x": "default"})


def test_numeric_gradient_of_elementwise_ops():
    _needs_ops("elemwise_mul", "exp", "tanh", "_mul_scalar")
    a, b = sym.Variable("a"), sym.Variable("b")
    np.random.seed(1)
    loc = {"a": np.random.uniform(-1, 1, (3, 2)), "b": np.random.uniform(-1, 1, (3, 2))}
    tu.check_numeric_gradient(sym.elemwise_mul(sym.exp(a), b) * 2, loc, dtype=np.float64)
    tu.check_numeric_gradient(a * b + a, loc)
    tu.check_numeric_gradient(sym.elemwise_mul(sym.tanh(a), b), loc, dtype=np.float16)


def test_numeric_gradient_catches_a_wrong_backward():
    x = sym.Variable("x")
    loc = [np.array([[0.5, -1.0, 1.5]])]
    tu.check_numeric_gradient(sym.Custom(x, op_type="tu_sym_cube"), loc, dtype=np.float64)
    msg = _message(tu.check_numeric_gradient, sym.Custom(x, op_type="tu_sym_cube", wrong=True),
                   loc, dtype=np.float64)
    assert "NUMERICAL_x" in msg and "BACKWARD_x" in msg
    # 'add' must add the gradient to what the buffer held, 'null' must leave it
    tu.check_numeric_gradient(sym.Custom(x, op_type="tu_sym_cube"), loc, grad_nodes={"x": "add"},
                              dtype=np.float64)
    tu.check_numeric_gradient(sym.Custom(x, op_type="tu_sym_cube", wrong=True), loc,
                              grad_nodes={"x": "null"}, dtype=np.float64)


def test_numeric_gradient_with_aux_states():
    _needs_ops("BatchNorm")
    bn = sym.BatchNorm(sym.Variable("x"), fix_gamma=False, name="bn")
    np.random.seed(2)
    loc = [np.random.uniform(-1, 1, (4, 3)), np.random.uniform(0.5, 1.5, (3,)),
           np.random.uniform(-1, 1, (3,))]
    aux = [np.random.uniform(-0.5, 0.5, (3,)), np.random.uniform(0.5, 1.5, (3,))]
    tu.check_numeric_gradient(bn, loc, aux, numeric_eps=1e-3, rtol=1e-2, atol=1e-4,
                              dtype=np.float64)
    tu.check_numeric_gradient(bn, loc, dict(zip(bn.list_auxiliary_states(), aux)),
                              numeric_eps=1e-3, rtol=1e-2, atol=1e-4, dtype=np.float64,
                              use_forward_train=False, grad_nodes=["bn_beta"])


def test_numeric_gradient_restores_aux_states_before_each_forward():
    # the op doubles its aux state in every training forward; the finite differences only
    # measure x * scale if every forward starts from the given state
    net = sym.Custom(sym.Variable("x"), op_type="tu_sym_aux_scale", name="s")
    assert net.list_auxiliary_states() == ["s_scale"]
    tu.check_numeric_gradient(net, [np.array([0.3, -0.7])], [np.array([1.5, 2.0])],
                              dtype=np.float64)
    exe = net.bind(mx.cpu(), args=[mx.nd.array([0.3, -0.7], dtype=np.float64)],
                   aux_states=[mx.nd.array([1.5, 2.0], dtype=np.float64)])
    drifted = tu.numeric_grad(exe, {"x": np.array([0.3, -0.7])}, eps=1e-3, dtype=np.float64)
    assert np.all(np.abs(drifted["x"] - [1.5, 2.0]) > 0.1)
    exact = tu.numeric_grad(exe, {"x": np.array([0.3, -0.7])}, {"s_scale": np.array([1.5, 2.0])},
                            eps=1e-3, dtype=np.float64)
    np.testing.assert_allclose(exact["x"], [1.5, 2.0], rtol=1e-9)


def test_location_lists_pair_by_zip_as_mxnet():
    """MXNet zips a list with list_arguments(): extra arrays are ignored (its test_mkldnn
    passes a bias to a no_bias Deconvolution), a missing one is an error."""
    x = sym.Variable("x")
    net = sym.Custom(x, op_type="tu_sym_cube")
    good = np.array([[0.5, -1.0, 1.5]])
    tu.check_numeric_gradient(net, [good, np.ones((7,))], dtype=np.float64)
    tu.check_symbolic_forward(net, (good, "ignored"), [good ** 3], dtype=np.float64)
    tu.check_symbolic_backward(net, [good, None], [np.ones((1, 3))], [3 * good ** 2],
                               dtype=np.float64)
    with pytest.raises(ParamError, match="'location' expected 1 arrays"):
        tu.check_symbolic_forward(net, [], [good ** 3])
    with pytest.raises(ParamError, match="'location' expected values for exactly"):
        tu.check_symbolic_forward(net, {"x": good, "y": good}, [good ** 3])
    _needs_ops("BatchNorm")
    bn = sym.BatchNorm(x, fix_gamma=False, name="bn")
    loc = [np.random.uniform(-1, 1, (4, 3)), np.ones(3), np.zeros(3)]
    aux = [np.zeros(3), np.ones(3)]
    tu.check_numeric_gradient(bn, loc + [np.ones(2)], aux + [np.ones(5)], numeric_eps=1e-3,
                              rtol=1e-2, atol=1e-4, dtype=np.float64)
    with pytest.raises(ParamError, match="'aux_states' expected 2 arrays"):
        tu.check_numeric_gradient(bn, loc, aux[:1], dtype=np.float64)


def test_numeric_gradient_argument_errors():
    net = _fc_tanh()
    loc = _fc_tanh_location(np.random.default_rng(3))
    with pytest.raises(ParamError, match="'location' expected values for exactly"):
        tu.check_numeric_gradient(net, {"x": loc["x"]})
    with pytest.raises(ParamError, match="'location' expected 3 arrays"):
        tu.check_numeric_gradient(net, [loc["x"]])
    with pytest.raises(ParamError, match=r"unknown inputs \['w'\]"):
        tu.check_numeric_gradient(net, loc, grad_nodes=["w"])
    with pytest.raises(ParamError, match="'grad_stype_dict' expected storage types"):
        tu.check_numeric_gradient(net, loc, grad_stype_dict={"x": "sparse"})
    with pytest.raises(ParamError, match="'numeric_eps' expected >= 1e-5 for float32"):
        tu.check_numeric_gradient(net, loc, numeric_eps=1e-6)
    with pytest.raises(ParamError, match="'dtype' expected float16, float32 or float64"):
        tu.check_numeric_gradient(net, loc, dtype=np.int32)
    _needs_ops("SliceChannel", "BatchNorm")
    two = sym.SliceChannel(sym.Variable("x"), num_outputs=2, name="sc")
    with pytest.raises(ParamError, match="one output"):
        tu.check_numeric_gradient(two, [np.ones((2, 4))])
    with pytest.raises(ParamError, match=r"'aux_states' expected arrays for .*bn_moving_mean"):
        tu.check_numeric_gradient(sym.BatchNorm(sym.Variable("x"), name="bn"),
                                  [np.ones((2, 3)), np.ones(3), np.ones(3)])


# ---------------------------------------------------------------- numeric_grad

def test_numeric_grad_of_an_executor():
    _needs_ops("elemwise_mul")
    a, b = sym.Variable("a"), sym.Variable("b")
    x, y = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    exe = sym.elemwise_mul(a, b).bind(mx.cpu(), args={"a": mx.nd.array(x, dtype=np.float64),
                                                      "b": mx.nd.array(y, dtype=np.float64)})
    g = tu.numeric_grad(exe, {"a": x, "b": y}, eps=1e-3, dtype=np.float64)
    np.testing.assert_allclose(g["a"], y, rtol=1e-9)
    np.testing.assert_allclose(g["b"], x, rtol=1e-9)
    assert g["a"].dtype == np.float64
    g = tu.numeric_grad(exe, [x * 2], eps=1e-3, dtype=np.float64)         # list: argument order
    assert list(g) == ["a"]
    np.testing.assert_allclose(g["a"], y, rtol=1e-9)
    exe.forward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), x * 2 * y)     # left as located
    # integer arguments are not stepped (MXNet's): their gradient is zero
    assert not tu.numeric_grad(exe, {"a": np.array([1, 2, 3])}, dtype=np.float64)["a"].any()
    with pytest.raises(ParamError, match=r"arguments \['c'\] are not the executor's"):
        tu.numeric_grad(exe, {"c": x})
    with pytest.raises(ParamError, match="are for a callable"):
        tu.numeric_grad(exe, {"a": x}, grad_nodes=["a"])


# ---------------------------------------------------------------- check_symbolic_forward

def test_symbolic_forward_of_a_layer():
    net = _fc_tanh()
    loc = _fc_tanh_location(np.random.default_rng(4))
    out, _ = _fc_tanh_grads(loc, 1.0)
    outs = tu.check_symbolic_forward(net, loc, [out])
    assert len(outs) == 1 and outs[0].dtype == np.float32
    assert tu.check_symbolic_forward(net, loc, {"act_output": out},
                                     dtype=np.float64)[0].dtype == np.float64
    msg = _message(tu.check_symbolic_forward, net, loc, [out + 1e-2])
    assert "EXPECTED_act_output" in msg and "FORWARD_act_output" in msg
    with pytest.raises(ParamError, match=r"'expected' expected keys \['act_output'\]"):
        tu.check_symbolic_forward(net, loc, {"output0": out})


def test_symbolic_forward_of_several_outputs():
    _needs_ops("SliceChannel")
    net = sym.SliceChannel(sym.Variable("x"), num_outputs=2, axis=1, name="sc")
    x = np.arange(8.0).reshape(2, 4)
    outs = tu.check_symbolic_forward(net, [x], [x[:, :2], x[:, 2:]])
    assert [o.shape for o in outs] == [(2, 2), (2, 2)]
    tu.check_symbolic_forward(net, [x], {"sc_output1": x[:, 2:], "sc_output0": x[:, :2]})
    tu.check_symbolic_forward(net, [x], [x[:, :2]])              # the first outputs, as MXNet
    assert "EXPECTED_sc_output1" in _message(tu.check_symbolic_forward, net, [x],
                                             [x[:, :2], x[:, :2]])
    with pytest.raises(ParamError, match="expected 2 arrays"):
        tu.check_symbolic_forward(net, [x], [x[:, :2], x[:, 2:], x])


def test_symbolic_forward_with_aux_states_runs_in_predict_mode():
    _needs_ops("BatchNorm")
    bn = sym.BatchNorm(sym.Variable("x"), fix_gamma=False, eps=1e-3, name="bn")
    rng = np.random.default_rng(5)
    x, gamma, beta = rng.normal(size=(4, 3)), rng.uniform(0.5, 2, 3), rng.normal(size=3)
    mean, var = rng.normal(size=3), rng.uniform(0.5, 2, 3)
    want = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta              # the moving statistics
    tu.check_symbolic_forward(bn, [x, gamma, beta], [want], aux_states=[mean, var],
                              dtype=np.float64)
    tu.check_symbolic_forward(bn, [x, gamma, beta], [want], dtype=np.float64,
                              aux_states={"bn_moving_var": var, "bn_moving_mean": mean})
    assert "EXPECTED_bn_output" in _message(tu.check_symbolic_forward, bn, [x, gamma, beta],
                                            [want], aux_states=[mean, var * 2])
    with pytest.raises(ParamError, match="'aux_states' expected values for exactly"):
        tu.check_symbolic_forward(bn, [x, gamma, beta], [want], aux_states={"bn_moving_var": var})


def test_symbolic_forward_dtypes_and_equal_nan():
    _needs_ops("elemwise_add", "log")
    a, b = sym.Variable("a"), sym.Variable("b")
    x = np.array([1.0, 2.0], dtype=np.float16)
    out = tu.check_symbolic_forward(sym.elemwise_add(a, b), [x, x], [x * 2], dtype="asnumpy")
    assert out[0].dtype == np.float16
    nan = np.array([-1.0, 1.0])
    with np.errstate(invalid="ignore"):
        want = np.log(nan)
    assert "EXPECTED_log0_output" in _message(tu.check_symbolic_forward, sym.log(a, name="log0"),
                                              [nan], [want])
    tu.check_symbolic_forward(sym.log(a), [nan], [want], equal_nan=True)


# ---------------------------------------------------------------- check_symbolic_backward

def test_symbolic_backward_of_a_layer_in_every_argument_form():
    net = _fc_tanh()
    loc = _fc_tanh_location(np.random.default_rng(6))
    head = np.random.default_rng(7).uniform(-1, 1, (2, 3))
    _, grads = _fc_tanh_grads(loc, head)
    got = tu.check_symbolic_backward(net, loc, [head], grads)
    assert sorted(got) == ["fc_bias", "fc_weight", "x"] and got["x"].dtype == np.float32
    in_order = [grads[n] for n in net.list_arguments()]
    for req in ("write", "add", "null", ["add", "write", "null"],
                {"x": "null", "fc_weight": "add", "fc_bias": "write"}):
        tu.check_symbolic_backward(net, loc, {"act_output": head}, in_order, grad_req=req,
                                   dtype=np.float64)
    only_x = tu.check_symbolic_backward(net, loc, [mx.nd.array(head)], [grads["x"]])
    assert list(only_x) == ["x"]                          # the first arguments only, as MXNet
    msg = _message(tu.check_symbolic_backward, net, loc, [head], {"fc_bias": grads["fc_bias"] * 2})
    assert "EXPECTED_fc_bias" in msg and "BACKWARD_fc_bias" in msg
    # 'add' is checked as what was added to the buffer's random start
    assert "EXPECTED_x" in _message(tu.check_symbolic_backward, net, loc, [head],
                                    {"x": grads["x"] * 2}, grad_req={"x": "add"})


def test_symbolic_backward_of_elementwise_ops_and_several_outputs():
    _needs_ops("elemwise_mul", "SliceChannel")
    a, b = sym.Variable("a"), sym.Variable("b")
    x, y, head = np.array([1.0, 2.0]), np.array([3.0, -4.0]), np.array([0.5, 2.0])
    tu.check_symbolic_backward(sym.elemwise_mul(a, b), [x, y], [head], [y * head, x * head])
    assert "BACKWARD_b" in _message(tu.check_symbolic_backward, sym.elemwise_mul(a, b), [x, y],
                                    [head], [y * head, y * head])
    net = sym.SliceChannel(a, num_outputs=2, axis=1, name="sc")
    h0, h1 = np.full((2, 1), 2.0), np.full((2, 1), -1.0)
    want = np.array([[2.0, -1.0], [2.0, -1.0]])
    tu.check_symbolic_backward(net, [np.ones((2, 2))], [h0, h1], [want])
    tu.check_symbolic_backward(net, [np.ones((2, 2))], {"sc_output1": h1, "sc_output0": h0},
                               {"a": want}, grad_req="add")
    assert "EXPECTED_a" in _message(tu.check_symbolic_backward, net, [np.ones((2, 2))], [h1, h0],
                                    [want])


def test_symbolic_backward_add_is_judged_in_float64_as_in_mxnet():
    # MXNet subtracts the float64 draw from the float32 buffer: against float64 expectations
    # the difference is judged at float64 tolerances, which the float32 buffer cannot meet
    _needs_ops("elemwise_mul")
    net = sym.elemwise_mul(sym.Variable("a"), sym.Variable("b"))
    small = np.full(50, 1e-3)
    np.random.seed(9)
    assert "rtol=1e-05" in _message(tu.check_symbolic_backward, net, [small, small],
                                    [np.ones(50)], [small, small], grad_req="add")
    tu.check_symbolic_backward(net, [small, small], [np.ones(50)],
                               [small.astype(np.float32)] * 2, grad_req="add")


def test_symbolic_backward_heads_and_losses():
    _needs_ops("elemwise_mul", "SoftmaxOutput")
    a, b = sym.Variable("a"), sym.Variable("b")
    with pytest.raises(MXNetError, match="not a loss"):               # as MXNet's executor
        tu.check_symbolic_backward(sym.elemwise_mul(a, b), [np.ones(2), np.ones(2)], None,
                                   [np.ones(2), np.ones(2)])
    logits, label = np.array([[1.0, 2.0, 0.5]]), np.array([1.0])
    p = np.exp(logits) / np.exp(logits).sum()
    net = sym.SoftmaxOutput(sym.Variable("data"), sym.Variable("label"), name="sm")
    tu.check_symbolic_backward(net, {"data": logits, "label": label}, None,
                               {"data": p - [[0.0, 1.0, 0.0]]})
    a_val = np.array([2.0, 3.0])                  # extra head gradients are ignored, as MXNet
    tu.check_symbolic_backward(sym.elemwise_mul(a, b), [a_val, np.ones(2)],
                               [np.ones(2), np.ones(5)], [np.ones(2), a_val])


def test_symbolic_backward_argument_errors():
    _needs_ops("elemwise_mul")
    net = sym.elemwise_mul(sym.Variable("a"), sym.Variable("b"))
    loc, ones = [np.ones(2), np.ones(2)], np.ones(2)
    with pytest.raises(ParamError, match=r"names inputs \['z'\]"):
        tu.check_symbolic_backward(net, loc, [ones], {"z": ones})
    with pytest.raises(ParamError, match="a list of at most 2 gradients"):
        tu.check_symbolic_backward(net, loc, [ones], [ones, ones, ones])
    with pytest.raises(ParamError, match="got ndarray of 2"):
        tu.check_symbolic_backward(net, loc, [ones], ones)
    with pytest.raises(ParamError, match=r"missing \['b'\]"):
        tu.check_symbolic_backward(net, loc, [ones], [ones, ones], grad_req={"a": "write"})
    with pytest.raises(ParamError, match="'write', 'add' or 'null'"):
        tu.check_symbolic_backward(net, loc, [ones], [ones, ones], grad_req="sum")
    with pytest.raises(ParamError, match="'grad_stypes' expected storage types"):
        tu.check_symbolic_backward(net, loc, [ones], [ones, ones], grad_stypes={"a": "coo"})
    grads = tu.check_symbolic_backward(net, loc, [ones], [ones, ones],
                                       grad_stypes={"a": "row_sparse"})
    assert grads["a"].stype == "row_sparse" and grads["b"].stype == "default"
    tu.check_symbolic_backward(net, loc, [ones], [ones, ones], grad_stypes={"a": "default"})


# ---------------------------------------------------------------- simple_forward

def test_simple_forward_of_symbols():
    _needs_ops("elemwise_mul", "SliceChannel")
    a, b = sym.Variable("a"), sym.Variable("b")
    np.testing.assert_array_equal(tu.simple_forward(sym.elemwise_mul(a, b), a=np.array([2.0]),
                                                    b=np.array([3.0])), [6.0])
    two = tu.simple_forward(sym.SliceChannel(a, num_outputs=2), a=np.arange(4.0).reshape(2, 2))
    assert isinstance(two, list) and [o.tolist() for o in two] == [[[0.0], [2.0]], [[1.0], [3.0]]]


# ---------------------------------------------------------------- check_consistency

def test_consistency_of_a_layer_across_dtypes_and_engines():
    net = _fc_tanh()
    ctx_list = [{"ctx": mx.cpu(0), "x": (2, 4), "type_dict": {"x": np.float64}},
                {"ctx": mx.cpu(0), "x": (2, 4)},
                {"ctx": mx.cpu(0), "x": (2, 4), "engine": "NaiveEngine"},
                {"ctx": mx.cpu(0), "x": (2, 4), "type_dict": {"x": np.float16}}]
    np.random.seed(8)
    params = {}
    gt = tu.check_consistency(net, ctx_list, arg_params=params)
    assert sorted(gt) == ["act_output", "fc_bias", "fc_weight", "x"]
    assert gt["act_output"].dtype == np.float64 and gt["fc_weight"].dtype == np.float64
    assert sorted(params) == ["fc_bias", "fc_weight", "x"]          # filled in, as MXNet
    # the reference is the float64 setting: its train-mode output and gradients
    _, grads = _fc_tanh_grads(params, np.tanh(params["x"] @ params["fc_weight"].T
                                              + params["fc_bias"]).astype(np.float16))
    np.testing.assert_allclose(gt["fc_bias"].asnumpy(), grads["fc_bias"], rtol=1e-3)
    gt = tu.check_consistency(net, ctx_list[:2], grad_req={"x": "null", "fc_weight": "write",
                                                           "fc_bias": "add"})
    assert gt["x"] is None and gt["fc_weight"] is not None
    assert sorted(tu.check_consistency(net, ctx_list[:2], grad_req="null")) == ["act_output"]


def test_consistency_of_several_outputs_and_aux_states():
    _needs_ops("SliceChannel", "BatchNorm")
    net = sym.SliceChannel(sym.Variable("x"), num_outputs=2, name="sc")
    ctx_list = [{"x": (2, 4), "type_dict": {"x": np.float64}}, {"x": (2, 4)}]
    gt = tu.check_consistency(net, ctx_list, use_uniform=True, scale=2.0)
    assert sorted(gt) == ["sc_output0", "sc_output1", "x"]
    assert np.abs(gt["sc_output0"].asnumpy()).max() <= 1.84
    bn = sym.BatchNorm(sym.Variable("x"), fix_gamma=False, name="bn")
    ctx_list = [{"x": (4, 3), "type_dict": {"x": np.float64}}, {"x": (4, 3)}]
    aux = {"bn_moving_var": np.ones(3)}
    gt = tu.check_consistency(bn, ctx_list, aux_params=aux)
    assert aux["bn_moving_mean"] == 0 and sorted(gt) == ["bn_beta", "bn_gamma", "bn_output", "x"]


def test_consistency_catches_a_disagreeing_setting():
    _needs_ops("_mul_scalar")
    x = sym.Variable("x")
    right, wrong = sym._mul_scalar(x, scalar=2.0, name="y"), sym._mul_scalar(x, scalar=2.01,
                                                                             name="y")
    ctx_list = [{"x": (5,), "type_dict": {"x": np.float64}}, {"x": (5,)}]
    assert "predict setting 1" in _message(tu.check_consistency, [right, wrong], ctx_list)
    tu.check_consistency([right, wrong], ctx_list, rtol=1e-2, atol=1e-2)
    tu.check_consistency([right, wrong], ctx_list, raise_on_err=False)   # reports, goes on
    params = {}
    gt = tu.check_consistency(right, ctx_list, arg_params=params)
    tu.check_consistency(right, ctx_list, arg_params=params, ground_truth=gt)
    off = {k: v + 1 for k, v in gt.items()}
    assert "setting 0" in _message(tu.check_consistency, right, ctx_list[:1], arg_params=params,
                                   ground_truth=off)
    with pytest.raises(ParamError, match="same arguments and outputs"):
        tu.check_consistency([right, sym._mul_scalar(x, scalar=2.0, name="z")], ctx_list)
    with pytest.raises(ParamError, match="not a mix"):
        tu.check_consistency([right, lambda x: x * 2], ctx_list)


def test_consistency_of_a_custom_op():
    x = sym.Variable("x")
    ctx_list = [{"x": (2, 3), "type_dict": {"x": np.float64}}, {"x": (2, 3)}]
    tu.check_consistency(sym.Custom(x, op_type="tu_sym_cube", name="c"), ctx_list)
    # the float64 setting runs the right backward, the float32 one a wrong one
    msg = _message(tu.check_consistency, [sym.Custom(x, op_type="tu_sym_cube", name="c"),
                                          sym.Custom(x, op_type="tu_sym_cube", name="c",
                                                     wrong=True)], ctx_list)
    assert "train setting 1" in msg and "at x" in msg


class _EngineSpy(mx.operator.CustomOp):
    seen = []

    def forward(self, is_train, req, in_data, out_data, aux):
        self.seen.append(type(mx.engine.get()).__name__)
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("tu_sym_engine_spy")
class _EngineSpyProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _EngineSpy()


def test_consistency_runs_each_setting_on_its_engine():
    _EngineSpy.seen.clear()
    net = sym.Custom(sym.Variable("x"), op_type="tu_sym_engine_spy")
    default = type(mx.engine.get()).__name__
    tu.check_consistency(net, [{"x": (2,)}, {"x": (2,), "engine": "NaiveEngine"}])
    assert _EngineSpy.seen == [default, "NaiveEngine"] * 2          # predict, then train
    assert type(mx.engine.get()).__name__ == default
    with pytest.raises(ParamError, match="'engine' expected one of"):
        tu.check_consistency(net, [{"x": (2,)}, {"x": (2,), "engine": "Naive"}])
