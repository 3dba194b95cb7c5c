"""mx.test_utils data helpers: files in place are used, missing ones are downloaded and
checked, and with no source the error names the files to put where. No network: the
"repository" is a file:// folder the tests fill."""

import gzip
import hashlib
import struct
import zipfile

import numpy as np
import pytest

from mxnext import test_utils as tu
from mxnext.base import MXNetError
from mxnext.test_utils import _data


def _idx_files(folder, count=20, gz=False):
    """Small MNIST-format files (``count`` 28x28 images, labels i % 10)."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
    labels = (np.arange(count) % 10).astype(np.uint8)
    blobs = {}
    for prefix in ("train", "t10k"):
        blobs[f"{prefix}-images-idx3-ubyte"] = struct.pack(">IIII", 2051, count, 28, 28) + \
            images.tobytes()
        blobs[f"{prefix}-labels-idx1-ubyte"] = struct.pack(">II", 2049, count) + \
            labels.tobytes()
    folder.mkdir(parents=True, exist_ok=True)
    for name, blob in blobs.items():
        if gz:
            (folder / f"{name}.gz").write_bytes(gzip.compress(blob))
        else:
            (folder / name).write_bytes(blob)
    return images, labels


def test_get_mnist_reads_files_in_place_without_downloading(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "nowhere").as_uri())
    images, labels = _idx_files(tmp_path / "data")
    got = tu.get_mnist()
    assert got["train_data"].shape == (20, 1, 28, 28) and got["train_data"].dtype == np.float32
    np.testing.assert_allclose(got["test_data"][:, 0] * 255, images, atol=1e-3)
    assert got["train_label"].dtype == np.int8 and got["train_label"].tolist() == \
        labels.tolist()


def test_get_mnist_ubyte_unpacks_gz_left_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "nowhere").as_uri())
    _idx_files(tmp_path, gz=True)                 # where MXNet 1.x's get_mnist put them
    tu.get_mnist_ubyte()
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == sorted(_data.MNIST)
    train, val = tu.get_mnist_iterator(batch_size=5, input_shape=(784,))
    batch = next(train)
    assert batch.data[0].shape == (5, 784) and len(list(val)) == 4


def test_missing_mnist_names_the_files_to_put_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "nowhere").as_uri())
    with pytest.raises(MXNetError) as err:
        tu.get_mnist_ubyte()
    msg = str(err.value)
    assert "get_mnist_ubyte: download: could not fetch" in msg and "mnist/train-images" in msg
    assert f"put these files in {tmp_path / 'data'}: train-images-idx3-ubyte, " in msg
    assert "t10k-labels-idx1-ubyte" in msg
    assert [p.name for p in (tmp_path / "data").iterdir()] == []       # no partial file left


def test_download_checks_the_sha1_and_skips_files_in_place(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    digest = hashlib.sha1(b"payload").hexdigest()
    out = tu.download(src.as_uri(), fname="got.bin", dirname=str(tmp_path / "d"),
                      sha1_hash=digest)
    assert out == str(tmp_path / "d" / "got.bin") and open(out, "rb").read() == b"payload"
    src.write_bytes(b"changed")
    assert tu.download(src.as_uri(), fname=out) == out             # in place: kept
    assert open(out, "rb").read() == b"payload"
    with pytest.raises(MXNetError, match="has SHA-1 .*, expected " + digest):
        tu.download(src.as_uri(), fname=str(tmp_path / "bad.bin"), sha1_hash=digest,
                    retries=0)
    assert not (tmp_path / "bad.bin").exists()
    tu.download(src.as_uri(), fname=out, overwrite=True)
    assert open(out, "rb").read() == b"changed"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["got.bin"]


def test_get_cifar10_extracts_the_checked_zip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    folder = repo / "gluon" / "dataset" / "cifar10"
    folder.mkdir(parents=True)
    archive = folder / "c.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in _data.CIFAR10_FILES:
            zf.writestr(f"cifar/{name}", name)
    monkeypatch.setattr(_data, "CIFAR10_ZIP",
                        ("c.zip", hashlib.sha1(archive.read_bytes()).hexdigest()))
    monkeypatch.setenv("MXNET_GLUON_REPO", repo.as_uri())
    tu.get_cifar10()
    assert (tmp_path / "data" / "cifar" / "train.rec").read_text() == "train.rec"
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "nowhere").as_uri())
    tu.get_cifar10()                                    # in place: nothing fetched


def test_get_zip_data(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("inner/x.txt", "x")
    tu.get_zip_data(str(tmp_path / "out"), archive.as_uri(), "a.zip")
    assert (tmp_path / "out" / "inner" / "x.txt").read_text() == "x"


def test_a_zip_member_outside_the_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../escaped.txt", "x")
    with pytest.raises(MXNetError, match="member '../escaped.txt' would be written outside"):
        tu.get_zip_data(str(tmp_path / "out"), archive.as_uri(), "evil.zip")
    assert not (tmp_path / "escaped.txt").exists()
