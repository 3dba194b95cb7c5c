"""The contrib AdamW update ops (through ``mx.nd.contrib``'s wrappers) against the formula, and
multi_sum_sq (the global-norm helper beside them in BERT training)."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.ndarray import contrib

RNG = np.random.default_rng(34)


def _arrays(shape, n=4):
    out = [RNG.uniform(-1, 1, shape) for _ in range(n)]
    out[3] = np.abs(out[3])                       # var is non-negative
    return out


def _reference(w, g, m, v, scale, lr, eta, wd, beta1=0.9, beta2=0.999, eps=1e-8, clip=-1.0):
    g = g * scale
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v


@pytest.mark.parametrize("scale", [0.5, "array"])
def test_adamw_update_matches_formula_and_updates_states(scale):
    w, g, m, v = _arrays((3, 4))
    nw, ng, nm, nv = (mx.nd.array(a) for a in (w, g, m, v))
    rescale = mx.nd.array([0.5]) if scale == "array" else scale
    contrib.adamw_update(nw, ng, nm, nv, rescale, lr=0.1, eta=0.7, wd=0.01,
                         clip_gradient=0.2, out=nw)
    ew, em, ev = _reference(w, g, m, v, 0.5, 0.1, 0.7, 0.01, clip=0.2)
    for got, want in ((nw, ew), (nm, em), (nv, ev)):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 0.0])
def test_adamw_update_is_skipped_for_a_bad_rescale(scale):
    w, g, m, v = _arrays((5,))
    nw, nm = mx.nd.array(w), mx.nd.array(m)
    contrib.adamw_update(nw, mx.nd.array(g), nm, mx.nd.array(v), scale, lr=0.1, eta=1.0,
                         out=nw)
    np.testing.assert_array_equal(nw.asnumpy(), w.astype(np.float32))
    np.testing.assert_array_equal(nm.asnumpy(), m.astype(np.float32))


def test_mp_adamw_update_steps_the_float32_master_copy():
    w, g, m, v = _arrays((6,))
    nw, ng = mx.nd.array(w, dtype="float16"), mx.nd.array(g, dtype="float16")
    w32 = nw.astype("float32")
    nm, nv = mx.nd.array(m), mx.nd.array(v)
    contrib.mp_adamw_update(nw, ng, nm, nv, w32, 2.0, lr=0.1, eta=1.0, wd=0.1, out=nw)
    ew, _, _ = _reference(w.astype(np.float16).astype(np.float64),
                          g.astype(np.float16).astype(np.float64), m, v, 2.0, 0.1, 1.0, 0.1)
    np.testing.assert_allclose(w32.asnumpy(), ew, rtol=1e-5, atol=1e-6)
    assert nw.dtype == np.float16
    np.testing.assert_array_equal(nw.asnumpy(), ew.astype(np.float32).astype(np.float16))


@pytest.mark.parametrize("mp", [False, True])
def test_multi_adamw_update_uses_per_weight_rates(mp):
    groups = [_arrays((2, 3)), _arrays((4,))]
    nd = [[mx.nd.array(a) for a in grp] for grp in groups]
    ws, gs, ms, vs = ([grp[k] for grp in nd] for k in range(4))
    lrs, wds, etas = [0.1, 0.2], [0.0, 0.1], [1.0, 0.5]
    if mp:
        masters = [w.copy() for w in ws]
        contrib.multi_mp_adamw_update(ws, gs, ms, vs, masters, 1.5, lrs=lrs, wds=wds,
                                      etas=etas, out=ws)
    else:
        contrib.multi_adamw_update(ws, gs, ms, vs, 1.5, lrs=lrs, wds=wds, etas=etas, out=ws)
    for i, (w, g, m, v) in enumerate(groups):
        ew, em, _ = _reference(w, g, m, v, 1.5, lrs[i], etas[i], wds[i])
        np.testing.assert_allclose(ws[i].asnumpy(), ew, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ms[i].asnumpy(), em, rtol=1e-5, atol=1e-6)
        if mp:
            np.testing.assert_allclose(masters[i].asnumpy(), ew, rtol=1e-5, atol=1e-6)


def test_multi_adamw_update_names_a_short_rate_list():
    ws = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    with pytest.raises(mx.MXNetError, match="etas has 1 value"):
        contrib.multi_adamw_update(ws, ws, [w.copy() for w in ws], [w.copy() for w in ws],
                                   1.0, lrs=[0.1, 0.1], wds=[0, 0], etas=[1.0])


def test_multi_sum_sq_gives_each_arrays_sum_of_squares_in_float32():
    arrays = [RNG.uniform(-2, 2, s) for s in [(3, 4), (5,), (2, 2, 2)]]
    got = mx.nd.multi_sum_sq(*[mx.nd.array(a, dtype="float16") for a in arrays],
                             num_arrays=3)
    assert got.shape == (3,) and got.dtype == np.float32
    want = [np.square(a.astype(np.float16).astype(np.float32)).sum() for a in arrays]
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    with pytest.raises(mx.MXNetError, match="array_1 has dtype float64, expected float32"):
        mx.nd.multi_sum_sq(mx.nd.ones(2), mx.nd.ones(2, dtype="float64"), num_arrays=2)


def test_mp_adamw_update_names_a_state_that_is_not_float32():
    half = mx.nd.ones(2, dtype="float16")
    with pytest.raises(mx.MXNetError, match="'_mp_adamw_update': var has dtype float64, "
                                            "expected float32"):
        contrib.mp_adamw_update(half, half, mx.nd.ones(2), mx.nd.ones(2, dtype="float64"),
                                mx.nd.ones(2), 1.0, lr=0.1, eta=1.0)
