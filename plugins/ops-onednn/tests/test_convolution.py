"""oneDNN Convolution (forward, data, weight and bias gradients) equals ops-nn's kernel over
many geometries, honours req, and falls back per call where it does not cover."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("no_rules")      # oneDNN's code, whatever the rules say
rng = np.random.default_rng(0)

# (data shape, num_filter, params)
CASES = [
    ((2, 3, 8, 8), 4, {"kernel": (3, 3)}),
    ((2, 4, 9, 7), 6, {"kernel": (3, 3), "pad": (1, 1), "stride": (2, 1)}),
    ((1, 4, 10, 10), 4, {"kernel": (3, 3), "num_group": 2, "dilate": (2, 1), "pad": (2, 1)}),
    ((2, 8, 6, 6), 8, {"kernel": (3, 3), "num_group": 8, "pad": (1, 1)}),       # depthwise
    ((3, 16, 7, 7), 32, {"kernel": (1, 1), "stride": (2, 2)}),
    ((2, 3, 11, 11), 5, {"kernel": (5, 3), "stride": (3, 2), "pad": (2, 0), "no_bias": True}),
    ((2, 6, 12), 4, {"kernel": (3,), "pad": (1,), "stride": (2,), "num_group": 2}),
    ((1, 2, 5, 6, 5), 3, {"kernel": (2, 3, 2), "pad": (1, 0, 1), "dilate": (1, 1, 2)}),
    ((4, 16, 14, 14), 16, {"kernel": (3, 3), "pad": (1, 1)}),
]


def _inputs(shape, f, params, dtype=np.float32):
    groups = params.get("num_group", 1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((f, shape[1] // groups) + params["kernel"]).astype(dtype)
    ins = [x, w] if params.get("no_bias") else [x, w, rng.standard_normal(f).astype(dtype)]
    return ins, dict(params, num_filter=f)


def _backward_inputs(compare, shape, f, params):
    (x, w, *_), p = _inputs(shape, f, params)
    y = compare("Convolution", [x, w] + ([] if p.get("no_bias") else [np.zeros(f, "f4")]), p)
    og = rng.standard_normal(y[0].shape).astype(np.float32)
    return [og, x, w], p


@pytest.mark.parametrize("shape, f, params", CASES)
def test_forward_equals_ops_nn(shape, f, params, compare):
    ins, p = _inputs(shape, f, params)
    compare("Convolution", ins, p)


@pytest.mark.parametrize("shape, f, params", CASES)
def test_gradients_equal_ops_nn(shape, f, params, compare):
    ins, p = _backward_inputs(compare, shape, f, params)
    compare("_backward_Convolution", ins, p)


@pytest.mark.parametrize("shape, f, params", CASES[:3] + CASES[5:7])
def test_req_add_accumulates_and_null_leaves_alone(shape, f, params, compare):
    ins, p = _inputs(shape, f, params)
    out = compare("Convolution", ins, p)
    start = [rng.standard_normal(o.shape).astype(np.float32) for o in out]
    compare("Convolution", ins, p, "add", start)
    bins, p = _backward_inputs(compare, shape, f, params)
    grads = compare("_backward_Convolution", bins, p)
    start = [rng.standard_normal(g.shape).astype(np.float32) for g in grads]
    for req in (["add"] * len(grads), ["null", "add"] + ["write"] * (len(grads) - 2),
                ["write", "null"] + ["add"] * (len(grads) - 2)):
        got = compare("_backward_Convolution", bins, p, req, start)
        for k, r in enumerate(req):
            if r == "null":
                np.testing.assert_array_equal(got[k], start[k])


def test_in_place_output_over_the_data():
    """The output may be the data's memory (FInplaceOption): the result is still right."""
    from opsdk.testing import run_op
    ins, p = _inputs((3, 4, 5, 6), 4, {"kernel": (3, 3), "pad": (1, 1)})
    want = run_op("Convolution", [a.copy() for a in ins], p)[0]
    x = ins[0].copy()
    got = run_op("Convolution", [x] + ins[1:], p, "inplace", [x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_float64_falls_back_to_ops_nn(compare):
    ins, p = _inputs((2, 3, 6, 6), 4, {"kernel": (3, 3)}, np.float64)
    compare("Convolution", ins, p, path="fallback")
    y = compare("Convolution", ins, p, path="fallback")[0]
    og = rng.standard_normal(y.shape)
    compare("_backward_Convolution", [og, ins[0], ins[1]], p, path="fallback")


def test_non_contiguous_input_falls_back(compare):
    from mxnext_ops_onednn._dispatch import calls
    from opsdk.testing import run_op
    ins, p = _inputs((2, 3, 6, 12), 4, {"kernel": (3, 3)})
    strided = ins[0][..., ::2]
    before = calls["Convolution", "fallback"]
    got = run_op("Convolution", [strided] + ins[1:], p)[0]
    assert calls["Convolution", "fallback"] == before + 1
    want = compare("Convolution", [strided.copy()] + ins[1:], p)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_primitive_cache_holds_one_plan_per_shape(compare):
    from mxnext_ops_onednn._prim import cache_size
    ins, p = _inputs((2, 5, 7, 7), 3, {"kernel": (2, 2), "stride": (2, 2)})
    compare("Convolution", ins, p)
    n = cache_size()
    compare("Convolution", ins, p)
    assert cache_size() == n
    ins, p = _inputs((3, 5, 7, 7), 3, {"kernel": (2, 2), "stride": (2, 2)})
    compare("Convolution", ins, p)
    assert cache_size() == n + 1
