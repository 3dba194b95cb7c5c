"""oneDNN BatchNorm equals ops-nn's kernel, forward (output, mean, inverse standard
deviation) and gradient (data, gamma, beta, and the moving statistics it updates), in
training, inference and with use_global_stats, fix_gamma either way; what it does not cover
falls back per call."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

rng = np.random.default_rng(4)
pytestmark = pytest.mark.usefixtures("no_rules")

SHAPES = [(4, 3, 5, 5), (6, 4), (3, 2, 7), (2, 3, 2, 3, 4), (2, 16, 3, 3)]
MODES = list(itertools.product([True, False], [False, True], [True, False]))


def _f(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _inputs(shape, dtype=np.float32):
    c = shape[1]
    return [_f(*shape, dtype=dtype) * 2 + 1, _f(c, dtype=dtype), _f(c, dtype=dtype),
            _f(c, dtype=dtype), np.abs(_f(c, dtype=dtype)) + 0.5]


def _both(compare, shape, p, is_train, req="write", path="onednn", dtype=np.float32):
    ins = _inputs(shape, dtype)
    out = compare("BatchNorm", ins, p, req, is_train=is_train, path=path)
    og = _f(*shape, dtype=dtype)
    return ins, compare("_backward_BatchNorm", [og, out[1], out[2], ins[0], ins[1], ins[3],
                                                ins[4]], p, is_train=is_train, mutated=[5, 6],
                        path=path)


@pytest.mark.parametrize("fix_gamma, use_global_stats, is_train", MODES)
@pytest.mark.parametrize("shape", SHAPES[:2])
def test_every_mode_equals_ops_nn(shape, fix_gamma, use_global_stats, is_train, compare):
    p = {"fix_gamma": fix_gamma, "use_global_stats": use_global_stats, "eps": 1e-5,
         "momentum": 0.8, "output_mean_var": True}
    _both(compare, shape, p, is_train)


@pytest.mark.parametrize("shape", SHAPES[2:])
def test_1d_3d_and_wide_data(shape, compare):
    _both(compare, shape, {"fix_gamma": False}, True)


def test_the_moving_statistics_move_in_training_only(compare):
    p = {"fix_gamma": False, "momentum": 0.7}
    ins, got = _both(compare, (4, 3, 2, 2), p, True)
    assert not np.allclose(got[3], ins[3]) and not np.allclose(got[4], ins[4])
    for is_train, use_global_stats in ((False, False), (True, True)):
        ins, got = _both(compare, (4, 3, 2, 2), dict(p, use_global_stats=use_global_stats),
                         is_train)
        np.testing.assert_array_equal(got[3], ins[3])
        np.testing.assert_array_equal(got[4], ins[4])


def test_req_add_and_null(compare):
    p = {"fix_gamma": False}
    ins = _inputs((4, 3, 5, 5))
    start = [_f(4, 3, 5, 5), _f(3), _f(3)]
    compare("BatchNorm", ins, p, "add", start)
    got = compare("BatchNorm", ins, p, ["null", "write", "write"], start)
    np.testing.assert_array_equal(got[0], start[0])
    out = compare("BatchNorm", ins, p)
    bins = [_f(4, 3, 5, 5), out[1], out[2], ins[0], ins[1], ins[3], ins[4]]
    compare("_backward_BatchNorm", bins, p, "add", start, mutated=[5, 6])
    compare("_backward_BatchNorm", bins, p, ["write", "null", "add"], start, mutated=[5, 6])


@pytest.mark.parametrize("shape, params, dtype", [
    ((4, 3, 5), {"axis": -1}, np.float32),
    ((4, 3, 5), {"eps": 0.0}, np.float32),
    ((4, 3, 5), {}, np.float64),
    ((2, 3, 2, 2, 2, 2), {}, np.float32),
])
def test_what_it_does_not_cover_falls_back(shape, params, dtype, compare):
    c = shape[params.get("axis", 1)]
    ins = [_f(*shape, dtype=dtype), _f(c, dtype=dtype), _f(c, dtype=dtype), _f(c, dtype=dtype),
           np.abs(_f(c, dtype=dtype)) + 0.5]
    p = dict(params, fix_gamma=False)
    out = compare("BatchNorm", ins, p, path="fallback")
    compare("_backward_BatchNorm", [_f(*shape, dtype=dtype), out[1], out[2], ins[0], ins[1],
                                    ins[3], ins[4]], p, mutated=[5, 6], path="fallback")
