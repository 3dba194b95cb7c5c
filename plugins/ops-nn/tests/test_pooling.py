"""Pooling: every type and convention against per-window loops, first-max gradients, global
pooling, channels-last layouts, inference and errors."""

import itertools
from math import ceil

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, parse, run_op


def windows(size, k, s, q, conv):
    """(start, end, end clipped to the padded input) of each window along one axis."""
    if conv == "valid":
        n = 1 + (size + 2 * q - k) // s
    elif conv == "full":
        n = 1 + ceil((size + 2 * q - k) / s)
    else:
        n = ceil((size + 2 * q) / s)
    return [(o * s - q, o * s - q + k) for o in range(n)]


def pool_ref(x, kernel, stride, pad, pool_type, conv="valid", include_pad=True, p_value=None):
    """Loops over windows (float64); also returns, per output, the flat input index that max
    pooling's gradient goes to (the first maximum in raster order)."""
    nd = x.ndim - 2
    axes = [windows(x.shape[2 + i], kernel[i], stride[i], pad[i], conv) for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(len(a) for a in axes))
    first = {}
    for n, c in itertools.product(*map(range, x.shape[:2])):
        for o in itertools.product(*(range(len(a)) for a in axes)):
            lo = [max(axes[i][o[i]][0], 0) for i in range(nd)]
            hi = [min(axes[i][o[i]][1], x.shape[2 + i]) for i in range(nd)]
            if include_pad:
                count = np.prod([min(axes[i][o[i]][1], x.shape[2 + i] + pad[i]) - axes[i][o[i]][0]
                                 for i in range(nd)])
            else:
                count = np.prod([h - l for l, h in zip(lo, hi)])
            vals = [(x[(n, c) + at], at) for at in itertools.product(*map(range, lo, hi))]
            if pool_type == "max":
                best = max(v for v, _ in vals)
                out[(n, c) + o] = best
                first[(n, c) + o] = next(at for v, at in vals if v == best)
            elif pool_type == "lp":
                out[(n, c) + o] = np.sum([v ** p_value for v, _ in vals]) ** (1 / p_value) \
                    if p_value != 3 else np.cbrt(np.sum([v ** 3 for v, _ in vals]))
            else:
                total = sum(v for v, _ in vals)
                out[(n, c) + o] = total / count if pool_type == "avg" else total
    return out, first


CASES = [  # shape, params
    ((2, 3, 6, 6), {"kernel": (2, 2), "stride": (2, 2)}),
    ((2, 2, 7, 5), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((1, 2, 7, 6), {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 0),
                    "pooling_convention": "full"}),
    ((1, 2, 7, 6), {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 1), "count_include_pad": False,
                    "pooling_convention": "full"}),
    ((2, 2, 9), {"kernel": (3,), "stride": (2,), "pooling_convention": "same"}),
    ((1, 2, 4, 5, 4), {"kernel": (2, 3, 2), "stride": (2, 1, 2), "pad": (1, 1, 0)}),
]


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("shape, params", CASES)
def test_forward_matches_window_loops(shape, params, pool_type):
    x = np.random.default_rng(0).standard_normal(shape)
    nd = len(shape) - 2
    want, _ = pool_ref(x, params["kernel"], params.get("stride", (1,) * nd),
                       params.get("pad", (0,) * nd), pool_type,
                       params.get("pooling_convention", "valid"),
                       params.get("count_include_pad", True))
    check_forward("Pooling", [x], want, {**params, "pool_type": pool_type}, rtol=1e-12,
                  atol=1e-12)


@pytest.mark.parametrize("p_value", [1, 2, 3])
def test_lp_pooling(p_value):
    x = np.random.default_rng(1).uniform(0.1, 1, (2, 2, 5, 4))
    want, _ = pool_ref(x, (2, 2), (1, 1), (0, 0), "lp", p_value=p_value)
    kw = {"kernel": (2, 2), "pool_type": "lp", "p_value": p_value}
    check_forward("Pooling", [x], want, kw, rtol=1e-12, atol=1e-12)
    gy = np.ones(want.shape)
    if p_value == 2:   # d sqrt(sum x^2) / dx = x / y, summed over the windows holding x
        gx = np.zeros(x.shape)
        for o in np.ndindex(*want.shape[2:]):
            gx[:, :, o[0]:o[0] + 2, o[1]:o[1] + 2] += x[:, :, o[0]:o[0] + 2, o[1]:o[1] + 2] / \
                want[:, :, o[0]:o[0] + 1, o[1]:o[1] + 1]
        check_backward("Pooling", [x], [gy], [gx], kw)


def test_max_gradient_goes_to_the_first_maximum_of_each_window():
    x = np.round(np.random.default_rng(2).standard_normal((2, 2, 6, 6)))   # many ties
    kw = {"kernel": (3, 3), "stride": (1, 1), "pad": (1, 1)}
    want, first = pool_ref(x, (3, 3), (1, 1), (1, 1), "max")
    gy = np.random.default_rng(3).standard_normal(want.shape)
    gx = np.zeros(x.shape)
    for o, at in first.items():
        gx[o[:2] + at] += gy[o]
    check_backward("Pooling", [x], [gy], [gx], kw)
    # global: the first maximum of the whole map
    kw = {"global_pool": True}
    gy = np.random.default_rng(4).standard_normal((2, 2, 1, 1))
    gx = np.zeros(x.shape)
    for n, c in np.ndindex(2, 2):
        i = np.argmax(x[n, c])
        gx[n, c].flat[i] = gy[n, c, 0, 0]
    check_backward("Pooling", [x], [gy], [gx], kw)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_global_pooling_ignores_kernel(pool_type):
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5, 2))
    reduce = {"max": np.max, "avg": np.mean, "sum": np.sum}[pool_type]
    check_forward("Pooling", [x], reduce(x, axis=(2, 3, 4), keepdims=True),
                  {"global_pool": True, "pool_type": pool_type, "kernel": (2, 2, 2)})


@pytest.mark.parametrize("layout, axes", [("NWC", (0, 2, 1)), ("NHWC", (0, 3, 1, 2)),
                                          ("NDHWC", (0, 4, 1, 2, 3))])
def test_channels_last_layouts_equal_transposed_channels_first(layout, axes):
    nd = len(axes) - 2
    x = np.random.default_rng(6).standard_normal((2,) + (5,) * nd + (3,))
    kw = {"kernel": (2,) * nd, "stride": (2,) * nd, "pad": (1,) * nd, "pool_type": "avg"}
    first = run_op("Pooling", [np.ascontiguousarray(x.transpose(axes))], kw)[0]
    back = np.argsort(axes)
    check_forward("Pooling", [x], first.transpose(back), {**kw, "layout": layout})


def test_stride_and_pad_longer_than_kernel_use_their_first_entries():
    # MXNet 1.9 reads the first len(kernel) entries: max over (1, 1, 10) with pad (1, 1, 1)
    x = np.arange(10, dtype=np.float32).reshape(1, 1, 10)
    want = np.array([[[0, 2, 4, 6, 8, 9]]], np.float32)
    check_forward("Pooling", [x], want, {"kernel": (2,), "stride": (2, 1), "pad": (1, 1, 1)})
    check_forward("Pooling", [x], x[:, :, 1::2], {"kernel": (2,), "stride": (2,), "pad": (0, 0, 0),
                                                  "pooling_convention": "same"})
    with pytest.raises(ShapeError, match="does not take pad"):
        run_op("Pooling", [x], {"kernel": (2,), "stride": (2,), "pad": (0, 1, 0),
                                "pooling_convention": "same"})


def test_output_shapes_of_the_conventions():
    opdef = op_def("Pooling")

    def out(shape, **kw):
        return infer(opdef, parse(opdef, kw), [shape], ["float32"])[1][0]
    assert out(shape=(1, 1, 7, 7), kernel=(2, 2), stride=(2, 2)) == (1, 1, 3, 3)
    assert out(shape=(1, 1, 7, 7), kernel=(2, 2), stride=(2, 2),
               pooling_convention="full") == (1, 1, 4, 4)
    assert out(shape=(1, 1, 7), kernel=(2,), stride=(3,), pooling_convention="same") == (1, 1, 3)
    assert out(shape=(4, 8, 7, 6), global_pool=True) == (4, 8, 1, 1)
    assert out(shape=(4, 7, 6, 8), global_pool=True, layout="NHWC") == (4, 1, 1, 8)


@pytest.mark.parametrize("params, shape, match", [
    ({"kernel": (5, 5)}, (1, 1, 4, 4), "kernel size \\(5\\) exceeds input \\(4 padded to 4\\)"),
    ({"kernel": (2, 2), "pooling_convention": "same"}, (1, 1, 4, 4), "supports 1-D pooling only"),
    ({"kernel": (2,), "pooling_convention": "same", "pad": (1,)}, (1, 1, 4), "does not take pad"),
    ({}, (1, 1, 4, 4), "kernel is required unless global_pool"),
    ({"kernel": (2, 2)}, (1, 1, 4), "a 2-d kernel \\(2, 2\\) needs 4-d data"),
    ({"kernel": (2, 2)}, (1, 4), "data should be 3-d"),
])
def test_shape_errors(params, shape, match):
    opdef = op_def("Pooling")
    with pytest.raises(ShapeError, match="Operator 'Pooling': .*" + match):
        opdef.get_attr("FInferShape")(parse(opdef, params), [shape], [None])


@pytest.mark.parametrize("params, match", [
    ({"kernel": (2, 2), "pool_type": "lp"}, "lp pooling needs p_value 1, 2 or 3"),
    ({"kernel": (2, 2), "pool_type": "lp", "p_value": 4}, "p_value"),
    ({"kernel": (2, 0)}, "kernel entries must be positive"),
    ({"kernel": (2, 2), "stride": (1,)}, "stride \\(1,\\) must have at least as many entries"),
    ({"kernel": (2, 2), "pool_type": "median"}, "pool_type"),
])
def test_parameter_errors(params, match):
    with pytest.raises(ParamError, match=match):
        parse(op_def("Pooling"), params)


def test_mxnet_symbol_json_attributes():
    p = parse(op_def("Pooling"), {"kernel": "(2, 2)", "pool_type": "max", "stride": "(2, 2)",
                                  "pad": "(0, 0)", "global_pool": "False", "cudnn_off": "False",
                                  "pooling_convention": "valid", "p_value": "None",
                                  "count_include_pad": "None", "layout": "None"})
    assert p.kernel == (2, 2) and p.p_value is None and p.count_include_pad is None


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_gradient_when_windows_tile_the_input(pool_type):
    """stride == kernel, no pad: each tap view of the gradient is written once; ties still
    send max pooling's gradient to the first maximum."""
    x = np.round(np.random.default_rng(8).standard_normal((2, 3, 6, 4)))
    kw = {"kernel": (2, 2), "stride": (2, 2), "pool_type": pool_type}
    want, first = pool_ref(x, (2, 2), (2, 2), (0, 0), pool_type)
    gy = np.random.default_rng(9).standard_normal(want.shape)
    if pool_type == "max":
        gx = np.zeros(x.shape)
        for o, at in first.items():
            gx[o[:2] + at] += gy[o]
    else:
        gx = np.repeat(np.repeat(gy, 2, axis=2), 2, axis=3) / (4 if pool_type == "avg" else 1)
    check_backward("Pooling", [x], [gy], [gx], kw)
    got = run_op("_backward_Pooling", [gy, x, want], kw, req="add",
                 outputs=[np.ones(x.shape)])[0]
    np.testing.assert_allclose(got, gx + 1)
