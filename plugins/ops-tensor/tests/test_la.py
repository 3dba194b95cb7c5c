"""The _linalg_* ops (mx.nd.linalg): values against numpy, the triangle each op reads,
batching, gradients on symmetric perturbations (potrf, syevd), the hidden LU outputs of
det/slogdet and the errors of bad input."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import ops as registry
from opsdk import MXNetError, ShapeError, TypeInferError
from opsdk.testing import check_forward, check_numeric_gradient, eval_gradients, infer, run_op

rng = np.random.default_rng(7)


def r(*shape, dtype=np.float64):
    return rng.uniform(-1, 1, shape).astype(dtype)


def spd(n, batch=()):
    a = r(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def junk_upper(a):
    """``a`` with garbage above the diagonal (ops reading the lower triangle ignore it)."""
    return a + np.triu(r(*a.shape) * 50, 1)


def shapes(op, *in_shapes, dtype="float32", **params):
    d = registry.get(op)
    return infer(d, d.parse_params(params), list(in_shapes), [np.dtype(dtype)] * len(in_shapes))[1]


def symmetric_gradient_check(op, a, out=0, **params):
    """The op's gradient against central differences of S -> op((S + S^T) / 2): the ops
    read one triangle, so only symmetric perturbations are meaningful."""
    outs = run_op(op, [a], params)
    heads = [np.zeros_like(o) for o in outs]
    heads[out] = r(*outs[out].shape)
    got = eval_gradients(op, [a], heads, params)[0]
    want = np.zeros_like(a)
    eps = 1e-6
    for idx in np.ndindex(*a.shape):
        for sign in (1, -1):
            s = a.copy()
            s[idx] += sign * eps / 2
            s[idx[:-2] + idx[-2:][::-1]] += sign * eps / 2
            want[idx] += sign * np.sum(run_op(op, [s], params)[out] * heads[out]) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# -- gemm, gemm2 ---------------------------------------------------------------------------
def test_gemm_transposes_alpha_beta_batches():
    a, b, c = r(3, 4, 2), r(3, 5, 4), r(3, 2, 5)
    want = 2.5 * np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2) - 0.5 * c
    check_forward("_linalg_gemm", [a, b, c], want,
                  {"transpose_a": True, "transpose_b": True, "alpha": 2.5, "beta": -0.5})
    check_forward("_linalg_gemm2", [a[:, :, :1], b[:, :1]], a[:, :, :1] @ b[:, :1])


def test_gemm_row_axis():
    """Rows on axis 1 of (2, rows, 3, cols): the same as swapping that axis next to the last."""
    a, b = r(2, 4, 3, 5), r(2, 5, 3, 6)
    want = np.swapaxes(np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2), 1, 2)
    check_forward("_linalg_gemm2", [a, b], 0.5 * want, {"axis": 1, "alpha": 0.5})
    assert shapes("_linalg_gemm2", (2, 4, 3, 5), (2, 5, 3, 6), axis=-3) == [(2, 4, 3, 6)]
    check_numeric_gradient("_linalg_gemm", [a, b, r(2, 4, 3, 6)], {"axis": 1, "beta": 2.0})


def test_gemm_shape_errors_name_op_and_shapes():
    with pytest.raises(ShapeError, match=r"_linalg_gemm2.*incompatible.*\(2, 3\).*\(4, 2\)"):
        shapes("_linalg_gemm2", (2, 3), (4, 2))
    with pytest.raises(ShapeError, match="_linalg_gemm2.*must agree"):
        shapes("_linalg_gemm2", (2, 2, 3), (3, 3, 2))
    with pytest.raises(ShapeError, match="_linalg_gemm2.*invalid row axis -1"):
        shapes("_linalg_gemm2", (2, 3), (3, 2), axis=-1)
    with pytest.raises(ShapeError, match="_linalg_gemm.*input C has shape"):
        shapes("_linalg_gemm", (2, 3), (3, 2), (3, 3))


def test_la_ops_take_float32_and_float64_only():
    with pytest.raises(TypeInferError, match="_linalg_gemm2.*32-bit and 64-bit.*float16"):
        shapes("_linalg_gemm2", (2, 3), (3, 2), dtype="float16")
    with pytest.raises(TypeInferError, match="_linalg_potrf.*int32"):
        shapes("_linalg_potrf", (2, 2), dtype="int32")
    ones = mx.nd.ones((2, 3), dtype="float64")
    out = mx.nd.linalg.gemm2(ones, ones, transpose_b=True)
    assert out.dtype == np.float64


# -- trmm, trsm, syrk ----------------------------------------------------------------------
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("rightside", [True, False])
def test_trmm_trsm_read_one_triangle(lower, transpose, rightside):
    a = r(2, 3, 3) + 3 * np.eye(3)
    t = np.tril(a) if lower else np.triu(a)
    op_t = np.swapaxes(t, 1, 2) if transpose else t
    b = r(2, 4, 3) if rightside else r(2, 3, 4)
    params = {"lower": lower, "transpose": transpose, "rightside": rightside, "alpha": -1.5}
    check_forward("_linalg_trmm", [a, b], -1.5 * (b @ op_t if rightside else op_t @ b), params)
    inv = np.linalg.inv(op_t)
    check_forward("_linalg_trsm", [a, b], -1.5 * (b @ inv if rightside else inv @ b), params,
                  rtol=1e-10, atol=1e-12)
    check_numeric_gradient("_linalg_trsm", [a, b], params)
    check_numeric_gradient("_linalg_trmm", [a, b], params)


def test_trsm_zero_diagonal_gives_inf_not_error():
    """As BLAS trsm: no check of the triangular matrix, a zero pivot divides by zero."""
    out = run_op("_linalg_trsm", [np.zeros((2, 2)), np.ones((2, 2))])[0]
    assert not np.isfinite(out).any()


def test_trmm_shape_inferred_backwards_from_output():
    d = registry.get("_linalg_trmm")
    p = d.parse_params({"rightside": True})
    ins, _ = d.get_attr("FInferShape")(p, [None, None], [(2, 4, 3)])
    assert ins == [(2, 3, 3), (2, 4, 3)]
    with pytest.raises(ShapeError, match="_linalg_trsm.*square"):
        shapes("_linalg_trsm", (3, 2), (3, 4))


def test_syrk_symmetric_result_and_gradient():
    a = r(2, 3, 5)
    check_forward("_linalg_syrk", [a], 2 * a @ np.swapaxes(a, 1, 2), {"alpha": 2.0})
    check_forward("_linalg_syrk", [a], np.swapaxes(a, 1, 2) @ a, {"transpose": True})
    assert shapes("_linalg_syrk", (3, 5), transpose=True) == [(5, 5)]
    check_numeric_gradient("_linalg_syrk", [a], {"transpose": True, "alpha": -0.5})


# -- potrf, potri ----------------------------------------------------------------------------
def test_potrf_reads_the_lower_or_upper_triangle():
    a = spd(4, (2,))
    low = np.linalg.cholesky(a)
    check_forward("_linalg_potrf", [junk_upper(a)], low)
    upper_only = np.swapaxes(junk_upper(np.swapaxes(a, 1, 2)), 1, 2)
    check_forward("_linalg_potrf", [upper_only], np.swapaxes(low, 1, 2), {"lower": False})


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_gradient_on_symmetric_perturbations(lower):
    symmetric_gradient_check("_linalg_potrf", spd(3, (2,)), lower=lower)


def test_potrf_not_positive_definite_raises_naming_op():
    with pytest.raises(MXNetError, match="_linalg_potrf.*not positive definite"):
        run_op("_linalg_potrf", [np.array([[1.0, 2.0], [2.0, 1.0]])])
    with pytest.raises(ShapeError, match="_linalg_potrf.*square.*\\(2, 3\\)"):
        shapes("_linalg_potrf", (2, 3))


@pytest.mark.parametrize("lower", [True, False])
def test_potri_inverts_from_the_factor(lower):
    a = spd(4, (3,))
    b = np.linalg.cholesky(a)
    if not lower:
        b = np.swapaxes(b, 1, 2)
    junk = b + (np.triu(r(3, 4, 4), 1) if lower else np.tril(r(3, 4, 4), -1))
    check_forward("_linalg_potri", [junk], np.linalg.inv(a), {"lower": lower},
                  rtol=1e-9, atol=1e-10)
    check_numeric_gradient("_linalg_potri", [junk], {"lower": lower})


# -- gelqf, syevd ----------------------------------------------------------------------------
def test_gelqf_factors_and_signs():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    q, low = run_op("_linalg_gelqf", [a])
    np.testing.assert_allclose(low @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ q.T, np.eye(2), atol=1e-12)
    assert low[0, 1] == 0
    # MXNet's documented result (LAPACK's Householder signs)
    np.testing.assert_allclose(low, [[-3.74165739, 0.0], [-8.55235974, 1.96396101]], rtol=1e-8)
    with pytest.raises(ShapeError, match="_linalg_gelqf.*at most as many rows.*\\(3, 2\\)"):
        shapes("_linalg_gelqf", (3, 2))
    assert shapes("_linalg_gelqf", (4, 2, 5)) == [(4, 2, 5), (4, 2, 2)]


def test_syevd_eigenvectors_rows_signed_and_ascending():
    a = spd(4, (2,)) - 3 * np.eye(4)
    u, lam = run_op("_linalg_syevd", [junk_upper(a)])
    assert np.all(np.diff(lam, axis=-1) > 0)
    np.testing.assert_allclose(u @ a @ np.swapaxes(u, 1, 2), lam[..., None] * np.eye(4), atol=1e-10)
    big = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
    assert (big > 0).all()
    u2, lam2 = run_op("_linalg_syevd", [np.array([[1.0, 2.0], [2.0, 4.0]])])
    np.testing.assert_allclose(u2, [[0.89442719, -0.4472136], [0.4472136, 0.89442719]], rtol=1e-7)
    np.testing.assert_allclose(lam2, [0.0, 5.0], atol=1e-12)


@pytest.mark.parametrize("out", [0, 1])
def test_syevd_gradient_on_symmetric_perturbations(out):
    symmetric_gradient_check("_linalg_syevd", spd(4, (2,)) - 4 * np.eye(4), out=out)


# -- inverse, det, slogdet -------------------------------------------------------------------
def test_inverse_and_singular_error():
    a = r(2, 3, 3) + 2 * np.eye(3)
    check_forward("_linalg_inverse", [a], np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    with pytest.raises(MXNetError, match="_linalg_inverse.*singular"):
        run_op("_linalg_inverse", [np.zeros((2, 2))])


def test_det_slogdet_values_and_hidden_lu():
    a = r(3, 4, 4)
    a[1] = a[1][[1, 0, 2, 3]]
    det, lu, piv = run_op("_linalg_det", [a])
    np.testing.assert_allclose(det, np.linalg.det(a), rtol=1e-10)
    sign, logdet, _, _ = run_op("_linalg_slogdet", [a])
    want_sign, want_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign, want_sign)
    np.testing.assert_allclose(logdet, want_log, rtol=1e-10)
    # the hidden outputs: getrf of A^T stored transposed, with LAPACK's 1-based pivots
    assert piv.dtype == np.int32 and piv.shape == (3, 4)
    packed = np.swapaxes(lu, 1, 2)
    low, up = np.tril(packed, -1) + np.eye(4), np.triu(packed)
    for k in range(3):
        x = a[k].T.copy()
        for i, p in enumerate(piv[k] - 1):
            x[[i, p]] = x[[p, i]]
        np.testing.assert_allclose(low[k] @ up[k], x, atol=1e-12)


def test_det_shapes_follow_mxnet():
    assert shapes("_linalg_det", (3, 3)) == [(1,), (3, 3), (3,)]
    assert shapes("_linalg_slogdet", (2, 5, 3, 3))[:2] == [(2, 5), (2, 5)]
    with mx.util.np_shape(True):
        assert shapes("_linalg_det", (3, 3))[0] == ()
    d = registry.get("_linalg_det")
    assert d.num_visible_outputs(d.parse_params({})) == 1


def test_det_gradients_and_singular_matrices():
    a = r(2, 3, 3) + np.eye(3)
    check_numeric_gradient("_linalg_det", [a])
    check_numeric_gradient("_linalg_slogdet", [a])
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert run_op("_linalg_det", [singular])[0] == 0
    sign, logdet = run_op("_linalg_slogdet", [np.zeros((2, 2))])[:2]
    assert sign == 0 and logdet == -np.inf
    for op, head in (("_linalg_det", 0), ("_linalg_slogdet", 1)):
        heads = [np.ones(1) if k == head else np.zeros(1) for k in range(head + 1)]
        grad = eval_gradients(op, [singular], heads)[0]
        np.testing.assert_array_equal(grad, np.zeros((2, 2)))


def test_det_autograd_reads_the_hidden_outputs():
    x = mx.nd.array(np.array([[2.0, 1.0], [1.0, 3.0]]), dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.det(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 5.0 * np.linalg.inv(x.asnumpy()).T)


# -- diagonal and triangle copies ------------------------------------------------------------
def test_sumlogdiag():
    a = spd(3, (2, 2))
    check_forward("_linalg_sumlogdiag", [a], np.log(np.diagonal(a, 0, -2, -1)).sum(-1))
    assert shapes("_linalg_sumlogdiag", (4, 4)) == [(1,)]
    with pytest.raises(ShapeError, match="_linalg_sumlogdiag.*square.*\\(2, 3\\)"):
        shapes("_linalg_sumlogdiag", (2, 3))
    check_numeric_gradient("_linalg_sumlogdiag", [a])


@pytest.mark.parametrize("offset", [-2, 0, 1])
def test_extractdiag_makediag_round_trip(offset):
    a = r(2, 4, 4)
    d = np.diagonal(a, offset, -2, -1)
    check_forward("_linalg_extractdiag", [a], d, {"offset": offset})
    made = np.stack([np.diagflat(v, offset) for v in d])
    check_forward("_linalg_makediag", [d], made, {"offset": offset})


def test_maketrian_layout_of_mxnet_docs():
    a = np.array([1.0, 2.0, 3.0])
    check_forward("_linalg_maketrian", [a], np.array([[1, 0], [2, 3]], float))
    check_forward("_linalg_maketrian", [a], np.array([[1, 2], [0, 3]], float), {"lower": False})
    check_forward("_linalg_maketrian", [a], np.array([[0, 1, 2], [0, 0, 3], [0, 0, 0]], float),
                  {"offset": 1})
    check_forward("_linalg_maketrian", [a], np.array([[0, 0, 0], [1, 0, 0], [2, 3, 0]], float),
                  {"offset": -1})
    m = np.arange(9.0).reshape(3, 3)
    check_forward("_linalg_extracttrian", [m], np.array([0, 1, 4, 2, 5, 8.0]), {"lower": False})
    check_forward("_linalg_extracttrian", [m], np.array([0, 3, 4, 6, 7, 8.0]))


def test_copy_op_shape_errors():
    with pytest.raises(ShapeError, match="_linalg_extractdiag.*illegal offset 3"):
        shapes("_linalg_extractdiag", (3, 3), offset=3)
    with pytest.raises(ShapeError, match="_linalg_maketrian.*m \\* \\(m \\+ 1\\) / 2.*got 4"):
        shapes("_linalg_maketrian", (4,))
    with pytest.raises(ShapeError, match="_linalg_extracttrian.*square.*\\(2, 3\\)"):
        shapes("_linalg_extracttrian", (2, 3))
    assert shapes("_linalg_maketrian", (2, 6), offset=-2) == [(2, 5, 5)]


# -- names ----------------------------------------------------------------------------------
def test_mxnet_aliases_and_frontends():
    for name in ("gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "gelqf",
                 "sumlogdiag", "extractdiag", "makediag", "extracttrian", "maketrian",
                 "inverse", "det", "slogdet"):
        assert registry.get(f"linalg_{name}").name == f"_linalg_{name}"
    for alias, op in (("_npi_inv", "inverse"), ("_npi_det", "det"), ("_npi_slogdet", "slogdet")):
        assert registry.get(alias).name == f"_linalg_{op}"
    with pytest.raises(KeyError):
        registry.get("linalg_syevd")    # MXNet registers no such alias
    u, lam = mx.nd.linalg.syevd(mx.nd.array([[2.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(lam.asnumpy(), [1, 2])
    s = mx.sym.linalg.gemm2(mx.sym.var("a"), mx.sym.var("b"), transpose_b=True)
    assert s.infer_shape(a=(2, 3), b=(4, 3))[1] == [(2, 4)]
