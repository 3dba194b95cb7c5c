"""mx.gluon.data datasets and samplers (MXNet 1.9's behaviour)."""

from __future__ import annotations

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import data as gdata


def test_sequential_and_random_samplers():
    assert list(gdata.SequentialSampler(5)) == [0, 1, 2, 3, 4]
    assert list(gdata.SequentialSampler(3, start=4)) == [4, 5, 6]
    np.random.seed(3)
    first = list(gdata.RandomSampler(10))
    assert sorted(first) == list(range(10)) and first != list(range(10))
    assert all(type(i) is int for i in first)
    assert len(gdata.RandomSampler(7)) == 7


@pytest.mark.parametrize("last_batch, batches, length", [
    ("keep", [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]], 4),
    ("discard", [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 3),
])
def test_batch_sampler_keep_discard(last_batch, batches, length):
    sampler = gdata.BatchSampler(gdata.SequentialSampler(10), 3, last_batch)
    assert list(sampler) == batches
    assert len(sampler) == length


def test_batch_sampler_rollover_carries_the_rest_into_the_next_pass():
    sampler = gdata.BatchSampler(gdata.SequentialSampler(10), 4, "rollover")
    assert len(sampler) == 2
    assert list(sampler) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(sampler) == 3                          # 2 rolled over + 10
    assert list(sampler) == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert len(sampler) == 2


def test_batch_sampler_rejects_an_unknown_last_batch():
    with pytest.raises(ValueError, match="last_batch must be one of .* got 'drop'"):
        gdata.BatchSampler(gdata.SequentialSampler(4), 2, "drop")


@pytest.mark.parametrize("batch_size", [0, -2, 2.5, None, True])
def test_batch_sampler_rejects_a_batch_size_that_is_not_a_positive_integer(batch_size):
    # MXNet yields one batch of everything for 0 or a negative size
    with pytest.raises(mx.base.MXNetError, match=rf"BatchSampler: batch_size must be a "
                                                 rf"positive integer, got {batch_size!r}"):
        gdata.BatchSampler(gdata.SequentialSampler(4), batch_size)


def test_batch_sampler_takes_a_numpy_integer_batch_size():
    sampler = gdata.BatchSampler(gdata.SequentialSampler(5), np.int64(2))
    assert list(sampler) == [[0, 1], [2, 3], [4]] and len(sampler) == 3


def test_interval_sampler():
    assert list(gdata.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    no_roll = gdata.IntervalSampler(13, 3, rollover=False)
    assert list(no_roll) == [0, 3, 6, 9, 12] and len(no_roll) == 5
    with pytest.raises(ValueError, match="interval must be in"):
        gdata.IntervalSampler(3, 4)


def test_simple_and_array_dataset():
    assert len(gdata.SimpleDataset([5, 6, 7])) == 3
    assert gdata.SimpleDataset([5, 6, 7])[1] == 6
    x, y = np.arange(12.0).reshape(4, 3), mx.nd.array([9, 8, 7, 6])
    ds = gdata.ArrayDataset(x, y, [10, 11, 12, 13])
    a, b, c = ds[2]
    assert (a == x[2]).all() and b == 7 and c == 12 and len(ds) == 4
    assert isinstance(b, np.float32)                   # a 1-D NDArray is read through numpy
    only = gdata.ArrayDataset(x)
    assert (only[1] == x[1]).all()
    with pytest.raises(ValueError, match=r"array\[0\] has length 4 while array\[1\] has 3"):
        gdata.ArrayDataset(x, [1, 2, 3])


def test_transform_and_transform_first():
    ds = gdata.ArrayDataset([1, 2, 3], [10, 20, 30])
    assert ds.transform(lambda d, l: (d * 2, l + 1))[1] == (4, 21)
    assert ds.transform_first(lambda d: -d)[2] == (-3, 30)
    calls = []
    eager = gdata.SimpleDataset([1, 2]).transform(lambda v: calls.append(v) or v * 3,
                                                  lazy=False)
    assert calls == [1, 2] and isinstance(eager, gdata.SimpleDataset) and eager[1] == 6
    assert gdata.SimpleDataset([4, 5]).transform_first(lambda v: v + 1)[0] == 5


def test_filter_shard_take_sample():
    ds = gdata.SimpleDataset(list(range(100)))
    assert list(ds.filter(lambda v: v % 10 == 0)) == list(range(0, 100, 10))
    shifted = ds.transform(lambda v: v + 1).filter(lambda v: v % 10 == 0)
    assert list(shifted) == list(range(10, 101, 10))
    nine = gdata.SimpleDataset(list(range(9)))
    shards = [list(nine.shard(4, i)) for i in range(4)]
    assert shards == [[0, 1, 2], [3, 4], [5, 6], [7, 8]]
    with pytest.raises(ValueError, match=r"index must be in \[0, 4\), got 4"):
        nine.shard(4, 4)
    assert len(ds.take(1000)) == 100 and len(ds.take(None)) == 100
    assert list(ds.take(3)) == [0, 1, 2]
    assert list(ds.sample(gdata.SequentialSampler(3, start=7))) == [7, 8, 9]
    with pytest.raises(TypeError, match="sampler must be a gluon.data.Sampler, got list"):
        ds.sample([1, 2])


def test_record_file_dataset(tmp_path):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(5):
        writer.write_idx(i, b"record %d" % i)
    writer.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 5 and ds[3] == b"record 3" and ds[0] == b"record 0"
