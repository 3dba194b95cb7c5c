"""oneDNN sgd_update equals ops-nn's kernel bit for bit (the same float32 scales); clipping,
other dtypes and overlapping outputs fall back; the rule takes large weights only."""

from __future__ import annotations

import numpy as np
import pytest

rng = np.random.default_rng(3)


def _f(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("params", [{"lr": 0.05, "rescale_grad": 1 / 128},
                                    {"lr": 0.1, "wd": 0.01, "rescale_grad": 0.5}])
def test_equals_ops_nn_bit_for_bit(params, compare):
    w, g = _f(7, 5), _f(7, 5)
    got = compare("sgd_update", [w, g], params, rtol=0, atol=0)[0]
    want = (np.float32(1) - np.float32(params["lr"]) * np.float32(params.get("wd", 0))) * w \
        - (np.float32(params["lr"]) * np.float32(params["rescale_grad"])) * g
    np.testing.assert_array_equal(got, want)


@pytest.mark.usefixtures("no_rules")
def test_writes_in_place_over_the_weight():
    import mxnext as mx
    w, g = _f(64, 32), _f(64, 32)
    a, b = mx.nd.array(w), mx.nd.array(g)
    mx.nd.sgd_update(a, b, lr=0.1, out=a)
    np.testing.assert_array_equal(a.asnumpy(), w - np.float32(0.1) * g)


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("params, dtype", [({"lr": 0.1, "clip_gradient": 0.5}, np.float32),
                                           ({"lr": 0.1}, np.float64)])
def test_clipping_and_other_dtypes_fall_back(params, dtype, compare):
    compare("sgd_update", [_f(4, 3, dtype=dtype), _f(4, 3, dtype=dtype)], params,
            path="fallback")


@pytest.mark.parametrize("shape, path", [((1024, 1024), "onednn"), ((500, 800), "fallback")])
def test_the_rule_takes_large_weights(shape, path, compare):
    compare("sgd_update", [_f(*shape), _f(*shape)], {"lr": 0.05}, path=path)
