"""oneDNN Pooling (max, avg; forward and gradient) equals ops-nn's kernel; what it does not
cover falls back per call."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("no_rules")     # oneDNN's code, whatever the rule says
rng = np.random.default_rng(1)

COVERED = [
    ((2, 3, 8, 8), {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"}),
    ((2, 3, 9, 7), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max"}),
    ((2, 3, 9, 7), {"kernel": (3, 3), "stride": (2, 1), "pad": (1, 1), "pool_type": "avg"}),
    ((2, 3, 9, 7), {"kernel": (3, 2), "pad": (1, 1), "pool_type": "avg",
                    "count_include_pad": False}),
    ((2, 4, 10), {"kernel": (3,), "stride": (2,), "pool_type": "max"}),
    ((1, 2, 5, 6, 4), {"kernel": (2, 2, 2), "stride": (1, 2, 1), "pool_type": "avg"}),
    ((2, 5, 7, 7), {"global_pool": True, "pool_type": "avg"}),
    ((2, 5, 7, 7), {"global_pool": True, "pool_type": "max", "kernel": (1, 1)}),
]

NOT_COVERED = [
    ((2, 3, 8, 8), {"kernel": (3, 3), "stride": (2, 2), "pool_type": "max",
                    "pooling_convention": "full"}),
    ((2, 3, 8, 8), {"kernel": (2, 2), "pool_type": "sum"}),
    ((2, 3, 8, 8), {"kernel": (2, 2), "pool_type": "lp", "p_value": 2}),
    ((2, 8, 8, 3), {"kernel": (2, 2), "pool_type": "max", "layout": "NHWC"}),
]


def _backward_inputs(compare, shape, params, path="onednn"):
    x = rng.standard_normal(shape).astype(np.float32)
    y = compare("Pooling", [x], params, path=path)[0]
    return [rng.standard_normal(y.shape).astype(np.float32), x, y]


@pytest.mark.parametrize("shape, params", COVERED)
def test_forward_and_gradient_equal_ops_nn(shape, params, compare):
    ins = _backward_inputs(compare, shape, params)
    compare("_backward_Pooling", ins, params)


@pytest.mark.parametrize("shape, params", COVERED[1:3])
def test_req_add_and_null(shape, params, compare):
    ins = _backward_inputs(compare, shape, params)
    start = [rng.standard_normal(shape).astype(np.float32)]
    compare("_backward_Pooling", ins, params, "add", start)
    got = compare("_backward_Pooling", ins, params, "null", start)
    np.testing.assert_array_equal(got[0], start[0])
    y = ins[2]
    compare("Pooling", ins[1:2], params, "add", [rng.standard_normal(y.shape).astype("f4")])


def test_max_gradient_goes_to_the_first_maximum_of_a_window(compare):
    """Ties (as after a ReLU) take MXNet's rule, the first maximum in raster order."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    x[0, 0, 1, 1] = x[0, 0, 2, 3] = 1
    og = np.ones((1, 1, 2, 2), np.float32)
    p = {"kernel": (2, 2), "stride": (2, 2)}
    y = compare("Pooling", [x], p)[0]
    compare("_backward_Pooling", [og, x, y], p)


@pytest.mark.parametrize("shape, params", NOT_COVERED)
def test_what_it_does_not_cover_falls_back(shape, params, compare):
    ins = _backward_inputs(compare, shape, params, path="fallback")
    compare("_backward_Pooling", ins, params, path="fallback")


def test_float64_falls_back(compare):
    x = rng.standard_normal((2, 3, 6, 6))
    compare("Pooling", [x], {"kernel": (2, 2), "pool_type": "avg"}, path="fallback")
