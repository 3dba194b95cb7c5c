"""``mx.recordio``: MXNet's RecordIO files (``.rec``, with an optional ``.idx`` index).

A record on disk is the little-endian uint32 magic ``0xced7230a``, a uint32 holding the
part's continuation flag (top 3 bits) and its length (low 29 bits), the bytes, and zero
padding to a multiple of 4. A payload that contains the magic at a 4-aligned offset is
split there into parts (flags 1, 2, ..., 3; the magic itself is not stored), so a reader
can resynchronise on any magic it finds. The index file holds ``key<TAB>offset`` lines.

``pack``/``unpack`` add the image-record header (``IRHeader``) in front of a payload.
"""

import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from ._runtime.base import MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_BITS = 29
_MAX_LEN = (1 << _LEN_BITS) - 1


def _lrec(cflag, length):
    return struct.pack("<I", (cflag << _LEN_BITS) | length)


class MXRecordIO:
    """Sequential reading (``flag='r'``) or writing (``flag='w'``) of a RecordIO file."""

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._file = None
        self.open()

    def open(self):
        """Opens the file (for writing: truncated)."""
        if self.flag not in ("r", "w"):
            raise ValueError(f"MXRecordIO: flag must be 'r' or 'w', got {self.flag!r}")
        self.writable = self.flag == "w"
        try:
            self._file = open(self.uri, "wb" if self.writable else "rb")
        except OSError as exc:
            raise MXNetError(f"MXRecordIO: cannot open {self.uri!r} for "
                             f"{'writing' if self.writable else 'reading'}: {exc}") from None
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        """Pickles as the path and whether it was open (the file object stays behind)."""
        was_open = self.is_open
        self.close()
        state = dict(self.__dict__)
        state["is_open"] = was_open
        state["_file"] = None
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        was_open = state["is_open"]
        self.is_open = False
        if was_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A file object shared across a fork is not safe: reopen it, or refuse."""
        if self.pid != current_process().pid:
            if not allow_reset:
                raise RuntimeError("MXRecordIO: forbidden operation in multiple processes "
                                   "(the file was opened by another process)")
            self.reset()

    def close(self):
        """Closes the file."""
        if not getattr(self, "is_open", False):
            return
        self._file.close()
        self._file = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Back to the first record (for writing: truncates the file)."""
        self.close()
        self.open()

    def write(self, buf):
        """Appends ``buf`` (bytes) as one record."""
        if not self.writable:
            raise MXNetError(f"MXRecordIO.write: {self.uri!r} is open for reading")
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            raise TypeError("MXRecordIO.write: buf must be bytes, got str (encode it first)")
        data = bytes(buf)
        if len(data) > _MAX_LEN:
            raise MXNetError(f"MXRecordIO.write: a record holds at most {_MAX_LEN} bytes, "
                             f"got {len(data)}")
        aligned = len(data) & ~3
        words = np.frombuffer(data, "<u4", aligned // 4)
        out, start = [], 0
        for pos in (np.flatnonzero(words == _MAGIC) * 4).tolist():
            out += [_MAGIC_BYTES, _lrec(1 if start == 0 else 2, pos - start), data[start:pos]]
            start = pos + 4
        out += [_MAGIC_BYTES, _lrec(3 if start else 0, len(data) - start), data[start:],
                b"\0" * (-len(data) % 4)]
        self._file.write(b"".join(out))

    def _read_part(self):
        head = self._file.read(8)
        if len(head) < 8:
            if head:
                raise MXNetError(f"MXRecordIO: {self.uri!r} ends inside a record header")
            return None, None
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise MXNetError(f"MXRecordIO: invalid RecordIO file {self.uri!r}: expected the "
                             f"magic 0x{_MAGIC:08x} at offset {self._file.tell() - 8}, "
                             f"found 0x{magic:08x}")
        length = lrec & _MAX_LEN
        body = self._file.read((length + 3) & ~3)
        if len(body) < length:
            raise MXNetError(f"MXRecordIO: {self.uri!r} ends inside a record")
        return lrec >> _LEN_BITS, body[:length]

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        if self.writable:
            raise MXNetError(f"MXRecordIO.read: {self.uri!r} is open for writing")
        self._check_pid(allow_reset=False)
        cflag, part = self._read_part()
        if cflag is None or cflag == 0:
            return part
        if cflag != 1:
            raise MXNetError(f"MXRecordIO: invalid RecordIO file {self.uri!r}: a record "
                             f"starts with continuation flag {cflag}")
        parts = [part]
        while cflag != 3:
            cflag, part = self._read_part()
            if cflag not in (2, 3):
                raise MXNetError(f"MXRecordIO: invalid RecordIO file {self.uri!r}: a split "
                                 f"record continues with flag {cflag}")
            parts += [_MAGIC_BYTES, part]
        return b"".join(parts)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file of ``key<TAB>offset`` lines, for random access.

    ``key_type`` converts the keys read from the index (``int`` by default).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = open(self.idx_path, self.flag, encoding="utf-8")
        if not self.writable:
            for line in self.fidx:
                fields = line.strip().split("\t")
                if len(fields) < 2:
                    continue
                key = self.key_type(fields[0])
                self.idx[key] = int(fields[1])
                self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Puts the read position at the record of key ``idx``."""
        if self.writable:
            raise MXNetError(f"MXIndexedRecordIO.seek: {self.uri!r} is open for writing")
        self._check_pid(allow_reset=True)
        self._file.seek(self.idx[idx])

    def tell(self):
        """The write position (the offset the next record gets)."""
        if not self.writable:
            raise MXNetError(f"MXIndexedRecordIO.tell: {self.uri!r} is open for reading")
        return self._file.tell()

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Appends ``buf`` as the record of key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""Header of an image record: ``flag`` (the label count when ``label`` is an array),
``label`` (a float or an array of floats), ``id`` and ``id2`` (high bits of the id)."""

_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """``header`` (an ``IRHeader`` or 4-tuple) and the bytes ``s`` as one record payload.

    A numeric label is stored in the header (``flag`` set to 0); an array label is stored
    as float32 values in front of ``s``, with ``flag`` set to their count."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """The ``IRHeader`` and the remaining bytes of a record made by ``pack``; an array
    label comes back as a float32 numpy array."""
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s
