"""mxnext.test_utils: MXNet's test helpers on numpy inputs and on NDArrays."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, test_utils as tu
from mxnext.base import ParamError
from mxnext.test_utils._stats import _chi_square_p, _upper_gamma_q

nd = mx.nd


def _needs_ops(*names):
    missing = [n for n in names if not hasattr(nd, n)]
    if missing:
        pytest.skip(f"ops {missing} are not registered (ops-tensor plugin not loaded)")


def _message(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------- the star import

# MXNet 1.9's test_utils namespace minus what mxnext leaves out (mx.np's np_symbol,
# Features, get_cuda_compute_capability, scipy.stats and requests);
# see docs/user-guide.md.
MXNET_NAMES = """
Context OrderedDict almost_equal array assert_allclose assert_almost_equal
assert_almost_equal_ignore_nan assert_almost_equal_with_err assert_exception assign_each
DummyIter assign_each2 bz2 checkShapes check_consistency check_numeric_gradient check_symbolic_backward
check_symbolic_forward chi_square_check collapse_sum_like compare_ndarray_tuple compare_optimizer
contextmanager create_sparse_array create_sparse_array_zd rand_sparse_ndarray
shuffle_csr_column_indices
create_2d_tensor create_vector current_context default_atols default_context default_dtype
default_numeric_eps default_rtols discard_stderr download effective_dtype environment errno
gen_buckets_probs_with_ppf get_atol get_cifar10 get_etol get_identity_mat get_identity_mat_batch
get_mnist get_mnist_iterator get_mnist_ubyte get_rtol get_tolerance get_tols get_zip_data getenv gzip is_aarch64_run is_cd_run json list_gpus locationError logging
mean_check mx new_matrix_with_real_eigvals_2d new_matrix_with_real_eigvals_nd
new_orthonormal_matrix_2d new_sym_matrix_with_real_eigvals_2d new_sym_matrix_with_real_eigvals_nd
np np_reduce npt numbers numeric_grad os platform rand_coord_2d rand_ndarray rand_shape_2d
rand_shape_3d rand_shape_nd random_arrays random_sample random_uniform_arrays retry rnd same
same_array set_default_context setenv simple_forward struct Symbol sys time traceback use_np
var_check verify_generator zipfile
check_gluon_hybridize_consistency check_speed download_model get_bz2_data get_im2rec_path
get_mnist_pkl has_tvm_ops is_op_runnable same_symbol_structure
""".split()


def test_star_import_exports_what_mxnets_does():
    ns = {}
    exec("from mxnext.test_utils import *", ns)
    names = {k for k in ns if not k.startswith("__")}
    assert set(MXNET_NAMES) <= names
    assert names - set(MXNET_NAMES) == {"NDArray", "EnvManager"}
    assert ns["mx"] is mx and ns["np"] is np and ns["sys"] is sys and ns["os"] is os
    assert ns["rnd"] is np.random and ns["npt"] is np.testing
    assert ns["NDArray"] is nd.NDArray and ns["array"] is nd.array
    assert ns["Symbol"] is mx.sym.Symbol
    assert not any(k.startswith("_") for k in names)  # private modules stay out


# ---------------------------------------------------------------- tolerances

def test_tolerances_by_dtype():
    f16, f32, f64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
    rtols, atols = tu.default_rtols(), tu.default_atols()
    assert (rtols[f16], rtols[f32], rtols[f64]) == (1e-2, 1e-4, 1e-5)
    assert (atols[f16], atols[f32], atols[f64]) == (1e-1, 1e-3, 1e-20)
    assert rtols[np.dtype(np.int32)] == 0 and atols[np.dtype(np.bool_)] == 0
    assert tu.default_numeric_eps() == {f16: 2.0 ** -6, f32: 2.0 ** -9, f64: 2.0 ** -14}
    assert tu.get_tols(np.float16(1), np.float64(1), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.float32(1), np.float32(1), 0.5, {f32: 7}) == (0.5, 7)
    assert tu.get_tols(1.0, 2, None, None) == (1e-5, 1e-20)      # numbers: float64 and int64
    assert tu.get_tolerance(np.ones(2, np.float32), {f64: 3}, tu.default_rtols()) == 1e-4
    assert tu.effective_dtype(nd.ones((2,), dtype=np.float16)) == f16
    assert tu.get_rtol() == 1e-5 and tu.get_atol(3) == 3 and tu.get_atol(None, np.float32) == 1e-3
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1
    assert tu.default_dtype() is np.float32


# ---------------------------------------------------------------- comparisons

def test_almost_equal_uses_float64_defaults():
    a = np.array([1.0, 2.0])
    assert tu.almost_equal(a, a + 1e-6) is True
    assert tu.almost_equal(a, a + 1e-3) is False
    assert tu.almost_equal(a, a + 1e-3, rtol=1e-2)
    assert tu.almost_equal(np.ones((2, 3)), np.ones(3))
    with pytest.raises(AssertionError, match=r"a.shape = \(3,\) and b.shape = \(2, 3\) are not"):
        tu.almost_equal(np.ones(3), np.ones((2, 3)), use_broadcast=False)


def test_assert_almost_equal_uses_the_looser_dtypes_defaults():
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    tu.assert_almost_equal(a, a * (1 + 5e-5))                # float32: rtol 1e-4
    _message(tu.assert_almost_equal, a, a + 2e-3 + 3e-4 * a)  # beyond atol + rtol*|b|
    tu.assert_almost_equal(a.astype(np.float16), a + 0.05)   # float16 against float32: float16's
    _message(tu.assert_almost_equal, a.astype(np.float64), a.astype(np.float64) * (1 + 2e-5))
    _message(tu.assert_almost_equal, np.array([1.0]), np.array([1.1]), rtol=1e-3, atol=1e-3)
    tu.assert_almost_equal(np.array([1.0]), np.array([1.1]), rtol=0.1, atol=0)


def test_failure_message_is_mxnets():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = a.copy()
    b[1, 2] += 5
    b[2, 0] += 0.5
    b[0, 0] = np.nan
    msg = _message(tu.assert_almost_equal, a, b, names=("x", "y"))
    assert msg.startswith("\nItems are not equal:\nError nan exceeds tolerance rtol=1.000000e-04, "
                          "atol=1.000000e-03 (mismatch 25.000000%).\n"
                          "Location of maximum error: (0, 0), x=0.00000000, y=nan\n ACTUAL: ")
    assert " DESIRED: " in msg
    assert ("*** Maximum errors for vector of size 12:  rtol=0.0001, atol=0.001\n\n"
            "  1: Error nan  Location of error: (0, 0), x=0.00000000, y=nan\n"
            "  2: Error 2380.952381  Location of error: (1, 2), x=6.00000000, y=11.00000000\n"
            "  3: Error 270.270270  Location of error: (2, 0), x=8.00000000, y=8.50000000") in msg


def test_mismatches_limits_what_is_listed_and_counted():
    a, b = np.ones(30), np.zeros(30)
    msg = _message(tu.assert_almost_equal, a, b)
    assert "(mismatch at least 36.666667%)" in msg       # counted up to 10, then "at least"
    assert " 10: Error" in msg and " 11: Error" not in msg
    msg = _message(tu.assert_almost_equal, a, b, mismatches=(3, 0))
    assert "(mismatch 100.000000%)" in msg                # mismatches[1] <= 0: count them all
    assert "  3: Error" in msg and "  4: Error" not in msg
    b[:29] = 1
    assert "(mismatch 3.333333%)" in _message(tu.assert_almost_equal, a, b)


def test_scalar_failure_message():
    msg = _message(tu.assert_almost_equal, np.float32(1), np.float32(2))
    assert msg.startswith("\nItems are not equal:\nError 833.333333 exceeds tolerance "
                          "rtol=1.000000e-04, atol=1.000000e-03.\n")


def test_nan_inf_bool_int():
    nan = np.array([1.0, np.nan])
    _message(tu.assert_almost_equal, nan, nan)
    tu.assert_almost_equal(nan, nan, equal_nan=True)
    tu.assert_almost_equal(np.array([np.inf]), np.array([np.inf]))
    assert "Location of maximum error: (0,)" in _message(tu.assert_almost_equal, np.array([1.0]),
                                                         np.array([np.inf]))
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    _message(tu.assert_almost_equal, np.array([True, False]), np.array([True, True]))
    _message(tu.assert_almost_equal, np.array([100], np.int64), np.array([101], np.int64))


def test_shapes_broadcast_unless_told_not_to():
    tu.assert_almost_equal(np.ones((2, 3)), 1.0)
    assert "do not broadcast" in _message(tu.assert_almost_equal, np.ones(2), np.ones(3))
    assert "are not equal" in _message(tu.assert_almost_equal, np.ones(3), np.ones((1, 3)),
                                       use_broadcast=False)


def test_ndarrays_compare_like_numpy():
    a = nd.array([1.0, 2.0, 3.0])
    tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.0]))
    tu.assert_almost_equal(a, a)
    assert tu.same(a, [1.0, 2.0, 3.0]) and not tu.same(a, [1.0, 2.0])
    assert "Location of maximum error: (2,)" in _message(tu.assert_almost_equal, a,
                                                         nd.array([1.0, 2.0, 4.0]))
    _message(tu.assert_almost_equal, nd.zeros((3,)), nd.ones((3,)))
    assert tu.almost_equal(a, a.asnumpy() + 1e-7) and not tu.almost_equal(a, a.asnumpy() + 1)


def test_error_rate_and_nan_ignoring_and_allclose():
    a = np.zeros(10)
    b = a.copy()
    b[0] = 1
    tu.assert_almost_equal_with_err(a, b, etol=0.1)
    assert "mismatch 10.000000%" in _message(tu.assert_almost_equal_with_err, a, b, etol=0.05)
    _message(tu.assert_almost_equal_with_err, a, b)       # etol unset: none may mismatch
    tu.assert_almost_equal_ignore_nan(np.array([1.0, np.nan, 3.0]), np.array([np.nan, 5.0, 3.0]))
    _message(tu.assert_almost_equal_ignore_nan, np.array([1.0, np.nan]), np.array([2.0, 0.0]))
    tu.assert_allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    _message(tu.assert_allclose, np.array([1.0]), np.array([1.0 + 1e-6]))


def test_assert_exception():
    def boom(x):
        raise KeyError(x)
    assert tu.assert_exception(boom, KeyError, "k").args == ("k",)
    assert "did not raise KeyError" in _message(tu.assert_exception, lambda: None, KeyError)
    with pytest.raises(ZeroDivisionError):
        tu.assert_exception(lambda: 1 / 0, KeyError)


def test_same_array_tells_views_from_copies():
    _needs_ops("_plus_scalar", "_minus_scalar")
    x = nd.array(np.arange(6.0).reshape(2, 3))
    assert tu.same_array(x, x[:]) and tu.same_array(x, x)
    assert not tu.same_array(x, x.copy())
    tu.assert_almost_equal(x, np.arange(6.0).reshape(2, 3))   # restored


def test_compare_ndarray_tuple():
    tu.compare_ndarray_tuple((nd.ones((2,)), (np.zeros(1), None)),
                             (np.ones(2), (nd.zeros((1,)), 5)))
    tu.compare_ndarray_tuple(None, (1, 2))
    _message(tu.compare_ndarray_tuple, (nd.ones((2,)),), (np.zeros(2),))


@pytest.mark.parametrize("axis", [None, 0, 2, (0, 2), [1, 2, 0]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_np_reduce_matches_numpy(axis, keepdims):
    dat = np.random.RandomState(0).rand(2, 3, 4)
    for fn in (np.sum, np.max):
        want = fn(dat, axis=None if axis is None else tuple(np.atleast_1d(axis)), keepdims=keepdims)
        np.testing.assert_allclose(tu.np_reduce(dat, axis, keepdims, fn), want)


def test_collapse_sum_like():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.collapse_sum_like(a, (3, 1)), a.sum(axis=(0, 2)).reshape(3, 1))
    np.testing.assert_array_equal(tu.collapse_sum_like(a, (2, 3, 4)), a)
    assert tu.collapse_sum_like(a, (0, 4)).shape == (0, 4)
    with pytest.raises(AssertionError):
        tu.collapse_sum_like(a, (2, 4))


# ---------------------------------------------------------------- inputs

def test_random_inputs_draw_like_mxnet():
    np.random.seed(3)
    a, b = tu.random_arrays((2, 3), ())
    np.random.seed(3)
    np.testing.assert_array_equal(a, np.random.randn(2, 3).astype(np.float32))
    assert b == np.float32(np.random.randn()) and a.dtype == b.dtype == np.float32 and b.shape == ()
    assert tu.random_arrays((4,)).shape == (4,)
    u, v = tu.random_uniform_arrays((100,), (2,), low=2, high=3, dtype=np.float64)
    assert u.min() >= 2 and u.max() < 3 and v.dtype == np.float64
    np.random.seed(5)
    picked = tu.random_sample(list(range(10)), 4)
    np.random.seed(5)
    pool = list(range(10))
    np.random.shuffle(pool)
    assert picked == pool[:4]
    with pytest.raises(ParamError, match="'k' expected 0 <= k <= 3"):
        tu.random_sample([1, 2, 3], 4)


def test_random_shapes_and_coordinates():
    for _ in range(50):
        s2 = tu.rand_shape_2d(3, 4)
        assert 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4
        assert all(0 <= d <= 2 for d in tu.rand_shape_3d(2, 2, 2, allow_zero_size=True))
        sn = tu.rand_shape_nd(5, 3)
        assert len(sn) == 5 and all(1 <= d <= 3 for d in sn) and all(type(d) is int for d in sn)
        x, y = tu.rand_coord_2d(0, 2, 5, 6)
        assert 0 <= x < 2 and y == 5


def test_rand_ndarray():
    r = tu.rand_ndarray((3, 4), dtype=np.float64, ctx=mx.cpu(1))
    assert r.shape == (3, 4) and r.dtype == np.float64 and r.context == mx.cpu(1)
    assert tu.rand_ndarray((2,)).dtype == np.float32
    assert tu.rand_ndarray((2,), density=0.5).context == tu.default_context()
    csr = tu.rand_ndarray((2, 2), stype="csr", density=1)
    assert csr.stype == "csr" and len(csr.data) == 4


def test_assign_each():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(tu.assign_each(x, lambda v: v * 10), x * 10)
    np.testing.assert_array_equal(tu.assign_each2(x, x, lambda u, v: u - v + 1), np.ones((2, 2)))
    assert tu.assign_each(x, None) is not x
    with pytest.raises(ParamError, match="one shape"):
        tu.assign_each2(x, x[0], lambda u, v: u)


def test_structured_ndarrays():
    _needs_ops("broadcast_to", "arange", "eye")
    tu.assert_almost_equal(tu.create_vector(5), np.arange(5))
    assert tu.create_vector(5).dtype == np.int64
    t = tu.create_2d_tensor(3, 2)
    assert t.shape == (3, 2) and t.dtype == np.int64
    tu.assert_almost_equal(t, [[0, 0], [1, 1], [2, 2]])
    tu.assert_almost_equal(tu.get_identity_mat(3), np.eye(3))
    tu.assert_almost_equal(tu.get_identity_mat_batch(2), np.stack([np.eye(2)] * 2))


def test_random_matrices_have_the_promised_spectra():
    np.random.seed(7)
    m = tu.new_matrix_with_real_eigvals_nd((2, 4, 4))
    eig = np.linalg.eigvals(m)
    assert m.shape == (2, 4, 4) and np.allclose(eig.imag, 0) and np.all(np.abs(eig.real) <= 10)
    q = tu.new_orthonormal_matrix_2d(4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-12)
    s = tu.new_sym_matrix_with_real_eigvals_nd((3, 3, 3))
    np.testing.assert_allclose(s, np.swapaxes(s, -1, -2), atol=1e-12)
    assert np.all(np.abs(np.linalg.eigvalsh(s)) <= 10)


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
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))


# ---------------------------------------------------------------- what the helpers take

def test_arguments_that_are_neither_symbol_nor_callable_are_rejected_clearly():
    for fn, args in [(tu.check_numeric_gradient, ([np.ones(2)],)),
                     (tu.check_symbolic_forward, ([np.ones(2)], [np.ones(2)])),
                     (tu.check_symbolic_backward, ([np.ones(2)], None, [np.ones(2)])),
                     (tu.check_consistency, ([{"x": (2,)}, {"x": (2,)}],)),
                     (tu.simple_forward, ())]:
        with pytest.raises(ParamError, match="expected a Symbol or a Python callable"):
            fn("x * 2", *args)
    with pytest.raises(ParamError, match="expected an Executor or a Python callable"):
        tu.numeric_grad("x * 2", [np.ones(2)])
    with pytest.raises(ParamError, match="'aux_states' is for Symbols"):
        tu.check_numeric_gradient(lambda x: x, [np.ones(2)], aux_states=[np.ones(2)])
    with pytest.raises(ParamError, match="expected storage types 'default', 'csr' or"):
        tu.check_numeric_gradient(lambda x: x, [np.ones(2)], grad_stype_dict={"0": "dense"})


# ---------------------------------------------------------------- gradient checks

def test_numeric_grad_of_a_callable():
    _needs_ops("elemwise_mul")
    x = np.array([1.0, -2.0, 3.0])
    g = tu.numeric_grad(lambda a: nd.elemwise_mul(a, a), [x], eps=1e-3, dtype=np.float64)
    np.testing.assert_allclose(g["0"], 2 * x, rtol=1e-9)
    assert g["0"].dtype == np.float64
    g = tu.numeric_grad(lambda a, b: [a, nd.elemwise_mul(a, b)], {"a": x, "b": x}, eps=1e-3,
                        dtype=np.float64, projections=[np.full(3, 2.0), np.ones(3)],
                        grad_nodes=["b"])
    assert list(g) == ["b"]
    np.testing.assert_allclose(g["b"], x, rtol=1e-9)


def test_check_numeric_gradient_accepts_right_and_rejects_wrong_gradient():
    _needs_ops("tanh", "elemwise_mul")
    np.random.seed(0)
    loc = [np.random.uniform(-1, 1, (2, 3)), np.random.uniform(-1, 1, (2, 3))]
    tu.check_numeric_gradient(lambda x, y: nd.elemwise_mul(nd.tanh(x), y), loc,
                              rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(lambda x, y: nd.elemwise_mul(x, y), {"x": loc[0], "y": loc[1]},
                              grad_nodes={"x": "add", "y": "null"}, dtype=np.float64)

    class WrongGrad(autograd.Function):
        def forward(self, x):
            return nd.tanh(x)

        def backward(self, dy):
            return dy  # wrong: ignores 1 - tanh^2

    assert "NUMERICAL_0" in _message(tu.check_numeric_gradient, lambda x: WrongGrad()(x),
                                     [np.full((3,), 1.5)])


def test_check_numeric_gradient_arguments():
    _needs_ops("tanh", "elemwise_mul", "exp")
    np.random.seed(2)
    x, y = nd.array(np.random.uniform(-1, 1, (4,))), np.random.uniform(-1, 1, (4,))
    tu.check_numeric_gradient(lambda a, b: [nd.tanh(a), nd.elemwise_mul(nd.exp(a), b)], [x, y],
                              grad_nodes=["1"], dtype=np.float64)
    with pytest.raises(ParamError, match=r"unknown inputs \['z'\]"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), {"a": y}, grad_nodes=["z"])
    with pytest.raises(ParamError, match="float16, float32 or float64"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), [y], dtype=np.int32)
    with pytest.raises(ParamError, match="'numeric_eps' expected >= 1e-5 for float32"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), [y], numeric_eps=1e-6)
    with pytest.raises(ParamError, match="vanishes next to 0\\[0\\] = 4096"):
        tu.check_numeric_gradient(lambda a: nd.tanh(a), [np.array([4096.0])], dtype=np.float16)


def test_check_symbolic_forward():
    _needs_ops("elemwise_mul", "elemwise_add")
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    outs = tu.check_symbolic_forward(lambda a, b: [nd.elemwise_mul(a, b), nd.elemwise_add(a, b)],
                                     [x, y], [x * y, x + y])
    assert len(outs) == 2 and outs[0].dtype == np.float32
    tu.check_symbolic_forward(lambda a, b: nd.elemwise_mul(a, b), {"a": x, "b": y},
                              {"output0": x * y}, dtype=np.float64)
    msg = _message(tu.check_symbolic_forward, lambda a: nd.elemwise_add(a, a), [x], [x * 3])
    assert "EXPECTED_output0=" in msg and "FORWARD_output0=" in msg
    f64 = tu.check_symbolic_forward(lambda a: a, [x], [x], dtype="asnumpy")
    assert f64[0].dtype == np.float64
    with pytest.raises(ParamError, match="expected 1 arrays"):
        tu.check_symbolic_forward(lambda a: a, [x], [x, x])


def test_check_symbolic_forward_runs_in_predict_mode():
    seen = []
    tu.check_symbolic_forward(lambda a: seen.append(autograd.is_training()) or a,
                              [np.ones(2)], [np.ones(2)])
    assert seen == [False]


def test_check_symbolic_backward():
    _needs_ops("elemwise_mul")
    x, y, head = np.array([1.0, 2.0]), np.array([3.0, -4.0]), np.array([0.5, 2.0])
    grads = tu.check_symbolic_backward(lambda a, b: nd.elemwise_mul(a, b), [x, y], [head],
                                       [y * head, x * head])
    assert set(grads) == {"0", "1"}
    tu.check_symbolic_backward(lambda a, b: nd.elemwise_mul(a, b), {"a": x, "b": y}, None,
                               {"b": x}, dtype=np.float64)          # ones; only b gets a gradient
    for req in ("add", "null", ["add", "write"], {"a": "null", "b": "add"}):
        tu.check_symbolic_backward(lambda a, b: nd.elemwise_mul(a, b), {"a": x, "b": y},
                                   {"output0": head}, {"a": y * head, "b": x * head},
                                   grad_req=req, dtype=np.float64)
    msg = _message(tu.check_symbolic_backward, lambda a, b: nd.elemwise_mul(a, b), [x, y], [head],
                   [y * head, y * head])
    assert "EXPECTED_1=" in msg and "BACKWARD_1=" in msg
    with pytest.raises(ParamError, match="names inputs \\['z'\\]"):
        tu.check_symbolic_backward(lambda a: a, {"a": x}, None, {"z": x})
    with pytest.raises(ParamError, match="'write', 'add' or 'null'"):
        tu.check_symbolic_backward(lambda a: a, [x], None, [x], grad_req="sum")


def test_simple_forward():
    _needs_ops("elemwise_mul")
    np.testing.assert_array_equal(tu.simple_forward(lambda a, b: nd.elemwise_mul(a, b),
                                                    a=np.array([2.0]), b=np.array([3.0])), [6.0])
    two = tu.simple_forward(lambda a: [a, a], is_train=True, a=np.ones(2))
    assert isinstance(two, list) and len(two) == 2


# ---------------------------------------------------------------- consistency

def test_check_consistency_across_dtypes_contexts_and_engines():
    _needs_ops("tanh", "elemwise_mul")

    def fn(data, w):
        return nd.tanh(nd.elemwise_mul(data, w))

    shapes = {"data": (3, 4), "w": (3, 4)}
    ctx_list = [{"ctx": mx.cpu(0), **shapes, "type_dict": {"data": np.float64, "w": np.float64}},
                {"ctx": mx.cpu(1), **shapes},
                {"ctx": mx.cpu(0), **shapes, "engine": "NaiveEngine"},
                {"ctx": mx.cpu(0), **shapes, "type_dict": {"data": np.float16, "w": np.float16}}]
    gt = tu.check_consistency(fn, ctx_list)
    assert set(gt) == {"output0", "data", "w"} and gt["output0"].dtype == np.float64
    assert "output0" in tu.check_consistency(fn, ctx_list[:2], grad_req="null")
    partial = tu.check_consistency(fn, ctx_list[:2], grad_req={"data": "write", "w": "null"})
    assert gt["w"] is not None and partial["w"] is None and partial["data"] is not None
    wrong = {k: v + 1 for k, v in gt.items()}
    assert "setting 0" in _message(tu.check_consistency, fn, ctx_list[:1], ground_truth=wrong)
    with pytest.raises(ParamError, match="at least two settings"):
        tu.check_consistency(fn, ctx_list[:1])


def test_check_consistency_is_as_strict_as_the_dtypes():
    _needs_ops("_mul_scalar")
    def drifts(x):    # off by 5e-3 relative in float32 only: beyond float32's rtol 1e-4
        return x * (1.005 if x.dtype == np.float32 else 1.0)

    ctx_list = [{"x": (5,), "type_dict": {"x": np.float64}}, {"x": (5,)}]
    assert "predict setting 1" in _message(tu.check_consistency, drifts, ctx_list, scale=10)
    tu.check_consistency(drifts, ctx_list, rtol=1e-2, atol=1e-2)
    # raise_on_err=False reports and goes on
    tu.check_consistency(drifts, ctx_list, scale=10, raise_on_err=False)


def test_check_consistency_runs_each_setting_on_its_engine():
    from mxnext import engine
    seen = []

    def fn(x):
        seen.append(type(engine.get()).__name__)
        return x

    tu.check_consistency([fn, fn], [{"x": (2,)}, {"x": (2,), "engine": "NaiveEngine"}])
    assert seen[:2] == [type(engine.get()).__name__, "NaiveEngine"]


# ---------------------------------------------------------------- random generator checks

@pytest.mark.parametrize("x", [0.0, 0.01, 0.7, 2.0, 9.5, 40.0, 150.0])
def test_chi_square_p_values_match_closed_forms(x):
    import math
    assert math.isclose(_upper_gamma_q(1.0, x / 2), math.exp(-x / 2), rel_tol=1e-12)   # 2 dof
    assert math.isclose(_upper_gamma_q(0.5, x / 2), math.erfc(math.sqrt(x / 2)), rel_tol=1e-12,
                        abs_tol=1e-300)                                                 # 1 dof
    assert math.isclose(_upper_gamma_q(2.0, x / 2), math.exp(-x / 2) * (1 + x / 2),
                        rel_tol=1e-12)                                                  # 4 dof


def test_chi_square_statistic():
    assert _chi_square_p([10, 10, 10], [10, 10, 10]) == 1.0
    # statistic (4 + 4 + 0) / 10 with 2 degrees of freedom: p = exp(-0.8 / 2)
    assert np.isclose(_chi_square_p([12, 8, 10], [10, 10, 10]), np.exp(-0.4), rtol=1e-12)
    assert _chi_square_p([1, 0], [0, 1]) == 0.0


def test_chi_square_check_counts_buckets_as_mxnet():
    samples = np.array([-5.0, 0.1, 0.5, 0.99, 1.0, 1.5, 2.2, 2.5, 3.0, 7.0])
    buckets = [(0.0, 1.0), (1.0, 2.0), (2.5, 3.0)]
    p, obs, expected = tu.chi_square_check(lambda n: samples[:n], buckets, [0.3, 0.3, 0.4],
                                           nsamples=10)
    # below the first range counts in it, a gap joins the next range, the last edge is open
    assert obs.tolist() == [4, 2, 2] and expected.tolist() == [3, 3, 4]
    assert 0 < p < 1
    p, obs, expected = tu.chi_square_check(lambda n: nd.array([1, 2, 2, 5][:n]), [1, 2, 3],
                                           [0.25, 0.5, 0.25], nsamples=4)
    assert obs.tolist() == [1, 2, 0] and expected.tolist() == [1, 2, 1]
    with pytest.raises(ParamError, match="ascending, non-overlapping"):
        tu.chi_square_check(lambda n: samples, [(0.0, 2.0), (1.0, 3.0)], [0.5, 0.5])
    with pytest.raises(ParamError, match="same length"):
        tu.chi_square_check(lambda n: samples, [(0.0, 2.0)], [0.5, 0.5])


def test_verify_generator_accepts_a_right_and_rejects_a_wrong_generator():
    import math
    ppf = lambda q: -math.log(1 - q) if q < 1 else math.inf    # exponential(1) quantiles
    buckets, probs = tu.gen_buckets_probs_with_ppf(ppf, 5)
    assert probs == [0.2] * 5 and buckets[0] == (0.0, ppf(0.2)) and buckets[-1][1] == math.inf
    rng = np.random.RandomState(0)
    ps = tu.verify_generator(lambda n: rng.exponential(1.0, n), buckets, probs, nsamples=20000)
    assert len(ps) == 5 and sum(p > 0.05 for p in ps) >= 1
    msg = _message(tu.verify_generator, lambda n: rng.exponential(1.1, n), buckets, probs,
                   nsamples=20000)
    assert msg.startswith("Generator test fails, Chi-square p=")


def test_mean_and_variance_checks():
    rng = np.random.RandomState(1)
    assert tu.mean_check(lambda n: rng.normal(2.0, 3.0, n), 2.0, 3.0, nsamples=100000)
    assert not tu.mean_check(lambda n: rng.normal(2.1, 3.0, n), 2.0, 3.0, nsamples=100000)
    assert tu.var_check(lambda n: rng.normal(0.0, 3.0, n), 3.0, nsamples=100000)
    assert not tu.var_check(lambda n: rng.normal(0.0, 3.3, n), 3.0, nsamples=100000)


# ---------------------------------------------------------------- test environment

def test_environment_sets_and_restores(monkeypatch):
    monkeypatch.setenv("MXNEXT_TU_A", "old")
    monkeypatch.delenv("MXNEXT_TU_B", raising=False)
    with tu.environment({"MXNEXT_TU_A": None, "MXNEXT_TU_B": "1"}):
        assert "MXNEXT_TU_A" not in os.environ and os.environ["MXNEXT_TU_B"] == "1"
    assert os.environ["MXNEXT_TU_A"] == "old" and "MXNEXT_TU_B" not in os.environ
    with pytest.raises(KeyError):
        with tu.environment("MXNEXT_TU_A", "new"):
            assert os.environ["MXNEXT_TU_A"] == "new"
            raise KeyError("boom")
    assert os.environ["MXNEXT_TU_A"] == "old"

    @tu.environment("MXNEXT_TU_B", "decorated")
    def read():
        return os.environ["MXNEXT_TU_B"]
    assert read() == "decorated" and "MXNEXT_TU_B" not in os.environ
    with pytest.raises(ParamError, match="one dict or two arguments"):
        with tu.environment("MXNEXT_TU_A"):
            pass
    with pytest.raises(ParamError, match="str or None"):
        with tu.environment("MXNEXT_TU_A", 3):
            pass


def _run(code: str, **env):
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=full, check=True)


def test_environment_governs_what_is_created_inside_it():
    out = _run("""
        import mxnext as mx
        from mxnext import engine
        from mxnext.test_utils import environment
        with environment("MXNEXT_ENGINE_TYPE", "NaiveEngine"):
            print(type(engine.get()).__name__)
        engine.set_engine("ThreadedEngine")
        print(type(engine.get()).__name__)
        """).stdout.split()
    assert out == ["NaiveEngine", "ThreadedEngine"]


def test_env_manager(monkeypatch):
    monkeypatch.setenv("MXNEXT_TU_A", "")
    monkeypatch.delenv("MXNEXT_TU_B", raising=False)
    with tu.EnvManager("MXNEXT_TU_A", "x"), tu.EnvManager("MXNEXT_TU_B", "y"):
        assert os.environ["MXNEXT_TU_A"] == "x" and os.environ["MXNEXT_TU_B"] == "y"
    assert os.environ["MXNEXT_TU_A"] == "" and "MXNEXT_TU_B" not in os.environ


def test_discard_stderr_silences_the_file_descriptor():
    res = _run("""
        import os, sys
        from mxnext.test_utils import discard_stderr
        print("before", file=sys.stderr, flush=True)
        with discard_stderr():
            print("python-level", file=sys.stderr)
            os.write(2, b"fd-level\\n")
        print("after", file=sys.stderr, flush=True)
        """)
    assert res.stderr.split() == ["before", "after"]


def test_discard_stderr_without_a_file_descriptor(monkeypatch):
    import io
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with tu.discard_stderr():
        print("kept", file=sys.stderr)
    assert sys.stderr.getvalue() == "kept\n"


def test_retry():
    calls = []

    @tu.retry(3)
    def flaky(x):
        calls.append(x)
        assert len(calls) == 3, "not yet"
        return x

    assert flaky(7) == 7 and calls == [7, 7, 7] and flaky.__name__ == "flaky"
    calls.clear()

    @tu.retry(2)
    def always():
        calls.append(1)
        raise AssertionError("never")

    with pytest.raises(AssertionError, match="never"):
        always()
    assert len(calls) == 2

    @tu.retry(5)
    def broken():
        calls.append(1)
        raise KeyError("not retried")

    calls.clear()
    with pytest.raises(KeyError):
        broken()
    assert len(calls) == 1
    with pytest.raises(ParamError, match="'n' expected > 0"):
        tu.retry(0)


def test_ci_probes(monkeypatch):
    monkeypatch.setenv("CD_JOB", "1")
    assert tu.is_cd_run()
    monkeypatch.setenv("CD_JOB", "0")
    assert not tu.is_cd_run()
    monkeypatch.delenv("CD_JOB")
    assert not tu.is_cd_run()
    import platform
    assert tu.is_aarch64_run() == (platform.machine() == "aarch64")


def test_test_utils_puts_back_numpys_builtin_type_aliases():
    """MXNet 1.9's tests spell np.int, np.float ... (numpy < 1.24); importing mx.test_utils
    (as they all do) puts them back, as ``mxnext run`` does."""
    import subprocess
    import sys
    code = ("import numpy as np, mxnext; assert 'int' not in vars(np); "
            "import mxnext.test_utils; assert np.int is int and np.float is float")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dummy_iter_returns_the_first_batch_forever():
    from mxnext.test_utils import DummyIter
    real = mx.io.NDArrayIter(mx.nd.arange(10).reshape((5, 2)), batch_size=2)
    it = DummyIter(real)
    assert it.provide_data == real.provide_data and it.batch_size == 2
    batches = [next(it) for _ in range(5)]
    assert all(b is batches[0] for b in batches)
    assert batches[0].data[0].asnumpy().tolist() == [[0, 1], [2, 3]]
