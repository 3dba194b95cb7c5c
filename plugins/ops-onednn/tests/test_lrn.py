"""oneDNN LRN equals ops-nn's kernel, forward (output and the hidden tmp_norm) and gradient;
other dtypes fall back per call."""

from __future__ import annotations

import numpy as np
import pytest

rng = np.random.default_rng(5)
pytestmark = pytest.mark.usefixtures("no_rules")

CASES = [
    ((2, 6, 5, 4), {"nsize": 5, "alpha": 0.5}),
    ((2, 5, 3, 2), {"nsize": 3, "alpha": 0.5}),
    ((1, 4, 2, 2), {"nsize": 5, "alpha": 1.0, "beta": 0.5, "knorm": 1.0}),
    ((3, 16, 7, 7), {"nsize": 1, "beta": 1.5, "knorm": 3.0}),
    ((2, 9, 6, 6), {"nsize": 7, "alpha": 2e-3}),
]


def _x(shape, dtype=np.float32):
    return (2 * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("shape, params", CASES)
def test_forward_and_gradient_equal_ops_nn(shape, params, compare):
    x = _x(shape)
    out = compare("LRN", [x], params)
    compare("_backward_LRN", [_x(shape), x, out[1]], params)


def test_req_add_and_a_tmp_norm_not_asked_for(compare):
    shape, p = CASES[0]
    x = _x(shape)
    compare("LRN", [x], p, "add", [_x(shape), _x(shape)])
    start = [_x(shape), _x(shape)]
    got = compare("LRN", [x], p, ["write", "null"], start)
    np.testing.assert_array_equal(got[1], start[1])
    out = compare("LRN", [x], p)
    compare("_backward_LRN", [_x(shape), x, out[1]], p, "add", [_x(shape)])


def test_float64_falls_back(compare):
    shape, p = CASES[1]
    x = _x(shape, np.float64)
    out = compare("LRN", [x], p, path="fallback")
    compare("_backward_LRN", [_x(shape, np.float64), x, out[1]], p, path="fallback")
