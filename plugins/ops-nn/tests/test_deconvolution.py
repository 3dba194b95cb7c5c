"""Deconvolution: forward and gradients against loop references, adj/target_shape, inference
and errors."""

import itertools

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, parse, run_op


def deconv_ref(x, w, b, stride, dilate, pad, adj, groups, num_filter):
    """Scatter every input element through the kernel (loops, float64):
    out[o*s + t*d - pad] += x[o] * w[c, f, t]."""
    n, c = x.shape[:2]
    k = w.shape[2:]
    nd = len(k)
    size = [stride[i] * (x.shape[2 + i] - 1) + (k[i] - 1) * dilate[i] + 1 - 2 * pad[i] + adj[i]
            for i in range(nd)]
    full = np.zeros([n, num_filter] + [s + 2 * p for s, p in zip(size, pad)])
    cg, fg = c // groups, num_filter // groups
    for b_, ci in itertools.product(range(n), range(c)):
        g = ci // cg
        for o in itertools.product(*map(range, x.shape[2:])):
            for fo in range(fg):
                for t in itertools.product(*map(range, k)):
                    at = tuple(o[i] * stride[i] + t[i] * dilate[i] for i in range(nd))
                    if all(a < s + 2 * p for a, s, p in zip(at, size, pad)):
                        full[(b_, g * fg + fo) + at] += x[(b_, ci) + o] * w[(ci, fo) + t]
    out = full[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, size))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd)
    return out


CASES = [  # data, weight, params, (pad, adj) the reference uses
    ((2, 3, 4), (3, 2, 3), {"kernel": (3,), "stride": (2,), "adj": (1,)}, ((0,), (1,))),
    ((2, 4, 3, 3), (4, 3, 3, 3), {"kernel": (3, 3), "num_group": 2, "stride": (2, 2),
                                  "pad": (1, 1)}, ((1, 1), (0, 0))),
    ((1, 2, 3, 4), (2, 2, 2, 3), {"kernel": (2, 3), "dilate": (2, 1), "pad": (1, 0)},
     ((1, 0), (0, 0))),
    ((2, 2, 2, 3, 2), (2, 1, 2, 2, 2), {"kernel": (2, 2, 2), "stride": (1, 2, 1)},
     ((0, 0, 0), (0, 0, 0))),
    # target_shape: MXNet's rule total = stride*(in-1) + kernel - target, pad = (total+1)//2,
    # adj = total % 2; (9, 7) from (4, 3): totals 1 and 1
    ((1, 2, 4, 3), (2, 3, 4, 4), {"kernel": (4, 4), "stride": (2, 2), "target_shape": (9, 7)},
     ((1, 1), (1, 1))),
    ((1, 2, 4, 3), (2, 3, 4, 4), {"kernel": (4, 4), "stride": (2, 2), "target_shape": (8, 6)},
     ((1, 1), (0, 0))),
]


def _geom(params, nd):
    return (params.get("stride", (1,) * nd), params.get("dilate", (1,) * nd),
            params.get("num_group", 1))


@pytest.mark.parametrize("xs, ws, params, pad_adj", CASES)
def test_forward_matches_loops(xs, ws, params, pad_adj):
    rng = np.random.default_rng(0)
    groups = params.get("num_group", 1)
    f = ws[1] * groups
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(f)
    stride, dilate, _ = _geom(params, len(ws) - 2)
    want = deconv_ref(x, w, b, stride, dilate, *pad_adj, groups, f)
    kw = {**params, "num_filter": f, "no_bias": False}
    check_forward("Deconvolution", [x, w, b], want, kw, rtol=1e-10, atol=1e-10)
    if "target_shape" in params:
        assert want.shape[2:] == params["target_shape"]


def deconv_grads_ref(x, w, gy, stride, dilate, pad, groups):
    """Gradients of deconv_ref wrt x and w: each input element gathers the head gradient
    from the output positions it was scattered to (loops, float64)."""
    n, c = x.shape[:2]
    k = w.shape[2:]
    nd = len(k)
    gyp = np.pad(gy, [(0, 0), (0, 0)] + [(p, p + s * d * kk) for p, s, d, kk in
                                         zip(pad, stride, dilate, k)])
    cg, fg = c // groups, w.shape[1]
    gx, gw = np.zeros(x.shape), np.zeros(w.shape)
    for b_, ci in itertools.product(range(n), range(c)):
        g = ci // cg
        for o in itertools.product(*map(range, x.shape[2:])):
            for fo in range(fg):
                for t in itertools.product(*map(range, k)):
                    at = tuple(o[i] * stride[i] + t[i] * dilate[i] for i in range(nd))
                    h = gyp[(b_, g * fg + fo) + at]
                    gx[(b_, ci) + o] += h * w[(ci, fo) + t]
                    gw[(ci, fo) + t] += h * x[(b_, ci) + o]
    return gx, gw


@pytest.mark.parametrize("xs, ws, params, pad_adj", CASES)
def test_gradients_match_loops(xs, ws, params, pad_adj):
    rng = np.random.default_rng(1)
    groups = params.get("num_group", 1)
    f = ws[1] * groups
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    stride, dilate, _ = _geom(params, len(ws) - 2)
    kw = {**params, "num_filter": f}
    gy = rng.standard_normal(run_op("Deconvolution", [x, w], kw)[0].shape)
    want = deconv_grads_ref(x, w, gy, stride, dilate, pad_adj[0], groups)
    check_backward("Deconvolution", [x, w], [gy], list(want), kw, rtol=1e-9, atol=1e-9)


def test_bias_gradient_sums_the_head():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 3, 3)), rng.standard_normal((3, 2, 2)), np.zeros(2)
    kw = {"kernel": (2,), "num_filter": 2, "no_bias": False, "stride": (2,)}
    gy = rng.standard_normal((2, 2, 6))
    check_backward("Deconvolution", [x, w, b], [gy], [None, None, gy.sum(axis=(0, 2))], kw)


def test_defaults_have_no_bias_and_fill_the_weight():
    opdef = op_def("Deconvolution")
    p = parse(opdef, {"kernel": "(4, 4)", "num_filter": "8", "stride": "(2, 2)",
                      "pad": "(1, 1)", "num_group": "2"})
    assert p.no_bias is True and p.workspace == 512
    assert opdef.list_input_names(p) == ["data", "weight"]
    ins, outs, _, _ = infer(opdef, p, [(3, 6, 5, 7), None], ["float32", None])
    assert ins[1] == (6, 4, 4, 4)
    assert outs == [(3, 8, 10, 14)]


@pytest.mark.parametrize("params, data, match", [
    ({"kernel": (3,), "num_filter": 2, "stride": (2,), "adj": (2,)}, (1, 2, 4),
     "adj=2 on spatial axis 0 must be smaller than stride=2"),
    ({"kernel": (3,), "num_filter": 2, "target_shape": (20,)}, (1, 2, 4),
     "target_shape \\(20,\\) is too big"),
    ({"kernel": (3, 3), "num_filter": 2}, (1, 2, 4), "data should be 4-d"),
])
def test_shape_errors(params, data, match):
    opdef = op_def("Deconvolution")
    with pytest.raises(ShapeError, match="Operator 'Deconvolution': " + match):
        opdef.get_attr("FInferShape")(parse(opdef, params), [data, None], [None])


def test_adj_must_match_kernel_dims():
    with pytest.raises(ParamError, match="adj must have the same number of dimensions"):
        parse(op_def("Deconvolution"), {"kernel": (3, 3), "num_filter": 1, "adj": (1,)})


def test_stride_one_3x3_runs_the_winograd_kernels():
    """A 3x3 stride-1 deconvolution with >= 8 channels is a Winograd convolution of the
    padded data with the flipped weight; its gradients too."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 8, 9, 8)), rng.standard_normal((8, 9, 3, 3))
    kw = {"kernel": (3, 3), "num_filter": 9, "pad": (1, 0)}
    want = deconv_ref(x, w, None, (1, 1), (1, 1), (1, 0), (0, 0), 1, 9)
    check_forward("Deconvolution", [x, w], want, kw, rtol=1e-9, atol=1e-9)
    gy = rng.standard_normal(want.shape)
    check_backward("Deconvolution", [x, w], [gy],
                   list(deconv_grads_ref(x, w, gy, (1, 1), (1, 1), (1, 0), 1)), kw, rtol=1e-9,
                   atol=1e-9)
