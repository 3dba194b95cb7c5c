"""A hybridized Gluon CNN learns real handwritten digits.

Data: scikit-learn's bundled digits (1,797 scans of 8x8 pixels, no download); 360 are held
out for validation. ``gluon.data.DataLoader`` batches and shuffles them, ``gluon.Trainer``
updates the network, and every epoch prints its validation accuracy::

    python examples/gluon_digits_cnn.py [--epochs 6] [--num-workers 2]

The training code is MXNet 1.9's Gluon API as written for MXNet itself.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon import nn

VALIDATION = 360


def datasets(seed=0):
    """(training, validation) ``ArrayDataset``s of (1x8x8 float32 image in [0, 1], label)."""
    from sklearn.datasets import load_digits
    bunch = load_digits()
    order = np.random.default_rng(seed).permutation(len(bunch.target))
    images = (bunch.images[order] / 16.0).astype(np.float32)[:, None]
    labels = bunch.target[order].astype(np.float32)
    return (gluon.data.ArrayDataset(images[VALIDATION:], labels[VALIDATION:]),
            gluon.data.ArrayDataset(images[:VALIDATION], labels[:VALIDATION]))


def cnn(classes=10):
    """Two 3x3 convolutions (32 and 64 filters), each followed by 2x2 max pooling, then
    128 hidden units (Dense flattens its input)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=2),
            nn.Conv2D(64, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=2),
            nn.Dense(128, activation="relu"),
            nn.Dense(classes))
    return net


def accuracy(net, loader):
    metric = mx.metric.Accuracy()
    for images, labels in loader:
        metric.update(labels, net(images))
    return metric.get()[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.003, help="Adam's learning rate")
    parser.add_argument("--num-workers", type=int, default=0,
                        help="DataLoader worker processes (0: batches made in this process)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)

    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)
    train_set, val_set = datasets()
    train = gluon.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                  last_batch="discard", num_workers=args.num_workers)
    val = gluon.data.DataLoader(val_set, batch_size=120)

    net = cnn()
    net.initialize(mx.init.Xavier(magnitude=2), ctx=mx.cpu())
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": args.lr})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    print(f"training a hybridized CNN on {len(train_set)} digits ({len(train)} batches of "
          f"{args.batch_size}), validating on {len(val_set)}")

    tic = time.time()
    for epoch in range(1, args.epochs + 1):
        for images, labels in train:
            with autograd.record():
                loss = loss_fn(net(images), labels)
            loss.backward()
            trainer.step(images.shape[0])
        acc = accuracy(net, val)
        print(f"epoch {epoch}/{args.epochs}: validation accuracy {acc:.4f}")
    print(f"final validation accuracy {acc:.4f} after {args.epochs} epochs in "
          f"{time.time() - tic:.1f} s")
    return acc


if __name__ == "__main__":
    main()
