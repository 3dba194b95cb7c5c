"""mxnext.test_utils: MXNet's test helpers, on numpy inputs and on NDArrays."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import test_utils as tu
from mxnext.base import ParamError


def _nd():
    try:
        from mxnext import ndarray as nd
        nd.array  # noqa: B018 - the NDArray frontend may still be in progress
    except (ImportError, AttributeError) as e:
        pytest.skip(f"mxnext.ndarray is not importable yet: {e}")
    return nd


# ---------------------------------------------------------------- comparisons (numpy)

def test_almost_equal_uses_float64_defaults():
    a = np.array([1.0, 2.0])
    assert tu.almost_equal(a, a + 1e-6)
    assert not tu.almost_equal(a, a + 1e-3)
    assert tu.almost_equal(a, a + 1e-3, rtol=1e-2)
    assert not tu.almost_equal(np.ones(3), np.ones((2, 3)), use_broadcast=False)


def test_assert_almost_equal_passes_within_dtype_tolerance():
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    tu.assert_almost_equal(a, a * (1 + 5e-5))          # float32: rtol 1e-4
    tu.assert_almost_equal(a.astype(np.float16), a + 0.01)  # float16 is looser
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a.astype(np.float64), a.astype(np.float64) * (1 + 5e-4), atol=0)


def test_assert_almost_equal_message_names_worst_location():
    a = np.zeros((3, 4), dtype=np.float32)
    b = a.copy()
    b[1, 2] = 5.0
    b[2, 0] = 0.5
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, names=("expected", "got"))
    msg = str(info.value)
    assert "Location of maximum error: (1, 2)" in msg
    assert "expected=" in msg and "got=" in msg
    assert "2 of 12 elements mismatch" in msg
    assert "(2, 0)" in msg  # the second-worst location is listed too


def test_assert_almost_equal_nan_and_inf():
    nan = np.array([1.0, np.nan])
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(nan, nan)
    tu.assert_almost_equal(nan, nan, equal_nan=True)
    tu.assert_almost_equal(np.array([np.inf]), np.array([np.inf]))
    with pytest.raises(AssertionError, match="Location of maximum error: \\(0,\\)"):
        tu.assert_almost_equal(np.array([1.0]), np.array([np.inf]))


def test_assert_almost_equal_shapes_and_scalars():
    tu.assert_almost_equal(np.ones((2, 3)), 1.0)  # broadcasting, as MXNet
    with pytest.raises(AssertionError, match="do not broadcast"):
        tu.assert_almost_equal(np.ones(2), np.ones(3))
    with pytest.raises(AssertionError, match="are not equal"):
        tu.assert_almost_equal(np.ones(3), np.ones((1, 3)), use_broadcast=False)
    with pytest.raises(AssertionError, match="Location of maximum error: \\(\\)"):
        tu.assert_almost_equal(np.float64(1.0), np.float64(2.0))


def test_bool_and_int_compare_exactly():
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([100], np.int64), np.array([101], np.int64))


def test_same_and_tolerances():
    assert tu.same(np.arange(3), [0, 1, 2])
    assert not tu.same(np.arange(3), np.arange(4))
    assert tu.get_tols(np.float16(1), np.float64(1), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.float32(1), np.float32(1), 0.5, {np.dtype(np.float32): 7}) == (0.5, 7)
    assert tu.get_rtol() == 1e-5 and tu.get_atol(3) == 3 and tu.get_etol() == 0


def test_assert_exception():
    def boom(x):
        raise KeyError(x)
    err = tu.assert_exception(boom, KeyError, "k")
    assert err.args == ("k",)
    with pytest.raises(AssertionError, match="did not raise KeyError"):
        tu.assert_exception(lambda: None, KeyError)


# ---------------------------------------------------------------- random inputs

def test_random_arrays_and_shapes():
    np.random.seed(1)
    a, b = tu.random_arrays((2, 3), ())
    assert a.shape == (2, 3) and a.dtype == np.float32 and b.shape == () and b.dtype == np.float32
    assert tu.random_arrays((4,)).shape == (4,)
    for _ in range(50):
        s2 = tu.rand_shape_2d(3, 4)
        assert 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4
        s3 = tu.rand_shape_3d(2, 2, 2, allow_zero_size=True)
        assert all(0 <= d <= 2 for d in s3)
        sn = tu.rand_shape_nd(5, 3)
        assert len(sn) == 5 and all(1 <= d <= 3 for d in sn) and all(type(d) is int for d in sn)
    u, = tu.random_uniform_arrays((100,), low=2, high=3)
    assert u.min() >= 2 and u.max() < 3


def test_default_context_roundtrip():
    old = tu.default_context()
    try:
        tu.set_default_context(mx.cpu(1))
        assert tu.default_context() == mx.cpu(1)
        with mx.cpu(2):
            assert tu.default_context() == mx.cpu(2)
        assert tu.default_context() == mx.cpu(1)
    finally:
        tu.set_default_context(old)
    assert tu.default_context() == old


def test_rejects_symbols_and_sparse():
    class FakeSymbol:
        def list_arguments(self):
            return []

        def __call__(self):
            return None

    with pytest.raises(ParamError, match="Symbol is not supported yet"):
        tu.check_numeric_gradient(FakeSymbol(), [np.ones(2)])
    with pytest.raises(ParamError, match="dense storage only"):
        tu.rand_ndarray((2, 2), stype="csr")


# ---------------------------------------------------------------- NDArray inputs

def test_ndarray_inputs():
    nd = _nd()
    a = nd.array([1.0, 2.0, 3.0])
    tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.0]))
    tu.assert_almost_equal(a, a)
    assert tu.same(a, [1.0, 2.0, 3.0])
    with pytest.raises(AssertionError, match="Location of maximum error: \\(2,\\)"):
        tu.assert_almost_equal(a, nd.array([1.0, 2.0, 4.0]))
    r = tu.rand_ndarray((3, 4), dtype=np.float64, ctx=mx.cpu(1))
    assert r.shape == (3, 4) and r.dtype == np.float64 and r.context == mx.cpu(1)
    assert tu.rand_ndarray((2,)).dtype == np.float32


def _tensor_ops_or_skip(nd, *names):
    missing = [n for n in names if not hasattr(nd, n)]
    if missing:
        pytest.skip(f"ops {missing} are not registered (ops-tensor plugin not loaded)")


def test_check_numeric_gradient_accepts_right_and_rejects_wrong_gradient():
    nd = _nd()
    _tensor_ops_or_skip(nd, "tanh", "elemwise_mul")
    np.random.seed(0)
    loc = [np.random.uniform(-1, 1, (2, 3)), np.random.uniform(-1, 1, (2, 3))]
    tu.check_numeric_gradient(lambda x, y: nd.elemwise_mul(nd.tanh(x), y), loc,
                              rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(lambda x, y: nd.elemwise_mul(x, y), {"x": loc[0], "y": loc[1]},
                              grad_nodes={"x": "add", "y": "null"}, dtype=np.float64)

    from mxnext import autograd

    class WrongGrad(autograd.Function):
        def forward(self, x):
            return nd.tanh(x)

        def backward(self, dy):
            return dy  # wrong: ignores 1 - tanh^2

    with pytest.raises(AssertionError, match="NUMERICAL_0"):
        tu.check_numeric_gradient(lambda x: WrongGrad()(x), [np.full((3,), 1.5)])


def test_check_consistency_across_dtypes_contexts_and_engines():
    nd = _nd()
    _tensor_ops_or_skip(nd, "tanh", "elemwise_mul")

    def fn(data, w):
        return nd.tanh(nd.elemwise_mul(data, w))

    ctx_list = [{"ctx": mx.cpu(0), "data": (3, 4), "w": (3, 4), "type_dict": {"data": np.float64, "w": np.float64}},
                {"ctx": mx.cpu(1), "data": (3, 4), "w": (3, 4)},
                {"ctx": mx.cpu(0), "data": (3, 4), "w": (3, 4), "engine": "NaiveEngine"},
                {"ctx": mx.cpu(0), "data": (3, 4), "w": (3, 4), "type_dict": {"data": np.float16, "w": np.float16}}]
    results = tu.check_consistency(fn, ctx_list)
    assert len(results) == 4 and set(results[0]) == {"out_0", "grad_data", "grad_w"}

    with pytest.raises(AssertionError, match="setting 0"):
        tu.check_consistency(fn, ctx_list[:2], ground_truth={k: v + 1 for k, v in results[0].items()})


def test_check_numeric_gradient_multi_output_subset_and_bad_nodes():
    nd = _nd()
    _tensor_ops_or_skip(nd, "tanh", "elemwise_mul", "exp")
    np.random.seed(2)
    x, y = nd.array(np.random.uniform(-1, 1, (4,))), np.random.uniform(-1, 1, (4,))
    tu.check_numeric_gradient(lambda a, b: [nd.tanh(a), nd.elemwise_mul(nd.exp(a), b)], [x, y],
                              grad_nodes=["1"], dtype=np.float64)
    with pytest.raises(ParamError, match="unknown \\['z'\\]"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), {"a": y}, grad_nodes=["z"])
    with pytest.raises(ParamError, match="float16, float32 or float64"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), [y], dtype=np.int32)


def test_numeric_eps_that_vanishes_is_reported():
    nd = _nd()
    _tensor_ops_or_skip(nd, "tanh")
    with pytest.raises(ParamError, match="vanishes next to 0\\[0\\] = 4096"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), [np.array([4096.0])], dtype=np.float16)
