"""mx.gluon.data.DataLoader: batching, in this process and with real worker processes
(default start method) or threads; shared-memory hand-back, errors, and clean shutdown."""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import data as gdata
from mxnext.gluon.data import _workers

pytestmark = pytest.mark.timeout(120)


class Squares(gdata.Dataset):
    """Sample i: (an NDArray filled with i, the label i*i as a Python int)."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return mx.nd.full((2, 3), i), i * i


class FailsAt(gdata.Dataset):
    def __init__(self, bad, exc):
        self.bad, self.exc = bad, exc

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc
        return np.full((3,), i, np.float32)


class Unpicklable(Exception):
    def __init__(self, a, b):          # pickling drops a and b: unpickling it fails
        super().__init__(f"{a}/{b}")


class DiesAt(gdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4:
            os._exit(3)
        return np.float32(i)


class Slow(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3)
        return np.float32(i)


def _leftovers(pool):
    return os.listdir(pool._workers.folder)


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("num_workers, thread_pool", [(0, False), (2, False), (2, True)])
def test_batches_of_tuples_stack_fields(num_workers, thread_pool):
    loader = gdata.DataLoader(Squares(), batch_size=4, num_workers=num_workers,
                              thread_pool=thread_pool)
    assert len(loader) == 3
    for epoch in range(2):
        got = list(loader)
        assert [b[0].shape for b in got] == [(4, 2, 3), (4, 2, 3), (2, 2, 3)]
        for k, (x, y) in enumerate(got):
            idx = np.arange(4 * k, min(4 * k + 4, 10))
            assert isinstance(x, mx.nd.NDArray) and isinstance(y, mx.nd.NDArray)
            assert x.dtype == np.float32 and x.context == mx.cpu()
            assert (x.asnumpy() == idx[:, None, None]).all()
            assert y.dtype == np.int64 and (y.asnumpy() == idx * idx).all()


@pytest.mark.parametrize("num_workers", [0, 2])
def test_numpy_and_list_samples_keep_their_dtype(num_workers):
    x = np.random.uniform(size=(10, 5))
    y = np.arange(10, dtype=np.int32)
    loader = gdata.DataLoader(gdata.ArrayDataset(x, y), 3, num_workers=num_workers)
    batches = list(loader)
    assert np.allclose(np.concatenate([b[0].asnumpy() for b in batches]), x)
    assert batches[0][0].dtype == np.float64 and batches[0][1].dtype == np.int32
    lists = gdata.DataLoader([([1, 2], 0), ([3, 4], 1)], batch_size=2,
                             num_workers=num_workers)
    (d, l), = list(lists)
    assert d.asnumpy().tolist() == [[1, 2], [3, 4]] and l.asnumpy().tolist() == [0, 1]


def test_shuffle_sampler_last_batch_and_batch_sampler():
    data = np.arange(10, dtype=np.float32)
    np.random.seed(0)
    shuffled = np.concatenate([b.asnumpy() for b in gdata.DataLoader(data, 4, shuffle=True)])
    assert sorted(shuffled) == list(range(10)) and list(shuffled) != list(range(10))
    assert [b.shape[0] for b in gdata.DataLoader(data, 4, last_batch="discard")] == [4, 4]
    roll = gdata.DataLoader(data, 4, last_batch="rollover")
    assert [b.shape[0] for b in roll] == [4, 4]
    assert list(roll)[0].asnumpy().tolist() == [8, 9, 0, 1]
    by_batches = gdata.DataLoader(data, batch_sampler=[[9, 0], [5]])
    assert [b.asnumpy().tolist() for b in by_batches] == [[9, 0], [5]]
    with pytest.raises(ValueError, match="batch_size must be specified"):
        gdata.DataLoader(data)
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        gdata.DataLoader(data, 2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="shuffle must not be specified if sampler"):
        gdata.DataLoader(data, 2, shuffle=True, sampler=gdata.SequentialSampler(10))
    with pytest.raises(ValueError, match="timeout must be positive"):
        gdata.DataLoader(data, 2, timeout=0)


@pytest.mark.parametrize("batch_size", [0, -1])
def test_a_batch_size_below_one_is_refused(batch_size):
    # MXNet yields one batch of the whole dataset
    with pytest.raises(mx.base.MXNetError, match=rf"DataLoader: batch_size must be a positive "
                                                 rf"integer, got {batch_size}"):
        gdata.DataLoader(np.arange(10, dtype=np.float32), batch_size)


def test_pin_memory_gives_cpu_pinned_batches():
    loader = gdata.DataLoader(np.ones((4, 2)), 2, pin_memory=True, num_workers=1)
    assert all(b.context == mx.cpu_pinned(0) for b in loader)


def test_custom_batchify_returns_numpy_and_objects_from_workers():
    def batchify(samples):
        return {"x": np.stack(samples), "n": len(samples), "tag": ("a", [np.int8(3)])}
    loader = gdata.DataLoader(np.arange(12.0).reshape(6, 2), 4, batchify_fn=batchify,
                              num_workers=2)
    first, second = list(loader)
    assert isinstance(first["x"], np.ndarray) and first["x"].shape == (4, 2)
    assert (second["x"] == [[8, 9], [10, 11]]).all()
    assert first["n"] == 4 and first["tag"] == ("a", [3])


def test_batch_data_goes_through_shared_memory_not_the_pipe():
    big = np.random.uniform(size=(256, 1024))            # 2 MB
    path = os.path.join(_workers._SHM_DIR, f"mxnext-test-{os.getpid()}")
    tree, size = _workers._write(path, [big, _workers._Stack([big[0], big[1]])])
    try:
        assert size >= big.nbytes and os.path.getsize(path) == size
        assert len(pickle.dumps(tree)) < 400              # names, shapes, dtypes only
        arr, stacked = _workers._read(path, size, tree)
    finally:
        assert not os.path.exists(path)                   # the name goes when mapped
    assert isinstance(arr, np.ndarray) and (arr == big).all()
    assert isinstance(stacked, mx.nd.NDArray) and (stacked.asnumpy() == big[:2]).all()
    stacked += 1                                  # writable, here only (copy-on-write)
    assert (stacked.asnumpy() == big[:2] + 1).all()


def test_worker_error_is_raised_here_naming_the_worker():
    loader = gdata.DataLoader(FailsAt(5, ValueError("bad sample 5")), 2, num_workers=2)
    with pytest.raises(ValueError, match="bad sample 5") as info:
        list(loader)
    note = "\n".join(info.value.__notes__)
    assert "DataLoader worker" in note and "pid" in note and "[4, 5]" in note
    assert "FailsAt" in str(info.value.__cause__) or "__getitem__" in str(info.value.__cause__)
    # the workers survive a dataset's error: the loader goes on
    good = gdata.DataLoader(FailsAt(99, None), 2, num_workers=2)
    assert len(list(good)) == 4
    odd = gdata.DataLoader(FailsAt(1, Unpicklable(1, 2)), 2, num_workers=1)
    with pytest.raises(mx.MXNetError, match=r"DataLoader worker 0 \(pid \d+\).* raised "
                                            r"Unpicklable: 1/2"):
        list(odd)


class Ragged(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.zeros(3 + i % 2)


def test_samples_of_different_shapes_need_a_batchify_fn():
    loader = gdata.DataLoader(Ragged(), 2, num_workers=1)
    with pytest.raises(mx.MXNetError, match=r"stacks samples of one shape, got shapes "
                                            r"\[\(3,\), \(4,\)\]") as info:
        list(loader)
    assert "DataLoader worker 0" in "".join(info.value.__notes__)
    lists = gdata.DataLoader(Ragged(), 2, num_workers=1, batchify_fn=list)
    assert [[a.shape for a in b] for b in lists] == [[(3,), (4,)], [(3,), (4,)]]


def test_a_dead_worker_is_reported_and_the_next_pass_gets_new_workers():
    loader = gdata.DataLoader(DiesAt(), 2, num_workers=2, prefetch=0)
    old = [p.pid for p in loader._pool._workers.procs]
    with pytest.raises(mx.MXNetError, match=r"DataLoader worker \d \(pid \d+\) exited with "
                                            r"code 3"):
        list(loader)
    assert all(_gone(pid) for pid in old)
    assert loader._pool.broken is not None
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0, 1]
    assert [p.pid for p in loader._pool._workers.procs] != old


def test_timeout_names_the_worker():
    loader = gdata.DataLoader(Slow(), 1, num_workers=1, timeout=0.5)
    with pytest.raises(multiprocessing.TimeoutError, match=r"worker 0 .*timeout=0.5"):
        next(iter(loader))


def test_nothing_is_left_after_breaking_off_and_after_the_loader_goes():
    mx.nd.ones((3,)).asnumpy()            # the engine's threads are running: fork anyway
    loader = gdata.DataLoader(np.ones((64, 100), np.float32), 2, num_workers=2, prefetch=8)
    pool = loader._pool
    pids = [p.pid for p in pool._workers.procs]
    for k, _ in enumerate(loader):
        if k == 1:
            break
    assert _leftovers(pool) == []          # prefetched batches dropped, their files gone
    assert not any(_gone(pid) for pid in pids)
    it = iter(loader)
    next(it)
    del loader, pool
    gc.collect()
    assert not any(_gone(pid) for pid in pids)    # an iterator still uses them
    assert next(it).shape == (2, 100)
    folder = it.gi_frame.f_locals["self"]._pool._workers.folder
    del it
    gc.collect()
    assert all(_gone(pid) for pid in pids)
    assert not os.path.exists(folder)
    assert multiprocessing.active_children() == []


def test_auto_reload_prefetches_the_next_pass():
    loader = gdata.DataLoader(np.arange(4.0), 2, num_workers=1, auto_reload=True)
    assert loader._iter is not None                  # the first pass is prefetching already
    assert [b.asnumpy().tolist() for b in loader] == [[0, 1], [2, 3]]
    assert loader._iter is not None
    loader.clean()
    assert loader._iter is None
    assert len(list(loader)) == 2


def test_workers_start_with_spawn_too(tmp_path):
    """Python 3.14 makes forkserver the default: a spawned worker gets the dataset pickled."""
    script = tmp_path / "spawned.py"
    script.write_text(
        "import multiprocessing, numpy as np\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn')\n"
        "    from mxnext.gluon.data import ArrayDataset, DataLoader\n"
        "    loader = DataLoader(ArrayDataset(np.arange(6.0), np.arange(6)), 4, num_workers=2)\n"
        "    print([b[0].asnumpy().tolist() for b in loader])\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=100)
    assert out.stdout.strip() == "[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]", out.stderr


def test_record_file_dataset_in_workers_reopens_the_file(tmp_path):
    rec, idx = str(tmp_path / "r.rec"), str(tmp_path / "r.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(9):
        writer.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, i, i, 0), b"x" * i))
    writer.close()
    ds = gdata.RecordFileDataset(rec).transform(
        lambda r: mx.recordio.unpack(r)[0].label)
    labels = gdata.DataLoader(ds, 2, num_workers=2)
    assert np.concatenate([b.asnumpy() for b in labels]).tolist() == list(range(9))
    assert ds[4] == 4                       # the loading process's own handle still reads


def test_forking_pickler_and_as_in_context_as_gluonnlp_uses_them():
    """GluonNLP's worker function dumps batches with ``ForkingPickler`` and the loader moves
    them with ``_as_in_context`` (both imported from MXNet's dataloader module)."""
    import io
    from mxnext.gluon.data.dataloader import ForkingPickler, _as_in_context
    assert issubclass(ForkingPickler, pickle.Pickler)
    batch = [mx.nd.array([[1, 2], [3, 4]], dtype="int32"), mx.nd.array([0.5])]
    buf = io.BytesIO()
    ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(batch)
    back = pickle.loads(buf.getvalue())
    assert back[0].dtype == np.int32
    np.testing.assert_array_equal(back[0].asnumpy(), [[1, 2], [3, 4]])
    moved = _as_in_context((back[1], 7), mx.cpu_pinned())
    assert moved[0].context == mx.cpu_pinned() and moved[1] == 7
