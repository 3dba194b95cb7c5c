"""``mx.recordio``: MXNet's RecordIO files (``.rec``, with an optional ``.idx`` index).

A record on disk is the little-endian uint32 magic ``0xced7230a``, a uint32 holding the
part's continuation flag (top 3 bits) and its length (low 29 bits), the bytes, and zero
padding to a multiple of 4. A payload that contains the magic at a 4-aligned offset is
split there into parts (flags 1, 2, ..., 3; the magic itself is not stored), so a reader
can resynchronise on any magic it finds. The index file holds ``key<TAB>offset`` lines.

``pack``/``unpack`` add the image-record header (``IRHeader``) in front of a payload.

A writer writes to a temp file that becomes the ``.rec`` (and the ``.idx``) at ``close``: a
file being written, or one whose writer was killed, is never seen half-written under its
name. A damaged file gives an error naming it and the offset (``.idx``: the line).
"""

import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from ._atomic_write import AtomicFile
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
        self._out = None
        self.open()

    def open(self):
        """Opens the file (for writing: a new file that replaces ``uri`` at ``close``)."""
        if self.flag not in ("r", "w"):
            raise ValueError(f"MXRecordIO: flag must be 'r' or 'w', got {self.flag!r}")
        self.writable = self.flag == "w"
        try:
            if self.writable:
                self._out = AtomicFile(self.uri)
                self._file = self._out.file
            else:
                self._file = open(self.uri, "rb")
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
        state["_file"] = state["_out"] = None
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
        """Closes the file; a writer's records then appear under its name, all at once."""
        if not getattr(self, "is_open", False):
            return
        if not self.writable:
            self._file.close()
        elif self.pid == current_process().pid:
            self._out.commit()
        else:                 # a forked copy: the temp file is the parent's to finish
            self._file.close()
        self._file = self._out = None
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
        self._check_open("write")
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

    def _check_open(self, what):
        if not self.is_open:
            raise MXNetError(f"MXRecordIO.{what}: {self.uri!r} is closed")

    def _bad(self, offset, what):
        return MXNetError(f"MXRecordIO: invalid RecordIO file {self.uri!r} at offset "
                          f"{offset}: {what}")

    def _read_part(self):
        offset = self._file.tell()
        head = self._file.read(8)
        if len(head) < 8:
            if head:
                raise self._bad(offset, f"the file ends inside a record header ({len(head)} "
                                        f"of its 8 bytes present)")
            return None, None, offset
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise self._bad(offset, f"expected the magic 0x{_MAGIC:08x}, found 0x{magic:08x}")
        length = lrec & _MAX_LEN
        body = self._file.read((length + 3) & ~3)
        if len(body) < length:
            raise self._bad(offset, f"the file ends inside a record of {length} bytes "
                                    f"({len(body)} present)")
        return lrec >> _LEN_BITS, body[:length], offset

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        if self.writable:
            raise MXNetError(f"MXRecordIO.read: {self.uri!r} is open for writing")
        self._check_open("read")
        self._check_pid(allow_reset=False)
        cflag, part, offset = self._read_part()
        if cflag is None or cflag == 0:
            return part
        if cflag != 1:
            raise self._bad(offset, f"a record starts with continuation flag {cflag}")
        parts = [part]
        while cflag != 3:
            cflag, part, offset = self._read_part()
            if cflag not in (2, 3):
                raise self._bad(offset, "a split record continues with "
                                + ("the end of the file" if cflag is None else f"flag {cflag}"))
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
        self._idx_out = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            if self.writable:
                self._idx_out = AtomicFile(self.idx_path)
                self.fidx = self._idx_out.file
                return
            self.fidx = open(self.idx_path, encoding="utf-8")
        except OSError as exc:
            if self.writable:          # the records never replace the old file
                self._out.discard()
            else:
                self._file.close()
            self.is_open = False
            raise MXNetError(f"MXIndexedRecordIO: cannot open the index {self.idx_path!r}: "
                             f"{exc}") from None
        size = os.fstat(self._file.fileno()).st_size
        try:
            for number, line in enumerate(self.fidx, 1):
                if line.strip():
                    self._read_index_line(number, line, size)
        except (MXNetError, UnicodeDecodeError) as exc:
            self.close()
            if isinstance(exc, UnicodeDecodeError):
                raise MXNetError(f"MXIndexedRecordIO: invalid index {self.idx_path!r}: not "
                                 f"UTF-8 text ({exc})") from None
            raise

    def _read_index_line(self, number, line, size):
        def bad(what):
            return MXNetError(f"MXIndexedRecordIO: invalid index {self.idx_path!r} line "
                              f"{number} ({line.rstrip()!r}): {what}")
        fields = line.strip().split("\t")
        if len(fields) < 2:
            raise bad("expected key<TAB>offset")
        try:
            key = self.key_type(fields[0])
        except (TypeError, ValueError) as exc:
            raise bad(f"the key is not a valid {getattr(self.key_type, '__name__', 'key')}: "
                      f"{exc}") from None
        try:
            pos = int(fields[1])
        except ValueError:
            raise bad("the offset is not an integer") from None
        if not 0 <= pos < size:
            raise bad(f"offset {pos} is outside {self.uri!r} ({size} bytes)")
        self.idx[key] = pos
        self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        own = self.pid == current_process().pid
        super().close()
        if self.writable and own:
            self._idx_out.commit()
        else:
            self.fidx.close()
        self.fidx = self._idx_out = None

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = state["_idx_out"] = None
        return state

    def seek(self, idx):
        """Puts the read position at the record of key ``idx``."""
        if self.writable:
            raise MXNetError(f"MXIndexedRecordIO.seek: {self.uri!r} is open for writing")
        self._check_open("seek")
        self._check_pid(allow_reset=True)
        if idx not in self.idx:
            raise KeyError(f"MXIndexedRecordIO.seek: key {idx!r} is not in the index "
                           f"{self.idx_path!r} ({len(self.idx)} keys)")
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
        self.fidx.write(f"{key}\t{pos}\n".encode("utf-8"))
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
    if len(s) < _IR_SIZE:
        raise MXNetError(f"unpack: a record holds at least the {_IR_SIZE}-byte IRHeader, "
                         f"got {len(s)} bytes")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag * 4 > len(s):
        raise MXNetError(f"unpack: the IRHeader says {header.flag} float32 labels follow, "
                         f"but only {len(s)} bytes do")
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s
