"""Sparse NDArrays (csr, row_sparse): storage, creation, ops with MXNet 1.9's output storage
types, the storage fallback, save/load against files MXNet 1.9.1 wrote."""

import logging
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"
DENSE = np.array([[0, 1.5, 0, 0], [0, 0, 0, 0], [2, 0, 0, -3]], np.float32)


def test_components_are_compressed():
    csr = mx.nd.array(DENSE).tostype("csr")
    assert isinstance(csr, mx.nd.NDArray) and isinstance(csr, mx.nd.sparse.CSRNDArray)
    assert (csr.stype, csr.shape, csr.dtype, csr._num_aux) == ("csr", (3, 4), np.float32, 2)
    assert csr.data.asnumpy().tolist() == [1.5, 2, -3]
    assert csr.indices.asnumpy().tolist() == [1, 0, 3] and csr.indices.dtype == np.int64
    assert csr.indptr.asnumpy().tolist() == [0, 1, 1, 3]
    rsp = mx.nd.array(DENSE).tostype("row_sparse")
    assert rsp.indices.asnumpy().tolist() == [0, 2] and rsp.data.shape == (2, 4)
    assert repr(rsp) == "\n<RowSparseNDArray 3x4 @cpu(0)>"
    for a in (csr, rsp):
        np.testing.assert_array_equal(a.asnumpy(), DENSE)
        assert a.tostype("default").stype == "default"


def test_creation_forms():
    sp = mx.nd.sparse
    a = sp.csr_matrix(([1, 2], [2, 0], [0, 1, 2]), shape=(2, 3))
    assert a.asnumpy().tolist() == [[0, 0, 1], [2, 0, 0]]
    inferred = sp.csr_matrix(([1.0], [4], [0, 0, 1]), dtype=np.int32)
    assert inferred.shape == (2, 5) and inferred.dtype == np.int32
    coo = sp.csr_matrix(([5.0, 1.0, 2.0], ([1, 0, 1], [2, 1, 2])), shape=(2, 3))
    assert coo.asnumpy().tolist() == [[0, 1, 0], [0, 0, 7]]
    assert sp.row_sparse_array(([[1, 2]], [3])).shape == (4, 2)
    assert sp.row_sparse_array((4, 2), ctx=mx.cpu(1)).context == mx.cpu(1)
    z = mx.nd.zeros((3, 2), stype="row_sparse", dtype="int32")
    assert z.stype == "row_sparse" and z.dtype == np.int32 and not z.asnumpy().any()
    with pytest.raises(ValueError, match="Shape mismatch"):
        sp.csr_matrix(mx.nd.ones((2, 2)), shape=(3, 2))
    with pytest.raises(ValueError, match="unknown storage type"):
        sp.zeros("dense", (2, 2))
    with pytest.raises(ValueError):
        mx.nd.array([1, 2, 3]).tostype("csr")


def test_scipy_sources_are_canonicalised():
    spsp = pytest.importorskip("scipy.sparse")
    messy = spsp.csr_matrix((np.array([1, 2, 3.0]), np.array([2, 0, 2]), np.array([0, 3])),
                            shape=(1, 3))
    a = mx.nd.array(messy)
    assert a.stype == "csr" and a.indices.asnumpy().tolist() == [0, 2]
    assert a.data.asnumpy().tolist() == [2, 4] and a.dtype == np.float64
    assert (a.asscipy() != messy).nnz == 0


def test_check_format():
    bad = [([7, 8, 9], [0, 2, 1], [0, 5, 2, 3]), ([7, 8, 9], [2, 1, 1], [0, 2, 2, 3]),
           ([7, 8, 9], [1, 2, 1], [0, 2, 2, 4])]
    for parts in bad:
        a = mx.nd.sparse.csr_matrix(parts, shape=(3, 4))     # made as given, as MXNet does
        with pytest.raises(MXNetError):
            a.check_format()
    mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4)).check_format()
    with pytest.raises(MXNetError):
        mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 0]), shape=(3, 2)).check_format()


def test_zero_preserving_ops_stay_sparse():
    for stype in ("csr", "row_sparse"):
        a = mx.nd.array(DENSE).tostype(stype)
        for out, want in ((mx.nd.abs(a), np.abs(DENSE)), (-a, -DENSE), (a * 2, DENSE * 2),
                          (a / 4, DENSE / 4), (mx.nd.sqrt(mx.nd.square(a)), np.abs(DENSE)),
                          (a > 1, DENSE > 1), (mx.nd.clip(a, -1, 1), np.clip(DENSE, -1, 1))):
            assert out.stype == stype
            np.testing.assert_allclose(out.asnumpy(), want)
        assert mx.nd.zeros_like(a).stype == stype
        assert (a >= 0).stype == "default" and (a + 1).stype == "default"
        assert len(mx.nd.abs(a).data) == len(a.data)      # computed on stored values only


def test_storage_fallback_is_dense_and_logged(caplog):
    a = mx.nd.array(DENSE).tostype("csr")
    with caplog.at_level(logging.DEBUG, logger="mxnext.ndarray._sparse_dispatch"):
        out = mx.nd.exp(a)
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), np.exp(DENSE), rtol=1e-6)
    assert any("storage fallback: exp" in r.getMessage() for r in caplog.records)


def test_elementwise_binary_storage_types():
    x = DENSE
    y = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]], np.float32)
    for stype in ("csr", "row_sparse"):
        a, b = mx.nd.array(x).tostype(stype), mx.nd.array(y).tostype(stype)
        for op, ref in ((mx.nd.elemwise_add, x + y), (mx.nd.elemwise_sub, x - y),
                        (mx.nd.elemwise_mul, x * y)):
            out = op(a, b)
            assert out.stype == stype
            np.testing.assert_array_equal(out.asnumpy(), ref)
        prod = mx.nd.elemwise_mul(a, mx.nd.array(y))
        assert prod.stype == stype
        np.testing.assert_array_equal(prod.asnumpy(), x * y)
        assert mx.nd.elemwise_add(a, mx.nd.array(y)).stype == "default"
        total = mx.nd.add_n(a, b, a)
        assert total.stype == stype
        np.testing.assert_array_equal(total.asnumpy(), 2 * x + y)
        a += b
        assert a.stype == stype
        np.testing.assert_array_equal(a.asnumpy(), x + y)


def test_dot_storage_types():
    rng = np.random.RandomState(0)
    lhs = DENSE
    rhs = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
    csr = mx.nd.array(lhs).tostype("csr")
    out = mx.nd.dot(csr, mx.nd.array(rhs))
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), lhs @ rhs, rtol=1e-6)
    other = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    out_t = mx.nd.sparse.dot(csr, mx.nd.array(other), transpose_a=True)
    assert out_t.stype == "row_sparse" and out_t.indices.asnumpy().tolist() == [0, 1, 3]
    np.testing.assert_allclose(out_t.asnumpy(), lhs.T @ other, rtol=1e-6)
    left = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    out_d = mx.nd.dot(mx.nd.array(left), csr)
    assert out_d.stype == "csr"
    np.testing.assert_allclose(out_d.asnumpy(), left @ lhs, rtol=1e-6)
    rsp = mx.nd.array(lhs).tostype("row_sparse")
    np.testing.assert_allclose(mx.nd.dot(rsp, mx.nd.array(rhs)).asnumpy(), lhs @ rhs, rtol=1e-6)


def test_row_and_index_ops():
    csr = mx.nd.array(DENSE).tostype("csr")
    for got, want in ((csr[1:3], DENSE[1:3]), (csr[-1], DENSE[-1:]),
                      (mx.nd.slice(csr, begin=(0, 1), end=(3, 4)), DENSE[:, 1:4]),
                      (mx.nd.take(csr, mx.nd.array([2, 0, 7])), DENSE[[2, 0, 2]]),
                      (mx.nd.concat(csr, csr, dim=0), np.vstack([DENSE, DENSE]))):
        assert got.stype == "csr"
        np.testing.assert_array_equal(got.asnumpy(), want)
    assert mx.nd.contrib.getnnz(csr, axis=1).asnumpy().tolist() == [1, 0, 2]
    rsp = mx.nd.array(DENSE).tostype("row_sparse")
    kept = mx.nd.sparse.retain(rsp, mx.nd.array([2, 1]))
    assert kept.stype == "row_sparse" and kept.indices.asnumpy().tolist() == [2]
    sq = mx.nd._internal._square_sum(rsp, axis=1, keepdims=True)
    assert sq.stype == "row_sparse"
    np.testing.assert_allclose(sq.asnumpy(), (DENSE ** 2).sum(1, keepdims=True))


def test_sparse_out_and_setitem():
    out = mx.nd.zeros((3, 4), stype="csr")
    mx.nd.broadcast_add(mx.nd.array(DENSE), mx.nd.zeros((3, 4)), out=out)
    assert out.stype == "csr" and out.indptr.asnumpy().tolist() == [0, 1, 1, 3]
    rsp = mx.nd.sparse.zeros("row_sparse", (3, 4))
    rsp[:] = 2
    assert rsp.asnumpy().tolist() == [[2] * 4] * 3
    rsp[:] = mx.nd.array(DENSE).tostype("row_sparse")
    np.testing.assert_array_equal(rsp.asnumpy(), DENSE)
    with pytest.raises(ValueError):
        out[:] = 1


def test_pickle_and_copies():
    for stype in ("csr", "row_sparse"):
        a = mx.nd.array(DENSE).tostype(stype)
        b = pickle.loads(pickle.dumps(a))
        assert type(b) is type(a)
        np.testing.assert_array_equal(b.asnumpy(), DENSE)
        c = a.astype("float64")
        assert c.dtype == np.float64 and c.stype == stype
        assert a.astype("float32", copy=False) is a
        d = a.copyto(mx.cpu(1))
        assert d.context == mx.cpu(1) and d.stype == stype


def test_loads_mxnet_files_and_writes_them_back_bytewise(tmp_path):
    src = FIX / "extra-mxnet191.params"
    loaded = mx.nd.load(str(src))
    assert loaded["csr"].stype == "csr" and loaded["rsp"].stype == "row_sparse"
    assert loaded["csr"].indptr.asnumpy().tolist() == [0, 0, 4, 4, 4, 7]
    assert loaded["rsp"].indices.asnumpy().tolist() == [1, 4]
    expected = np.load(FIX / "extra-mxnet191-expected.npz")
    for k in ("csr", "rsp"):
        np.testing.assert_array_equal(loaded[k].asnumpy(), expected[k])
    mx.nd.save(str(tmp_path / "again.params"), loaded)
    assert (tmp_path / "again.params").read_bytes() == src.read_bytes()


def test_random_sparse_helpers():
    from mxnext.test_utils import create_sparse_array, rand_ndarray, rand_sparse_ndarray
    a = rand_ndarray((6, 5), "csr", density=0.5)
    assert a.stype == "csr" and a.shape == (6, 5)
    a.check_format()
    rsp, (values, rows) = rand_sparse_ndarray((8, 3), "row_sparse", density=1)
    assert rsp.indices.asnumpy().tolist() == list(range(8)) and values.shape == (8, 3)
    power, _ = rand_sparse_ndarray((4, 16), "csr", density=30 / 64, distribution="powerlaw")
    assert np.diff(power.indptr.asnumpy()).tolist() == [2, 4, 8, 16]
    assert create_sparse_array((4, 3), "row_sparse", rsp_indices=[3, 1]).indices \
        .asnumpy().tolist() == [1, 3]


def test_csr_reductions_and_quadratic():
    csr = mx.nd.array(DENSE).tostype("csr")
    for axis in (0, 1):
        for keepdims in (False, True):
            np.testing.assert_allclose(csr.sum(axis=axis, keepdims=keepdims).asnumpy(),
                                       DENSE.sum(axis=axis, keepdims=keepdims))
            mean = mx.nd.mean(csr, axis=axis, keepdims=keepdims)
            assert mean.stype == "default"
            np.testing.assert_allclose(mean.asnumpy(), DENSE.mean(axis=axis, keepdims=keepdims))
    np.testing.assert_allclose(mx.nd.norm(csr).asnumpy(), [np.linalg.norm(DENSE)], rtol=1e-6)
    assert mx.nd.contrib.quadratic(csr, a=1, b=2).stype == "csr"
    assert mx.nd.contrib.quadratic(csr, a=1, b=2, c=1).stype == "default"


def test_executor_reads_sparse_arguments_and_writes_sparse_gradients():
    x = mx.sym.Variable("x", stype="csr")
    y = mx.sym.sparse.elemwise_mul(x, mx.sym.Variable("w"))
    csr = mx.nd.array(DENSE).tostype("csr")
    w = mx.nd.ones((3, 4)) * 3
    grad = mx.nd.zeros((3, 4), stype="row_sparse")
    exe = y.bind(mx.cpu(), {"x": csr, "w": w}, args_grad={"x": grad})
    assert exe.arg_dict["x"] is csr
    (out,) = exe.forward(is_train=True)
    assert out.stype == "csr"                        # csr * dense: csr (storage inference)
    np.testing.assert_array_equal(out.asnumpy(), DENSE * 3)
    exe.backward(mx.nd.ones((3, 4)).tostype("csr"))
    assert grad.stype == "row_sparse" and grad.asnumpy().tolist() == [[3] * 4] * 3
    csr[:] = mx.nd.array(DENSE * 2)                  # a new value is read at the next forward
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), DENSE * 6)


def test_simple_bind_makes_the_sparse_arguments_stype_dict_names():
    y = mx.sym.dot(mx.sym.Variable("x"), mx.sym.Variable("w"))
    exe = y.simple_bind(mx.cpu(), x=(3, 4), w=(4, 2), stype_dict={"x": "csr"})
    assert exe.arg_dict["x"].stype == "csr" and exe.arg_dict["w"].stype == "default"
    exe.arg_dict["x"][:] = mx.nd.array(DENSE).tostype("csr")
    exe.arg_dict["w"][:] = 1
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), DENSE @ np.ones((4, 2)))
    with pytest.raises(MXNetError, match="stype_dict"):
        y.simple_bind(mx.cpu(), x=(3, 4), w=(4, 2), stype_dict={"x": "coo"})


def test_mxnet_sparse_records_load_component_for_component(tmp_path):
    src = FIX / "sparse-mxnet191.params"
    loaded = mx.nd.load(str(src))
    expected = np.load(FIX / "sparse-mxnet191-expected.npz")
    for name, arr in loaded.items():
        assert arr.stype == ("csr" if name.startswith("csr") else "row_sparse")
        parts = ["data", "indices"] + (["indptr"] if arr.stype == "csr" else [])
        for part in parts:
            got = getattr(arr, part).asnumpy()
            want = expected[f"{name}.{part}"]
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(arr.asnumpy(), expected[f"{name}.dense"])
    # MXNet wrote csr_int's storage shape (the int64 at bytes 240..248) as a stale 0 beside
    # its 3 values; mxnext writes 3 there and otherwise the same bytes
    mx.nd.save(str(tmp_path / "again.params"), loaded)
    mine, theirs = (tmp_path / "again.params").read_bytes(), src.read_bytes()
    assert struct.unpack_from("<q", theirs, 240) == (0,)
    assert struct.unpack_from("<q", mine, 240) == (3,)
    assert mine[:240] == theirs[:240] and mine[248:] == theirs[248:]
