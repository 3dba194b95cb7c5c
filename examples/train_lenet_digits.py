"""The main job (``make demo``): a LeNet-style network learns real handwritten digits.

Data: scikit-learn's bundled digits (1,797 scans of 8x8 pixels, no download); 360 are
held out for validation. Training: ``Module.fit`` with a kvstore (``--kvstore``; ``local``
by default). Under a distributed store each worker reads its own part of the training set
(``num_parts=kv.num_workers``, ``part_index=kv.rank``, as MXNet's iterators do) and the
store keeps every worker's parameters equal:

    mxnext launch -n 2 examples/train_lenet_digits.py --kvstore dist_sync

On a terminal each epoch shows a tqdm progress bar; otherwise (a pipe, a log file) MXNet's
plain log lines. Every epoch prints its validation accuracy. At the end the first worker
writes a checkpoint and reads it back with ``mx.model.load_checkpoint`` to check that it
predicts as the trained network does.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

import numpy as np

import mxnext as mx

VALIDATION = 360


def digits(num_parts=1, part_index=0, seed=0):
    """((train images, labels) of part ``part_index`` of ``num_parts``, (validation images,
    labels)); images (N, 1, 8, 8) float32 in [0, 1]."""
    from sklearn.datasets import load_digits
    bunch = load_digits()
    order = np.random.default_rng(seed).permutation(len(bunch.target))
    x = (bunch.images[order] / 16.0).astype(np.float32)[:, None]
    y = bunch.target[order].astype(np.float32)
    train_x, train_y = x[VALIDATION:], y[VALIDATION:]
    part = len(train_y) // num_parts
    lo, hi = part_index * part, (part_index + 1) * part
    return (train_x[lo:hi], train_y[lo:hi]), (x[:VALIDATION], y[:VALIDATION])


def lenet(classes=10):
    """Two 3x3 convolutions (20 and 50 filters) with ReLU and 2x2 max pooling, then fully
    connected layers of 128 and ``classes`` units: LeNet's shape for 8x8 inputs."""
    net = mx.sym.var("data")
    for i, filters in enumerate((20, 50), 1):
        net = mx.sym.Convolution(net, kernel=(3, 3), pad=(1, 1), num_filter=filters,
                                 name=f"conv{i}")
        net = mx.sym.Activation(net, act_type="relu", name=f"relu{i}")
        net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max",
                             name=f"pool{i}")
    net = mx.sym.FullyConnected(mx.sym.flatten(net), num_hidden=128, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu3")
    net = mx.sym.FullyConnected(net, num_hidden=classes, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


class TqdmBar:
    """A batch-end callback drawing one tqdm bar per epoch, the training accuracy beside it."""

    def __init__(self, tqdm, batches, epochs):
        self.tqdm, self.batches, self.epochs, self.bar = tqdm.tqdm, batches, epochs, None

    def __call__(self, param):
        if param.nbatch == 0:
            self.bar = self.tqdm(total=self.batches, unit="batch", leave=False,
                                 desc=f"epoch {param.epoch + 1}/{self.epochs}")
        self.bar.update(1)
        self.bar.set_postfix_str(f"train acc {param.eval_metric.get()[1]:.3f}", refresh=False)
        if param.nbatch + 1 == self.batches:
            self.bar.close()


def terminal_bar():
    """tqdm when stderr is a terminal and tqdm is installed, else None."""
    if not sys.stderr.isatty():
        return None
    try:
        import tqdm
    except ImportError:
        return None
    return tqdm


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kvstore", default="local",
                        help="KVStore type: local, device, dist_sync, ... (default: local)")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.003,
                        help="Adam's learning rate, times 0.4 every 3 epochs")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--prefix", default=os.path.join("build", "demo", "lenet-digits"),
                        help="checkpoint prefix (default: build/demo/lenet-digits)")
    args = parser.parse_args(argv)

    bar = terminal_bar()
    logging.basicConfig(level=logging.WARNING if bar else logging.INFO,
                        format="%(asctime)s %(message)s")
    kv = mx.kv.create(args.kvstore)
    (train_x, train_y), (val_x, val_y) = digits(num_parts=kv.num_workers, part_index=kv.rank)
    mx.random.seed(args.seed)
    np.random.seed(args.seed + kv.rank)
    train = mx.io.NDArrayIter(train_x, train_y, args.batch_size, shuffle=True,
                              last_batch_handle="discard")
    val = mx.io.NDArrayIter(val_x, val_y, 120)
    batches = len(train_y) // args.batch_size
    worker = f"worker {kv.rank}/{kv.num_workers}: " if kv.num_workers > 1 else ""
    say = bar.tqdm.write if bar else print          # a line above the bar, not through it
    say(f"{worker}training LeNet on {len(train_y)} digits ({batches} batches of "
        f"{args.batch_size}, kvstore {kv.type}), validating on {len(val_y)}")

    accuracy = []

    def report(param):
        accuracy.append(param.eval_metric.get()[1])
        say(f"{worker}epoch {param.epoch + 1}/{args.epochs}: validation accuracy "
            f"{accuracy[-1]:.4f}")

    mod = mx.mod.Module(lenet(), context=mx.cpu())
    tic = time.time()
    mod.fit(train, eval_data=val, num_epoch=args.epochs, kvstore=kv, optimizer="adam",
            optimizer_params={"learning_rate": args.lr, "lr_scheduler":
                              mx.lr_scheduler.FactorScheduler(step=3 * batches, factor=0.4,
                                                              base_lr=args.lr)},
            initializer=mx.init.Xavier(magnitude=2),
            batch_end_callback=TqdmBar(bar, batches, args.epochs) if bar
            else mx.callback.Speedometer(args.batch_size, frequent=max(1, batches // 2)),
            eval_end_callback=report)
    took = time.time() - tic
    say(f"{worker}final validation accuracy {accuracy[-1]:.4f} after {args.epochs} epochs in "
        f"{took:.1f} s")

    if kv.rank == 0:
        os.makedirs(os.path.dirname(args.prefix) or ".", exist_ok=True)
        mod.save_checkpoint(args.prefix, args.epochs)
        check_checkpoint(args.prefix, args.epochs, val, mod)
        say(f"checkpoint {args.prefix}-symbol.json, {args.prefix}-{args.epochs:04d}.params: "
            f"reloaded with mx.model.load_checkpoint, predicts as trained")
    return accuracy[-1]


def check_checkpoint(prefix, epoch, val, trained):
    """Load the checkpoint into a new Module and compare its predictions with ``trained``'s."""
    symbol, arg_params, aux_params = mx.model.load_checkpoint(prefix, epoch)
    loaded = mx.mod.Module(symbol, context=mx.cpu())
    loaded.bind(data_shapes=val.provide_data, label_shapes=val.provide_label,
                for_training=False)
    loaded.set_params(arg_params, aux_params)
    got, want = loaded.predict(val).asnumpy(), trained.predict(val).asnumpy()
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"the checkpoint {prefix}-{epoch:04d}.params predicts differently "
                         f"from the trained network (largest difference "
                         f"{np.abs(got - want).max():g})")


if __name__ == "__main__":
    main()
