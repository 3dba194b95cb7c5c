"""mx.gluon.data.vision datasets over tiny files written here in the standard formats
(idx for MNIST, binary and python batches for CIFAR); nothing is downloaded."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon.data import DataLoader, vision


def _idx(array, code):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.tobytes()


def _write_mnist(root, prefix, n, gz=True):
    rng = np.random.RandomState(n)
    images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, 10, n).astype(np.uint8)
    for kind, arr, code in (("images-idx3", images, 0x08), ("labels-idx1", labels, 0x08)):
        name = os.path.join(root, f"{prefix}-{kind}-ubyte")
        if gz:
            with gzip.open(name + ".gz", "wb") as f:
                f.write(_idx(arr, code))
        else:
            with open(name, "wb") as f:
                f.write(_idx(arr, code))
    return images, labels


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, cls):
    images, labels = _write_mnist(str(tmp_path), "train", 7)
    test_images, test_labels = _write_mnist(str(tmp_path), "t10k", 3, gz=False)
    train = cls(root=str(tmp_path))
    assert len(train) == 7
    x, y = train[4]
    assert isinstance(x, mx.nd.NDArray) and x.shape == (28, 28, 1) and x.dtype == np.uint8
    assert (x.asnumpy()[..., 0] == images[4]).all() and y == labels[4]
    assert isinstance(y, np.int32)
    test = cls(root=str(tmp_path), train=False,
               transform=lambda d, l: (d.astype("float32") / 255, l + 100))
    x, y = test[2]
    assert np.allclose(x.asnumpy()[..., 0], test_images[2] / 255) and y == test_labels[2] + 100
    batch, label = next(iter(DataLoader(train, 4, num_workers=1)))
    assert batch.shape == (4, 28, 28, 1) and (label.asnumpy() == labels[:4]).all()


def test_missing_and_damaged_files_say_what_and_where(tmp_path):
    with pytest.raises(mx.MXNetError, match=r"MNIST: train-images-idx3-ubyte.gz, "
                                            r"train-labels-idx1-ubyte.gz not found in .*"
                                            r"put the files there"):
        vision.MNIST(root=str(tmp_path))
    with open(tmp_path / "train-images-idx3-ubyte", "wb") as f:
        f.write(_idx(np.zeros((2, 28, 28), np.uint8), 0x08)[:-5])
    with open(tmp_path / "train-labels-idx1-ubyte", "wb") as f:
        f.write(_idx(np.zeros(2, np.uint8), 0x08))
    with pytest.raises(mx.MXNetError, match=r"the header says \(2, 28, 28\) items of uint8 "
                                            r"\(1568 bytes\), the file holds 1563"):
        vision.MNIST(root=str(tmp_path))
    with pytest.raises(mx.MXNetError, match=r"CIFAR10: data_batch_1.bin, .* "
                                            r"cifar-10-python.tar.gz not found"):
        vision.CIFAR10(root=str(tmp_path))


def _cifar_images(n, seed):
    return np.random.RandomState(seed).randint(0, 256, (n, 3, 32, 32)).astype(np.uint8)


def _binary_batch(path, images, *label_columns):
    labels = np.stack(label_columns, axis=1).astype(np.uint8)
    records = np.concatenate([labels, images.reshape(len(images), -1)], axis=1)
    with open(path, "wb") as f:
        f.write(records.tobytes())


def _python_batch(path, images, bytes_keys=False, **labels):
    batch = {"batch_label": "batch", "data": images.reshape(len(images), -1),
             "filenames": [f"img{i}.png" for i in range(len(images))]}
    batch.update({k: list(map(int, v)) for k, v in labels.items()})
    if bytes_keys:      # as the files pickled by Python 2 read
        batch = {k.encode(): v for k, v in batch.items()}
    with open(path, "wb") as f:
        pickle.dump(batch, f, protocol=2)


def test_cifar10_binary_batches_from_the_archive(tmp_path):
    files, expected = {}, []
    for i, name in enumerate([f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]):
        images, labels = _cifar_images(2, i), np.array([i, 9 - i])
        path = tmp_path / name
        _binary_batch(path, images, labels)
        files[name] = path.read_bytes()
        expected.append((images, labels))
        path.unlink()
    with tarfile.open(tmp_path / "cifar-10-binary.tar.gz", "w:gz") as tar:
        for name, raw in files.items():
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    train = vision.CIFAR10(root=str(tmp_path))
    assert len(train) == 10
    x, y = train[3]                          # batch 2, second image
    assert x.shape == (32, 32, 3) and x.dtype == np.uint8
    assert (x.asnumpy() == expected[1][0][1].transpose(1, 2, 0)).all() and y == 8
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    assert len(test) == 2 and test[0][1] == 5


@pytest.mark.parametrize("bytes_keys", [False, True])
def test_cifar10_python_batches(tmp_path, bytes_keys):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for k in range(1, 6):
        _python_batch(folder / f"data_batch_{k}", _cifar_images(3, k), bytes_keys,
                      labels=[k, k, k])
    test_images = _cifar_images(4, 0)
    _python_batch(folder / "test_batch", test_images, bytes_keys, labels=[0, 1, 2, 3])
    assert len(vision.CIFAR10(root=str(tmp_path))) == 15
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    x, y = test[2]
    assert (x.asnumpy() == test_images[2].transpose(1, 2, 0)).all() and y == 2


def test_python_batches_make_nothing_but_arrays_and_containers(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({"data": np.zeros((1, 3072), np.uint8), "labels": [os.getcwd]}, f)
    with pytest.raises(mx.MXNetError, match="refusing to load posix.getcwd"):
        vision.CIFAR10(root=str(tmp_path), train=False)


@pytest.mark.parametrize("fine", [False, True])
def test_cifar100_coarse_and_fine_labels(tmp_path, fine):
    train_images, test_images = _cifar_images(3, 1), _cifar_images(2, 2)
    _binary_batch(tmp_path / "train.bin", train_images, [1, 2, 3], [51, 52, 53])
    _binary_batch(tmp_path / "test.bin", test_images, [4, 5], [54, 55])
    train = vision.CIFAR100(root=str(tmp_path), fine_label=fine)
    assert len(train) == 3 and train[1][1] == (52 if fine else 2)
    assert (train[1][0].asnumpy() == train_images[1].transpose(1, 2, 0)).all()
    py = tmp_path / "py" / "cifar-100-python"
    py.mkdir(parents=True)
    _python_batch(py / "train", train_images, coarse_labels=[1, 2, 3], fine_labels=[51, 52, 53])
    _python_batch(py / "test", test_images, coarse_labels=[4, 5], fine_labels=[54, 55])
    test = vision.CIFAR100(root=str(tmp_path / "py"), fine_label=fine, train=False)
    assert [test[i][1] for i in range(2)] == ([54, 55] if fine else [4, 5])


def test_default_root_is_under_mxnet_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    os.makedirs(tmp_path / "datasets" / "mnist")
    _write_mnist(str(tmp_path / "datasets" / "mnist"), "t10k", 2)
    assert len(vision.MNIST(train=False)) == 2
    with pytest.raises(mx.MXNetError, match=r"not found in .*datasets.fashion-mnist"):
        vision.FashionMNIST(train=False)
