"""Activation: each act_type against numpy formulas, gradients from the output, in place."""

import numpy as np
import pytest
from opsdk.testing import check_backward, check_forward, run_op

X = np.linspace(-25, 25, 41).reshape(1, 41)

FORMULAS = {  # act_type: (f(x), f'(x))
    "relu": (lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(float)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    "tanh": (np.tanh, lambda x: 1 / np.cosh(x) ** 2),
    "softrelu": (lambda x: np.log1p(np.exp(x)), lambda x: 1 / (1 + np.exp(-x))),
    "softsign": (lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2),
}


@pytest.mark.parametrize("act_type", sorted(FORMULAS))
def test_forward_and_gradient(act_type):
    f, df = FORMULAS[act_type]
    check_forward("Activation", [X], f(X), {"act_type": act_type}, rtol=1e-12, atol=1e-12)
    gy = np.random.default_rng(0).standard_normal(X.shape)
    check_backward("Activation", [X], [gy], [gy * df(X)], {"act_type": act_type}, rtol=1e-9,
                   atol=1e-12)


@pytest.mark.parametrize("act_type, reads", [("relu", "output"), ("tanh", "output"),
                                             ("softsign", "data")])
def test_backward_reads_output_or_data(act_type, reads):
    """The backward node is fed the forward output (the data for softsign) besides the head
    gradient, so the data of relu/sigmoid/tanh/softrelu can be freed after the forward."""
    from mxnext.graph import NodeEntry, make_node, variable
    from opsdk.testing import op_def
    node = make_node("Activation", [NodeEntry(variable("x"), 0)], {"act_type": act_type})
    (entry,) = op_def("Activation").get_attr("FGradient")(node, [NodeEntry(variable("g"), 0)])
    second = entry.node.inputs[1]
    assert entry.node.op.name == "_backward_Activation"
    assert (second.node is node) == (reads == "output")


def test_in_place_forward_and_backward():
    x = X.copy()
    out = run_op("Activation", [x], {"act_type": "sigmoid"}, req="inplace", outputs=[x])[0]
    assert out is x
    np.testing.assert_allclose(x, FORMULAS["sigmoid"][0](X))
    gy = np.ones(X.shape)
    run_op("_backward_Activation", [gy, x], {"act_type": "sigmoid"}, req="inplace", outputs=[gy])
    np.testing.assert_allclose(gy, FORMULAS["sigmoid"][1](X), rtol=1e-9, atol=1e-15)


def test_float16_keeps_its_dtype():
    out = run_op("Activation", [X.astype(np.float16)], {"act_type": "softrelu"})[0]
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, FORMULAS["softrelu"][0](X), rtol=2e-3, atol=1e-3)


def test_input_names_as_mxnet():
    """MXNet's Activation has no FListInputNames: the argument is 'data' (its declared
    argument) and the executor monitor names the input 'input0'."""
    import mxnext as mx
    act = mx.sym.Activation(mx.sym.var("data"), act_type="relu", name="act")
    assert act.list_arguments() == ["data"]
    exe = act.simple_bind(mx.cpu(), data=(2, 3), grad_req="null")
    names = []
    exe.set_monitor_callback(lambda name, arr: names.append(name), monitor_all=True)
    exe.forward()
    mx.nd.waitall()
    assert names == ["data", "act_input0", "act_output"]
