"""Convolution: forward and gradients against loop references, inference, errors."""

import itertools

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, parse, run_op

from mxnext_ops_nn import _conv_kernels


def conv_ref(x, w, b, stride, dilate, pad, groups):
    """Direct loops over every output element (float64)."""
    n, c = x.shape[:2]
    f, k = w.shape[0], w.shape[2:]
    nd = len(k)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [(xp.shape[2 + i] - (k[i] - 1) * dilate[i] - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, f, *out))
    cg, fg = c // groups, f // groups
    for b_, o_f in itertools.product(range(n), range(f)):
        g = o_f // fg
        for o in itertools.product(*map(range, out)):
            acc = 0.0 if b is None else float(b[o_f])
            for ci in range(cg):
                for t in itertools.product(*map(range, k)):
                    at = tuple(o[i] * stride[i] + t[i] * dilate[i] for i in range(nd))
                    acc += xp[(b_, g * cg + ci) + at] * w[(o_f, ci) + t]
            y[(b_, o_f) + o] = acc
    return y


def conv_grads_ref(x, w, gy, stride, dilate, pad, groups):
    """Input and weight gradients by scattering each output's head gradient (loops)."""
    n, c = x.shape[:2]
    f, k = w.shape[0], w.shape[2:]
    nd = len(k)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    gxp, gw = np.zeros_like(xp), np.zeros(w.shape)
    cg, fg = c // groups, f // groups
    for b_, o_f in itertools.product(range(n), range(f)):
        g = o_f // fg
        for o in itertools.product(*map(range, gy.shape[2:])):
            h = gy[(b_, o_f) + o]
            for ci in range(cg):
                for t in itertools.product(*map(range, k)):
                    at = tuple(o[i] * stride[i] + t[i] * dilate[i] for i in range(nd))
                    gxp[(b_, g * cg + ci) + at] += h * w[(o_f, ci) + t]
                    gw[(o_f, ci) + t] += h * xp[(b_, g * cg + ci) + at]
    crop = tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:]))
    return gxp[(slice(None), slice(None)) + crop], gw, gy.reshape(n, f, -1).sum(axis=(0, 2))


CASES = [  # data, weight, kernel params
    ((2, 3, 9), (4, 3, 3), {"kernel": (3,), "stride": (2,), "pad": (1,)}),
    ((2, 4, 7, 6), (6, 2, 3, 2), {"kernel": (3, 2), "num_group": 2, "pad": (1, 1),
                                  "stride": (2, 1), "dilate": (1, 2)}),
    ((1, 2, 8, 7), (3, 2, 3, 3), {"kernel": (3, 3), "dilate": (2, 2), "pad": (2, 0)}),
    ((2, 2, 4, 5, 4), (2, 2, 2, 3, 2), {"kernel": (2, 3, 2), "stride": (1, 2, 1),
                                        "pad": (1, 1, 0)}),
    ((3, 4, 5, 5), (4, 1, 3, 3), {"kernel": (3, 3), "num_group": 4, "pad": (1, 1)}),
    ((2, 3, 6, 6), (5, 3, 1, 1), {"kernel": (1, 1), "stride": (2, 2)}),
    ((2, 2, 5, 5), (3, 2, 3, 3), {"kernel": (3, 3), "pad": (3, 2)}),   # pad beyond the kernel
    # the three column layouts: flat padded grid, items innermost (short rows), items first
    ((1, 3, 6, 20), (4, 3, 3, 3), {"kernel": (3, 3), "pad": (1, 1)}),
    ((2, 1, 5, 18), (6, 1, 3, 3), {"kernel": (3, 3), "pad": (1, 1)}),
    ((1, 2, 5, 34), (3, 2, 3, 3), {"kernel": (3, 3), "stride": (1, 2)}),
]


def _geom(params, nd):
    return (params.get("stride", (1,) * nd), params.get("dilate", (1,) * nd),
            params.get("pad", (0,) * nd), params.get("num_group", 1))


@pytest.mark.parametrize("xs, ws, params", CASES)
@pytest.mark.parametrize("no_bias", [False, True])
def test_forward_matches_loops(xs, ws, params, no_bias):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    kw = {**params, "num_filter": ws[0], "no_bias": no_bias}
    want = conv_ref(x, w, None if no_bias else b, *_geom(params, len(ws) - 2))
    check_forward("Convolution", [x, w] + ([] if no_bias else [b]), want, kw, rtol=1e-10,
                  atol=1e-10)


@pytest.mark.parametrize("xs, ws, params", CASES)
def test_gradients_match_loops(xs, ws, params):
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    kw = {**params, "num_filter": ws[0]}
    y = run_op("Convolution", [x, w, b], kw)[0]
    gy = rng.standard_normal(y.shape)
    check_backward("Convolution", [x, w, b], [gy],
                   list(conv_grads_ref(x, w, gy, *_geom(params, len(ws) - 2))), kw,
                   rtol=1e-9, atol=1e-9)


def test_many_chunks_and_a_partial_last_one(monkeypatch):
    """A batch split into several cache-sized chunks (the last one shorter) gives the same
    results as one chunk."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((7, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    kw = {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "no_bias": True}
    y = run_op("Convolution", [x, w], kw)[0]
    gy = rng.standard_normal(y.shape)
    from opsdk.testing import eval_gradients
    grads = eval_gradients("Convolution", [x, w], [gy], kw)
    monkeypatch.setattr(_conv_kernels, "CHUNK_BYTES", 3 * 8 * 3 * 8 * 8 * 12)  # ~2 items
    check_forward("Convolution", [x, w], y, kw, rtol=1e-12, atol=1e-12)
    check_backward("Convolution", [x, w], [gy], grads, kw, rtol=1e-12, atol=1e-12)
    kw["stride"] = (2, 2)
    y = run_op("Convolution", [x, w], kw)[0]
    check_forward("Convolution", [x, w], conv_ref(x, w, None, (2, 2), (1, 1), (1, 1), 1), kw)


@pytest.mark.parametrize("shape", [(7, 4, 6, 6), (5, 8, 8, 8)])      # im2col, Winograd
def test_in_place_over_the_data_across_chunks(shape, monkeypatch):
    """Written over its own data (WRITE_INPLACE, as the executor plans it where the data
    dies), a layer split into several chunks of items gives the values it gives apart."""
    from mxnext_ops_nn import _winograd
    monkeypatch.setattr(_conv_kernels, "CHUNK_BYTES", 3 * 8 * 4 * 8 * 8 * 12)  # ~2 items
    monkeypatch.setattr(_winograd, "TILE_BYTES", 1)                            # 1 item
    rng = np.random.default_rng(8)
    c = shape[1]
    x, w, b = rng.standard_normal(shape), rng.standard_normal((c, c, 3, 3)), \
        rng.standard_normal(c)
    kw = {"kernel": (3, 3), "num_filter": c, "pad": (1, 1)}
    want = conv_ref(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    data = x.copy()
    got = run_op("Convolution", [data, w, b], kw, req="inplace", outputs=[data])[0]
    assert got is data
    np.testing.assert_allclose(data, want, rtol=1e-9, atol=1e-9)


def test_float16_computes_in_float32():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float16)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float16)
    out = run_op("Convolution", [x, w], {"kernel": (3, 3), "num_filter": 2, "no_bias": True})[0]
    assert out.dtype == np.float16
    want = conv_ref(x.astype(np.float32), w.astype(np.float32), None, (1, 1), (1, 1), (0, 0), 1)
    np.testing.assert_allclose(out, want, rtol=2e-3, atol=2e-2)


def test_req_add_accumulates():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 2, 4, 4)), rng.standard_normal((3, 2, 2, 2))
    kw = {"kernel": (2, 2), "num_filter": 3, "no_bias": True}
    y = run_op("Convolution", [x, w], kw)[0]
    got = run_op("Convolution", [x, w], kw, req="add", outputs=[np.ones_like(y)])[0]
    np.testing.assert_allclose(got, y + 1)


def test_inference_fills_weight_and_bias_from_data():
    opdef = op_def("Convolution")
    p = parse(opdef, {"kernel": "(5, 5)", "num_filter": "20", "num_group": "2", "pad": "(2, 2)",
                      "stride": "(2, 2)"})
    ins, outs, _, _ = infer(opdef, p, [(8, 6, 28, 28), None, None], ["float32", None, None])
    assert ins == [(8, 6, 28, 28), (20, 3, 5, 5), (20,)]
    assert outs == [(8, 20, 14, 14)]
    assert opdef.list_input_names(p) == ["data", "weight", "bias"]
    assert opdef.list_input_names(parse(opdef, {"kernel": (3,), "num_filter": 1,
                                                "no_bias": True})) == ["data", "weight"]


def test_mxnet_json_attributes_parse():
    p = parse(op_def("Convolution"), {
        "kernel": "(3, 3)", "num_filter": "64", "pad": "(1, 1)", "stride": "(1, 1)",
        "dilate": "(1, 1)", "no_bias": "True", "workspace": "1024", "cudnn_tune": "None",
        "cudnn_off": "False", "layout": "None", "num_group": "1"})
    assert p.kernel == (3, 3) and p.no_bias is True and p.cudnn_tune is None
    assert p.to_mxnet_dict()["kernel"] == "(3, 3)"


@pytest.mark.parametrize("kwargs, match", [
    ({"kernel": (3, 3), "num_filter": 2, "stride": (1,)}, "stride must have the same number"),
    ({"kernel": (3, 3), "num_filter": 2, "dilate": (0, 1)}, "dilate entries must be positive"),
    ({"kernel": (1, 2, 3, 4), "num_filter": 2}, "kernel must have 1, 2 or 3 entries"),
    ({"kernel": (3, 3), "num_filter": 0}, "num_filter"),
    ({"kernel": (3, 3), "num_filter": 2, "cudnn_tune": "slow"}, "cudnn_tune"),
    ({"num_filter": 2}, "kernel"),
])
def test_parameter_errors(kwargs, match):
    with pytest.raises(ParamError, match=match):
        parse(op_def("Convolution"), kwargs)


@pytest.mark.parametrize("params, shapes, match", [
    ({"kernel": (3, 3), "num_filter": 4, "num_group": 2}, [(1, 3, 5, 5), None, None],
     "3 channels, not divisible by num_group=2"),
    ({"kernel": (3, 3), "num_filter": 3, "num_group": 2}, [(1, 4, 5, 5), None, None],
     "num_filter=3 is not divisible"),
    ({"kernel": (7, 7), "num_filter": 4}, [(1, 3, 5, 5), None, None],
     "kernel size 7 \\(dilated\\) exceeds input 5 padded to 5"),
    ({"kernel": (3, 3), "num_filter": 4}, [(1, 3, 5), None, None], "data should be 4-d"),
    ({"kernel": (3, 3), "num_filter": 4}, [(1, 3, 5, 5), (4, 2, 3, 3), None],
     "'weight' has shape \\(4, 2, 3, 3\\), expected \\(4, 3, 3, 3\\)"),
    ({"kernel": (3, 3), "num_filter": 4}, [(1, 3, 5, 5), None, (3,)],
     "'bias' has shape \\(3,\\), expected \\(4,\\)"),
    ({"kernel": (3, 3), "num_filter": 4, "layout": "NHWC"}, [(1, 5, 5, 3), None, None],
     "layout 'NHWC' is not supported on cpu"),
])
def test_shape_errors_name_op_and_argument(params, shapes, match):
    opdef = op_def("Convolution")
    with pytest.raises(ShapeError, match="Operator 'Convolution': .*" + match):
        opdef.get_attr("FInferShape")(parse(opdef, params), shapes, [None])


@pytest.mark.parametrize("shape, pad", [((3, 8, 10, 9), (1, 1)), ((2, 9, 10, 10), (0, 0)),
                                        ((2, 8, 9, 11), (3, 2))])
def test_winograd_path_matches_loops(shape, pad, monkeypatch):
    """3x3 stride-1 layers with >= 8 channels and >= 8x8 outputs run Winograd F(4x4, 3x3);
    uneven tile counts, pads beyond the kernel (cropped data-gradient input) and several
    batch chunks with a shorter last one give the loop reference's values."""
    from mxnext_ops_nn import _winograd
    monkeypatch.setattr(_winograd, "TILE_BYTES", 1)          # one item per chunk
    rng = np.random.default_rng(7)
    f = 10
    x, w, b = rng.standard_normal(shape), rng.standard_normal((f, shape[1], 3, 3)), \
        rng.standard_normal(f)
    kw = {"kernel": (3, 3), "num_filter": f, "pad": pad}
    out = tuple(n + 2 * q - 2 for n, q in zip(shape[2:], pad))
    assert _winograd.variant((3, 3), (1, 1), (1, 1), 1, shape[1], out) is _winograd.F4
    y = conv_ref(x, w, b, (1, 1), (1, 1), pad, 1)
    check_forward("Convolution", [x, w, b], y, kw, rtol=1e-9, atol=1e-9)
    gy = rng.standard_normal(y.shape)
    check_backward("Convolution", [x, w, b], [gy],
                   list(conv_grads_ref(x, w, gy, (1, 1), (1, 1), pad, 1)), kw, rtol=1e-9,
                   atol=1e-9)
    got = run_op("Convolution", [x.astype(np.float32), w.astype(np.float32),
                                 b.astype(np.float32)], kw)[0]
    np.testing.assert_allclose(got, y, rtol=1e-4, atol=1e-4 * np.abs(y).max())


def test_data_shape_filled_back_from_output_and_weight():
    """At stride 1 the output and the weight give the data shape (batch, channels, sizes)."""
    opdef = op_def("Convolution")
    p = parse(opdef, {"kernel": (3, 3), "num_filter": 8, "pad": (1, 0), "dilate": (1, 2),
                      "num_group": 2})
    ins, _ = opdef.get_attr("FInferShape")(p, [None, (8, 3, 3, 3), None], [(4, 8, 10, 6)])
    assert ins == [(4, 6, 10, 10), (8, 3, 3, 3), (8,)]
    strided = parse(opdef, {"kernel": (3, 3), "num_filter": 8, "stride": (2, 2)})
    ins, _ = opdef.get_attr("FInferShape")(strided, [None, (8, 3, 3, 3), None], [(4, 8, 5, 5)])
    assert ins[0] == (4, 3, 0, 0)      # strided sizes stay unknown (0, MXNet's legacy shapes)
