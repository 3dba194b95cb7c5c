"""Deformable convolutions: values and gradients against MXNet 1.9.1's cpu results
(fixtures/deformable_ref.npz, written by fixtures/make_deformable_ref.py), the modulated
op's gradient (absent from MXNet's cpu build) against central differences, shape rules."""

import json
import os

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import (check_backward, check_forward, check_numeric_gradient, infer, op_def,
                           parse, run_op)

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "deformable_ref.npz"))
CASES = range(int(REF["count"]))
NAMES = ("data", "offset", "mask", "weight", "bias")


def _case(i):
    op = f"_contrib_{REF[f'{i}/op']}"
    names = [n for n in NAMES if f"{i}/in:{n}" in REF]
    return op, json.loads(str(REF[f"{i}/params"])), names, [REF[f"{i}/in:{n}"] for n in names]


@pytest.mark.parametrize("i", CASES)
def test_forward_matches_mxnet(i):
    op, params, _, inputs = _case(i)
    check_forward(op, inputs, REF[f"{i}/out"], params, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("i", [i for i in CASES if f"{i}/d:data" in REF])
def test_gradients_match_mxnet(i):
    op, params, names, inputs = _case(i)
    check_backward(op, inputs, [REF[f"{i}/head"]], [REF[f"{i}/d:{n}"] for n in names], params,
                   rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("i", [i for i in CASES if f"{i}/d:data" not in REF])
def test_modulated_gradients_match_central_differences(i):
    """Every input's gradient of the op MXNet cannot differentiate on cpu; float64, the
    fixture's random offsets keep the points off the sampler's kinks (integer positions)."""
    op, params, _, inputs = _case(i)
    check_numeric_gradient(op, [a.astype(np.float64) for a in inputs], params, rtol=1e-3,
                           atol=1e-4)


def _infer(op, shapes, params):
    opdef = op_def(op)
    ins, outs, _, _ = infer(opdef, parse(opdef, params), shapes, [np.float32] + [None] * (
        len(shapes) - 1))
    return ins, outs


def test_shapes_are_inferred_and_checked():
    p = {"kernel": (3, 3), "num_filter": 6, "stride": (2, 2), "num_deformable_group": 2}
    ins, outs = _infer("_contrib_DeformableConvolution", [(2, 4, 9, 9), None, None, None], p)
    assert ins[1:] == [(2, 36, 4, 4), (6, 4, 3, 3), (6,)]
    assert outs == [(2, 6, 4, 4)]
    ins, outs = _infer("_contrib_ModulatedDeformableConvolution",
                      [(1, 4, 5, 5), None, None, None], dict(p, no_bias=True))
    assert ins[1:] == [(1, 36, 2, 2), (1, 18, 2, 2), (6, 4, 3, 3)]
    with pytest.raises(ShapeError, match="offset"):
        _infer("_contrib_DeformableConvolution", [(2, 4, 9, 9), (2, 18, 4, 4), None, None], p)
    with pytest.raises(ShapeError, match="num_deformable_group=3"):
        _infer("_contrib_DeformableConvolution", [(2, 4, 9, 9), None, None, None],
              dict(p, num_deformable_group=3))
    with pytest.raises(ShapeError, match="only 2-D"):
        _infer("_contrib_DeformableConvolution", [(2, 4, 9), None, None, None],
              {"kernel": (3,), "num_filter": 2})
    with pytest.raises(ShapeError, match="im2col_step"):
        _infer("_contrib_ModulatedDeformableConvolution", [(70, 4, 5, 5), None, None, None, None],
              {"kernel": (3, 3), "num_filter": 2})


def test_zero_offsets_give_a_plain_convolution():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3)), \
        rng.standard_normal(4)
    p = {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1)}
    want = run_op("Convolution", [x, w, b], p)[0]
    check_forward("_contrib_DeformableConvolution", [x, np.zeros((2, 18, 6, 5)), w, b], want, p,
                  rtol=1e-6, atol=1e-9)
    check_forward("_contrib_ModulatedDeformableConvolution",
                  [x, np.zeros((2, 18, 6, 5)), np.ones((2, 9, 6, 5)), w, b], want, p,
                  rtol=1e-6, atol=1e-9)
