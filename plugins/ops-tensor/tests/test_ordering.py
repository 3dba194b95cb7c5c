"""sort, argsort and topk: MXNet 1.9.1 values (stable ties both ways), shapes, dtypes,
every OpReqType, gradients."""

import numpy as np
import pytest
from mxnext import ops as registry
from mxnext.base import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, infer, run_op

X = np.array([[3, 1, 2], [1, 5, 4]], np.float32)
TIES = np.array([[1, 3, 3, 2, 3]], np.float32)


def test_sort_and_argsort_as_mxnet():
    check_forward("argsort", [TIES], np.array([[1, 2, 4, 3, 0]], np.float32),
                  {"is_ascend": False})
    check_forward("argsort", [TIES], np.array([[0, 3, 1, 2, 4]], np.float32))
    check_forward("sort", [X], np.array([1, 1, 2, 3, 4, 5], np.float32), {"axis": "None"})
    check_forward("argsort", [X], np.array([1, 3, 2, 0, 5, 4], np.float32), {"axis": None})
    check_forward("sort", [X], np.array([[3, 5, 4], [1, 1, 2]], np.float32),
                  {"axis": 0, "is_ascend": False})
    check_forward("sort", [np.array([2, np.nan, 1])], np.array([1, 2, np.nan]))
    check_forward("argsort", [X.astype(np.int32)], np.array([[1, 2, 0], [0, 2, 1]], np.int32),
                  {"dtype": "int32"})


def test_topk_as_mxnet():
    check_forward("topk", [X], np.array([[0, 2], [1, 2]], np.float32), {"k": 2})
    check_forward("topk", [X], [np.array([[3, 2], [5, 4]], np.float32),
                                np.array([[0, 2], [1, 2]], np.float32)],
                  {"k": 2, "ret_typ": "both"})
    check_forward("topk", [X], np.array([[1, 0, 1], [0, 1, 1]], np.float32),
                  {"k": 2, "ret_typ": "mask"})
    check_forward("topk", [X], np.array([4, 5], np.float32), {"k": 2, "axis": None})
    check_forward("topk", [TIES], np.array([[1, 2]], np.float32), {"k": 2})
    check_forward("topk", [TIES], np.array([[1, 2, 4, 3, 0]], np.float32), {"k": 0})
    check_forward("topk", [X], np.array([[1, 2], [1, 4]], np.float32),
                  {"k": 2, "ret_typ": "value", "is_ascend": True})
    check_forward("topk", [X], np.array([[0, 1, 1]], np.float32),
                  {"axis": 0, "ret_typ": "indices"})


def test_topk_types_and_shapes():
    op = registry.get("topk")
    p = op.parse_params({"k": 2, "ret_typ": "both", "dtype": "int32"})
    assert op.num_outputs(p) == 2
    _, shapes, _, types = infer(op, p, [(2, 3)], [np.dtype("float64")])
    assert shapes == [(2, 2), (2, 2)] and types == [np.float64, np.int32]
    p = op.parse_params({"k": 2, "ret_typ": "mask", "dtype": "int32"})
    assert infer(op, p, [(2, 3)], [np.dtype("float64")])[3] == [np.float64]
    with pytest.raises(ShapeError, match="k=9"):
        infer(op, op.parse_params({"k": 9}), [(2, 3)], [np.dtype("float32")])
    with pytest.raises(ParamError, match="ret_typ"):
        op.parse_params({"ret_typ": "values"})


def test_gradients():
    check_backward("topk", [np.array([[3, 1, 2.]])], [np.ones((1, 2))], [[[1, 0, 1]]],
                   {"k": 2, "ret_typ": "value"})
    check_backward("topk", [np.array([[3, 1, 2.]])], [np.array([[5, 7.]])], [[[5, 0, 7]]],
                   {"k": 2, "ret_typ": "both"})
    check_backward("topk", [np.array([[3, 1, 2.]])], [np.ones((1, 1))], [np.zeros((1, 3))])
    check_backward("sort", [np.array([3, 1, 2.])], [np.array([1, 2, 3.])], [[3, 1, 2]])
    check_backward("argsort", [np.array([3, 1, 2.])], [np.ones(3)], [np.zeros(3)])
    x = np.random.default_rng(0).permutation(12).reshape(3, 4).astype(np.float64)
    for params in ({"axis": 0}, {"axis": None, "is_ascend": False}):
        check_numeric_gradient("sort", [x], params, rtol=1e-4, atol=1e-6)
    for params in ({"k": 2, "ret_typ": "value"}, {"k": 3, "ret_typ": "value", "axis": None}):
        check_numeric_gradient("topk", [x], params, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("req", ["null", "write", "add"])
def test_every_req(req):
    base = [np.full((2, 2), 10, np.float32), np.full((2, 2), 10, np.float32)]
    got = run_op("topk", [X], {"k": 2, "ret_typ": "both"}, req=req,
                 outputs=[b.copy() for b in base])
    want = [np.array([[3, 2], [5, 4]]), np.array([[0, 2], [1, 2]])]
    for g, b, w in zip(got, base, want):
        np.testing.assert_allclose(g, {"null": b, "write": w, "add": b + w}[req])
