"""LRN: the channel-window formula with loops, gradient, odd nsize, 4-d data."""

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_forward, check_numeric_gradient, op_def, parse


def lrn_ref(x, nsize, alpha, beta, knorm):
    out = np.empty_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - nsize // 2), min(x.shape[1], c + nsize // 2 + 1)
        norm = knorm + alpha / nsize * (x[:, lo:hi] ** 2).sum(axis=1)
        out[:, c] = x[:, c] * norm ** -beta
    return out


@pytest.mark.parametrize("kw", [{"nsize": 3}, {"nsize": 5, "alpha": 0.5, "beta": 0.6,
                                                "knorm": 1.5}, {"nsize": 1, "alpha": 1.0}])
def test_forward_and_gradient(kw):
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 2))
    full = {"alpha": 1e-4, "beta": 0.75, "knorm": 2.0, **kw}
    check_forward("LRN", [x], lrn_ref(x, **full), kw, rtol=1e-10)
    check_numeric_gradient("LRN", [x], {**kw, "alpha": full["alpha"] * 1000}, rtol=1e-6,
                           atol=1e-9)


def test_errors():
    with pytest.raises(ParamError, match="nsize must be odd"):
        parse(op_def("LRN"), {"nsize": 4})
    opdef = op_def("LRN")
    with pytest.raises(ShapeError, match="Operator 'LRN': data should be 4-d"):
        opdef.get_attr("FInferShape")(parse(opdef, {"nsize": 3}), [(2, 3, 4)], [None, None])
