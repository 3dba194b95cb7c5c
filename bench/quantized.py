"""INT8 inference, side by side: float32 vs int8, mxnext vs MXNet 1.9.1.

Run from the repo root::

    .venv/bin/python bench/quantized.py [--rounds 3] [--cpus 2]

A small CIFAR-size CNN (three 3x3 convolutions 3->32->64->64 with ReLU and two 2x2 max
pools, then FC 4096->256->10; batch 32, input 3x32x32) with random weights is quantized on
each side with ``calib_mode='naive'`` over two calibration batches and ``quantized_dtype=
'auto'`` (uint8 where the calibrated range is non-negative), conv1 (signed data: MXNet's
oneDNN int8 convolution takes uint8 data only) and fc2 left float. mxnext runs
``quantize_model``; MXNet runs ``quantize_model_mkldnn`` (its oneDNN path: conv+ReLU fused),
as the forward of its plain ``quantize_model`` graph fails in its oneDNN kernels ("only
supports uint8" / "could not create a primitive descriptor iterator", with or without
``MXNET_SUBGRAPH_BACKEND=NONE``). Then the float and the quantized symbol run
``forward(is_train=False)`` in a Module: samples/s. The mxnext side also times each
quantized convolution / fully connected layer alone (``mx.nd.contrib.quantized_conv`` /
``quantized_fully_connected`` on uint8 data of that layer's shape): milliseconds per call.

Each side runs in its own interpreter (this file with ``--side``) at its default threads
(``--cpus N`` puts every side on the same N CPUs); MXNet 1.9.1 comes from
``--mxnet-python`` / ``MXNEXT_MXNET_PYTHON`` (default /work/mxnet-venv/bin/python) and runs
at its defaults (its oneDNN int8 kernels). The sides take turns over ``--rounds``; the best
round counts. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from training import side_result     # bench/training.py: every side on the same CPUs

BATCH, SAMPLE = 32, (3, 32, 32)
CONVS = ((32, False), (64, True), (64, True))          # (filters, pool after)


def cnn(mx):
    h = mx.sym.var("data")
    for k, (filters, pool) in enumerate(CONVS):
        h = mx.sym.Convolution(h, kernel=(3, 3), pad=(1, 1), num_filter=filters,
                               name=f"conv{k + 1}")
        h = mx.sym.Activation(h, act_type="relu", name=f"relu{k + 1}")
        if pool:
            h = mx.sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2),
                               name=f"pool{k + 1}")
    h = mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=256, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu4")
    return mx.sym.FullyConnected(h, num_hidden=10, name="fc2")


def _params(mx, sym, rng):
    arg_shapes, _, _ = sym.infer_shape(data=(BATCH, *SAMPLE))
    return {n: mx.nd.array(rng.uniform(-0.1, 0.1, s).astype(np.float32))
            for n, s in zip(sym.list_arguments(), arg_shapes) if n != "data"}


def _speed(mx, sym, args, x, steps, repeats):
    mod = mx.mod.Module(sym, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", x.shape)], for_training=False)
    mod.set_params(args, {})
    batch = mx.io.DataBatch([mx.nd.array(x)])
    for _ in range(2):
        mod.forward(batch, is_train=False)
    mx.nd.waitall()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            mod.forward(batch, is_train=False)
            mod.get_outputs()[0].wait_to_read()
        best = min(best, (time.perf_counter() - t) / steps)
    return BATCH / best, mod.get_outputs()[0].asnumpy()


def _layer_ms(mx, sym, rng, repeats):
    """Each quantized conv / FC alone on uint8 data of its layer's input shape."""
    internals = sym.get_internals()
    shapes = dict(zip(internals.list_outputs(),
                      internals.infer_shape(data=(BATCH, *SAMPLE))[1]))
    rng_ = [mx.nd.array([-1.0]), mx.nd.array([1.0])]
    layers = {}
    inputs = {"conv1": "data", "conv2": "relu1_output", "conv3": "pool2_output",
              "fc1": "flatten0_output", "fc2": "relu4_output"}
    for name, src in inputs.items():
        shape = shapes[src]
        w_shape = shapes[f"{name}_weight"]
        data = mx.nd.array(rng.integers(0, 256, shape), dtype="uint8")
        weight = mx.nd.array(rng.integers(-127, 128, w_shape), dtype="int8")
        bias = mx.nd.array(rng.integers(-127, 128, w_shape[:1]), dtype="int8")
        if name.startswith("conv"):
            run = lambda: mx.nd.contrib.quantized_conv(      # noqa: E731
                data, weight, bias, *rng_ * 3, kernel=(3, 3), pad=(1, 1),
                num_filter=w_shape[0])
        else:
            run = lambda: mx.nd.contrib.quantized_fully_connected(      # noqa: E731
                data, weight, bias, *rng_ * 3, num_hidden=w_shape[0])
        run()[0].wait_to_read()
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            run()[0].wait_to_read()
            best = min(best, time.perf_counter() - t)
        layers[name] = best * 1e3
    return layers


def run_side(side, steps, repeats):
    import mxnet as mx
    rng = np.random.default_rng(0)
    sym = cnn(mx)
    args = _params(mx, sym, rng)
    calib = rng.standard_normal((2 * BATCH, *SAMPLE)).astype(np.float32)
    quantize = "quantize_model_mkldnn" if side == "mxnet" else "quantize_model"
    qsym, qargs, _ = getattr(mx.contrib.quant, quantize)(
        sym, args, {}, data_names=("data",), label_names=None, ctx=mx.cpu(),
        calib_mode="naive", calib_data=mx.io.NDArrayIter(calib, batch_size=BATCH),
        num_calib_examples=2 * BATCH, quantized_dtype="auto", excluded_sym_names=["conv1", "fc2"])
    x = rng.standard_normal((BATCH, *SAMPLE)).astype(np.float32)
    f32, y_float = _speed(mx, sym, args, x, steps, repeats)
    i8, y_int8 = _speed(mx, qsym, qargs, x, steps, repeats)
    scale = float(np.abs(y_float).max())
    result = {"float32": f32, "int8": i8,
              "int8 error": float(np.abs(y_int8 - y_float).max()) / scale}
    if side == "mxnext":
        result["layers ms"] = _layer_ms(mx, sym, rng, 3 * repeats)
    return result


# ---------------------------------------------------------------------------- driver

def _side(python, side, steps, repeats, cpus):
    return side_result([python, __file__, "--side", side, "--steps", str(steps),
                        "--repeats", str(repeats)], cpus, side)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mxnext", "mxnet"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cpus", type=int, default=None, help="run every side on this many CPUs")
    ap.add_argument("--mxnet-python", default=os.environ.get(
        "MXNEXT_MXNET_PYTHON", "/work/mxnet-venv/bin/python"))
    args = ap.parse_args()
    if args.side:
        if args.side == "mxnext":
            import mxnext
            sys.modules["mxnet"] = mxnext          # the network says ``mx`` for either
        print(json.dumps(run_side(args.side, args.steps, args.repeats)))
        return
    sides = {"mxnext": sys.executable}
    if os.path.exists(args.mxnet_python):
        sides["mxnet 1.9.1"] = args.mxnet_python
    print(f"inference (batch {BATCH}, input {SAMPLE}): best of {args.rounds} rounds x "
          f"{args.repeats} repeats x {args.steps} steps; MXNet 1.9.1 at {args.mxnet_python}"
          + ("" if len(sides) > 1 else " (absent)"))
    best = {}
    for _ in range(args.rounds):
        for label, python in sides.items():
            res = _side(python, label.split()[0], args.steps, args.repeats, args.cpus)
            old = best.setdefault(label, res)
            for key in ("float32", "int8"):
                old[key] = max(old[key], res[key])
            if "layers ms" in res:
                old["layers ms"] = {k: min(v, res["layers ms"][k])
                                    for k, v in old["layers ms"].items()}
    for label, res in best.items():
        print(f"  {label:<12} float32 {res['float32']:8.1f} samples/s   int8 "
              f"{res['int8']:8.1f} samples/s   int8/float32 {res['int8'] / res['float32']:.2f}x"
              f"   int8 max error {res['int8 error']:.3f} of max |output|")
    if "layers ms" in best["mxnext"]:
        print("  mxnext quantized layers alone (ms): " + ", ".join(
            f"{k} {v:.2f}" for k, v in best["mxnext"]["layers ms"].items()))


if __name__ == "__main__":
    main()
