#!/usr/bin/env python3
"""Run MXNet 1.9's own Gluon examples, unmodified, on mxnext, with short settings given
through their own command-line flags, and print a pass/fail table.

The examples are not part of this repository: they are copied from an MXNet checkout
(default /work/.mirror/apache+mxnet/repo at v1.9.x; ``--from DIR`` for a plain folder
holding ``example/gluon``). Each runs in a folder of its own under ``--work`` with
``HOME`` and ``MXNET_HOME`` pointing inside it, next to small datasets written here in
their standard formats (MNIST idx, CIFAR-10 binary batches, WikiText token files, JPEG
folders), so nothing is downloaded. Packages an example needs beyond mxnext (Pillow,
matplotlib, OpenCV ...) come from the interpreter or ``--site DIR`` (added to
PYTHONPATH); an example whose packages are missing is reported as skipped.

    python tools/gluon-examples.py [--python .venv/bin/python] [--only mnist ...]

Not part of the test suite (it needs the MXNet sources and takes minutes).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shlex
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/apache+mxnet/repo")


# -- datasets in their standard formats ----------------------------------------------------
def mnist_idx(folder: Path, train: int = 256, test: int = 64) -> None:
    """Gzipped MNIST idx files: digit d is a bright band at rows 2+2d (learnable)."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, n in (("train", train), ("t10k", test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = (rng.random((n, 28, 28)) * 60).astype(np.uint8)
        for i, d in enumerate(labels):
            images[i, 2 + 2 * d:4 + 2 * d] = 255
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + labels.tobytes())


def cifar10_bin(folder: Path, per_batch: int = 32) -> None:
    """CIFAR-10 binary batches (a label byte, then 3x32x32 channel-major pixels)."""
    rng = np.random.default_rng(1)
    folder = folder / "cifar-10-batches-bin"
    folder.mkdir(parents=True, exist_ok=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        labels = rng.integers(0, 10, per_batch).astype(np.uint8)
        pixels = rng.integers(0, 256, (per_batch, 3072)).astype(np.uint8)
        (folder / f"{name}.bin").write_bytes(np.column_stack([labels, pixels]).tobytes())


def wikitext(folder: Path) -> None:
    """wiki.{train,valid,test}.tokens: WikiText's layout (headings, blank lines, one
    paragraph of space-separated tokens a line)."""
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(50)]
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in (("train", 120), ("valid", 30), ("test", 30)):
        body = [" ", " = Title = ", " "]
        body += [" " + " ".join(rng.choice(words, rng.integers(5, 15))) + " . "
                 for _ in range(lines)]
        (folder / f"wiki.{name}.tokens").write_text("\n".join(body) + "\n")


def jpegs(folder: Path, count: int, size=(300, 260)) -> None:
    """``count`` JPEG files of ``size`` (w, h) with smooth random content (needs Pillow)."""
    from PIL import Image
    rng = np.random.default_rng(len(str(folder)) + count)
    folder.mkdir(parents=True, exist_ok=True)
    ys, xs = np.mgrid[0:size[1], 0:size[0]]
    for i in range(count):
        f = rng.random(3) * 0.1
        img = np.stack([127 + 120 * np.sin(f[c] * xs + f[(c + 1) % 3] * ys) for c in range(3)],
                       axis=-1)
        Image.fromarray(img.astype(np.uint8)).save(folder / f"{i:03d}.jpg")


def cub200(folder: Path, per_class: int = 2) -> None:
    """CUB_200_2011's layout: images/<class>/<file>.jpg listed in images.txt, with
    image_class_labels.txt (1-based) and bounding_boxes.txt (x y w h) beside it."""
    from PIL import Image
    rng = np.random.default_rng(5)
    lines = {"images.txt": [], "image_class_labels.txt": [], "bounding_boxes.txt": []}
    for cls in range(1, 201):
        (folder / "images" / f"{cls:03d}.c").mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            n = len(lines["images.txt"]) + 1
            rel = f"{cls:03d}.c/{k}.jpg"
            Image.fromarray(rng.integers(0, 256, (40, 48, 3)).astype(np.uint8)).save(
                folder / "images" / rel)
            lines["images.txt"].append(f"{n} {rel}")
            lines["image_class_labels.txt"].append(f"{n} {cls}")
            lines["bounding_boxes.txt"].append(f"{n} 2.0 3.0 40.0 30.0")
    for name, rows in lines.items():
        (folder / name).write_text("\n".join(rows) + "\n")


def house_csv(folder: Path, train: int = 60, test: int = 20) -> None:
    """Kaggle house-prices train.csv/test.csv: Id, features from MSSubClass to
    SaleCondition (numeric and categorical, some missing), SalePrice in train only."""
    rng = np.random.default_rng(4)
    for name, n, first in (("train", train, 1), ("test", test, train + 1)):
        header = ["Id", "MSSubClass", "MSZoning", "LotArea", "YearBuilt", "SaleCondition"]
        header += ["SalePrice"] if name == "train" else []
        rows = [",".join(header)]
        for i in range(n):
            area = int(rng.integers(2000, 20000))
            row = [first + i, int(rng.choice([20, 60, 90])), rng.choice(["RL", "RM", ""]),
                   area, int(rng.integers(1900, 2010)), rng.choice(["Normal", "Abnorml"])]
            row += [int(50000 + 10 * area)] if name == "train" else []
            rows.append(",".join(map(str, row)))
        (folder / f"{name}.csv").write_text("\n".join(rows) + "\n")


# -- the examples --------------------------------------------------------------------------
def _data_mnist(run: Path, home: Path) -> None:
    mnist_idx(run / "data")


def cifar10_rec(folder: Path, count: int = 48) -> None:
    """data/cifar/{train,test}.rec as MXNet's get_cifar10 leaves them: RecordIO records
    of an IRHeader (the label) and a PNG-encoded 32x32 image (needs Pillow)."""
    import io
    from PIL import Image
    import mxnext as mx
    rng = np.random.default_rng(3)
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        rec = mx.recordio.MXRecordIO(str(folder / f"{split}.rec"), "w")
        for i in range(count):
            buf = io.BytesIO()
            Image.fromarray(rng.integers(0, 256, (32, 32, 3)).astype(np.uint8)).save(buf, "PNG")
            rec.write(mx.recordio.pack((0, float(rng.integers(0, 10)), i, 0), buf.getvalue()))
        rec.close()
        (folder / f"{split}.lst").write_text("")


def _data_cifar(run: Path, home: Path) -> None:
    cifar10_bin(home / ".mxnet" / "datasets" / "cifar10")
    cifar10_rec(run / "data" / "cifar")


def _data_bsds(run: Path, home: Path) -> None:
    images = home / ".mxnet" / "datasets" / "BSDS500" / "images"
    jpegs(images / "train", 4)
    jpegs(images / "test", 2)


# (name, script under example/gluon, flags, data writer, modules it imports besides mxnet)
IC = "image_classification.py"
IC_SHORT = ["--epochs", "1", "--batch-size", "16", "-j", "0", "--log-interval", "4"]
EXAMPLES = [
    ("mnist", "mnist/mnist.py", ["--epochs", "1", "--log-interval", "1"], _data_mnist, []),
    ("ic-mnist-resnet18-hybrid-local", IC,
     ["--dataset", "mnist", "--model", "resnet18_v1", "--mode", "hybrid", "--kvstore", "local",
      *IC_SHORT], _data_mnist, []),
    ("ic-mnist-mobilenet-imperative-device", IC,
     ["--dataset", "mnist", "--model", "mobilenet0.25", "--mode", "imperative", "--kvstore",
      "device", *IC_SHORT], _data_mnist, []),
    ("ic-cifar10-resnet18-hybrid-device", IC,
     ["--dataset", "cifar10", "--model", "resnet18_v1", "--mode", "hybrid", *IC_SHORT],
     _data_cifar, ["PIL"]),
    ("word_language_model", "word_language_model/train.py",
     ["--epochs", "1", "--emsize", "16", "--nhid", "16", "--bptt", "8", "--batch_size", "4",
      "--log-interval", "10"], lambda run, home: wikitext(run / "data"), []),
    ("word_language_model-hybrid", "word_language_model/train.py",
     ["--epochs", "1", "--emsize", "16", "--nhid", "16", "--bptt", "8", "--batch_size", "4",
      "--model", "gru", "--tied", "--hybridize", "--static-alloc", "--static-shape"],
     lambda run, home: wikitext(run / "data"), []),
    ("super_resolution", "super_resolution/super_resolution.py",
     ["--epochs", "1", "--batch_size", "2", "--test_batch_size", "2"], _data_bsds, ["PIL"]),
    ("dc_gan", "dc_gan/dcgan.py",
     ["--dataset", "mnist", "--batch-size", "16", "--nz", "8", "--ngf", "8", "--ndf", "8",
      "--nepoch", "1", "--niter", "10", "--inception_score", ""], _data_mnist,
     ["matplotlib", "cv2"]),
    ("lstm_crf", "lstm_crf/lstm_crf.py", [], None, []),
    ("sn_gan", "sn_gan/train.py", ["--epochs", "1", "--batch-size", "16", "--z-dim", "8"],
     _data_cifar, ["imageio"]),
    ("embedding_learning", "embedding_learning/train.py",
     ["--epochs", "1", "--batch-size", "4", "--batch-k", "2", "--model", "resnet18_v2",
      "--embed-dim", "8", "--log-interval", "50"],
     lambda run, home: cub200(run / "data" / "CUB_200_2011"), ["PIL", "bottleneck"]),
    ("actor_critic", "actor_critic/actor_critic.py", [], None, ["gym"]),
    ("house_prices", "house_prices/kaggle_k_fold_cross_validation.py", [],
     lambda run, home: house_csv(run), ["pandas"]),
]


def copy_examples(source: str | None, rev: str, dest: Path) -> Path:
    """example/gluon from ``source`` (a folder) or the mirror at ``rev``, into ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    if source:
        shutil.copytree(Path(source) / "example" / "gluon", dest)
        return dest
    listing = subprocess.run(["git", "-C", str(MIRROR), "ls-tree", "-r", rev, "example/gluon"],
                             capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        blob = subprocess.run(["git", "-C", str(MIRROR), "cat-file", "blob", meta.split()[2]],
                              capture_output=True)
        if blob.returncode:         # a blob the mirror lacks (tree_lstm's dataset.cPickle)
            continue
        target = dest / Path(path).relative_to("example/gluon")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return dest


def missing_modules(python: str, modules: list[str], env: dict) -> list[str]:
    return [m for m in modules if subprocess.run([python, "-c", f"import {m}"], env=env,
                                                 capture_output=True).returncode]


def run_one(python, examples, work, spec, timeout, site):
    name, script, flags, data, needs = spec
    run_root = work / name
    if run_root.exists():
        shutil.rmtree(run_root)
    shutil.copytree(examples, run_root / "gluon")
    home = run_root / "home"
    home.mkdir()
    script_path = run_root / "gluon" / script
    env = dict(os.environ, HOME=str(home), MXNET_HOME=str(home / ".mxnet"), MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")])))
    lacking = missing_modules(python, needs, env)
    if lacking:
        return "skip", f"needs {', '.join(lacking)}", 0.0
    if data is not None:
        data(script_path.parent, home)
    start = time.time()
    try:
        out = subprocess.run([python, "-m", "mxnext", "run", script_path.name, *flags],
                             cwd=script_path.parent, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return "FAIL", f"timed out after {timeout}s", time.time() - start
    (run_root / "output.txt").write_text(out.stdout + out.stderr)
    if out.returncode:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return "FAIL", last[:120], time.time() - start
    return "pass", "", time.time() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", help="a folder holding example/gluon")
    ap.add_argument("--rev", default="v1.9.x", help="the mirror's revision (without --from)")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--work", default="/tmp/mxnext-gluon-examples")
    ap.add_argument("--site", help="a folder of extra packages the examples import")
    ap.add_argument("--only", nargs="*", help="example names to run (default: all)")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    if args.site:           # the data writers use the examples' packages (Pillow)
        sys.path[:0] = args.site.split(os.pathsep)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    examples = copy_examples(args.source, args.rev, work / "src" / "gluon")
    chosen = [e for e in EXAMPLES if not args.only or e[0] in args.only]
    rows = []
    for spec in chosen:
        result, why, secs = run_one(args.python, examples, work, spec, args.timeout, args.site)
        rows.append((spec[0], " ".join(map(shlex.quote, spec[2])) or "(none)", result, f"{secs:.0f}s", why))
        print(f"{spec[0]}: {result} {why}", file=sys.stderr, flush=True)
    widths = [max(len(r[i]) for r in rows + [("example", "flags", "result", "time", "")])
              for i in range(4)]
    print(" | ".join(h.ljust(w) for h, w in zip(("example", "flags", "result", "time"),
                                                  widths)) + " | note")
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)) + " | " + row[4])
    print(f"outputs under {work}")
    return 0 if all(r[2] != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
