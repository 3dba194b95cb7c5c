"""LayerNorm, GroupNorm, InstanceNorm: forward per normalised slice, moments outputs,
gradients, inference and errors."""

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import (check_backward, check_forward, check_numeric_gradient, infer, op_def,
                           parse, run_op)

RNG = np.random.default_rng(0)


def normalize(v, eps):
    return (v - v.mean()) / np.sqrt(v.var() + eps)


def test_layer_norm_each_row_and_its_moments():
    x, g, b = RNG.standard_normal((2, 3, 4)) * 3 + 1, RNG.standard_normal(3), RNG.standard_normal(3)
    want = np.empty_like(x)
    for i, k in np.ndindex(2, 4):
        want[i, :, k] = normalize(x[i, :, k], 1e-3) * g + b
    out, mean, std = run_op("LayerNorm", [x, g, b], {"axis": 1, "eps": 1e-3,
                                                     "output_mean_var": True})
    np.testing.assert_allclose(out, want, rtol=1e-10)
    np.testing.assert_allclose(mean, x.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(std, np.sqrt(x.var(axis=1, keepdims=True) + 1e-3))


def test_layer_norm_in_place():
    x, g, b = RNG.standard_normal((4, 5)), RNG.standard_normal(5), RNG.standard_normal(5)
    want = run_op("LayerNorm", [x, g, b], {})[0]
    data = x.copy()
    run_op("LayerNorm", [data, g, b], {}, req=["inplace", "write", "write"],
           outputs=[data, np.zeros((4, 1)), np.zeros((4, 1))])
    np.testing.assert_allclose(data, want)


@pytest.mark.parametrize("op, params, shape, gshape", [
    ("LayerNorm", {}, (3, 5), (5,)),
    ("LayerNorm", {"axis": 0}, (4, 3), (4,)),
    ("GroupNorm", {"num_groups": 2}, (2, 4, 3), (2,)),
    ("InstanceNorm", {}, (2, 3, 2, 2), (3,)),
])
def test_gradients_against_differences(op, params, shape, gshape):
    ins = [RNG.standard_normal(shape), RNG.standard_normal(gshape), RNG.standard_normal(gshape)]
    check_numeric_gradient(op, ins, params, rtol=1e-6, atol=1e-8)


def test_group_norm_uses_one_gamma_per_group():
    x = RNG.standard_normal((2, 4, 3))
    g, b = np.array([2.0, -1.0]), np.array([0.5, 0.25])
    want = np.empty_like(x)
    for n, grp in np.ndindex(2, 2):
        sl = x[n, 2 * grp:2 * grp + 2]
        want[n, 2 * grp:2 * grp + 2] = normalize(sl, 1e-5) * g[grp] + b[grp]
    out, mean, std = run_op("GroupNorm", [x, g, b], {"num_groups": 2})
    np.testing.assert_allclose(out, want, rtol=1e-10)
    assert mean.shape == std.shape == (2, 2)
    gy = RNG.standard_normal(x.shape)
    xhat = (x.reshape(2, 2, 6) - mean[..., None]) / std[..., None]
    check_backward("GroupNorm", [x, g, b], [gy],
                   [None, (gy.reshape(2, 2, 6) * xhat).sum(axis=(0, 2)),
                    gy.reshape(2, 2, 6).sum(axis=(0, 2))], {"num_groups": 2})


def test_instance_norm_per_sample_and_channel_outputs_variance():
    x, g, b = RNG.standard_normal((2, 3, 2, 3)), RNG.standard_normal(3), RNG.standard_normal(3)
    want = np.empty_like(x)
    for n, c in np.ndindex(2, 3):
        want[n, c] = normalize(x[n, c], 1e-3) * g[c] + b[c]
    check_forward("InstanceNorm", [x, g, b], want, rtol=1e-10)
    _, mean, var = run_op("InstanceNorm", [x, g, b])
    np.testing.assert_allclose(var, x.var(axis=(2, 3)))
    opdef = op_def("InstanceNorm")
    assert opdef.list_output_names(parse(opdef, {})) == ["output", "mean", "var"]
    assert opdef.num_visible_outputs(parse(opdef, {})) == 1


def test_inference_fills_gamma_and_beta():
    for op, params, shape, want in [("LayerNorm", {"axis": -2}, (2, 7, 3), (7,)),
                                    ("GroupNorm", {"num_groups": 4}, (2, 8, 3), (4,)),
                                    ("InstanceNorm", {}, (2, 5, 3), (5,))]:
        opdef = op_def(op)
        ins = infer(opdef, parse(opdef, params), [shape, None, None], ["float32", None, None])[0]
        assert ins[1:] == [want, want], op


@pytest.mark.parametrize("op, params, shape, match", [
    ("GroupNorm", {"num_groups": 3}, (2, 4, 3), "4 channels, not divisible by num_groups=3"),
    ("GroupNorm", {}, (2, 4), "at least 3 dims"),
    ("InstanceNorm", {}, (2, 4), "at least 3 dims"),
    ("LayerNorm", {"axis": 2}, (2, 4), "axis=2 out of range"),
])
def test_shape_errors(op, params, shape, match):
    opdef = op_def(op)
    with pytest.raises(ShapeError, match=f"Operator '{op}': .*{match}"):
        opdef.get_attr("FInferShape")(parse(opdef, params), [shape, None, None], [None] * 3)
