"""Per-call kernel time, oneDNN (this plugin's kernel body) vs ops-nn (the kernel it
outranks), side by side, at the layer shapes of bench/executor.py's MLP (batch 128), LeNet
(batch 64) and ResNet-18 (3x32x32, batch 32), bench/gluon.py's resnet18_v1 (3x32x32, batch
32), a few pooling shapes, and a few LRN and Deconvolution shapes (none of those networks
has one). A convolution's gradient is
measured in its two parts (data; weight and bias), which its rules route apart.

Run from the repo root::

    .venv/bin/python plugins/ops-onednn/bench/layers.py [--repeats 15] [--calls 5] [--only bn]

Each figure is the median over ``--repeats`` of the mean of ``--calls`` back-to-back calls,
the two kernels taking turns, so a shared machine's load falls on both alike. The oneDNN body
is called directly, past the plugin's shape rules (``wins``): the table is what those rules
are drawn from. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

def _conv(x, f, k, s, p):
    """A ``Convolution`` case: input shape ``x``, ``f`` filters of ``k`` x ``k``, stride, pad."""
    return ("Convolution", [x, (f, x[1], k, k)],
            {"kernel": (k, k), "stride": (s, s), "pad": (p, p), "num_filter": f,
             "no_bias": True}, True)


# name: (op, forward input shapes, params, is_train)
CASES = {
    # bench/gluon.py's resnet18_v1 on 3x32x32: its stem and the first conv of each shape
    "conv g stem 7x7/2 3->64 32": _conv((32, 3, 32, 32), 64, 7, 2, 3),
    "conv g 3x3 64 8": _conv((32, 64, 8, 8), 64, 3, 1, 1),
    "conv g 3x3/2 64->128 8": _conv((32, 64, 8, 8), 128, 3, 2, 1),
    "conv g 1x1/2 64->128 8": _conv((32, 64, 8, 8), 128, 1, 2, 0),
    "conv g 3x3 128 4": _conv((32, 128, 4, 4), 128, 3, 1, 1),
    "conv g 3x3/2 128->256 4": _conv((32, 128, 4, 4), 256, 3, 2, 1),
    "conv g 1x1/2 128->256 4": _conv((32, 128, 4, 4), 256, 1, 2, 0),
    "conv g 3x3 256 2": _conv((32, 256, 2, 2), 256, 3, 1, 1),
    "conv g 3x3/2 256->512 2": _conv((32, 256, 2, 2), 512, 3, 2, 1),
    "conv g 1x1/2 256->512 2": _conv((32, 256, 2, 2), 512, 1, 2, 0),
    "conv g 3x3 512 1": _conv((32, 512, 1, 1), 512, 3, 1, 1),
    # bench/executor.py's CIFAR-style ResNet-18
    "conv e stem 3x3 3->64 32": _conv((32, 3, 32, 32), 64, 3, 1, 1),
    "conv e 3x3 64 32": _conv((32, 64, 32, 32), 64, 3, 1, 1),
    "conv e 3x3/2 64->128 32": _conv((32, 64, 32, 32), 128, 3, 2, 1),
    "conv e 1x1/2 64->128 32": _conv((32, 64, 32, 32), 128, 1, 2, 0),
    "conv e 3x3 128 16": _conv((32, 128, 16, 16), 128, 3, 1, 1),
    "conv e 3x3/2 128->256 16": _conv((32, 128, 16, 16), 256, 3, 2, 1),
    "conv e 3x3 256 8": _conv((32, 256, 8, 8), 256, 3, 1, 1),
    "conv e 3x3/2 256->512 8": _conv((32, 256, 8, 8), 512, 3, 2, 1),
    "conv e 3x3 512 4": _conv((32, 512, 4, 4), 512, 3, 1, 1),
    "conv lenet 5x5 1->20 28": ("Convolution", [(64, 1, 28, 28), (20, 1, 5, 5), (20,)],
                                {"kernel": (5, 5), "num_filter": 20}, True),
    "conv lenet 5x5 20->50 12": ("Convolution", [(64, 20, 12, 12), (50, 20, 5, 5), (50,)],
                                 {"kernel": (5, 5), "num_filter": 50}, True),
    **{f"fc {k}->{n} b{m}": ("FullyConnected", [(m, k), (n, k), (n,)], {"num_hidden": n}, True)
       for m, k, n in ((128, 784, 1024), (128, 1024, 1024), (128, 1024, 10), (64, 800, 500),
                       (32, 512, 10), (128, 512, 512), (64, 2048, 2048))},
    **{f"pool {t} 2x2/2 {x}": ("Pooling", [x], {"kernel": (2, 2), "stride": (2, 2),
                                                 "pool_type": t}, True)
       for t in ("max", "avg") for x in ((64, 20, 24, 24), (64, 50, 8, 8), (32, 64, 32, 32))},
    "pool max 3x3/2 pad1 (32,64,16,16)": ("Pooling", [(32, 64, 16, 16)],
                                          {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                                           "pool_type": "max"}, True),
    "pool avg global (32,512,4,4)": ("Pooling", [(32, 512, 4, 4)],
                                     {"kernel": (1, 1), "global_pool": True, "pool_type": "avg"},
                                     True),
    "lenet tanh (64,20,24,24)": ("Activation", [(64, 20, 24, 24)], {"act_type": "tanh"}, True),
    "lenet tanh (64,50,8,8)": ("Activation", [(64, 50, 8, 8)], {"act_type": "tanh"}, True),
    "lenet tanh (64,500)": ("Activation", [(64, 500)], {"act_type": "tanh"}, True),
    "relu (32,64,32,32)": ("Activation", [(32, 64, 32, 32)], {"act_type": "relu"}, True),
    "relu (32,128,16,16)": ("Activation", [(32, 128, 16, 16)], {"act_type": "relu"}, True),
    "relu (32,256,8,8)": ("Activation", [(32, 256, 8, 8)], {"act_type": "relu"}, True),
    "relu (32,512,4,4)": ("Activation", [(32, 512, 4, 4)], {"act_type": "relu"}, True),
    "relu (32,64,8,8)": ("Activation", [(32, 64, 8, 8)], {"act_type": "relu"}, True),
    "relu (32,256,2,2)": ("Activation", [(32, 256, 2, 2)], {"act_type": "relu"}, True),
    "relu (32,512,1,1)": ("Activation", [(32, 512, 1, 1)], {"act_type": "relu"}, True),
    "sigmoid (32,64,32,32)": ("Activation", [(32, 64, 32, 32)], {"act_type": "sigmoid"}, True),
    "sigmoid (32,128,16,16)": ("Activation", [(32, 128, 16, 16)], {"act_type": "sigmoid"},
                               True),
    "sigmoid (32,64,16,16)": ("Activation", [(32, 64, 16, 16)], {"act_type": "sigmoid"}, True),
    "sigmoid (32,64,8,8)": ("Activation", [(32, 64, 8, 8)], {"act_type": "sigmoid"}, True),
    "sigmoid (64,500)": ("Activation", [(64, 500)], {"act_type": "sigmoid"}, True),
    "sigmoid (32,512,1,1)": ("Activation", [(32, 512, 1, 1)], {"act_type": "sigmoid"}, True),
    "softrelu (32,64,32,32)": ("Activation", [(32, 64, 32, 32)], {"act_type": "softrelu"},
                               True),
    "softrelu (32,64,8,8)": ("Activation", [(32, 64, 8, 8)], {"act_type": "softrelu"}, True),
    "softrelu (64,500)": ("Activation", [(64, 500)], {"act_type": "softrelu"}, True),
    "softrelu (32,512,1,1)": ("Activation", [(32, 512, 1, 1)], {"act_type": "softrelu"},
                              True),
    **{f"bn {'train' if t else 'infer'} (32,{c},{s},{s})":
       ("BatchNorm", [(32, c, s, s), (c,), (c,), (c,), (c,)], {"fix_gamma": False}, t)
       for c, s in ((64, 32), (128, 16), (256, 8), (512, 4), (64, 16), (64, 8), (128, 4),
                    (256, 2), (512, 1)) for t in (True, False)},
    "lrn n5 (8,96,27,27)": ("LRN", [(8, 96, 27, 27)], {"nsize": 5}, True),
    "lrn n5 (32,64,16,16)": ("LRN", [(32, 64, 16, 16)], {"nsize": 5}, True),
    "lrn n3 (4,16,8,8)": ("LRN", [(4, 16, 8, 8)], {"nsize": 3}, True),
    "deconv 4x4/2 128->64 8x8 b32": ("Deconvolution", [(32, 128, 8, 8), (128, 64, 4, 4)],
                                     {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1),
                                      "num_filter": 64}, True),
    "deconv 4x4/2 64->3 16x16 b32": ("Deconvolution", [(32, 64, 16, 16), (64, 3, 4, 4)],
                                     {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1),
                                      "num_filter": 3}, True),
    "deconv 3x3 g4 32->32 16x16 b8": ("Deconvolution", [(8, 32, 16, 16), (32, 8, 3, 3)],
                                      {"kernel": (3, 3), "pad": (1, 1), "num_filter": 32,
                                       "num_group": 4}, True),
}


def backward_inputs(op, ins, outs, og):
    """The inputs of ``_backward_<op>`` as its FGradient wires them."""
    if op == "Activation":
        return [og, outs[0]]
    if op == "BatchNorm":
        return [og, outs[1], outs[2], ins[0], ins[1], ins[3], ins[4]]
    if op == "LRN":
        return [og, ins[0], outs[1]]
    if op == "FullyConnected":
        return [og, *ins]
    if op == "Pooling":
        return [og, ins[0], outs[0]]
    return [og, ins[0], ins[1]]                         # Convolution, Deconvolution


def _caller(fn, opdef, p, ctx, inputs, req=None):
    from opsdk.testing import infer
    _, shapes, _, types = infer(opdef, p, [a.shape for a in inputs], [a.dtype for a in inputs])
    outputs = [np.zeros(s, t) for s, t in zip(shapes, types)]
    req = req[:len(outputs)] if req else [1] * len(outputs)
    # BatchNorm's gradient updates its inputs 5 and 6 (the moving statistics): fresh copies
    return lambda: fn(ctx, [a.copy() if i >= 5 else a for i, a in enumerate(inputs)], req,
                      outputs, p), outputs


def _kernels(op, lib):
    """(oneDNN body as a compute function, ops-nn's compute function) of ``op``."""
    from importlib import import_module
    from opsdk import outranked
    base = op.removeprefix("_backward_")
    module = import_module("mxnext_ops_onednn." + {"Activation": "activation",
                                                   "BatchNorm": "batch_norm", "LRN": "lrn",
                                                   "Deconvolution": "deconvolution",
                                                   "Convolution": "convolution",
                                                   "FullyConnected": "fully_connected",
                                                   "Pooling": "pooling"}[base])
    body = module.backward if op.startswith("_backward_") else module.forward

    def onednn(ctx, inputs, req, outputs, p):
        if not body(lib, ctx, inputs, req, outputs, p):
            raise NotImplementedError(op)
    return onednn, outranked(op, "FCompute<cpu>")


def _median_ms(fn, repeats, calls):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e3)
    return out


def _rule_says(kind, ctx, inputs, p) -> str:
    """'dnnl' or 'nn': which kernel the plugin's rule picks for this call (``kind`` is an op or
    an ``op:part``)."""
    from mxnext_ops_onednn._dispatch import part_wins
    return "dnnl" if part_wins(kind, ctx, inputs, p) else "nn"


# A convolution gradient's parts: (column, request of (data, weight, bias)).
_PARTS = (("data", [1, 0, 0]), ("weight", [0, 1, 1]))


def measure(name, lib, repeats, calls):
    """{direction: (oneDNN ms, ops-nn ms, the rule's pick)} for one case."""
    from opsdk.testing import make_context, op_def, parse
    op, shapes, params, is_train = CASES[name]
    rng = np.random.default_rng(0)
    ins = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    if op == "BatchNorm":
        ins[4] = np.abs(ins[4]) + 0.5
    result, fwd_outs = {}, None
    for kind in (op, f"_backward_{op}"):
        opdef = op_def(kind)
        p = parse(opdef, params)
        ctx = make_context(opdef, p, is_train)
        inputs = ins if kind == op else \
            backward_inputs(op, ins, fwd_outs, rng.uniform(-1, 1, fwd_outs[0].shape)
                            .astype(np.float32))
        parts = (("fwd", None, kind),) if kind == op else \
            tuple((col, req, f"{kind}:{col}") for col, req in _PARTS) \
            if op == "Convolution" else (("bwd", None, kind),)
        for col, req, rule in parts:
            result[col] = _time_pair(kind, lib, opdef, p, ctx, inputs, req, repeats, calls)
            if result[col] is None:
                result[col] = (float("nan"), float("nan"), "nn")     # oneDNN does not cover it
                continue
            *times, outs = result[col]
            if kind == op:
                fwd_outs = outs
            result[col] = (*times, _rule_says(rule, ctx, inputs, p))
    return result


def _time_pair(kind, lib, opdef, p, ctx, inputs, req, repeats, calls):
    """(oneDNN ms, ops-nn ms, oneDNN's outputs) for one call, or None where oneDNN does not
    cover it."""
    from mxnext_ops_onednn import _dispatch
    mine, theirs = _kernels(kind, lib)
    run_mine, outs = _caller(mine, opdef, p, ctx, inputs, req)
    run_theirs, _ = _caller(theirs, opdef, p, ctx, inputs, req)
    rules, _dispatch.wins = _dispatch.wins, {}      # a body's own part rules stay out of it
    try:
        run_mine()
        times = {"onednn": [], "ops-nn": []}
        for _ in range(repeats):
            times["onednn"] += _median_ms(run_mine, 1, calls)
            times["ops-nn"] += _median_ms(run_theirs, 1, calls)
    except NotImplementedError:
        return None
    finally:
        _dispatch.wins = rules
    return statistics.median(times["onednn"]), statistics.median(times["ops-nn"]), outs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    args = ap.parse_args(argv)
    import mxnext  # noqa: F401  (loads the plugins)
    from opsdk import apply_thread_policy
    from mxnext_ops_onednn import _dnnl
    lib = _dnnl.lib()
    # the threads the kernels get inside mxnext: BLAS held to the policy's count (the engine
    # applies it when it starts; left at OpenBLAS's own, its spinning threads take the cores
    # from oneDNN's), oneDNN on the OpenMP threads the plugin's kernels take
    lib.use_threads(apply_thread_policy().openmp)
    print(f"median of {args.repeats} x mean of {args.calls} calls, milliseconds; "
          f"ratio = oneDNN / ops-nn (below 1: oneDNN faster); rule = the kernel the plugin's "
          f"rule picks")
    print(f"{'case':<32}{'dnnl fwd':>9}{'nn fwd':>9}{'ratio':>7}{'rule':>6}{'dnnl bwd':>10}"
          f"{'nn bwd':>9}{'ratio':>7}{'rule':>6}   (conv rows: bwd = data gradient, then the "
          f"weight gradient)")
    for name in CASES:
        if args.only not in name:
            continue
        r = measure(name, lib, args.repeats, args.calls)
        cols = ("fwd", "data", "weight") if "data" in r else ("fwd", "bwd")
        cells = "".join(f"{a:>{w}.3f}{b:>9.3f}{a / b:>7.2f}{pick:>6}"
                        for (a, b, pick), w in zip((r[c] for c in cols), (9, 10, 10)))
        print(f"{name:<32}{cells}", flush=True)


if __name__ == "__main__":
    main()
