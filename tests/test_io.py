"""mx.io and mx.recordio: every last_batch_handle mode against hand-made expectations,
the native-style iterators on real files, PrefetchingIter's thread, and RecordIO files
MXNet 1.9.1 wrote (tests/fixtures/mxnet-1.9.1/make_io.py)."""

import gc
import json
import os
import pickle
import struct
import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet-1.9.1")


def epochs(it, n):
    """Per epoch, the (data rows, label rows, pad) of each batch; reset between epochs."""
    out = []
    for _ in range(n):
        out.append([(b.data[0].asnumpy().tolist(),
                     b.label[0].asnumpy().tolist() if b.label else None, b.pad) for b in it])
        it.reset()
    return out


DATA = np.arange(10, dtype=np.float32)


def test_datadesc_and_databatch():
    d = mx.io.DataDesc("data", (2, 3))
    assert d == ("data", (2, 3)) and d.dtype is np.float32 and d.layout == "NCHW"
    assert repr(d) == "DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1 and mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list([("a", (1,)), ("b", (2,))], [("a", np.int32), ("b", np.float16)])
    assert [(x.name, x.shape, x.dtype) for x in descs] == [("a", (1,), np.int32), ("b", (2,), np.float16)]
    batch = mx.io.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((7, 8))], [mx.nd.ones((4, 5))])
    assert str(batch) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"
    assert str(mx.io.DataBatch([mx.nd.ones((2,))])).endswith("label shapes: None")
    with pytest.raises(TypeError):
        mx.io.DataBatch(mx.nd.ones((2,)))


def test_pad_mode():
    it = mx.io.NDArrayIter(DATA, DATA * 10, batch_size=4)
    first = [([0, 1, 2, 3], [0, 10, 20, 30], 0), ([4, 5, 6, 7], [40, 50, 60, 70], 0),
             ([8, 9, 0, 1], [80, 90, 0, 10], 2)]
    assert epochs(it, 2) == [first, first]
    assert [(d.name, d.shape) for d in it.provide_data] == [("data", (4,))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (4,))]


def test_pad_longer_than_the_data_repeats_it():
    it = mx.io.NDArrayIter(np.arange(3), batch_size=8)
    assert epochs(it, 1) == [[([0, 1, 2, 0, 1, 2, 0, 1], None, 5)]]


def test_discard_mode():
    it = mx.io.NDArrayIter(DATA, DATA, batch_size=4, last_batch_handle="discard")
    first = [([0, 1, 2, 3], [0, 1, 2, 3], 0), ([4, 5, 6, 7], [4, 5, 6, 7], 0)]
    assert epochs(it, 2) == [first, first]


def test_roll_over_mode():
    it = mx.io.NDArrayIter(DATA, DATA, batch_size=4, last_batch_handle="roll_over")
    got = epochs(it, 3)
    assert got[0] == [([0, 1, 2, 3], [0, 1, 2, 3], 0), ([4, 5, 6, 7], [4, 5, 6, 7], 0)]
    # 8 and 9 come first in the next epoch; pad counts the new epoch's examples (MXNet's)
    assert got[1] == [([8, 9, 0, 1], [8, 9, 0, 1], 2), ([2, 3, 4, 5], [2, 3, 4, 5], 0),
                      ([6, 7, 8, 9], [6, 7, 8, 9], 0)]
    assert got[2] == got[0]
    it.hard_reset()
    assert epochs(it, 1)[0] == got[0]


def test_roll_over_with_a_batch_larger_than_the_data_fails_clearly():
    it = mx.io.NDArrayIter(DATA, batch_size=25, last_batch_handle="roll_over")
    assert list(it) == []
    it.reset()
    with pytest.raises(MXNetError, match="roll_over"):
        it.next()


def test_inputs_lists_dicts_names_and_layout():
    it = mx.io.NDArrayIter({"b": DATA, "a": mx.nd.array(DATA * 2)}, [DATA, DATA], batch_size=5)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.name for d in it.provide_label] == ["_0_softmax_label", "_1_softmax_label"]
    batch = it.next()
    assert batch.data[0].asnumpy().tolist() == [0, 2, 4, 6, 8] and len(batch.label) == 2
    it = mx.io.NDArrayIter(np.arange(6, dtype=np.int64), data_name="x", label_name="y", batch_size=4)
    assert it.provide_data[0].name == "x" and it.provide_label == []
    assert it.provide_data[0].dtype == np.float32          # numpy input becomes float32
    assert it.next().label == []
    # the layout's N axis sizes the descriptions (MXNet still counts examples on axis 0)
    it = mx.io.NDArrayIter(np.zeros((6, 2), np.float32), batch_size=4, layout="CN")
    assert it.provide_data[0].shape == (6, 4)
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.io.NDArrayIter(DATA, last_batch_handle="keep")
    with pytest.raises(TypeError, match="NDArrayIter"):
        mx.io.NDArrayIter("not data")


def test_ndarray_iter_refuses_short_arrays_and_empty_batches():
    with pytest.raises(ValueError, match=r"at least the 10 examples \(first axis\) of 'data', "
                                         r"got \{'data': 10, 'softmax_label': 7\}"):
        mx.io.NDArrayIter(DATA, np.zeros(7), batch_size=2)
    # a longer label is read as far as the data goes (MXNet's rule: the first data array
    # counts the examples)
    it = mx.io.NDArrayIter(DATA, np.arange(14), batch_size=5)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    with pytest.raises(ValueError, match=r"\{'a': 10, 'b': 9\}"):
        mx.io.NDArrayIter({"a": DATA, "b": DATA[:9]}, batch_size=2)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match=f"batch_size must be a positive integer, got "
                                             f"{bad!r}"):
            mx.io.NDArrayIter(DATA, DATA, batch_size=bad)
    assert mx.io.NDArrayIter(DATA, DATA, batch_size=np.int64(4)).next().data[0].shape[0] == 4


def test_shuffle_keeps_pairs_and_follows_numpy_seed():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    label = np.arange(10, dtype=np.float32)
    np.random.seed(1)
    it = mx.io.NDArrayIter(data, label, batch_size=3, shuffle=True)
    order = []
    for _ in range(2):
        for batch in it:
            d, l = batch.data[0].asnumpy(), batch.label[0].asnumpy()
            assert (d[:, 0] == 2 * l).all()
            order += l.tolist()
        it.reset()
    assert sorted(order[:10]) == list(range(10)) and order[:10] != list(range(10))
    assert order[:10] != order[12:22]                        # reshuffled per epoch
    np.random.seed(1)
    again = mx.io.NDArrayIter(data, label, batch_size=3, shuffle=True)
    assert again.next().label[0].asnumpy().tolist() == order[:3]


def test_resize_iter():
    inner = mx.io.NDArrayIter(DATA, batch_size=4, last_batch_handle="discard")
    it = mx.io.ResizeIter(inner, 3)
    assert [b.data[0].asnumpy().tolist() for b in it] == [[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 2, 3]]
    it.reset()
    assert len(list(it)) == 3 and it.batch_size == 4


def test_prefetching_iter_order_rename_reset_and_thread():
    a = mx.io.NDArrayIter(DATA, DATA, batch_size=4)
    b = mx.io.NDArrayIter({"data": DATA + 100}, DATA, batch_size=4)
    it = mx.io.PrefetchingIter([a, b], rename_data=[{"data": "x"}, {"data": "y"}])
    assert [d.name for d in it.provide_data] == ["x", "y"] and it.batch_size == 4
    assert any(t.name.startswith("PrefetchingIter") for t in threading.enumerate())
    for _ in range(2):
        got = [(bt.data[0].asnumpy().tolist(), bt.data[1].asnumpy().tolist(), len(bt.label), bt.pad)
               for bt in it]
        assert got == [([0, 1, 2, 3], [100, 101, 102, 103], 2, 0),
                       ([4, 5, 6, 7], [104, 105, 106, 107], 2, 0),
                       ([8, 9, 0, 1], [108, 109, 100, 101], 2, 2)]
        it.reset()


def test_prefetching_iter_reads_ahead_in_its_thread():
    class Recording(mx.io.NDArrayIter):
        def next(self):
            seen.append(threading.current_thread().name)
            return super().next()

    seen = []
    it = mx.io.PrefetchingIter(Recording(DATA, batch_size=5))
    it.next()
    it.iter_next()                               # waits for the read-ahead of batch 2
    assert seen and all(name.startswith("PrefetchingIter") for name in seen)


def test_prefetching_iter_stops_its_thread_when_dropped():
    it = mx.io.PrefetchingIter(mx.io.NDArrayIter(DATA, batch_size=5))
    thread = it._fetchers[0].thread
    it.next()
    del it
    gc.collect()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_prefetching_iter_reports_errors_of_its_thread():
    class Broken(mx.io.NDArrayIter):
        def next(self):
            raise OSError("disk gone")

    it = mx.io.PrefetchingIter(Broken(DATA, batch_size=5))
    with pytest.raises(MXNetError, match="disk gone"):
        it.next()


def write_csv(path, rows):
    path.write_text("".join(",".join(str(v) for v in r) + "\n" for r in rows))
    return str(path)


def test_csv_iter_round_batch_as_mxnet(tmp_path):
    data = write_csv(tmp_path / "d.csv", [[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=3)
    assert isinstance(it, mx.io.MXDataIter) and it.batch_size == 3
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (3,))]
    first = [(b.data[0].asnumpy().tolist(), b.pad, b.index.tolist(), b.label[0].asnumpy().tolist())
             for b in it]
    assert first == [([[1, 2, 3], [2, 3, 4], [3, 4, 5]], 0, [0, 1, 2], [0, 0, 0]),
                     ([[4, 5, 6], [1, 2, 3], [2, 3, 4]], 2, [3, 0, 1], [0, 0, 0])]
    it.reset()                                      # continues behind the borrowed rows
    assert [(b.data[0].asnumpy().tolist(), b.pad) for b in it] == [([[3, 4, 5], [4, 5, 6], [1, 2, 3]], 1)]


def test_csv_iter_without_round_batch_keeps_stale_rows(tmp_path):
    data = write_csv(tmp_path / "d.csv", [[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=3, round_batch=False)
    for _ in range(2):
        assert [(b.data[0].asnumpy().tolist(), b.pad) for b in it] == [
            ([[1, 2, 3], [2, 3, 4], [3, 4, 5]], 0), ([[4, 5, 6], [2, 3, 4], [3, 4, 5]], 2)]
        it.reset()


@pytest.mark.parametrize("dtype,value", [("int32", 200000001), ("int64", 2147483648), ("float32", 1.5)])
def test_csv_iter_labels_shapes_and_dtypes(tmp_path, dtype, value):
    data = write_csv(tmp_path / "d.csv", [[value] * 4, [value] * 4])
    label = write_csv(tmp_path / "l.csv", [[1, 7], [2, 8]])
    it = mx.io.CSVIter(data_csv=data, data_shape=(2, 2), label_csv=label, label_shape=(2,),
                       batch_size=2, dtype=dtype)
    batch = it.next()
    assert batch.data[0].dtype == np.dtype(dtype) and batch.data[0].shape == (2, 2, 2)
    assert (batch.data[0].asnumpy() == np.array(value, dtype)).all()
    assert batch.label[0].asnumpy().tolist() == [[1, 7], [2, 8]]
    with pytest.raises(StopIteration):
        it.next()


def test_csv_iter_errors(tmp_path):
    data = write_csv(tmp_path / "d.csv", [[1, 2, 3]])
    with pytest.raises(MXNetError, match="data_shape"):
        mx.io.CSVIter(data_csv=data, data_shape=(2,), batch_size=1)
    with pytest.raises(MXNetError, match="no such file"):
        mx.io.CSVIter(data_csv=str(tmp_path / "missing.csv"), data_shape=(3,), batch_size=1)
    with pytest.raises(MXNetError, match="dtype"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=1, dtype="float16")
    empty = write_csv(tmp_path / "e.csv", [])
    with pytest.raises(MXNetError, match="no complete batch"):
        mx.io.CSVIter(data_csv=empty, data_shape=(3,), batch_size=1)


def make_mnist_files(folder, n, rows=1, cols=2):
    """n images whose first two pixels spell the example number; labels n % 256."""
    i = np.arange(n)
    images = np.zeros((n, rows * cols), np.uint8)
    images[:, 0], images[:, 1] = i // 256, i % 256
    img, lab = os.path.join(folder, "img"), os.path.join(folder, "lab")
    with open(img, "wb") as f:
        f.write(struct.pack(">iiii", 2051, n, rows, cols) + images.tobytes())
    with open(lab, "wb") as f:
        f.write(struct.pack(">ii", 2049, n) + (i % 256).astype(np.uint8).tobytes())
    return img, lab


def example_numbers(batch):
    pixels = np.round(batch.data[0].asnumpy().reshape(batch.data[0].shape[0], -1) * 256).astype(int)
    return (pixels[:, 0] * 256 + pixels[:, 1]).tolist()


def test_mnist_iter_shapes_values_and_partial_batch(tmp_path):
    img, lab = make_mnist_files(str(tmp_path), 10, rows=2, cols=3)
    it = mx.io.MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, silent=True)
    assert it.provide_data[0].shape == (3, 1, 2, 3) and it.provide_label[0].shape == (3,)
    batches = list(it)
    assert [example_numbers(b) for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert batches[1].label[0].asnumpy().tolist() == [3, 4, 5]
    assert batches[0].data[0].dtype == np.float32 and batches[0].data[0].asnumpy().max() < 1
    flat = mx.io.MNISTIter(image=img, label=lab, batch_size=4, shuffle=0, flat=1, silent=1)
    assert flat.next().data[0].shape == (4, 6)
    part = mx.io.MNISTIter(image=img, label=lab, batch_size=2, shuffle=False, silent=True,
                           num_parts=3, part_index=1)
    assert [example_numbers(b) for b in part] == [[3, 4]]


def test_mnist_iter_shuffles_as_mxnet(tmp_path):
    expected = json.load(open(os.path.join(FIXTURES, "io-mxnet191.json")))["mnist_shuffle"]
    img, lab = make_mnist_files(str(tmp_path), 300)
    for seed, order in expected.items():
        it = mx.io.MNISTIter(image=img, label=lab, batch_size=300, flat=True, seed=int(seed),
                             silent=True)
        batch = it.next()
        assert example_numbers(batch) == order
        assert batch.label[0].asnumpy().tolist() == [o % 256 for o in order]


def test_mnist_iter_reset_gives_the_same_order(tmp_path):
    img, lab = make_mnist_files(str(tmp_path), 60)
    it = mx.io.MNISTIter(image=img, label=lab, batch_size=10, seed=10, silent=True)
    assert sum(1 for _ in it) == 6
    it.reset()
    it.iter_next()
    first = it.getlabel().asnumpy().tolist()
    for _ in range(4):
        it.iter_next()
    it.reset()
    it.iter_next()
    assert it.getlabel().asnumpy().tolist() == first


def test_mnist_iter_rejects_a_truncated_file(tmp_path):
    img, lab = make_mnist_files(str(tmp_path), 10)
    with open(img, "r+b") as f:
        f.truncate(20)
    with pytest.raises(MXNetError, match="invalid mnist format"):
        mx.io.MNISTIter(image=img, label=lab, batch_size=2, silent=True)


MAGIC = struct.pack("<I", 0xCED7230A)


def test_recordio_round_trip_and_layout(tmp_path):
    rec = str(tmp_path / "a.rec")
    records = [b"", b"abc", b"abcd", MAGIC, b"xy" + MAGIC + b"zw" + MAGIC + b"!"]
    writer = mx.recordio.MXRecordIO(rec, "w")
    for r in records:
        writer.write(r)
    writer.close()
    raw = open(rec, "rb").read()
    # header + payload padded to 4: "abc" -> magic, length 3, "abc\0"
    assert raw[8:20] == MAGIC + struct.pack("<I", 3) + b"abc\0"
    reader = mx.recordio.MXRecordIO(rec, "r")
    assert [reader.read() for _ in records] == records and reader.read() is None
    reader.reset()
    assert reader.read() == b""
    with pytest.raises(TypeError):
        mx.recordio.MXRecordIO(str(tmp_path / "b.rec"), "w").write("text")


def test_indexed_recordio_random_access_and_pickle(tmp_path):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    assert writer.tell() == 0
    for i in range(5):
        writer.write_idx(i, b"record_%d" % i)
        assert writer.tell() == 16 * (i + 1)
    writer.close()
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    assert reader.keys == [0, 1, 2, 3, 4]
    assert [reader.read_idx(k) for k in (3, 0, 4)] == [b"record_3", b"record_0", b"record_4"]
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read_idx(2) == b"record_2"


def test_reads_records_mxnet_wrote_and_writes_the_same_bytes(tmp_path):
    expected = json.load(open(os.path.join(FIXTURES, "io-mxnet191.json")))
    payloads = [bytes.fromhex(p) for p in expected["payloads"]]
    reader = mx.recordio.MXIndexedRecordIO(os.path.join(FIXTURES, "recordio-mxnet191.idx"),
                                           os.path.join(FIXTURES, "recordio-mxnet191.rec"), "r")
    assert reader.keys == expected["keys"]
    assert [reader.read_idx(k) for k in reversed(reader.keys)] == payloads[::-1]
    header, body = mx.recordio.unpack(payloads[-1])
    assert header.flag == 3 and header.label.tolist() == [1, 2, 3] and body == b"img2"
    assert mx.recordio.unpack(payloads[-2]) == (mx.recordio.IRHeader(0, 3.5, 7, 1), b"img")
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for key, payload in zip(expected["keys"], payloads):
        writer.write_idx(key, payload)
    writer.close()
    assert open(rec, "rb").read() == open(os.path.join(FIXTURES, "recordio-mxnet191.rec"), "rb").read()
    assert open(idx).read() == open(os.path.join(FIXTURES, "recordio-mxnet191.idx")).read()


def test_pack_unpack():
    packed = mx.recordio.pack(mx.recordio.IRHeader(5, 2.0, 9, 0), b"payload")
    assert len(packed) == 24 + 7
    header, body = mx.recordio.unpack(packed)
    assert header == (0, 2.0, 9, 0) and body == b"payload"     # flag is 0 for a scalar label
    header, body = mx.recordio.unpack(mx.recordio.pack((0, np.array([0.5, 1.5]), 1, 2), b"x"))
    assert header.flag == 2 and header.label.dtype == np.float32 and body == b"x"


def test_invalid_recordio_file(tmp_path):
    path = tmp_path / "bad.rec"
    path.write_bytes(b"\x01\x02\x03\x04\x05\x06\x07\x08")
    with pytest.raises(MXNetError, match="invalid RecordIO"):
        mx.recordio.MXRecordIO(str(path), "r").read()


def _written(tmp_path, records):
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, r in enumerate(records):
        writer.write_idx(i, r)
    writer.close()
    return idx, rec


def test_damaged_recordio_files_name_the_file_and_offset(tmp_path):
    idx, rec = _written(tmp_path, [b"a" * 10, b"b" * 7, b"xyzw" + MAGIC + b"ab"])
    data = open(rec, "rb").read()          # records at offsets 0, 20 and 36 (split at 48)
    cases = {30: r"at offset 20: the file ends inside a record of 7 bytes \(2 present\)",
             23: r"at offset 20: the file ends inside a record header \(3 of its 8 bytes",
             48: r"at offset 48: a split record continues with the end of the file"}
    for cut, message in cases.items():
        with open(rec, "wb") as f:
            f.write(data[:cut])
        reader = mx.recordio.MXRecordIO(rec, "r")
        assert reader.read() == b"a" * 10
        if cut == 48:
            assert reader.read() == b"b" * 7
        with pytest.raises(MXNetError, match=f"invalid RecordIO file '{rec}' {message}"):
            reader.read()
        reader.close()
    with open(rec, "wb") as f:
        f.write(data[:20] + b"\x00" * 4 + data[24:])
    with pytest.raises(MXNetError, match=f"'{rec}' at offset 20: expected the magic 0xced7230a, "
                                         f"found 0x00000000"):
        mx.recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(1)
    with open(rec, "wb") as f:
        f.write(data[:20])
    with pytest.raises(MXNetError, match=f"invalid index '{idx}' line 2 \\('1\\\\t20'\\): "
                                         f"offset 20 is outside '{rec}' \\(20 bytes\\)"):
        mx.recordio.MXIndexedRecordIO(idx, rec, "r")


@pytest.mark.parametrize("lines, message", [
    ("0\t0\njunk\n", r"line 2 \('junk'\): expected key<TAB>offset"),
    ("0\t0\nx\t20\n", r"line 2 \('x\\t20'\): the key is not a valid int"),
    ("0\tzero\n", r"line 1 \('0\\tzero'\): the offset is not an integer"),
    ("0\t-4\n", r"line 1 \('0\\t-4'\): offset -4 is outside"),
])
def test_malformed_index_lines_are_errors_not_skipped(tmp_path, lines, message):
    idx, rec = _written(tmp_path, [b"a" * 10, b"b" * 7])
    with open(idx, "w") as f:
        f.write(lines)
    with pytest.raises(MXNetError, match=f"invalid index '{idx}' " + message):
        mx.recordio.MXIndexedRecordIO(idx, rec, "r")


def test_index_lookups_and_closed_files_fail_clearly(tmp_path):
    idx, rec = _written(tmp_path, [b"a", b"b"])
    with open(idx, "a") as f:
        f.write("\n")                                   # a blank line holds no entry
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    assert reader.keys == [0, 1]
    with pytest.raises(KeyError, match=f"key 7 is not in the index '{idx}' \\(2 keys\\)"):
        reader.read_idx(7)
    reader.close()
    with pytest.raises(MXNetError, match=f"MXRecordIO.read: '{rec}' is closed"):
        reader.read()
    with pytest.raises(MXNetError, match="unpack: a record holds at least the 24-byte IRHeader, "
                                         "got 3 bytes"):
        mx.recordio.unpack(b"abc")
    short = mx.recordio.pack((0, [1.0, 2.0], 0, 0), b"")[:-4]
    with pytest.raises(MXNetError, match="IRHeader says 2 float32 labels follow, but only 4"):
        mx.recordio.unpack(short)


def test_a_recordio_file_appears_whole_at_close(tmp_path):
    idx, rec = _written(tmp_path, [b"old"])
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    writer.write_idx(0, b"new record")
    # while it is written the old pair stays readable, the new records in a hidden temp file
    assert mx.recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(0) == b"old"
    names = sorted(os.listdir(tmp_path))
    assert names[2:] == ["a.idx", "a.rec"] and all(n.endswith(".tmp") for n in names[:2])
    writer.close()
    assert sorted(os.listdir(tmp_path)) == ["a.idx", "a.rec"]
    assert mx.recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(0) == b"new record"
