"""MXNet's binary NDArray file format (``mx.nd.save`` / ``mx.nd.load``), bit-compatible with 1.9.

File layout, all little-endian::

    uint64 0x112 (list magic)   uint64 0 (reserved)
    uint64 n, then n array records
    uint64 k (0 for a list, n for a dict), then k names as uint64 length + utf-8 bytes

Array record (NDArray v2 / v3)::

    uint32 magic (0xF993FAC9; 0xF993FACA in numpy-shape semantics)   int32 storage type
    [sparse only: storage shape]   shape   int32 dev_type, int32 dev_id   int32 type flag
    [sparse only: per aux array: int32 type flag, shape]   raw data   [sparse only: aux data]

A shape is ``int32 ndim`` then ``ndim`` int64 dims. Older records are read too: v1 (magic
0xF993FAC8, shape then context, type flag and data) and the first format, whose magic is the
ndim followed by uint32 dims. Sparse records load as host storages (``sparse_storage``);
``dense=True`` densifies them.

Two MXNet quirks carried over on purpose: MXNet 1.9 writes a 0-d array as a v2 record of ndim
0 followed by its data, which its own reader mistakes for a "none" array (so MXNet cannot load
such a file back); mxnext writes the same bytes and reads them as the 0-d array they are.
bfloat16 records (type flag 12) load as float32, exactly (as files MXNet wrote have always
loaded here); bfloat16 arrays (``ml_dtypes``) save as flag 12. int16, uint16, uint32 and
uint64 arrays save as mshadow's flags 8..11, as MXNet 2.x does; MXNet 1.9 cannot load those.

Nothing is ever unpickled; every count and size is checked against the bytes present, so a
truncated or corrupted file raises :class:`NDArrayFormatError` naming the file and the fault.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from .._atomic_write import write_atomic
from .._runtime.base import DTYPE_TO_FLAG, FLAG_TO_DTYPE, MXNetError, ParamError, is_np_shape
from .sparse_storage import CSRStorage, RowSparseStorage

__all__ = ["NDArrayFormatError", "dumps", "loads", "dumps_record", "loads_record",
           "save_arrays", "load_arrays"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

BFLOAT16_FLAG = 12
_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
_NUM_AUX = {0: 0, 1: 1, 2: 2}
_DEV_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_MAX_NDIM = 64


class NDArrayFormatError(MXNetError, ValueError):
    """A file or buffer that is not a valid MXNet NDArray file (truncated, corrupted, unknown)."""


# ---------------------------------------------------------------------------- reading

class _Reader:
    __slots__ = ("buf", "pos", "source")

    def __init__(self, buf, source: str):
        self.buf = memoryview(buf).cast("B")
        self.pos = 0
        self.source = source

    def fail(self, what: str) -> NDArrayFormatError:
        return NDArrayFormatError(f"load: {self.source} is not a valid MXNet NDArray file: {what}")

    def take(self, n: int, what: str) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise self.fail(f"truncated at byte {self.pos} reading {what}: needed {n} bytes, "
                            f"{len(self.buf) - self.pos} left")
        out = self.buf[self.pos:end]
        self.pos = end
        return out

    def scalar(self, fmt: str, what: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def count(self, what: str, min_bytes_each: int) -> int:
        n = self.scalar("<Q", what)
        left = len(self.buf) - self.pos
        if n * min_bytes_each > left:
            raise self.fail(f"{what} is {n}, more than the {left} bytes left can hold")
        return n

    def dims(self, ndim: int, fmt: str, what: str) -> tuple:
        if not 0 <= ndim <= _MAX_NDIM:
            raise self.fail(f"{what} has ndim {ndim}, expected 0..{_MAX_NDIM}")
        size = struct.calcsize(fmt)
        dims = struct.unpack(f"<{ndim}{fmt}", self.take(ndim * size, what))
        if any(d < 0 for d in dims):
            raise self.fail(f"{what} {dims} has a negative dimension")
        nominal = 1
        for d in dims:
            nominal *= max(d, 1)
        if nominal >= 2 ** 60:  # numpy refuses such shapes even when one dim is 0
            raise self.fail(f"{what} {dims} is absurdly large")
        return dims

    def shape(self, what: str) -> tuple:
        return self.dims(self.scalar("<i", f"{what} ndim"), "q", what)

    def data(self, flag: int, shape: tuple, what: str) -> np.ndarray:
        size = 1
        for d in shape:
            size *= d
        if flag == BFLOAT16_FLAG:
            raw = np.frombuffer(self.take(2 * size, what), dtype="<u2")
            return (raw.astype(np.uint32) << 16).view(np.float32).reshape(shape)
        dtype = FLAG_TO_DTYPE[flag]
        raw = self.take(dtype.itemsize * size, what)
        if dtype.kind == "b":  # any nonzero byte is True, as in C++
            return (np.frombuffer(raw, dtype=np.uint8) != 0).reshape(shape)
        return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)

    def type_flag(self, what: str) -> int:
        flag = self.scalar("<i", what)
        if flag not in FLAG_TO_DTYPE:
            known = ", ".join(f"{f}={d.name}" for f, d in FLAG_TO_DTYPE.items())
            raise self.fail(f"{what} is {flag}, expected one of {known}")
        return flag

    def context(self, what: str) -> None:
        dev_type, dev_id = struct.unpack("<ii", self.take(8, what))
        if dev_type not in _DEV_TYPES or dev_id < 0:
            raise self.fail(f"{what} is (dev_type={dev_type}, dev_id={dev_id}), expected dev_type "
                            f"in {sorted(_DEV_TYPES)} and dev_id >= 0")


def _read_record(r: _Reader, i: int):
    where = f"array {i}"
    start = r.pos
    magic = r.scalar("<I", f"{where} magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        _check_semantics(r, where, magic == V3_MAGIC)
        stype = r.scalar("<i", f"{where} storage type")
        if stype not in _NUM_AUX:
            raise r.fail(f"{where} storage type is {stype}, expected 0 (default), "
                         f"1 (row_sparse) or 2 (csr)")
        nad = _NUM_AUX[stype]
        sshape = r.shape(f"{where} storage shape") if nad else None
        ndim = r.scalar("<i", f"{where} shape ndim")
        if magic == V3_MAGIC and ndim == -1:
            return None  # unknown shape: MXNet's "none" array
        shape = r.dims(ndim, "q", f"{where} shape")
        r.context(f"{where} context")
        flag = r.type_flag(f"{where} type flag")
        if not nad:
            return r.data(flag, shape, f"{where} data")
        aux = []
        for k in range(nad):
            aux_flag = r.type_flag(f"{where} aux {k} type flag")
            aux.append((aux_flag, r.shape(f"{where} aux {k} shape")))
        values = r.data(flag, _values_shape(stype, sshape, shape, aux), f"{where} data")
        aux_data = [r.data(f, s, f"{where} aux {k} data") for k, (f, s) in enumerate(aux)]
        return _sparse(r, where, stype, shape, values, aux_data)
    if magic == V1_MAGIC:
        shape = r.shape(f"{where} shape")
    else:  # the first format: the magic is the ndim, dims are uint32
        if magic > _MAX_NDIM:
            raise r.fail(f"{where} at byte {start} starts with 0x{magic:08X}, expected an NDArray "
                         f"magic (0x{V2_MAGIC:08X})")
        shape = r.dims(magic, "I", f"{where} shape")
    if not shape:
        return None  # legacy "none" array: nothing follows the shape
    r.context(f"{where} context")
    return r.data(r.type_flag(f"{where} type flag"), shape, f"{where} data")


def _values_shape(stype: int, sshape: tuple, shape: tuple, aux) -> tuple:
    """The stored values' shape: one value (row) per index. MXNet 1.9 can write a stale
    storage shape (``(0,)`` for an int32 csr made by ``tostype``) while writing every value,
    and its reader sizes the values by the indices too."""
    n = aux[-1][1][0] if aux[-1][1] else 0           # csr: column indices; rsp: row indices
    return (n,) if stype == 2 else (n, *shape[1:]) if shape else sshape


def _check_semantics(r: _Reader, where: str, np_shape: bool) -> None:
    """A record loads only in the shape semantics it was saved in (MXNet's rule)."""
    if np_shape != is_np_shape():
        saved, now = ("NumPy", "legacy") if np_shape else ("legacy", "NumPy")
        raise r.fail(f"{where} was saved in {saved} shape semantics but is loaded in {now} "
                     f"shape semantics; load it inside `with mx.np_shape({np_shape}):`")


def _sparse(r: _Reader, where: str, stype: int, shape: tuple, values, aux):
    """The storage of a row_sparse (aux: row indices) or csr (aux: indptr, column indices)
    record, its layout checked against the shape."""
    kind = _STYPE_NAMES[stype]
    idx = [a.astype(np.int64).reshape(-1) for a in aux]
    if stype == 1:
        ok = bool(shape) and values.shape == (len(idx[0]),) + shape[1:]
        expected = f"data of shape (len(indices),) + {shape[1:]}"
    else:
        indptr, cols = idx
        ok = (len(shape) == 2 and len(indptr) == shape[0] + 1 and values.shape == cols.shape
              and indptr[0] == 0 and indptr[-1] == len(cols) and bool(np.all(np.diff(indptr) >= 0)))
        expected = "2 dimensions, indptr of rows + 1 rising from 0 to the number of values"
    if not ok:
        raise r.fail(f"{where} is {kind} with shape {shape} and data {values.shape}, expected "
                     f"{expected}")
    bad = [a for a, bound in zip(idx, (shape[0],) if stype == 1 else (None, shape[1]))
           if bound is not None and len(a) and (a.min() < 0 or a.max() >= bound)]
    if bad:
        raise r.fail(f"{where} {kind} indices fall outside shape {shape}")
    if stype == 1:
        return RowSparseStorage(values, idx[0], shape)
    return CSRStorage(values, idx[1], idx[0], shape)


def _densified(x, r: _Reader, where: str):
    if not isinstance(x, (CSRStorage, RowSparseStorage)):
        return x
    try:
        return x.todense()
    except (ValueError, MemoryError) as e:
        raise r.fail(f"{where} dense shape {x.shape} cannot be allocated: {e}") from None


def loads(buf, source: str = "<buffer>", dense: bool = True):
    """Decode an MXNet NDArray file's bytes: a list of numpy arrays, or a dict if it has names.

    A "none" array (only old MXNet versions write them) loads as ``None``; a sparse one as
    its dense array, or with ``dense=False`` as its storage (CSRStorage, RowSparseStorage).
    """
    r = _Reader(buf, source)
    magic, _reserved = struct.unpack("<QQ", r.take(16, "header"))
    if magic != LIST_MAGIC:
        raise r.fail(f"header magic is 0x{magic:X}, expected 0x{LIST_MAGIC:X}")
    arrays = [_read_record(r, i) for i in range(r.count("array count", 4))]
    if dense:
        arrays = [_densified(a, r, f"array {i}") for i, a in enumerate(arrays)]
    nnames = r.count("name count", 8)
    if nnames not in (0, len(arrays)):
        raise r.fail(f"{nnames} names for {len(arrays)} arrays")
    names = []
    for i in range(nnames):
        raw = r.take(r.count(f"name {i} length", 1), f"name {i}")
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError as e:
            raise r.fail(f"name {i} is not utf-8: {e}") from None
    return dict(zip(names, arrays)) if names else arrays


def load_arrays(fname, dense: bool = True):
    """Read an MXNet NDArray file into a list or dict of numpy arrays (``loads``)."""
    with open(fname, "rb") as f:
        buf = f.read()
    return loads(buf, source=repr(os.fspath(fname)), dense=dense)


# ---------------------------------------------------------------------------- writing

def _items(data, op: str, kind):
    """(names or None, values) of a list/tuple/dict/single array; checks the value type."""
    if isinstance(data, kind):
        data = [data]
    if isinstance(data, dict):
        names = list(data)
        for k in names:
            if not isinstance(k, str):
                raise ParamError(f"{op}: argument 'data' dict keys must be str, got {type(k).__name__} {k!r}")
        values = list(data.values())
    elif isinstance(data, (list, tuple)):
        names, values = None, list(data)
    else:
        raise ParamError(f"{op}: argument 'data' expected a list or dict of {kind.__name__}, "
                         f"got {type(data).__name__}")
    for i, v in enumerate(values):
        if not isinstance(v, (kind, CSRStorage, RowSparseStorage)):
            raise ParamError(f"{op}: argument 'data' item {names[i] if names else i!r} expected "
                             f"{kind.__name__}, got {type(v).__name__}")
    return names, values


def _record(arr, context, op: str, label) -> bytes:
    """One array record: V3 in NumPy shape semantics, else V2, as MXNet writes them."""
    if isinstance(arr, (CSRStorage, RowSparseStorage)):
        return _sparse_record(arr, context, op, label)
    flag = _flag(arr, op, label)
    magic = V3_MAGIC if is_np_shape() else V2_MAGIC
    head = struct.pack(f"<Iii{arr.ndim}qiii", magic, 0, arr.ndim, *arr.shape, *context, flag)
    return head + np.ascontiguousarray(arr, dtype=FLAG_TO_DTYPE[flag]).tobytes()


def _shape_bytes(shape) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _sparse_record(s, context, op: str, label) -> bytes:
    """MXNet's sparse record: storage type, storage shape, shape, context, type flag, each
    aux array's type flag and shape, the values, the aux arrays (csr: indptr, indices)."""
    if is_np_shape():
        raise ParamError(f"{op}: array {label!r} is {s.stype}; MXNet saves only dense arrays "
                         f"in NumPy shape semantics")
    flag = _flag(s.data, op, label)
    aux = [s.indptr, s.indices] if s.stype == "csr" else [s.indices]
    parts = [struct.pack("<Ii", V2_MAGIC, 2 if s.stype == "csr" else 1),
             _shape_bytes(s.data.shape), _shape_bytes(s.shape), struct.pack("<iii", *context, flag)]
    for a in aux:
        parts += [struct.pack("<i", DTYPE_TO_FLAG[np.dtype(np.int64)]), _shape_bytes(a.shape)]
    parts.append(np.ascontiguousarray(s.data, dtype=FLAG_TO_DTYPE[flag]).tobytes())
    parts += [np.ascontiguousarray(a, dtype=np.int64).tobytes() for a in aux]
    return b"".join(parts)


def _flag(arr, op, label) -> int:
    flag = DTYPE_TO_FLAG.get(arr.dtype.newbyteorder("="))
    if flag is None:
        raise ParamError(f"{op}: array {label!r} has dtype {arr.dtype}, which MXNet's NDArray "
                         f"format cannot hold; expected one of "
                         f"{', '.join(d.name for d in FLAG_TO_DTYPE.values())}")
    return flag


def _encode(names, values, contexts, op: str) -> bytes:
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(values))]
    for i, (arr, context) in enumerate(zip(values, contexts)):
        parts.append(_record(arr, context, op, names[i] if names else i))
    parts.append(struct.pack("<Q", len(names) if names else 0))
    for name in names or ():
        raw = name.encode("utf-8")
        parts.append(struct.pack("<Q", len(raw)))
        parts.append(raw)
    return b"".join(parts)


def dumps_record(arr: np.ndarray, context=(1, 0)) -> bytes:
    """One array as a bare record (``context``: MXNet's device type id and device id), what
    MXNet's ``NDArray.__getstate__`` holds."""
    return _record(arr, context, "dumps_record", 0)


def loads_record(buf, source: str = "<buffer>", dense: bool = True):
    """The array of a bare record (:func:`dumps_record`); None for a "none" array; a sparse
    one densified unless ``dense=False``."""
    r = _Reader(buf, source)
    arr = _read_record(r, 0)
    if r.pos != len(r.buf):
        raise r.fail(f"{len(r.buf) - r.pos} bytes follow the array record")
    return _densified(arr, r, "array 0") if dense else arr


def dumps(data) -> bytes:
    """Encode a numpy array, or a list or dict (str keys) of them, as MXNet NDArray file bytes."""
    names, values = _items(data, "save", np.ndarray)
    return _encode(names, values, [(1, 0)] * len(values), "save")


def save_arrays(fname, data) -> None:
    """Atomically write a numpy array, or a list or dict of them, in MXNet's NDArray format."""
    write_atomic(fname, dumps(data))
