"""mxnext.ndarray.serialization: MXNet 1.9's binary NDArray format, both ways.

The MXNet 1.9.1 cross-checks run a real ``mxnet`` in a subprocess of the reference venv
(``MXNEXT_MXNET_PYTHON``, default /opt/mxnet-ref/bin/python) and are skipped without it.
"""

import functools
import os
import struct
import subprocess
from pathlib import Path

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mxnext as mx
from mxnext.base import MXNetError, ParamError
from mxnext.ndarray import serialization as ser
from mxnext.ndarray.serialization import NDArrayFormatError

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"
MXNET_PYTHON = os.environ.get("MXNEXT_MXNET_PYTHON", "/opt/mxnet-ref/bin/python")
DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64, np.bool_]


def _sample(dtype, shape, rng):
    if dtype is np.bool_:
        return np.asarray(rng.random(shape) > 0.5)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _assert_same(got, expected):
    assert type(got) is type(expected)
    items = got.items() if isinstance(got, dict) else enumerate(got)
    assert len(got) == len(expected)
    for k, v in items:
        assert v.dtype == expected[k].dtype, k
        assert v.shape == expected[k].shape, k
        np.testing.assert_array_equal(v, expected[k])


# ---------------------------------------------------------------- MXNet 1.9.1 fixtures

def test_load_dict_fixture():
    got = ser.load_arrays(FIX / "ndarray-dict.params")
    expected = np.load(FIX / "ndarray-dict-expected.npz")
    assert list(got) == ["f32", "f64", "f16", "i32", "i64", "u8", "i8"]
    _assert_same(got, {k: expected[k] for k in got})


def test_load_list_fixture():
    got = ser.load_arrays(str(FIX / "ndarray-list.nd"))
    expected = np.load(FIX / "ndarray-list-expected.npz")
    _assert_same(got, [expected[f"arr_{i}"] for i in range(3)])


def test_load_checkpoint_params():
    mlp = ser.load_arrays(FIX / "mlp-0000.params")
    # the fixture's parameters are numpy-seed-0 uniform draws in [-0.5, 0.5), in file order
    rs = np.random.RandomState(0)
    assert list(mlp) == [f"arg:fc{i}_{p}" for i in (1, 2, 3) for p in ("weight", "bias")]
    for name, value in mlp.items():
        np.testing.assert_array_equal(value, rs.uniform(-0.5, 0.5, value.shape).astype(np.float32))
    lenet = ser.load_arrays(FIX / "lenet-0000.params")
    assert {k: v.shape for k, v in lenet.items()} == {
        "arg:conv1_weight": (6, 1, 5, 5), "arg:conv1_bias": (6,),
        "arg:conv2_weight": (16, 6, 5, 5), "arg:conv2_bias": (16,),
        "arg:fc1_weight": (32, 256), "arg:fc1_bias": (32,),
        "arg:fc2_weight": (10, 32), "arg:fc2_bias": (10,)}
    assert all(v.dtype == np.float32 and np.abs(v).max() <= 0.5 for v in lenet.values())


@pytest.mark.parametrize("name", ["ndarray-dict.params", "ndarray-list.nd", "mlp-0000.params",
                                  "lenet-0000.params"])
def test_rewrite_is_byte_identical(name, tmp_path):
    raw = (FIX / name).read_bytes()
    assert ser.dumps(ser.loads(raw)) == raw
    ser.save_arrays(tmp_path / name, ser.load_arrays(FIX / name))
    assert (tmp_path / name).read_bytes() == raw


def test_load_sparse_scalar_empty_bool_from_mxnet():
    got = ser.load_arrays(FIX / "extra-mxnet191.params")
    expected = np.load(FIX / "extra-mxnet191-expected.npz")
    assert set(got) == set(expected.files) == {"rsp", "csr", "scalar", "empty", "bool", "größe"}
    _assert_same(got, {k: expected[k] for k in got})
    assert got["scalar"].shape == () and got["empty"].shape == (0, 3)


# ---------------------------------------------------------------- round trips

def test_roundtrip_every_dtype_and_shape(tmp_path):
    rng = np.random.default_rng(3)
    shapes = [(), (0,), (2, 0, 3), (1,), (3, 4), (2, 1, 3, 2)]
    data = {f"{np.dtype(dt).name}{shape}": _sample(dt, shape, rng) for dt in DTYPES for shape in shapes}
    ser.save_arrays(tmp_path / "a.params", data)
    _assert_same(ser.load_arrays(tmp_path / "a.params"), data)
    as_list = list(data.values())
    _assert_same(ser.loads(ser.dumps(as_list)), as_list)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), hnp.arrays(
    st.sampled_from([np.dtype(d) for d in DTYPES]),
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)), max_size=5))
def test_roundtrip_property(data):
    _assert_same(ser.loads(ser.dumps(data)), data if data else [])
    as_list = list(data.values())
    _assert_same(ser.loads(ser.dumps(as_list)), as_list)


def test_roundtrip_layouts_and_byte_orders():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    inputs = [base[:, ::2], np.asfortranarray(base), base.astype(">f8"), base.T,
              np.arange(5, dtype=">i4")]
    got = ser.loads(ser.dumps(inputs))
    for g, x in zip(got, inputs):
        assert g.dtype == x.dtype.newbyteorder("=") and g.flags.c_contiguous and g.flags.writeable
        np.testing.assert_array_equal(g, x)
    assert ser.dumps([base.astype(">f8")]) == ser.dumps([base])


def test_single_array_and_empty_containers():
    a = np.ones((2,), np.float32)
    _assert_same(ser.loads(ser.dumps(a)), [a])
    assert ser.loads(ser.dumps([])) == []
    assert ser.loads(ser.dumps({})) == []  # MXNet too: no names means a list
    assert ser.dumps({}) == ser.dumps([])


def test_zero_d_is_written_as_mxnet_writes_it():
    raw = ser.dumps([np.array(3.0, dtype=np.float32)])
    # v2 record, ndim 0, then context, type flag and the data: MXNet 1.9's own bytes
    assert raw == bytes.fromhex("120100000000000000000000000000000100000000000000c9fa93f9"
                                "000000000000000001000000000000000000000000004040"
                                "0000000000000000")


# ---------------------------------------------------------------- older record formats

def _file(records: bytes, n: int, names=()) -> bytes:
    out = struct.pack("<QQQ", ser.LIST_MAGIC, 0, n) + records + struct.pack("<Q", len(names))
    for name in names:
        out += struct.pack("<Q", len(name)) + name
    return out


def test_load_v1_and_first_format_records():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    v1 = struct.pack("<Iiqqiii", ser.V1_MAGIC, 2, 2, 3, 1, 0, 0) + data.tobytes()
    first = struct.pack("<IIIiii", 2, 2, 3, 1, 0, 0) + data.tobytes()
    none = struct.pack("<I", 0)  # first format, ndim 0: a "none" array, nothing follows
    got = ser.loads(_file(v1 + first + none, 3, [b"v1", b"first", b"none"]))
    np.testing.assert_array_equal(got["v1"], data)
    np.testing.assert_array_equal(got["first"], data)
    assert got["none"] is None


def test_load_bfloat16_as_float32():
    values = np.array([1.0, -2.5, 3.140625], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")
    rec = struct.pack("<Iiiqiii", ser.V2_MAGIC, 0, 1, 3, 1, 0, ser.BFLOAT16_FLAG) + bf16.tobytes()
    got, = ser.loads(_file(rec, 1))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, values)


def test_load_numpy_shape_v3_records():
    rec = struct.pack("<Iiiiii", ser.V3_MAGIC, 0, 0, 1, 0, 0) + np.float32(2).tobytes()
    rec += struct.pack("<Iiiqqiii", ser.V3_MAGIC, 0, 2, 0, 3, 1, 0, 6)
    with mx.np_shape(True):                       # V3 records load in NumPy shape semantics
        scalar, empty = ser.loads(_file(rec, 2))
    assert scalar.shape == () and scalar == 2.0
    assert empty.shape == (0, 3) and empty.dtype == np.int64


# ---------------------------------------------------------------- corrupted input

def test_every_truncation_is_a_clear_error(tmp_path):
    raw = (FIX / "ndarray-dict.params").read_bytes()
    path = tmp_path / "cut.params"
    for n in range(len(raw)):
        with pytest.raises(NDArrayFormatError) as info:
            ser.loads(raw[:n], source="cut.params")
        assert "cut.params" in str(info.value)
    path.write_bytes(raw[:100])
    with pytest.raises(NDArrayFormatError, match=r"cut\.params.*truncated at byte \d+ reading array 0 data: needed 48 bytes, 36 left"):
        ser.load_arrays(path)


def _patched(raw: bytes, offset: int, fmt: str, value) -> bytes:
    return raw[:offset] + struct.pack(fmt, value) + raw[offset + struct.calcsize(fmt):]


@pytest.mark.parametrize("offset,fmt,value,message", [
    (0, "<Q", 0x113, "header magic is 0x113, expected 0x112"),
    (16, "<Q", 1 << 60, "array count is 1152921504606846976, more than"),
    (24, "<I", 0xDEADBEEF, "starts with 0xDEADBEEF, expected an NDArray magic"),
    (28, "<i", 7, "storage type is 7"),
    (32, "<i", 1000, "ndim 1000"),
    (36, "<q", 1 << 40, "truncated at byte 64 reading array 0 data"),
    (36, "<q", -3, "negative dimension"),
    (52, "<i", 77, "context is \\(dev_type=77"),
    (60, "<i", 99, "type flag is 99, expected one of 0=float32"),
])
def test_corruption_is_named(offset, fmt, value, message):
    raw = (FIX / "ndarray-list.nd").read_bytes()
    with pytest.raises(NDArrayFormatError, match=message):
        ser.loads(_patched(raw, offset, fmt, value), source="x.nd")


def test_bad_names_section():
    a = np.zeros(2, np.float32)
    raw = ser.dumps({"a": a, "b": a})
    names_at = raw.index(struct.pack("<Q", 1) + b"a") - 8
    with pytest.raises(NDArrayFormatError, match="1 names for 2 arrays"):
        ser.loads(_patched(raw, names_at, "<Q", 1))
    bad = raw.replace(struct.pack("<Q", 1) + b"a", struct.pack("<Q", 1) + b"\xff")
    with pytest.raises(NDArrayFormatError, match="name 0 is not utf-8"):
        ser.loads(bad)


@pytest.mark.parametrize("name", ["ndarray-dict.params", "extra-mxnet191.params"])
def test_random_corruption_never_escapes_as_another_error(name):
    raw = (FIX / name).read_bytes()
    rng = np.random.default_rng(0)
    for _ in range(400):
        buf = bytearray(raw)
        for pos in rng.integers(0, len(buf), rng.integers(1, 4)):
            buf[pos] = int(rng.integers(0, 256))
        try:
            ser.loads(bytes(buf))
        except NDArrayFormatError:
            pass


def test_is_an_mxnet_error():
    assert issubclass(NDArrayFormatError, MXNetError)
    with pytest.raises(MXNetError, match="not a valid MXNet NDArray file"):
        ser.loads(b"\x00" * 8)


def test_rejects_what_mxnet_cannot_hold():
    with pytest.raises(ParamError, match="array 'c' has dtype complex64"):
        ser.dumps({"c": np.zeros(2, np.complex64)})
    with pytest.raises(ParamError, match="array 1 has dtype complex128"):
        ser.dumps([np.zeros(1), np.zeros(1, np.complex128)])
    with pytest.raises(ParamError, match="keys must be str"):
        ser.dumps({1: np.zeros(1)})
    with pytest.raises(ParamError, match="item 0 expected ndarray, got list"):
        ser.dumps([[1, 2]])
    with pytest.raises(ParamError, match="expected a list or dict"):
        ser.dumps("nope")


# ---------------------------------------------------------------- atomic writes

def test_failed_write_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "w.params"
    ser.save_arrays(path, {"old": np.ones(3, np.float32)})
    before = path.read_bytes()
    with pytest.raises(ParamError):
        ser.save_arrays(path, {"bad": np.zeros(2, np.complex128)})

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # fault injection in the middle of the write
    with pytest.raises(OSError, match="No space left"):
        ser.save_arrays(path, {"new": np.zeros(1000, np.float32)})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.params"]  # no temp file left


def test_write_replaces_and_respects_umask(tmp_path):
    path = tmp_path / "m.params"
    old = os.umask(0o027)
    try:
        ser.save_arrays(path, [np.ones(1)])
        ser.save_arrays(path, [np.zeros(2)])
    finally:
        os.umask(old)
    np.testing.assert_array_equal(ser.load_arrays(path)[0], np.zeros(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.params"]
    assert (path.stat().st_mode & 0o777) == 0o640


# ---------------------------------------------------------------- NDArray API

def test_ndarray_save_load(tmp_path):
    import mxnext as mx
    from mxnext import ndarray as nd
    path = tmp_path / "nd.params"
    data = {"w": nd.array(np.arange(6).reshape(2, 3), dtype=np.float16),
            "b": nd.array([1, 2, 3], dtype=np.int64, ctx=mx.cpu(1))}
    nd.save(str(path), data)
    raw = path.read_bytes()
    # cpu(1) is recorded as MXNet does: dev_type 1, dev_id 1
    assert struct.pack("<iii", 1, 1, 6) in raw
    for got in (nd.load(str(path)), nd.load_frombuffer(raw)):
        assert list(got) == ["w", "b"]
        for k, v in got.items():
            assert isinstance(v, nd.NDArray) and v.context == mx.cpu(0)
            assert v.dtype == data[k].dtype
            np.testing.assert_array_equal(v.asnumpy(), data[k].asnumpy())
    nd.save(path, [data["w"]])
    assert isinstance(nd.load(path), list)
    nd.save(path, data["b"])
    np.testing.assert_array_equal(nd.load(path)[0].asnumpy(), [1, 2, 3])
    with pytest.raises(ParamError, match="expected NDArray, got ndarray"):
        nd.save(path, [np.ones(2)])
    with pytest.raises(ParamError, match="expected bytes"):
        nd.load_frombuffer("text")


# ---------------------------------------------------------------- MXNet 1.9.1 itself

@functools.lru_cache(maxsize=1)
def _mxnet_missing() -> str:
    if not os.path.exists(MXNET_PYTHON):
        return f"MXNet 1.9.1 reference interpreter {MXNET_PYTHON} is absent"
    probe = subprocess.run([MXNET_PYTHON, "-c", "import mxnet; print(mxnet.__version__)"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0 or not probe.stdout.strip().startswith("1.9"):
        return f"{MXNET_PYTHON} cannot import MXNet 1.9: {probe.stderr.strip()[-200:]}"
    return ""


@pytest.fixture
def mxnet_run():
    missing = _mxnet_missing()
    if missing:
        pytest.skip(missing)

    def run(script: str, *args):
        proc = subprocess.run([MXNET_PYTHON, "-c", script, *map(str, args)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout
    return run


MXNET_LOAD_TO_NPZ = """
import sys, numpy as np, mxnet as mx
got = mx.nd.load(sys.argv[1])
items = got.items() if isinstance(got, dict) else ((f"arr_{i}", v) for i, v in enumerate(got))
np.savez(sys.argv[2], **{k: v.asnumpy() for k, v in items})
print(type(got).__name__)
"""

MXNET_SAVE_FROM_NPZ = """
import sys, numpy as np, mxnet as mx
src = np.load(sys.argv[1])
arrays = {k: mx.nd.array(src[k], dtype=src[k].dtype) for k in src.files}
mx.nd.save(sys.argv[2], arrays if sys.argv[3] == "dict" else list(arrays.values()))
"""


def _mixed_arrays():
    rng = np.random.default_rng(11)
    shapes = [(3,), (2, 4), (1, 2, 3), (0, 2)]
    return {f"k{i}_{np.dtype(dt).name}": _sample(dt, shapes[i % len(shapes)], rng)
            for i, dt in enumerate(DTYPES * 2)}


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_mxnet_reads_what_mxnext_writes(kind, tmp_path, mxnet_run):
    arrays = _mixed_arrays()
    data = arrays if kind == "dict" else list(arrays.values())
    ser.save_arrays(tmp_path / "ours.params", data)
    printed = mxnet_run(MXNET_LOAD_TO_NPZ, tmp_path / "ours.params", tmp_path / "back.npz")
    assert printed.strip() == kind
    back = np.load(tmp_path / "back.npz")
    expected = data if kind == "dict" else {f"arr_{i}": v for i, v in enumerate(data)}
    _assert_same({k: back[k] for k in back.files}, expected)


@pytest.mark.parametrize("kind", ["dict", "list"])
def test_mxnext_reads_what_mxnet_writes_bit_for_bit(kind, tmp_path, mxnet_run):
    arrays = _mixed_arrays()
    np.savez(tmp_path / "src.npz", **arrays)
    mxnet_run(MXNET_SAVE_FROM_NPZ, tmp_path / "src.npz", tmp_path / "theirs.params", kind)
    raw = (tmp_path / "theirs.params").read_bytes()
    got = ser.loads(raw)
    _assert_same(got, arrays if kind == "dict" else list(arrays.values()))
    assert ser.dumps(got) == raw  # the same bytes MXNet wrote


def test_mxnet_and_mxnext_agree_on_checkpoints(tmp_path, mxnet_run):
    for name in ("lenet-0000.params", "extra-mxnet191.params"):
        if name.startswith("extra"):  # MXNet cannot read its own 0-d record back: drop it
            # (the rewrite is dense: mxnext loads sparse records densified)
            data = ser.load_arrays(FIX / name)
            del data["scalar"]
            ser.save_arrays(tmp_path / name, data)
            src = tmp_path / name
        else:
            src = FIX / name
        mxnet_run(MXNET_LOAD_TO_NPZ, src, tmp_path / "m.npz")
        theirs = np.load(tmp_path / "m.npz")
        ours = ser.load_arrays(src)
        _assert_same(ours, {k: theirs[k] for k in ours})


def test_mxnet_reads_ndarrays_saved_by_mxnext(tmp_path, mxnet_run):
    import mxnext as mx
    from mxnext import ndarray as nd
    data = {"w": nd.array(np.arange(12).reshape(3, 4), dtype=np.float64, ctx=mx.cpu(1)),
            "i": nd.array([7, -8], dtype=np.int8)}
    nd.save(str(tmp_path / "nd.params"), data)
    assert mxnet_run(MXNET_LOAD_TO_NPZ, tmp_path / "nd.params", tmp_path / "b.npz").strip() == "dict"
    back = np.load(tmp_path / "b.npz")
    _assert_same({k: back[k] for k in back.files}, {k: v.asnumpy() for k, v in data.items()})


def test_np_shape_semantics_decide_the_record_format_and_what_loads(tmp_path):
    path = str(tmp_path / "arrays")
    with mx.np_shape(True):
        mx.nd.save(path, [mx.nd.array(np.float32(3)), mx.nd.zeros((2, 0))])
        loaded = mx.nd.load(path)
        assert [a.shape for a in loaded] == [(), (2, 0)] and loaded[0].asscalar() == 3
    assert open(path, "rb").read()[24:28] == struct.pack("<I", 0xF993FACA)     # V3
    with pytest.raises(MXNetError, match="saved in NumPy shape semantics.*np_shape\\(True\\)"):
        mx.nd.load(path)
    mx.nd.save(path, [mx.nd.empty((2, 0))])                                     # V2
    with mx.np_shape(True), pytest.raises(MXNetError, match="saved in legacy shape"):
        mx.nd.load(path)
    assert mx.nd.load(path)[0].shape == (2, 0)
