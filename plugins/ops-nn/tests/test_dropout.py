"""Dropout: identity at inference, mask and scale in training, axes, mode, gradient."""

import numpy as np
import pytest
from opsdk import ParamError
from opsdk.testing import eval_gradients, infer, op_def, parse, run_op

X = np.random.default_rng(0).uniform(1, 2, (200, 300))


def test_identity_at_inference():
    out, mask = run_op("Dropout", [X], {"p": 0.5}, is_train=False)
    np.testing.assert_array_equal(out, X)
    np.testing.assert_array_equal(mask, np.ones(X.shape))
    x = X.copy()   # in place: nothing to do
    assert run_op("Dropout", [x], {"p": 0.5}, req=["inplace", "write"],
                  outputs=[x, np.zeros(X.shape)], is_train=False)[0] is x
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_training_mask_and_scale(p):
    out, mask = run_op("Dropout", [X], {"p": p}, seed=1)
    kept = mask != 0
    # MXNet's scale is float32's 1 / (1 - p) whatever the dtype (9.999998 for p = 0.9)
    np.testing.assert_array_equal(mask[kept], np.float32(1) / (np.float32(1) - np.float32(p)))
    np.testing.assert_allclose(out, X * mask)
    # 60000 Bernoulli(1-p) draws: the kept fraction is within 5 standard deviations
    sd = np.sqrt(p * (1 - p) / X.size)
    assert abs(kept.mean() - (1 - p)) < 5 * sd
    again = run_op("Dropout", [X], {"p": p}, seed=1)[1]
    np.testing.assert_array_equal(mask, again)


def test_axes_share_the_mask():
    x = np.ones((4, 50, 6))
    out, mask = run_op("Dropout", [x], {"p": 0.5, "axes": (1,)}, seed=2)
    assert mask.shape == (4, 1, 6)
    np.testing.assert_array_equal(out, np.broadcast_to(mask, x.shape))
    assert infer(op_def("Dropout"), parse(op_def("Dropout"), {"axes": (0, -1)}), [(4, 5, 6)],
                 ["float32"])[1] == [(4, 5, 6), (1, 5, 1)]


def test_mode_always_drops_at_inference_and_p_zero_never():
    out, mask = run_op("Dropout", [X], {"p": 0.5, "mode": "always"}, is_train=False, seed=3)
    assert (mask == 0).any() and (mask == 2).any()
    np.testing.assert_allclose(out, X * mask)
    opdef = op_def("Dropout")
    assert opdef.get_attr("FResourceRequest")(parse(opdef, {"p": 0})) == []
    np.testing.assert_array_equal(run_op("Dropout", [X], {"p": 0})[0], X)


def test_gradient_is_the_mask():
    x = np.random.default_rng(4).standard_normal((3, 4, 5))
    mask = run_op("Dropout", [x], {"p": 0.4, "axes": (2,)}, seed=5)[1]
    gy = np.random.default_rng(6).standard_normal(x.shape)
    (gx,) = eval_gradients("Dropout", [x], [gy], {"p": 0.4, "axes": (2,)}, seed=5)
    np.testing.assert_allclose(gx, gy * mask)


def test_outputs_and_names():
    opdef = op_def("Dropout")
    p = parse(opdef, {})
    assert opdef.num_outputs(p) == 2 and opdef.num_visible_outputs(p) == 1
    assert opdef.list_output_names(p) == ["output", "mask"]


@pytest.mark.parametrize("kw, match", [({"p": 1.5}, "p"), ({"mode": "sometimes"}, "mode")])
def test_parameter_errors(kw, match):
    with pytest.raises(ParamError, match=match):
        parse(op_def("Dropout"), kw)


def test_p_one_gives_nan_as_mxnet():
    """MXNet 1.9: with p=1 the mask is 0 * (1/0), so output, mask and gradient are NaN."""
    x = np.ones((3, 4), np.float32)
    out, mask = run_op("Dropout", [x], {"p": 1.0}, is_train=True)
    assert np.isnan(out).all() and np.isnan(mask).all()
    out, mask = run_op("Dropout", [x], {"p": 1.0}, is_train=False)    # inference: identity
    np.testing.assert_array_equal(out, x)


def test_second_order_masks_the_head_gradient_again():
    import mxnext as mx
    x = mx.nd.ones((4, 6))
    x.attach_grad()
    with mx.autograd.record(train_mode=True):
        y = mx.nd.Dropout(x, p=0.5)
        (dx,) = mx.autograd.grad(y, x, create_graph=True, retain_graph=True)
        (ddx,) = mx.autograd.grad(dx, x, head_grads=mx.nd.ones((4, 6)) * 3, create_graph=True)
    mask = dx.asnumpy()                              # 0 or 1/(1-p) = 2 per element
    assert set(np.unique(mask)) <= {0.0, 2.0}
    assert ddx.asnumpy().tolist() == np.zeros((4, 6)).tolist()   # the mask's own gradient
    dy = mx.nd.ones((4, 6)) * 3
    again = run_op("_backward_Dropout", [dy.asnumpy(), mask], {"p": 0.5})[0]
    np.testing.assert_array_equal(again, 3 * mask)
