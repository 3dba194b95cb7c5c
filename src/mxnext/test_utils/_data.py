"""Data sets MXNet's tests and examples fetch: MNIST and CIFAR-10 under ``data/``, MNIST as
the pickle of deeplearning.net, and bz2-compressed files (libsvm data).

Files already in place are used as they are; a missing one is downloaded from MXNet's
Gluon data repository (``MXNET_GLUON_REPO``, as in MXNet) and checked against its SHA-1.
Without a network the error names every file to put where. Every file written here (a
download, an unpacked one) appears complete or not at all, so an interrupted run never
leaves a part that a later one would take for the file.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import logging
import os
import shutil
import struct
import urllib.request
import zipfile

import numpy as np

from .._atomic_write import AtomicFile
from .._runtime.base import MXNetError
from ..io.batch import DataIter

__all__ = ["download", "get_mnist", "get_mnist_ubyte", "get_mnist_iterator", "get_cifar10",
           "get_zip_data", "get_bz2_data", "get_mnist_pkl"]

# the Gluon repository's MNIST files and their SHA-1 (MXNet's gluon.data.vision.MNIST)
MNIST = {"train-images-idx3-ubyte": "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d",
         "train-labels-idx1-ubyte": "2a80914081dc54586dbdf242f9805a6b8d2a15fc",
         "t10k-images-idx3-ubyte": "c3a25af1f52dad7f726cce8cacb138654b760d48",
         "t10k-labels-idx1-ubyte": "763e7fa3757d93b0cdec073cef058b2004252c17"}
CIFAR10_ZIP = ("cifar10-b9ac2870.zip", "b9ac287012f2dad9dfb49d8271c39ecdd7db376c")
CIFAR10_FILES = ("train.rec", "test.rec", "train.lst", "test.lst")


def _repo_url(namespace: str, filename: str) -> str:
    base = os.environ.get("MXNET_GLUON_REPO", "https://repo.mxnet.io/")
    return f"{base.rstrip('/')}/gluon/dataset/{namespace}/{filename}"


def _sha1(path: str) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(url, fname=None, dirname=None, overwrite=False, retries=5, sha1_hash=None):
    """Fetch ``url`` into ``fname`` (default: the URL's last part) in ``dirname``, unless
    the file is there already (and, with ``sha1_hash``, has that digest) and not
    ``overwrite``. The file appears only once complete and checked. Returns its path."""
    if retries < 0:
        raise ValueError(f"download: retries must be >= 0, got {retries}")
    fname = fname or url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if os.path.exists(fname) and not overwrite and (sha1_hash is None
                                                    or _sha1(fname) == sha1_hash):
        logging.info("%s exists, skipping download", fname)
        return fname
    for attempt in range(retries + 1):
        out = AtomicFile(fname)
        try:
            digest = hashlib.sha1()
            with urllib.request.urlopen(url, timeout=60) as src:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    digest.update(chunk)
                    out.file.write(chunk)
            if sha1_hash is not None and digest.hexdigest() != sha1_hash:
                raise MXNetError(f"download: {url} has SHA-1 {digest.hexdigest()}, expected "
                                 f"{sha1_hash}")
            out.commit()
            logging.info("downloaded %s into %s successfully", url, fname)
            return fname
        except (OSError, MXNetError) as exc:
            out.discard()
            if attempt == retries:
                raise MXNetError(f"download: could not fetch {url} into {fname!r}: "
                                 f"{exc}") from exc
            logging.warning("download of %s failed (%s), %d attempt(s) left", url, exc,
                            retries - attempt)


def _fetch(what: str, path: str, wanted: list[str], get) -> None:
    """Run ``get()`` (which downloads) when a file of ``wanted`` (under ``path``) is
    missing; its failure names the files to put in place."""
    missing = [f for f in wanted if not os.path.exists(os.path.join(path, f))]
    if not missing:
        return
    try:
        get()
    except MXNetError as exc:
        raise MXNetError(f"{what}: {exc}\nWithout a network, put these files in "
                         f"{os.path.abspath(path)}: {', '.join(missing)}") from exc


def get_mnist_ubyte(path="data"):
    """The four MNIST files (``train-images-idx3-ubyte`` ...) in ``path``, from their
    ``.gz`` there or in the working directory (where MXNet's ``get_mnist`` leaves them),
    else downloaded."""
    os.makedirs(path, exist_ok=True)

    def get():
        for name, sha1 in MNIST.items():
            target = os.path.join(path, name)
            if os.path.exists(target):
                continue
            gz = next((p for p in (target + ".gz", name + ".gz") if os.path.exists(p)), None)
            if gz is None:
                gz = download(_repo_url("mnist", name + ".gz"), dirname=path, retries=1,
                              sha1_hash=sha1)
            with gzip.open(gz, "rb") as src, AtomicFile(target) as out:
                shutil.copyfileobj(src, out)

    _fetch("get_mnist_ubyte", path, list(MNIST), get)


def _read_idx(path: str, labels: bool) -> np.ndarray:
    with open(path, "rb") as f:
        if labels:
            struct.unpack(">II", f.read(8))
            return np.frombuffer(f.read(), dtype=np.int8)
        _, count, rows, cols = struct.unpack(">IIII", f.read(16))
        image = np.frombuffer(f.read(), dtype=np.uint8).reshape(count, 1, rows, cols)
        return image.astype(np.float32) / 255


def get_mnist(path="data"):
    """MNIST as ``{'train_data', 'train_label', 'test_data', 'test_label'}``: images
    float32 in [0, 1] of shape (N, 1, 28, 28), labels int8 (MXNet's arrays)."""
    get_mnist_ubyte(path)
    out = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        out[f"{split}_data"] = _read_idx(os.path.join(path, f"{prefix}-images-idx3-ubyte"),
                                         labels=False)
        out[f"{split}_label"] = _read_idx(os.path.join(path, f"{prefix}-labels-idx1-ubyte"),
                                          labels=True)
    return out


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0, path="data"):
    """(train, validation) ``mx.io.MNISTIter`` over :func:`get_mnist_ubyte`'s files; the
    images flat unless ``input_shape`` has 3 dimensions."""
    from ..io import MNISTIter
    get_mnist_ubyte(path)
    common = dict(input_shape=input_shape, batch_size=batch_size,
                  flat=len(input_shape) != 3, num_parts=num_parts, part_index=part_index)
    train = MNISTIter(image=os.path.join(path, "train-images-idx3-ubyte"),
                      label=os.path.join(path, "train-labels-idx1-ubyte"), shuffle=True,
                      **common)
    val = MNISTIter(image=os.path.join(path, "t10k-images-idx3-ubyte"),
                    label=os.path.join(path, "t10k-labels-idx1-ubyte"), **common)
    return train, val


def get_cifar10(path="data"):
    """CIFAR-10 as MXNet's RecordIO files in ``path/cifar`` (``train.rec``, ``test.rec``,
    ``train.lst``, ``test.lst``), extracted from the checked zip when missing."""
    os.makedirs(path, exist_ok=True)

    def get():
        name, sha1 = CIFAR10_ZIP
        _extract(download(_repo_url("cifar10", name), dirname=path, retries=1,
                          sha1_hash=sha1), path)

    _fetch("get_cifar10", path, [os.path.join("cifar", f) for f in CIFAR10_FILES], get)


def get_zip_data(data_dir, url, data_origin_name):
    """Download ``url`` as ``data_dir/data_origin_name`` and extract it there, unless that
    file is there already."""
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        _extract(download(url, fname=data_origin_name, dirname=data_dir), data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """``data_dir/data_name``: unless it exists, ``url`` is downloaded as
    ``data_dir/data_origin_name``, decompressed (bz2) into it, and the archive removed."""
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = download(url, fname=data_origin_name, dirname=data_dir)
    with bz2.BZ2File(archive, "rb") as src, AtomicFile(target) as out:
        shutil.copyfileobj(src, out)
    os.remove(archive)


def get_mnist_pkl():
    """``data/mnist.pkl.gz`` in the working directory (deeplearning.net's MNIST pickle, for
    scripts that unpickle it themselves; mxnext only fetches it), downloaded when missing."""
    if not os.path.exists(os.path.join("data", "mnist.pkl.gz")):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _extract(archive: str, folder: str) -> None:
    """Unpack the zip ``archive`` into ``folder``, each file written whole or not at all; a
    member that would land outside ``folder`` is an error."""
    root = os.path.realpath(folder)
    with zipfile.ZipFile(archive) as zf:
        for member in zf.infolist():
            target = os.path.realpath(os.path.join(root, member.filename))
            if os.path.commonpath([root, target]) != root:
                raise MXNetError(f"{archive}: member {member.filename!r} would be written "
                                 f"outside {folder!r}")
            if member.is_dir():
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with zf.open(member) as src, AtomicFile(target) as out:
                shutil.copyfileobj(src, out)


class DummyIter(DataIter):
    """The first batch of ``real_iter``, returned again and again (never raises
    StopIteration): MXNet's iterator for timing a step without reading data."""

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch
