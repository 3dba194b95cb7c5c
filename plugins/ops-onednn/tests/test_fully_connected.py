"""oneDNN FullyConnected (forward, data, weight and bias gradients) equals ops-nn's kernel;
float64 falls back."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("no_rules")     # oneDNN's code, whatever the rule says
rng = np.random.default_rng(2)

CASES = [((8, 20), 7, {}), ((4, 3, 5), 6, {"no_bias": True}), ((2, 3, 4), 5, {"flatten": False}),
         ((128, 784), 1024, {})]


def _inputs(shape, n, params, dtype=np.float32):
    k = int(np.prod(shape[1:])) if params.get("flatten", True) else shape[-1]
    ins = [rng.standard_normal(shape).astype(dtype), rng.standard_normal((n, k)).astype(dtype)]
    if not params.get("no_bias"):
        ins.append(rng.standard_normal(n).astype(dtype))
    return ins, dict(params, num_hidden=n)


@pytest.mark.parametrize("shape, n, params", CASES)
def test_forward_and_gradients_equal_ops_nn(shape, n, params, compare):
    ins, p = _inputs(shape, n, params)
    y = compare("FullyConnected", ins, p)[0]
    og = rng.standard_normal(y.shape).astype(np.float32)
    grads = compare("_backward_FullyConnected", [og] + ins, p)
    start = [rng.standard_normal(g.shape).astype(np.float32) for g in grads]
    compare("_backward_FullyConnected", [og] + ins, p, "add", start)
    req = ["null", "add"] + ["write"] * (len(grads) - 2)
    got = compare("_backward_FullyConnected", [og] + ins, p, req, start)
    np.testing.assert_array_equal(got[0], start[0])
    compare("FullyConnected", ins, p, "add", [rng.standard_normal(y.shape).astype("f4")])


def test_float64_falls_back(compare):
    ins, p = _inputs((4, 6), 3, {}, np.float64)
    compare("FullyConnected", ins, p, path="fallback")
