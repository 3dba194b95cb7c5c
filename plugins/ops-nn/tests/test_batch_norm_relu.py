"""_contrib_BatchNormWithReLU: MXNet 1.9.1's results (fixtures/batch_norm_relu_ref.npz, written
by fixtures/make_batch_norm_relu_ref.py), the same values as BatchNorm then ReLU, its hidden
workspace output, dtypes and output requests."""

import os

import numpy as np
import pytest
from opsdk.testing import infer, op_def, parse, run_op

import mxnext as mx

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "batch_norm_relu_ref.npz"))
CASES = {"train": (dict(eps=1e-3, momentum=0.8, fix_gamma=False), True),
         "fixgamma": (dict(eps=2e-5), True),
         "global": (dict(eps=1e-3, fix_gamma=False, use_global_stats=True), True),
         "infer": (dict(eps=1e-3, fix_gamma=False), False)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    params, train = CASES[case]
    ref = {k[len(case) + 1:]: REF[k] for k in REF.files if k.startswith(case + "_")}
    args = [mx.nd.array(ref[k]) for k in ("x", "gamma", "beta")]
    aux = [mx.nd.array(ref[k]) for k in ("mm", "mv")]
    for a in args:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        out = mx.nd.contrib.BatchNormWithReLU(*args, *aux, output_mean_var=True, **params)
    got = dict(zip(("out", "mean", "var"), out))
    if "dx" in ref:
        mx.autograd.backward([out[0]], head_grads=[mx.nd.array(ref["og"])], train_mode=train)
        got.update(zip(("dx", "dgamma", "dbeta"), (a.grad for a in args)))
    got.update(mm_after=aux[0], mv_after=aux[1])
    for name, value in got.items():
        np.testing.assert_allclose(value.asnumpy(), ref[name], rtol=1e-5, atol=1e-5,
                                   err_msg=f"{case}: {name}")


@pytest.mark.parametrize("shape, axis", [((4, 3, 5, 2), 1), ((3, 6, 4), -1)])
def test_equals_batch_norm_then_relu(shape, axis):
    rng = np.random.default_rng(1)
    x, head = rng.standard_normal(shape), rng.uniform(0, 1, shape)
    outs, grads = [], []
    for fused in (False, True):
        data = mx.sym.Variable("x")
        if fused:
            net = mx.sym.contrib.BatchNormWithReLU(data, fix_gamma=False, axis=axis, name="bn")
        else:
            net = mx.sym.Activation(mx.sym.BatchNorm(data, fix_gamma=False, axis=axis,
                                                     name="bn"), act_type="relu")
        exe = net.simple_bind(mx.cpu(), x=shape, grad_req="write")
        exe.arg_dict["x"][:] = x
        exe.arg_dict["bn_gamma"][:] = np.linspace(0.5, 2, exe.arg_dict["bn_gamma"].shape[0])
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(head))
        outs.append(exe.outputs[0].asnumpy())
        grads.append([g.asnumpy() for g in exe.grad_arrays] +
                     [a.asnumpy() for a in exe.aux_arrays])
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
    for fused, plain in zip(grads[1], grads[0]):
        np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-6)


def test_outputs_workspace_and_dtypes():
    net = mx.sym.contrib.BatchNormWithReLU(mx.sym.Variable("x"), name="bn")
    assert net.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert net.list_outputs() == ["bn_output"]
    opdef = op_def("_contrib_BatchNormWithReLU")
    p = parse(opdef, {"output_mean_var": True})
    _, out_shapes, in_types, out_types = infer(opdef, p, [(2, 3, 4), None, None, None, None],
                                               [np.float16] + [None] * 4)
    assert out_shapes == [(2, 3, 4), (3,), (3,), (2, 3, 4)]
    assert [np.dtype(t) for t in in_types] == [np.float16] + [np.float32] * 4
    assert [np.dtype(t) for t in out_types] == [np.float16] + [np.float32] * 3
    x = np.array([[-1.0, 2.0], [1.0, -2.0]], np.float32)
    out = run_op("_contrib_BatchNormWithReLU",
                 [x, np.ones(2, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32),
                  np.ones(2, np.float32)], {"eps": 0.0})
    np.testing.assert_allclose(out[0], [[0, 1], [1, 0]], atol=1e-6)
    np.testing.assert_array_equal(out[3], [[0, 1], [1, 0]])        # where the output is > 0


def test_add_to_adds_the_rectified_output():
    inputs = [np.array([[-1.0], [1.0]], np.float32), np.ones(1, np.float32),
              np.zeros(1, np.float32), np.zeros(1, np.float32), np.ones(1, np.float32)]
    before = np.full((2, 1), 5.0, np.float32)
    outputs = [before.copy(), np.zeros(1, np.float32), np.zeros(1, np.float32),
               np.zeros((2, 1), np.float32)]
    run_op("_contrib_BatchNormWithReLU", inputs, {"eps": 0.0},
           req=["add", "write", "write", "write"], outputs=outputs)
    np.testing.assert_allclose(outputs[0], [[5.0], [6.0]], atol=1e-6)
    np.testing.assert_array_equal(outputs[3], [[0], [1]])
