"""oneDNN Deconvolution (forward; data, weight and bias gradients) equals ops-nn's kernel over
1-D, 2-D and 3-D geometries with groups, dilation, adj and target_shape; honours req; other
dtypes fall back per call."""

from __future__ import annotations

import numpy as np
import pytest

rng = np.random.default_rng(6)
pytestmark = pytest.mark.usefixtures("no_rules")

# (data shape, num_filter, params)
CASES = [
    ((2, 3, 4), 2, {"kernel": (3,), "stride": (2,), "adj": (1,), "no_bias": False}),
    ((2, 4, 3, 3), 6, {"kernel": (3, 3), "num_group": 2, "stride": (2, 2), "pad": (1, 1)}),
    ((1, 2, 3, 4), 2, {"kernel": (2, 3), "dilate": (2, 1), "no_bias": False,
                       "target_shape": (5, 6)}),
    ((2, 2, 2, 3, 2), 1, {"kernel": (2, 2, 2), "stride": (1, 2, 1)}),
    ((2, 3, 5, 4), 2, {"kernel": (3, 3), "pad": (1, 1)}),
    ((2, 8, 4, 4), 4, {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1), "no_bias": False}),
    ((2, 4, 5, 5), 3, {"kernel": (3, 3), "stride": (3, 2), "pad": (0, 1), "adj": (2, 1)}),
    ((2, 4, 5, 5), 6, {"kernel": (3, 3), "stride": (2, 2), "target_shape": (10, 10),
                       "num_group": 2}),
    ((2, 8, 6, 6), 8, {"kernel": (3, 3), "pad": (1, 1), "num_group": 8}),      # depthwise
]


def _inputs(shape, f, params, dtype=np.float32):
    groups = params.get("num_group", 1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], f // groups) + params["kernel"]).astype(dtype)
    ins = [x, w] + ([rng.standard_normal(f).astype(dtype)] if params.get("no_bias") is False
                    else [])
    return ins, dict(params, num_filter=f)


@pytest.mark.parametrize("shape, f, params", CASES)
def test_forward_and_gradients_equal_ops_nn(shape, f, params, compare):
    ins, p = _inputs(shape, f, params)
    y = compare("Deconvolution", ins, p)[0]
    compare("_backward_Deconvolution", [rng.standard_normal(y.shape).astype("f4"), *ins[:2]], p)


@pytest.mark.parametrize("shape, f, params", [CASES[0], CASES[5]])
def test_req_add_and_null(shape, f, params, compare):
    ins, p = _inputs(shape, f, params)
    y = compare("Deconvolution", ins, p)[0]
    compare("Deconvolution", ins, p, "add", [rng.standard_normal(y.shape).astype("f4")])
    bins = [rng.standard_normal(y.shape).astype("f4"), *ins[:2]]
    start = [rng.standard_normal(a.shape).astype("f4") for a in ins]
    compare("_backward_Deconvolution", bins, p, "add", start)
    got = compare("_backward_Deconvolution", bins, p, ["null", "write", "null"], start)
    np.testing.assert_array_equal(got[0], start[0])
    np.testing.assert_array_equal(got[2], start[2])


def test_float64_falls_back(compare):
    ins, p = _inputs(*CASES[1], dtype=np.float64)
    y = compare("Deconvolution", ins, p, path="fallback")[0]
    compare("_backward_Deconvolution", [np.ones_like(y), *ins[:2]], p, path="fallback")
