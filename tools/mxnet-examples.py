#!/usr/bin/env python3
"""Run MXNet 1.9's own example scripts (outside example/gluon, which
``tools/gluon-examples.py`` covers) and ``tests/python/train`` scripts, unmodified, on
mxnext or on MXNet itself, with short settings through their own flags, and print a table
of exit codes and each run's last metric line.

The scripts are copied from an MXNet checkout (default: the mirror at 1.9.1; ``--from
DIR`` for a folder holding ``example/`` and ``tests/``). Each runs in its own folder
under ``--work``, beside small stand-ins written here in the formats the scripts read
(MNIST idx files raw and gzipped, libsvm text, MovieLens ``::`` ratings, word text,
``mnist.npz``, captcha fonts, silhouette images, a MAT file, polarity and NER text, a
VOC folder, images; model weights made by a helper run on the side under test), so nothing
is downloaded. The ctc example needs the ``captcha`` package on both sides (``pip install
--target DIR captcha``, then run this tool with ``PYTHONPATH=DIR``). ``--mxnet`` runs the
interpreter as plain ``python`` (a real MXNet); otherwise as ``python -m mxnext run``. A
run still going at ``--timeout`` counts as running (exit 124); compare its metrics with
MXNet's.

    python tools/mxnet-examples.py --python .venv/bin/python [--only custom_softmax ...]
    python tools/mxnet-examples.py --python /path/to/mxnet/python --mxnet

Not part of the test suite (it needs the MXNet sources and takes minutes). The results
of a sweep are in docs/user-guide.md ("MXNet's example scripts").
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/apache+mxnet/repo")
RUN = [sys.executable]  # how main runs a script on the side under test (for data makers)


# -- stand-in data --------------------------------------------------------------------------
def mnist(folder: Path, train: int = 2000) -> None:
    """MNIST idx files in ``folder/data`` (raw) and ``folder`` (gzipped), each digit a
    fixed random pattern plus noise; ``mnist.npz`` (X, Y, X_test, Y_test) beside them."""
    rng = np.random.default_rng(0)
    protos = rng.random((10, 28, 28)) > 0.7
    (folder / "data").mkdir(parents=True, exist_ok=True)
    arrays = {}
    for prefix, n in (("train", train), ("t10k", train // 4)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = (protos[labels] * 200 + rng.random((n, 28, 28)) * 55).astype(np.uint8)
        arrays[prefix] = images.reshape(n, -1).astype(np.float32), labels.reshape(-1, 1)
        for name, blob in (("labels-idx1-ubyte", struct.pack(">II", 2049, n) + labels.tobytes()),
                           ("images-idx3-ubyte",
                            struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())):
            (folder / "data" / f"{prefix}-{name}").write_bytes(blob)
            for where in (folder, folder / "data"):
                with gzip.open(where / f"{prefix}-{name}.gz", "wb") as f:
                    f.write(blob)
    np.savez(folder / "mnist.npz", X=arrays["train"][0], Y=arrays["train"][1],
             X_test=arrays["t10k"][0], Y_test=arrays["t10k"][1])


def libsvm(path: Path, rows: int, max_index: int) -> None:
    """A binary-labelled libsvm file whose label shows in one feature (learnable)."""
    rng = np.random.default_rng(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for _ in range(rows):
        y = int(rng.integers(2))
        idx = np.unique(np.concatenate([rng.integers(0, max_index, 5), [y * 7 + 3]]))
        lines.append(f"{y} " + " ".join(f"{i}:{rng.random():.3f}" for i in idx))
    path.write_text("\n".join(lines) + "\n")


def text(folder: Path) -> None:
    """Word files (sherlockholmes.*.txt, text8) and MovieLens-10M style ratings."""
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(200)]

    def line(n):
        return " ".join(words[j % 200] for j in rng.zipf(1.5, n))
    data = folder / "data"
    (data / "ml-10M100K").mkdir(parents=True, exist_ok=True)
    train = [line(int(rng.integers(3, 25))) for _ in range(600)]
    for part, lines in (("train", train), ("valid", train[:100]), ("test", train[:100])):
        (data / f"sherlockholmes.{part}.txt").write_text("\n".join(lines) + "\n")
    (data / "text8").write_text(" " + line(60000))
    for part, n in (("train", 5000), ("test", 1000)):
        users, items = rng.integers(1, 300, n), rng.integers(1, 500, n)
        (data / "ml-10M100K" / f"r1.{part}").write_text(
            "".join(f"{u}::{i}::{(u + i) % 5 + 1}::0\n" for u, i in zip(users, items)))


def sparse_data(folder: Path) -> None:
    libsvm(folder / "data" / "avazu-app", 4000, 1000000)
    libsvm(folder / "data" / "avazu-app.t", 1000, 1000000)
    libsvm(folder / "tr.libsvm", 4000, 1000)


def cifar_placeholders(folder: Path) -> None:
    """Empty .rec files: train_cifar10.py fetches them first, --benchmark never reads them."""
    mnist(folder)
    for name in ("cifar10_train.rec", "cifar10_val.rec"):
        (folder / "data" / name).write_bytes(b"")


def movielens_here(folder: Path) -> None:
    """MovieLens ratings in ``./ml-10M100K`` beside an empty ``ml-10m.zip`` (the
    model-parallel example downloads only when the zip is missing)."""
    text(folder)
    shutil.move(folder / "data" / "ml-10M100K", folder / "ml-10M100K")
    (folder / "ml-10m.zip").write_bytes(b"")


def mxboard(folder: Path) -> None:
    """MNIST plus a stand-in ``mxboard`` module (the package is not on the index): its
    SummaryWriter appends each scalar to ``tblog.txt``."""
    mnist(folder, 500)
    (folder / "mxboard.py").write_text(
        "class SummaryWriter:\n"
        "    def __init__(self, logdir):\n"
        "        self.path = 'tblog.txt'\n"
        "    def add_scalar(self, tag, value, step):\n"
        "        with open(self.path, 'a') as f:\n"
        "            f.write(f'{tag} {step} {value}\\n')\n")


def font(folder: Path) -> None:
    """``font.ttf``: the first TrueType font the system has (for the captcha images)."""
    shutil.copy(next(Path("/usr/share/fonts").rglob("*.ttf")), folder / "font.ttf")


def silhouettes(folder: Path) -> None:
    """Caltech-101-silhouette stand-ins: 32x32 grey PGM images (a filled disc or square
    per image) under ``images/`` and ``test_images/``, and the 28x28 ``.mat`` file (MAT
    version 4: X of shape (n, 784), Y of shape (n, 1)) that convert_data.py reads."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[:32, :32]
    for sub, n in (("images", 96), ("test_images", 3)):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            cy, cx, r = rng.integers(10, 22, 2).tolist() + [int(rng.integers(4, 10))]
            disc = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
            square = (abs(yy - cy) < r) & (abs(xx - cx) < r)
            img = np.where(disc if i % 2 else square, 255, 0).astype(np.uint8)
            (folder / sub / f"img{i}.pgm").write_bytes(b"P5 32 32 255\n" + img.tobytes())
    mat = folder / "datasets" / "caltech101" / "data" / "images32x32"
    mat.mkdir(parents=True, exist_ok=True)
    x = (rng.random((40, 784)) > 0.5).astype(np.float64)
    y = rng.integers(1, 102, (40, 1)).astype(np.float64)
    with open(mat / "caltech101_silhouettes_28.mat", "wb") as f:
        for name, arr in ((b"X", x), (b"Y", y)):
            f.write(struct.pack("<5i", 0, arr.shape[0], arr.shape[1], 0, len(name) + 1))
            f.write(name + b"\0" + arr.tobytes(order="F"))


# -- stand-in data: text CNNs, NCF, NER ------------------------------------------------------
def sentences(n: int, words: list, seed: int) -> list:
    """``n`` short sentences over ``words``; the label is whether word 0 or word 1 leads."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    return [(int(k), [words[k]] + list(rng.choice(words[2:], int(rng.integers(4, 12)))))
            for k in labels]


def polarity(folder: Path) -> None:
    """rt-polarity.pos/.neg (1,200 sentences) and an empty stand-in for the ``word2vec``
    package, which data_helpers imports but never calls without --pretrained-embedding."""
    data = folder / "data" / "rt-polaritydata"
    data.mkdir(parents=True)
    pairs = sentences(1200, ["good", "bad"] + [f"w{i}" for i in range(150)], 3)
    for label, name in ((0, "rt-polarity.pos"), (1, "rt-polarity.neg")):
        (data / name).write_text("".join(" ".join(w) + " .\n" for k, w in pairs if k == label))
    (folder / "word2vec.py").write_text('"""Stand-in: the script never calls it."""\n')


def chinese_text(folder: Path) -> None:
    """data/pos.txt and neg.txt (UTF-8 characters; data/neg too, which the script checks
    before it would download) and the ``word2vec`` stand-in."""
    data = folder / "data"
    data.mkdir()
    chars = [chr(0x4E00 + i) for i in range(120)]
    pairs = sentences(1200, chars, 4)
    for label, name in ((1, "pos.txt"), (0, "neg.txt")):
        (data / name).write_text("".join("".join(w) + "\n" for k, w in pairs if k == label),
                                 encoding="utf-8")
    (data / "neg").write_text("")
    (folder / "word2vec.py").write_text('"""Stand-in: the script never calls it."""\n')


def ncf_data(folder: Path, users: int = 200, items: int = 300) -> None:
    """data/ml-20m as convert.py writes it (tab-separated): train ratings, one held-out
    item per user and 99 negatives each; user u likes items near 3u (learnable)."""
    rng = np.random.default_rng(5)
    out = folder / "data" / "ml-20m"
    out.mkdir(parents=True)
    train, test, negs = [], [], []
    for u in range(users):
        liked = np.unique((3 * u + rng.integers(-15, 15, 20)) % items)
        train += [f"{u}\t{i}\t1\n" for i in liked[:-1]]
        test.append(f"{u}\t{liked[-1]}\t1\n")
        others = np.setdiff1d(np.arange(items), liked)
        negs.append("\t".join(map(str, rng.choice(others, 99))) + "\n")
    for name, lines in (("train-ratings.csv", train), ("test-ratings.csv", test),
                        ("test-negative.csv", negs)):
        (out / name).write_text("".join(lines))


NCF_TRAIN = ("--batch-size 256 --eval-batch-size 100 --layers [32,16,8] --factor-size-gmf 8 "
             "--learning-rate 0.01 --log-interval 10 --workers 0 --epoch 4")


def ncf_model(folder: Path) -> None:
    """ncf_data and the model train.py saves from it (model/ml-20m/neumf-0003), trained on
    the side under test."""
    ncf_data(folder)
    subprocess.run(RUN + ["train.py", *NCF_TRAIN.split()], cwd=folder, check=True,
                   capture_output=True)


def ner_data(folder: Path) -> None:
    """../data/ner_dataset.csv (Kaggle's GMB layout, ISO-8859-1; metrics.py reads ../data
    whatever --data-dir says), pickled to ner_data.pkl by the example's own preprocess.py
    run by the interpreter under test (it needs pandas)."""
    rng = np.random.default_rng(6)
    names, verbs = ["Paris", "London", "Obama", "Merkel"], ["visits", "likes", "sees"]
    rows = ["Sentence #,Word,POS,Tag"]
    for s in range(400):
        words = [(str(rng.choice(names)), "NNP", "B-geo")] + [
            (str(rng.choice(verbs + ["the", "a", "city"])), "VB", "O")
            for _ in range(int(rng.integers(2, 4)) * 2)]
        rows += [(f"Sentence: {s + 1}" if j == 0 else "") + f",{w},{p},{t}"
                 for j, (w, p, t) in enumerate(words)]
    data = folder.parent / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    (data / "ner_dataset.csv").write_text("\n".join(rows) + "\n", encoding="ISO-8859-1")
    subprocess.run(RUN + ["preprocess.py"], cwd=folder, check=True, capture_output=True)


def bmp(path: Path, img) -> None:
    """A 24-bit BMP of ``img`` (height, width, 3; BGR; width a multiple of 4)."""
    rows = img[::-1].tobytes()  # bottom-up rows, no padding needed
    h, w = img.shape[:2]
    path.write_bytes(struct.pack("<2sIHHI", b"BM", 54 + len(rows), 0, 0, 54) + struct.pack(
        "<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(rows), 2835, 2835, 0, 0) + rows)


RCNN_NET = ("--network resnet50 --img-short-side 64 --img-long-side 96 --rpn-anchor-scales (2,4) "
            "--rpn-pre-nms-topk 300 --rpn-post-nms-topk 50 --rpn-min-size 4")
RCNN_FLAGS = RCNN_NET + " --epochs 1 --rpn-batch-rois 32 --rcnn-batch-rois 16 --log-interval 2"
RCNN_PARAMS = '''"""Stand-in for the ImageNet ResNet-50: He-initialised weights where train.py's
--pretrained looks (model/resnet-50-0000.params), made on the side under test."""
import os
import mxnet as mx
from train import parse_args, get_resnet50_train
args = parse_args()
sym = get_resnet50_train(args)
known = dict(data=(1, 3, args.img_long_side, args.img_long_side), im_info=(1, 3),
             gt_boxes=(1, 100, 5))
arg_shapes, _, aux_shapes = sym.infer_shape_partial(**known)
init = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=1)
params = {}
for kind, names, shapes in (("arg", sym.list_arguments(), arg_shapes),
                            ("aux", sym.list_auxiliary_states(), aux_shapes)):
    for name, shape in zip(names, shapes):
        head = name.startswith(("rpn_", "cls_", "bbox_"))  # initialize_frcnn's, or labels
        if name not in known and name != "label" and not head:
            params[kind + ":" + name] = arr = mx.nd.zeros(shape)
            if kind == "arg":
                init(mx.init.InitDesc(name), arr)
            elif name.endswith("moving_var"):
                arr[:] = 1
os.makedirs("model", exist_ok=True)
mx.nd.save("model/resnet-50-0000.params", params)
'''


def voc(folder: Path) -> None:
    """data/VOCdevkit/VOC2007 trainval and test (the same 8 images of 80x96, one or two
    boxes of a class each; BMP bytes under .jpg names, which cv2.imread reads by content)
    and random ResNet-50 backbone weights made by a helper run on the side under test."""
    rng = np.random.default_rng(7)
    root = folder / "data" / "VOCdevkit" / "VOC2007"
    for sub in ("ImageSets/Main", "Annotations", "JPEGImages"):
        (root / sub).mkdir(parents=True)
    h, w = 80, 96
    ids = [f"{i:06d}" for i in range(8)]
    for split in ("trainval", "test"):
        (root / "ImageSets" / "Main" / f"{split}.txt").write_text("\n".join(ids) + "\n")
    for index in ids:
        img = (rng.random((h, w, 3)) * 60).astype(np.uint8)
        objs = ""
        for _ in range(int(rng.integers(1, 3))):
            x1, y1 = int(rng.integers(1, w - 40)), int(rng.integers(1, h - 40))
            x2, y2 = x1 + int(rng.integers(24, 38)), y1 + int(rng.integers(24, 38))
            cls = ["cat", "dog"][int(rng.integers(2))]
            img[y1:y2, x1:x2] = (200, 40, 40) if cls == "cat" else (40, 200, 40)
            objs += (f"<object><name>{cls}</name><difficult>0</difficult><bndbox><xmin>{x1}"
                     f"</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox>"
                     "</object>")
        (root / "Annotations" / f"{index}.xml").write_text(
            f"<annotation><size><width>{w}</width><height>{h}</height></size>{objs}</annotation>")
        bmp(root / "JPEGImages" / f"{index}.jpg", img)
    (folder / "stand_in_params.py").write_text(RCNN_PARAMS)
    subprocess.run(RUN + ["stand_in_params.py", *RCNN_FLAGS.split()], cwd=folder, check=True,
                   capture_output=True)


def voc_model(folder: Path) -> None:
    """voc and the model train.py saves from it (model/resnet50-0001), on the side under test."""
    voc(folder)
    subprocess.run(RUN + ["train.py", *RCNN_FLAGS.split()], cwd=folder, check=True,
                   capture_output=True)


VGG19_PARAMS = '''"""Stand-in for the ImageNet VGG-19 weights: He-initialised, made on the side
under test, where model_vgg19.get_executor reads them (model/vgg19.params)."""
import os
import mxnet as mx
import model_vgg19
out = mx.sym.Group(list(model_vgg19.get_symbol()))
shapes = out.infer_shape(data=(1, 3, 32, 32))[0]
init = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
params = {}
for name, shape in zip(out.list_arguments(), shapes):
    if name != "data":
        params["arg:" + name] = mx.nd.zeros(shape)
        init(mx.init.InitDesc(name), params["arg:" + name])
os.makedirs("model", exist_ok=True)
mx.nd.save("model/vgg19.params", params)
'''


def style_images(folder: Path) -> None:
    """input/content.bmp (stripes) and input/style.bmp (checks), output/ and random VGG-19
    weights (a helper run on the side under test)."""
    yy, xx = np.mgrid[:48, :64]
    (folder / "input").mkdir()
    (folder / "output").mkdir()
    for name, pattern in (("content", (xx // 8) % 2), ("style", ((xx // 6) + (yy // 6)) % 2)):
        img = np.stack([pattern * 200, 255 - pattern * 200, yy * 4], -1).astype(np.uint8)
        bmp(folder / "input" / f"{name}.bmp", img)
    (folder / "stand_in_params.py").write_text(VGG19_PARAMS)
    subprocess.run(RUN + ["stand_in_params.py"], cwd=folder, check=True, capture_output=True)


# (name, script, flags, data)
EXAMPLES = [
    ("weighted_logistic_regression", "example/numpy-ops/weighted_logistic_regression.py", "",
     None),
    ("custom_softmax", "example/numpy-ops/custom_softmax.py", "", mnist),
    ("custom_sparse_sqr", "example/numpy-ops/custom_sparse_sqr.py", "", None),
    ("profiler_ndarray", "example/profiler/profiler_ndarray.py", "", None),
    ("toy_nce", "example/nce-loss/toy_nce.py", "", None),
    ("wordvec", "example/nce-loss/wordvec.py", "", text),
    ("lstm_word", "example/nce-loss/lstm_word.py", "", text),
    ("svrg_api_train", "example/svrg_module/api_usage_example/example_api_train.py", "-e 3",
     None),
    ("svrg_inference", "example/svrg_module/api_usage_example/example_inference.py", "-e 3",
     None),
    ("mnist_mlp", "example/module/mnist_mlp.py", "", mnist),
    ("binary_rbm_module", "example/restricted-boltzmann-machine/binary_rbm_module.py",
     "--num-epoch 2 --k 5 --num-hidden 64 --ais-num-batch 2 --ais-intermediate-steps 3 "
     "--ais-burn-in-steps 3 --no-cuda", mnist),
    ("train_mnist_mlp", "example/image-classification/train_mnist.py",
     "--num-epochs 1 --kv-store local", mnist),
    ("train_mnist_lenet", "example/image-classification/train_mnist.py",
     "--num-epochs 1 --kv-store local --network lenet --batch-size 64", mnist),
    ("train_cifar10_benchmark", "example/image-classification/train_cifar10.py",
     "--benchmark 1 --num-epochs 1 --network resnet --num-layers 8 --batch-size 32 "
     "--num-examples 320 --kv-store local --disp-batches 2", cifar_placeholders),
    ("sd_mnist", "example/stochastic-depth/sd_mnist.py", "", mnist),
    ("dsd_mlp", "example/dsd/mlp.py",
     "--pruning_switch_epoch 1,2 --weight_sparsity 0,50 --bias_sparsity 0,50", mnist),
    ("lstm_bucketing", "example/rnn/bucketing/lstm_bucketing.py",
     "--num-layers 1 --num-hidden 32 --num-embed 32 --num-epochs 1 --kv-store local "
     "--disp-batches 5", text),
    ("linear_classification", "example/sparse/linear_classification/train.py",
     "--num-epoch 2 --batch-size 256", sparse_data),
    ("factorization_machine", "example/sparse/factorization_machine/train.py",
     "--data-train tr.libsvm --data-test tr.libsvm --input-size 1000 --batch-size 100 "
     "--num-epoch 2", sparse_data),
    ("matrix_factorization", "example/sparse/matrix_factorization/train.py",
     "--num-epoch 1 --factor-size 16 --log-interval 10", text),
    ("train_test_bucketing", "tests/python/train/test_bucketing.py", "", None),
    ("train_test_sparse_fm", "tests/python/train/test_sparse_fm.py", "", None),
    ("train_test_conv", "tests/python/train/test_conv.py", "", mnist),
    ("train_test_autograd", "tests/python/train/test_autograd.py", "", mnist),
    ("train_test_mlp", "tests/python/train/test_mlp.py", "",
     lambda folder: mnist(folder, 40000)),
    ("svm_mnist", "example/svm_mnist/svm_mnist.py", "", mnist),
    ("capsnet", "example/capsnet/capsulenet.py",
     "--devices cpu --num_epoch 1 --batch_size 50 --num_routing 2", mxboard),
    ("ctc_lstm_ocr_train", "example/ctc/lstm_ocr_train.py",
     "font.ttf --loss ctc --cpu 1 --num_proc 1 --prefix ocr", font),
    ("vaegan_convert_data", "example/vae-gan/convert_data.py", "--invert", silhouettes),
    ("vaegan_train_test", "example/vae-gan/vaegan_mxnet.py",
     "--train --test --use_cpu --num_epoch 1 --batch_size 16 --nef 8 --ndf 8 --ngf 8 --Z 16 "
     "--training_data_path images --testing_data_path test_images --show_after_every 2 "
     "--save_after_every 1 --visualize_after_every 1 --save_embedding "
     "--pretrained_encoder_path checkpoints32x32_sigmoid/caltech_E-0000.params "
     "--pretrained_generator_path checkpoints32x32_sigmoid/caltech_G-0000.params",
     silhouettes),
    ("dec", "example/deep-embedded-clustering/dec.py", "", mnist),
    ("model_parallel_mf", "example/model-parallel/matrix_factorization/train.py",
     "--num-epoch 1 --num-gpus 1 --factor-size 16 --print-every 10", movielens_here),
    # text CNNs, NCF, NER, Faster R-CNN, neural style
    ("text_cnn", "example/cnn_text_classification/text_cnn.py",
     "--num-embed 16 --num-epochs 2 --batch-size 50 --disp-batches 2", polarity),
    ("chinese_text_cnn", "example/cnn_chinese_text_classification/text_cnn.py",
     "--num-embed 16 --num-epochs 2 --batch-size 50 --disp-batches 2", chinese_text),
    ("ncf_train", "example/neural_collaborative_filtering/train.py", NCF_TRAIN, ncf_data),
    ("ncf_eval", "example/neural_collaborative_filtering/ncf.py",
     "--epoch 3 --batch-size 100", ncf_model),
    ("ncf_calibrate", "example/neural_collaborative_filtering/ncf.py",
     "--epoch 3 --batch-size 100 --calibration --num-calib-batches 2", ncf_model),
    ("ner", "example/named_entity_recognition/src/ner.py",
     "--batch-size 16 --char-embed 8 --char-filters 4 "
     "--word-embed 16 --word-filters 8 --lstm-state-size 16 --lr 0.01 --num-epochs 6", ner_data),
    ("rcnn_train", "example/rcnn/train.py", RCNN_FLAGS, voc),
    ("rcnn_test", "example/rcnn/test.py",
     RCNN_NET + " --imageset 2007_test --params model/resnet50-0001.params", voc_model),
    ("rcnn_demo", "example/rcnn/demo.py", RCNN_NET + " --params model/resnet50-0001.params "
     "--image data/VOCdevkit/VOC2007/JPEGImages/000000.jpg --vis-thresh 0.1", voc_model),
    ("neural_style", "example/neural-style/nstyle.py",
     "--gpu -1 --content-image input/content.bmp --style-image input/style.bmp "
     "--max-long-edge 64 --max-num-epochs 20 --save-epochs 1000", style_images),
]


# -- running ------------------------------------------------------------------------------
def copy_sources(source, rev, dest: Path) -> None:
    """``example/`` and ``tests/python/train`` from ``source`` or the mirror at ``rev``
    (files one by one: the mirror lacks some large binaries an archive would need)."""
    if source:
        for part in ("example", "tests/python/train"):
            shutil.copytree(Path(source) / part, dest / part, dirs_exist_ok=True)
        return
    git = ["git", f"--git-dir={MIRROR}"]
    names = subprocess.run(git + ["ls-tree", "-r", "--name-only", rev, "example",
                                  "tests/python/train"], capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        if name.endswith((".py", ".txt", ".json", ".csv")):
            blob = subprocess.run(git + ["show", f"{rev}:{name}"], capture_output=True)
            if blob.returncode == 0:
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                (dest / name).write_bytes(blob.stdout)


def run_one(cmd, sources: Path, work: Path, spec, timeout):
    name, script, flags, data = spec
    folder = work / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(sources / Path(script).parent, folder)
    if data is not None:
        try:
            data(folder)
        except subprocess.CalledProcessError as e:  # a helper run on the side under test
            return e.returncode, 0.0, f"stand-in data: {e.stderr.decode().strip()[-80:]}"
    start = time.time()
    try:
        out = subprocess.run(cmd + [Path(script).name, *flags.split()], cwd=folder,
                             capture_output=True, text=True, timeout=timeout)
        rc, log = out.returncode, out.stdout + out.stderr
    except subprocess.TimeoutExpired as e:
        rc, log = 124, (e.stdout or b"").decode() + (e.stderr or b"").decode()
    (folder / "run.log").write_text(log)
    metric = [ln for ln in log.splitlines()
              if any(k in ln.lower() for k in ("accuracy", "loss", "perplexity", "auc",
                                               "mse", "nll", "likelihood", "metric:", "ndcg",
                                               "f1", "relative change", "mean ap"))]
    last = metric[-1] if metric else " ".join(log.split())
    return rc, time.time() - start, last[-100:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", help="a folder holding example/ and tests/")
    ap.add_argument("--rev", default="1.9.1", help="the mirror's revision (without --from)")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--mxnet", action="store_true", help="run as plain python (real MXNet)")
    ap.add_argument("--work", default="/tmp/mxnet-examples")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--only", nargs="*", help="names from the table")
    args = ap.parse_args()
    work = Path(args.work) / ("mxnet" if args.mxnet else "mxnext")
    sources = Path(args.work) / "sources"
    if not sources.exists():
        copy_sources(args.source, args.rev, sources)
    cmd = [args.python] if args.mxnet else [args.python, "-m", "mxnext", "run"]
    RUN[:] = cmd
    failed = 0
    for spec in EXAMPLES:
        if args.only and spec[0] not in args.only:
            continue
        rc, took, metric = run_one(cmd, sources, work, spec, args.timeout)
        failed += rc not in (0, 124)
        print(f"{spec[0]:30s} rc={rc:<4d} {took:5.0f}s  {metric}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
