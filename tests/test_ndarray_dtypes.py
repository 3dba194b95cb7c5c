"""int16, uint16, uint32 and uint64: dtypes mxnext holds beyond MXNet 1.9's (as MXNet 2.x and
numpy do), with numpy's arithmetic for the dtype and the rules MXNet gives its other integers."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import DTYPE_TO_FLAG, FLAG_TO_DTYPE, ParamError

NARROW = ["int16", "uint16", "uint32", "uint64"]
A = np.array([[1, 5, 3], [4, 2, 6]])
B = np.array([[2, 2, 3], [1, 4, 2]])


def test_mshadow_type_flags():
    assert {n: DTYPE_TO_FLAG[np.dtype(n)] for n in NARROW} == \
        {"int16": 8, "uint16": 9, "uint32": 10, "uint64": 11}
    assert all(FLAG_TO_DTYPE[DTYPE_TO_FLAG[np.dtype(n)]] == np.dtype(n) for n in NARROW)


@pytest.mark.parametrize("dtype", NARROW)
def test_creation(dtype):
    t = np.dtype(dtype)
    assert mx.nd.array(A, dtype=dtype).dtype == t
    assert mx.nd.array(A.astype(t)).dtype == np.float32          # float32 unless given
    assert mx.nd.array(mx.nd.array(A, dtype=dtype)).dtype == t
    for make in (mx.nd.zeros, mx.nd.ones, mx.nd.empty):
        assert make((2, 3), dtype=dtype).dtype == t
    assert mx.nd.full((2,), 7, dtype=dtype).asnumpy().tolist() == [7, 7]
    assert mx.nd.arange(0, 4, dtype=dtype).asnumpy().tolist() == [0, 1, 2, 3]
    info = np.iinfo(t)
    edges = mx.nd.array([info.min, info.max], dtype=dtype).asnumpy()
    assert edges.dtype == t and edges.tolist() == [info.min, info.max]   # exact, even uint64's


@pytest.mark.parametrize("dtype", NARROW)
def test_arithmetic_keeps_the_dtype(dtype):
    t = np.dtype(dtype)
    a, b = mx.nd.array(A, dtype=dtype), mx.nd.array(B, dtype=dtype)
    for got, want in ((a + b, A + B), (a * b, A * B), (a / b, A // B), (a % b, A % B),
                      (a ** b, A ** B), (mx.nd.maximum(a, b), np.maximum(A, B)),
                      (mx.nd.minimum(a, b), np.minimum(A, B)), (a + 2, A + 2),
                      (mx.nd.broadcast_add(a, b[:1]), A + B[:1]), (mx.nd.sum(a, axis=1), A.sum(1))):
        assert got.dtype == t
        np.testing.assert_array_equal(got.asnumpy(), want.astype(t))


def test_unsigned_arithmetic_wraps_as_numpy_does():
    a = mx.nd.array([1, 2], dtype="uint16")
    b = mx.nd.array([2, 2], dtype="uint16")
    assert (a - b).asnumpy().tolist() == [65535, 0]
    big = mx.nd.array([2 ** 64 - 1], dtype="uint64")
    assert (big + 1).asnumpy().tolist() == [0]
    assert (big - 1).asnumpy().tolist() == [2 ** 64 - 2]


def test_signed_division_truncates_as_for_mxnet_integers():
    for dtype in ("int32", "int16"):
        a = mx.nd.array([-3, 3, 7], dtype=dtype)
        b = mx.nd.array([2, 2, -2], dtype=dtype)
        assert (a / b).asnumpy().tolist() == [-1, 1, -3]


@pytest.mark.parametrize("dtype", NARROW)
def test_comparisons_give_the_input_dtype_as_for_other_integers(dtype):
    assert (mx.nd.array(A, dtype="int32") == 1).dtype == np.int32
    a, b = mx.nd.array(A, dtype=dtype), mx.nd.array(B, dtype=dtype)
    for got, want in ((a == b, A == B), (a > b, A > B), (a <= b, A <= B),
                      (mx.nd.broadcast_greater(a, b[:1]), A > B[:1]), (a != 3, A != 3)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))


@pytest.mark.parametrize("dtype", NARROW)
def test_astype_and_cast_both_ways(dtype):
    x = mx.nd.array([[1.7, 2.2], [3.9, 0.0]])
    assert x.astype(dtype).dtype == np.dtype(dtype)
    assert x.astype(dtype).asnumpy().tolist() == [[1, 2], [3, 0]]
    assert mx.nd.cast(x, dtype=dtype).dtype == np.dtype(dtype)
    back = mx.nd.array(A, dtype=dtype).astype("float32")
    assert back.dtype == np.float32 and back.asnumpy().tolist() == A.tolist()
    y = mx.sym.cast(mx.sym.var("x"), dtype=dtype)
    assert y.infer_type(x=np.float32)[1] == [np.dtype(dtype)]


def test_an_unknown_dtype_names_the_op_and_what_it_takes():
    with pytest.raises(ParamError, match="'Cast'.*'complex64'.*'uint64'"):
        mx.nd.cast(mx.nd.ones((1,)), dtype="complex64")


@pytest.mark.parametrize("dtype", NARROW)
def test_topk_and_sort(dtype):
    info = np.iinfo(dtype)
    x = np.array([3, info.max, 0, info.max - 1], dtype=dtype)
    a = mx.nd.array(x, dtype=dtype)
    top = mx.nd.topk(a, k=2, ret_typ="value")
    assert top.dtype == np.dtype(dtype) and top.asnumpy().tolist() == [info.max, info.max - 1]
    assert mx.nd.topk(a, k=2).asnumpy().tolist() == [1, 3]
    assert mx.nd.sort(a).asnumpy().tolist() == sorted(x.tolist())


@pytest.mark.parametrize("dtype", NARROW)
def test_save_load_round_trip_with_the_mshadow_flag(dtype, tmp_path):
    info = np.iinfo(dtype)
    a = mx.nd.array([[info.min, 1], [2, info.max]], dtype=dtype)
    mx.nd.save(str(tmp_path / "a.params"), {"a": a})
    raw = (tmp_path / "a.params").read_bytes()
    # list header (24 bytes), then the record: magic, stype, ndim, 2 dims, dev_type, dev_id
    assert int.from_bytes(raw[24 + 4 + 4 + 4 + 16 + 8:][:4], "little") == DTYPE_TO_FLAG[np.dtype(dtype)]
    back = mx.nd.load(str(tmp_path / "a.params"))["a"]
    assert back.dtype == np.dtype(dtype) and back.asnumpy().tolist() == a.asnumpy().tolist()


@pytest.mark.parametrize("dtype", NARROW)
def test_symbol_var_dtype_round_trips_through_json(dtype):
    x = mx.sym.var("x", dtype=dtype)
    y = mx.sym.load_json((x + x).tojson())
    assert y.get_internals()["x"].attr("__dtype__") == str(DTYPE_TO_FLAG[np.dtype(dtype)])
    assert y.infer_type()[1] == [np.dtype(dtype)]
    out = y.bind(mx.cpu(), {"x": mx.nd.array([2, 3], dtype=dtype)}).forward()[0]
    assert out.dtype == np.dtype(dtype) and out.asnumpy().tolist() == [4, 6]
