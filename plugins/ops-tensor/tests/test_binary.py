"""Elementwise and broadcast binary ops, add_n and where: forward vs numpy, MXNet
broadcasting and dtype rules, every OpReqType, gradients (MXNet values, numeric)."""

import numpy as np
import pytest
from mxnext import ops as registry
from mxnext.base import ParamError, ShapeError, TypeInferError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, infer, run_op

MATH = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "mod": np.mod, "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
        "hypot": np.hypot}
LOGIC = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
         "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
         "logical_and": np.logical_and, "logical_or": np.logical_or,
         "logical_xor": np.logical_xor}
ELEMWISE = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul",
            "div": "elemwise_div"}


def _pair(lhs_shape, rhs_shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2, lhs_shape)
    b = rng.uniform(0.5, 2, rhs_shape)
    b[..., :1] = 1.0                    # a few ties for the comparisons
    return a, b


@pytest.mark.parametrize("row", sorted(MATH))
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (1, 3)), ((2, 1, 3), (4, 1)),
                                    ((3,), (2, 3))])
def test_broadcast_math(row, shapes):
    a, b = _pair(*shapes)
    check_forward(f"broadcast_{row}", [a, b], MATH[row](a, b), rtol=1e-12)
    check_numeric_gradient(f"broadcast_{row}", [a, b], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("row", sorted(LOGIC))
def test_comparisons_give_input_dtype(row):
    a, b = _pair((2, 3), (1, 3))
    a[0, 0] = 1.0
    for name in (f"broadcast_{row}", f"_{row}"):
        rhs = b if name.startswith("broadcast") else np.broadcast_to(b, a.shape).copy()
        out = check_forward(name, [a.astype(np.float32), rhs.astype(np.float32)],
                            LOGIC[row](a, rhs).astype(np.float32))
        assert out[0].dtype == np.float32
        check_backward(name, [a, rhs], [np.ones(a.shape)], [np.zeros(a.shape), np.zeros(rhs.shape)])


@pytest.mark.parametrize("row", sorted(MATH))
def test_equal_shape_ops(row):
    name = ELEMWISE.get(row, f"_{row}")
    a, b = _pair((2, 3), (2, 3), seed=3)
    check_forward(name, [a, b], MATH[row](a, b), rtol=1e-12)
    check_numeric_gradient(name, [a, b], rtol=1e-4, atol=1e-6)
    with pytest.raises(ShapeError, match=name):
        infer(registry.get(name), None, [(2, 3), (3, 2)], [np.dtype("float32")] * 2)


def test_broadcast_shape_rules():
    op = registry.get("broadcast_add")
    assert infer(op, None, [(2, 3), (3,)], [np.dtype("float32")] * 2)[1] == [(2, 3)]
    assert infer(op, None, [(2, 1, 3), (4, 1)], [np.dtype("float32")] * 2)[1] == [(2, 4, 3)]
    with pytest.raises(ShapeError, match=r"broadcast_add.*\(2, 3\).*\(3, 2\)"):
        infer(op, None, [(2, 3), (3, 2)], [np.dtype("float32")] * 2)
    with pytest.raises(TypeInferError):
        infer(op, None, [(2, 3), (2, 3)], [np.dtype("float32"), np.dtype("int32")])
    with pytest.raises(ShapeError):      # a known output that disagrees
        op.get_attr("FInferShape")(None, [(2, 3), (1, 3)], [(3, 3)])


def test_integer_semantics():
    """MXNet: integer division truncates toward zero; mod takes the divisor's sign."""
    a = np.array([-7, 7, 9], np.int32)
    b = np.array([2, -3, 4], np.int32)
    check_forward("elemwise_div", [a, b], np.array([-3, -2, 2], np.int32))
    check_forward("broadcast_mod", [a, b], np.array([1, -2, 1], np.int32))
    check_forward("broadcast_power", [a, np.array([2, -1, 0], np.int32)],
                  np.array([49, 0, 1], np.int32))


def test_mxnet_gradients():
    """Gradients as MXNet 1.9.1 computes them (ties included)."""
    one3 = np.ones(3, np.float32)
    x, y = np.array([1, 2, 3], np.float32), np.array([2, 2, 2], np.float32)
    check_backward("broadcast_maximum", [x, y], [one3], [[0, 1, 1], [1, 0, 0]])
    check_backward("broadcast_minimum", [x, y], [one3], [[1, 1, 0], [0, 0, 1]])
    two = np.ones(2, np.float32)
    check_backward("broadcast_mod", [np.array([7, -7.]), np.array([3, 3.])], [two],
                   [[1, 1], [-2, 3]])
    check_backward("broadcast_power", [np.array([2, 3.]), np.array([3, 2.])], [two],
                   [[12, 6], [5.5451775, 9.88751]], rtol=1e-6)
    check_backward("broadcast_hypot", [np.array([3.]), np.array([4.])], [np.ones(1)],
                   [[0.6], [0.8]])
    check_backward("elemwise_div", [np.array([1.]), np.array([2.])], [np.ones(1)],
                   [[0.5], [-0.25]])
    # broadcast gradients are summed back to each input's shape
    g = check_backward("broadcast_mul", [np.ones((2, 3)), np.full((1, 3), 2.0)],
                       [np.ones((2, 3))], [np.full((2, 3), 2.0), np.full((1, 3), 2.0)])
    assert g[1].shape == (1, 3)


def test_aliases():
    for alias, name in [("_add", "elemwise_add"), ("_plus", "elemwise_add"),
                        ("_Plus", "elemwise_add"), ("_minus", "elemwise_sub"),
                        ("_sub", "elemwise_sub"), ("_mul", "elemwise_mul"),
                        ("_div", "elemwise_div"), ("broadcast_plus", "broadcast_add"),
                        ("broadcast_minus", "broadcast_sub"), ("_Equal", "_equal"),
                        ("_Greater_Equal", "_greater_equal"), ("_Maximum", "_maximum"),
                        ("ElementWiseSum", "add_n")]:
        assert registry.get(alias) is registry.get(name), alias


def test_add_n():
    op = registry.get("add_n")
    p = op.parse_params({"num_args": "3"})
    assert op.num_inputs(p) == 3
    assert op.list_input_names(p) == ["arg0", "arg1", "arg2"]
    assert op.get_attr("key_var_num_args") == "num_args"
    a, b, c = (np.array([1, 2, 3.]), np.array([4, 5, 6.]), np.array([7, 8, 9.]))
    check_forward("add_n", [a, b, c], np.array([12, 15, 18.]), {"num_args": 3})
    check_forward("add_n", [a], a, {"num_args": 1})
    og = np.array([1, -1, 2.])
    check_backward("add_n", [a, b, c], [og], [og, og, og], {"num_args": 3})
    with pytest.raises(ParamError, match="num_args"):
        op.parse_params({"num_args": 0})
    with pytest.raises(ShapeError):
        infer(op, p, [(3,), (3,), (2,)], [np.dtype("float64")] * 3)


def test_where():
    x, y = np.array([[1, 2], [3, 4.]]), np.array([[5, 6], [7, 8.]])
    check_forward("where", [np.array([[1, 0], [0, 2.]]), x, y], np.array([[1, 6], [7, 4.]]))
    check_forward("where", [np.array([0, 1], np.int32), x, y], np.array([[5, 6], [3, 4.]]))
    og = np.array([[1, 2], [3, 4.]])
    check_backward("where", [np.array([1, 0.]), x, y], [og],
                   [np.zeros(2), [[1, 2], [0, 0]], [[0, 0], [3, 4]]])
    with pytest.raises(ShapeError, match="condition"):
        infer(registry.get("where"), None, [(3,), (2, 3), (2, 3)], [np.dtype("float32")] * 3)
    _, _, in_t, out_t = infer(registry.get("where"), None, [(2,), (2, 2), (2, 2)],
                              [np.dtype("int32"), np.dtype("float64"), np.dtype("float64")])
    assert in_t[0] == np.int32 and out_t == [np.float64]


@pytest.mark.parametrize("req", ["null", "write", "add"])
def test_every_req_on_both_gradients(req):
    a, b = np.ones((2, 3)), np.full((1, 3), 3.0)
    og = np.ones((2, 3))
    start = [np.full((2, 3), 5.0), np.full((1, 3), 5.0)]
    got = run_op("_backward_broadcast_mul", [og, a, b], req=req,
                 outputs=[s.copy() for s in start])
    grads = [np.full((2, 3), 3.0), np.full((1, 3), 2.0)]
    for g, s, w in zip(got, start, grads):
        np.testing.assert_allclose(g, {"null": s, "write": w, "add": s + w}[req])


def test_inplace_on_lhs():
    a, b = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    run_op("broadcast_add", [a, b], req="inplace", outputs=[a])
    np.testing.assert_allclose(a, [11, 22])


def test_mod_as_mxnet():
    """MXNet 1.9: x % 0 is 0 (floats too); integer mod has zero gradients."""
    a = np.array([5, -7, 3, 4], np.float32)
    b = np.array([3, 2, 0, -3], np.float32)
    check_forward("_mod", [a, b], np.array([2, 1, 0, -2], np.float32))
    check_forward("broadcast_mod", [a[:, None], b[None, :2]], np.mod(a[:, None], b[None, :2]))
    check_backward("_mod", [a, b], [np.ones(4, np.float32)],
                   [np.ones(4, np.float32), np.array([-1, 4, -np.inf, 2], np.float32)])
    ai, bi = a.astype(np.int32), b.astype(np.int32)
    check_forward("_mod", [ai, bi], np.array([2, 1, 0, -2], np.int32))
    check_backward("_mod", [ai, bi], [np.array([1, 2, 3, 4], np.int32)],
                   [np.zeros(4, np.int32), np.zeros(4, np.int32)])
