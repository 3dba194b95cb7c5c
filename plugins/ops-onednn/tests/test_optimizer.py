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


def test_multi_sgd_large_weights_here_small_ones_on_ops_nn(compare):
    """Gluon's Trainer aggregates updates: the large weight on oneDNN (within a unit in the
    last place of ops-nn's expression), the small ones on ops-nn in the same call."""
    from mxnext_ops_onednn._dispatch import calls
    ins = [_f(1024, 1024), _f(1024, 1024), _f(1024), _f(1024), _f(10, 8), _f(10, 8)]
    p = {"num_weights": 3, "lrs": (0.1, 0.2, 0.3), "wds": (0.0, 0.01, 0.02),
         "rescale_grad": 0.5}
    compare("multi_sgd_update", ins, p, rtol=1e-6, atol=1e-7)
    compare("multi_sgd_update", ins[2:], dict(p, num_weights=2, lrs=(0.2, 0.3),
                                              wds=(0.01, 0.02)), path="fallback")
    assert calls["multi_sgd_update", "onednn"] >= 1


def test_multi_sgd_clipping_falls_back(compare):
    ins = [_f(1024, 1024), _f(1024, 1024)]
    compare("multi_sgd_update", ins, {"num_weights": 1, "lrs": (0.1,), "wds": (0.0,),
                                      "clip_gradient": 0.5}, path="fallback")
