"""Second-order gradients through the frontend: gradient rules built from differentiable
ops (create_graph=True), checked against analytic second derivatives."""

import numpy as np
import pytest
from opsdk.testing import check_numeric_gradient

import mxnext as mx
from mxnext import autograd as ag
from mxnext import nd

X = np.array([[0.3, -0.7, 1.2], [0.9, -1.4, 0.5]])
POS = np.array([[0.6, 1.3, 2.1], [0.8, 1.7, 0.4]])
UNIT = np.array([[0.3, -0.7, 0.2], [0.5, -0.4, 0.1]])      # inside (-1, 1)


def _second(f, x0):
    """(d f/dx, d2 f/dx2) elementwise, for an elementwise ``f``."""
    x = nd.array(x0)
    x.attach_grad()
    with ag.record():
        dx = ag.grad(f(x), [x], create_graph=True)[0]
    dx.backward()
    return dx.asnumpy(), x.grad.asnumpy()


def _sig(x):
    return 1 / (1 + np.exp(-x))


# name: (f, input, analytic f', analytic f'')
CASES = {
    "mul_frontend": (lambda x: x * x, X, lambda x: 2 * x, lambda x: 2 + 0 * x),
    "elemwise_mul": (lambda x: nd.elemwise_mul(x, x), X, lambda x: 2 * x, lambda x: 2 + 0 * x),
    "square": (nd.square, X, lambda x: 2 * x, lambda x: 2 + 0 * x),
    "exp": (nd.exp, X, np.exp, np.exp),
    "log": (nd.log, POS, lambda x: 1 / x, lambda x: -1 / x ** 2),
    "sin": (nd.sin, X, np.cos, lambda x: -np.sin(x)),
    "cos": (nd.cos, X, lambda x: -np.sin(x), lambda x: -np.cos(x)),
    "tanh": (nd.tanh, X, lambda x: 1 - np.tanh(x) ** 2,
             lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (nd.sigmoid, X, lambda x: _sig(x) * (1 - _sig(x)),
                lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x))),
    "negative_square": (lambda x: nd.negative(nd.square(x)), X, lambda x: -2 * x,
                        lambda x: -2 + 0 * x),
    "scalar_mul_div": (lambda x: (x * 3) * x / 2, X, lambda x: 3 * x, lambda x: 3 + 0 * x),
    "scalar_plus_minus": (lambda x: (x + 1) * (x - 2), X, lambda x: 2 * x - 1,
                          lambda x: 2 + 0 * x),
    "scalar_rminus": (lambda x: (1 - x) * nd.exp(x), X, lambda x: -x * np.exp(x),
                      lambda x: -(1 + x) * np.exp(x)),
    "elemwise_add_sub": (lambda x: nd.elemwise_sub(nd.elemwise_add(nd.sin(x), x * x), x), X,
                         lambda x: np.cos(x) + 2 * x - 1, lambda x: 2 - np.sin(x)),
    "elemwise_div": (lambda x: nd.elemwise_div(nd.ones_like(x), x), POS, lambda x: -1 / x ** 2,
                     lambda x: 2 / x ** 3),
    "frontend_div": (lambda x: 1 / (x + 1) + x / 2, POS, lambda x: -1 / (x + 1) ** 2 + 0.5,
                     lambda x: 2 / (x + 1) ** 3),
    "chain": (lambda x: nd.exp(nd.sin(x)), X, lambda x: np.cos(x) * np.exp(np.sin(x)),
              lambda x: (np.cos(x) ** 2 - np.sin(x)) * np.exp(np.sin(x))),
    "power_scalar": (lambda x: x ** 3, X, lambda x: 3 * x ** 2, lambda x: 6 * x),
    "power_scalar_half": (lambda x: x ** 0.5, POS, lambda x: 0.5 * x ** -0.5,
                          lambda x: -0.25 * x ** -1.5),
    "sqrt": (nd.sqrt, POS, lambda x: 0.5 / np.sqrt(x), lambda x: -0.25 * x ** -1.5),
    # the unary ops MXNet 1.9 differentiates twice as well
    "reciprocal": (nd.reciprocal, POS, lambda x: -1 / x ** 2, lambda x: 2 / x ** 3),
    "rsqrt": (nd.rsqrt, POS, lambda x: -0.5 * x ** -1.5, lambda x: 0.75 * x ** -2.5),
    "rcbrt": (nd.rcbrt, POS, lambda x: -x ** (-4 / 3) / 3, lambda x: 4 / 9 * x ** (-7 / 3)),
    "cbrt": (nd.cbrt, POS, lambda x: x ** (-2 / 3) / 3, lambda x: -2 / 9 * x ** (-5 / 3)),
    "expm1": (nd.expm1, X, np.exp, np.exp),
    "log1p": (nd.log1p, POS, lambda x: 1 / (1 + x), lambda x: -1 / (1 + x) ** 2),
    "log2": (nd.log2, POS, lambda x: 1 / (x * np.log(2)), lambda x: -1 / (x ** 2 * np.log(2))),
    "log10": (nd.log10, POS, lambda x: 1 / (x * np.log(10)),
              lambda x: -1 / (x ** 2 * np.log(10))),
    "tan": (nd.tan, UNIT, lambda x: 1 / np.cos(x) ** 2,
            lambda x: 2 * np.tan(x) / np.cos(x) ** 2),
    "arcsin": (nd.arcsin, UNIT, lambda x: (1 - x ** 2) ** -0.5, lambda x: x * (1 - x ** 2) ** -1.5),
    "arccos": (nd.arccos, UNIT, lambda x: -(1 - x ** 2) ** -0.5,
               lambda x: -x * (1 - x ** 2) ** -1.5),
    "arctan": (nd.arctan, X, lambda x: 1 / (1 + x ** 2), lambda x: -2 * x / (1 + x ** 2) ** 2),
    "sinh": (nd.sinh, X, np.cosh, np.sinh),
    "cosh": (nd.cosh, X, np.sinh, np.cosh),
    # MXNet 1.9 gives these two the opposite sign of the true f'' (kept for compatibility)
    "arcsinh": (nd.arcsinh, X, lambda x: (x ** 2 + 1) ** -0.5, lambda x: x * (x ** 2 + 1) ** -1.5),
    "arccosh": (nd.arccosh, POS + 1, lambda x: (x ** 2 - 1) ** -0.5,
                lambda x: x * (x ** 2 - 1) ** -1.5),
    "arctanh": (nd.arctanh, UNIT, lambda x: 1 / (1 - x ** 2), lambda x: 2 * x / (1 - x ** 2) ** 2),
    "radians": (nd.radians, X, lambda x: np.pi / 180 + 0 * x, lambda x: 0 * x),
    "degrees": (nd.degrees, X, lambda x: 180 / np.pi + 0 * x, lambda x: 0 * x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative(name):
    f, x0, d1, d2 = CASES[name]
    dx, dxx = _second(f, x0)
    np.testing.assert_allclose(dx, d1(x0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dxx, d2(x0), rtol=1e-4, atol=1e-5)


def test_grad_of_grad_with_autograd_grad():
    x = nd.array(X)
    x.attach_grad()
    with ag.record():
        dx = ag.grad(nd.sin(x) * x, [x], create_graph=True)[0]   # cos(x) x + sin(x)
    dxx = ag.grad(dx, [x])[0]
    np.testing.assert_allclose(dxx.asnumpy(), 2 * np.cos(X) - X * np.sin(X), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("mul", [lambda a, b: a * b, nd.elemwise_mul])
def test_mixed_partials_of_product(mul):
    """f = x * x * y: df/dx = 2xy, d2f/dxdx = 2y, d2f/dxdy = 2x."""
    y0 = POS
    x, y = nd.array(X), nd.array(y0)
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        dfdx = ag.grad(mul(mul(x, x), y), [x], create_graph=True)[0]
    np.testing.assert_allclose(dfdx.asnumpy(), 2 * X * y0, rtol=1e-5)
    dxx, dxy = ag.grad(dfdx, [x, y])
    np.testing.assert_allclose(dxx.asnumpy(), 2 * y0, rtol=1e-5)
    np.testing.assert_allclose(dxy.asnumpy(), 2 * X, rtol=1e-5)


def test_broadcast_mixed_partials():
    """x (2, 3), y (1, 3): f = sum(x * x * y + x / y)."""
    y0 = POS[:1]
    x, y = nd.array(X), nd.array(y0)
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        f = x * x * y + x / y
        dfdx, dfdy = ag.grad(f, [x, y], create_graph=True)
    np.testing.assert_allclose(dfdx.asnumpy(), 2 * X * y0 + 1 / y0, rtol=1e-5)
    np.testing.assert_allclose(dfdy.asnumpy(), (X * X - X / y0 ** 2).sum(0, keepdims=True),
                               rtol=1e-5)
    dxx, dxy = ag.grad(dfdx, [x, y], retain_graph=True)
    np.testing.assert_allclose(dxx.asnumpy(), np.broadcast_to(2 * y0, X.shape), rtol=1e-5)
    np.testing.assert_allclose(dxy.asnumpy(), (2 * X - 1 / y0 ** 2).sum(0, keepdims=True),
                               rtol=1e-5)
    dyx, dyy = ag.grad(dfdy, [x, y])
    np.testing.assert_allclose(dyx.asnumpy(), 2 * X - 1 / y0 ** 2, rtol=1e-5)
    np.testing.assert_allclose(dyy.asnumpy(), (2 * X / y0 ** 3).sum(0, keepdims=True),
                               rtol=1e-5)


@pytest.mark.parametrize("mul", [lambda a, b: a * b, nd.elemwise_mul])
def test_head_gradient_is_differentiated(mul):
    """grad(x * y, x, head_grads=w) = w * y, which is differentiable in w and y."""
    x, y, w = nd.array(X), nd.array(POS), nd.array(np.full(X.shape, 0.5))
    for v in (x, y, w):
        v.attach_grad()
    with ag.record():
        g = ag.grad(mul(x, y), [x], head_grads=w, create_graph=True)[0]
        h = nd.sin(g)
    gw, gy = ag.grad(h, [w, y])
    np.testing.assert_allclose(gw.asnumpy(), np.cos(0.5 * POS) * POS, rtol=1e-5)
    np.testing.assert_allclose(gy.asnumpy(), np.cos(0.5 * POS) * 0.5, rtol=1e-5)


def test_first_order_unchanged_without_create_graph():
    x = nd.array(X)
    x.attach_grad()
    with ag.record():
        y = nd.tanh(x) * nd.exp(x) / (1 - x)
    y.backward()
    want = ((1 - np.tanh(X) ** 2) * np.exp(X) / (1 - X) + np.tanh(X) * np.exp(X) / (1 - X)
            + np.tanh(X) * np.exp(X) / (1 - X) ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-4)


_SHAPES = [[(2, 3), (2, 3), (1, 3)], [(2, 4, 3), (2, 1, 3), (4, 1)], [(3,), (3,), (3,)]]


@pytest.mark.parametrize("row", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("shapes", _SHAPES, ids=str)
def test_broadcast_backward_ops_gradients_match_numeric(row, shapes):
    """The FGradient of ``_backward_broadcast_<row>`` (what makes broadcast ops twice
    differentiable) against central differences."""
    rng = np.random.default_rng(3)
    og, a, b = (rng.uniform(-1, 1, s) for s in shapes)
    if row == "div":
        b = rng.uniform(0.5, 2.0, shapes[2])
    check_numeric_gradient(f"_backward_broadcast_{row}", [og, a, b], rtol=1e-4, atol=1e-6)


def test_first_order_only_op_names_its_backward_op():
    x = nd.array(POS)
    x.attach_grad()
    with ag.record():
        dx = ag.grad(nd.softsign(x) * x, [x], create_graph=True)[0]
    with pytest.raises(mx.base.MXNetError, match="_backward_softsign"):
        dx.backward()


@pytest.mark.parametrize("reduce, scale", [(nd.sum, 1.0), (nd.mean, 1 / X.size)])
def test_loss_reduced_by_sum_or_mean_is_twice_differentiable(reduce, scale):
    x = nd.array(X)
    x.attach_grad()
    with ag.record():
        dx = ag.grad(reduce(x * x * x), [x], create_graph=True)[0]
    dx.backward()
    np.testing.assert_allclose(dx.asnumpy(), 3 * X ** 2 * scale, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * X * scale, rtol=1e-5)


@pytest.mark.parametrize("op, ins, params", [
    ("_backward_sum", [(3,), (2, 3)], {"axis": 0}),
    ("_backward_sum", [(1,), (2, 3)], None),
    ("_backward_mean", [(2, 1), (2, 3)], {"axis": 1, "keepdims": True}),
    ("_backward_power_scalar", [(2, 3), (2, 3)], {"scalar": 3}),
    ("_backward_power_scalar", [(2, 3), (2, 3)], {"scalar": 0.5}),
    ("_backward_sqrt", [(2, 3), (2, 3)], None)])
def test_reduction_power_sqrt_backward_gradients_match_numeric(op, ins, params):
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-1, 1, ins[0]), rng.uniform(0.5, 2.0, ins[1])]
    check_numeric_gradient(op, arrays, params, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("op, params", [
    ("_backward_square", None), ("_backward_sin", None), ("_backward_cos", None),
    ("_backward_tanh", None), ("_backward_sigmoid", None), ("_backward_relu", None),
    ("_backward_abs", None), ("_backward_rdiv_scalar", {"scalar": 2.5}),
    ("_backward_add", None), ("_backward_sub", None), ("_backward_mul", None),
    ("_backward_div", None)])
def test_backward_op_gradients_match_numeric(op, params):
    """Backward ops that keep first order to one node carry a gradient of their own."""
    rng = np.random.default_rng(5)
    n_in = {"mul": 3, "div": 3, "add": 1, "sub": 1}.get(op[len("_backward_"):], 2)
    ins = [rng.uniform(-1, 1, (2, 3)) for _ in range(n_in - 1)] + [rng.uniform(0.5, 2, (2, 3))]
    check_numeric_gradient(op, ins, params, rtol=1e-4, atol=1e-6)


def test_relu_and_abs_second_derivative():
    f = lambda x: nd.relu(x) * x + nd.abs(x) * x     # noqa: E731
    dx, dxx = _second(f, X)
    np.testing.assert_allclose(dx, 2 * np.maximum(X, 0) + 2 * np.abs(X), rtol=1e-5)
    np.testing.assert_allclose(dxx, 2 * (X > 0) + 2 * np.sign(X), rtol=1e-5)


def test_clip_second_order_masks_the_head_gradient_again():
    x = mx.nd.array([-2.0, 0.1, 0.3, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.clip(x, a_min=-0.5, a_max=0.5)
        (dx,) = mx.autograd.grad(y, x, head_grads=mx.nd.ones(4) * 3, create_graph=True,
                                 retain_graph=True)
        (ddx,) = mx.autograd.grad(dx, x, head_grads=mx.nd.ones(4), create_graph=True)
    assert dx.asnumpy().tolist() == [0, 3, 3, 0]
    assert ddx.asnumpy().tolist() == [0, 0, 0, 0]
    with mx.autograd.record():                    # d(dx)/d(head gradient) is the mask
        h = mx.nd.ones(4)
        h.attach_grad()
        (dx,) = mx.autograd.grad(mx.nd.clip(x, a_min=-0.5, a_max=0.5), x, head_grads=h,
                                 create_graph=True)
    dx.backward(mx.nd.ones(4) * 5)
    assert h.grad.asnumpy().tolist() == [0, 5, 5, 0]
