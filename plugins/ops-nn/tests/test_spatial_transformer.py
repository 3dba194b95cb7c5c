"""GridGenerator, BilinearSampler and SpatialTransformer against per-pixel loops, their
gradients, hidden outputs, inference and errors."""

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import (check_backward, check_forward, check_numeric_gradient, infer,
                           op_def, parse, run_op)

RNG = np.random.default_rng(0)


def sample_ref(data, grid):
    """Bilinear sampling, one output pixel at a time, zeros outside the data."""
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b, i, j in np.ndindex(n, *grid.shape[2:]):
        x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
        y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
        x0, y0 = int(np.floor(x)), int(np.floor(y))
        for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
            if 0 <= yy < h and 0 <= xx < w:
                out[b, :, i, j] += data[b, :, yy, xx] * (1 - abs(y - yy)) * (1 - abs(x - xx))
    return out


def affine_grid(theta, h, w):
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")
    dst = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return (theta.reshape(-1, 2, 3) @ dst).reshape(-1, 2, h, w)


def test_sampler_matches_loop_and_pads_with_zeros():
    data = RNG.standard_normal((2, 3, 4, 5))
    grid = RNG.uniform(-1.4, 1.4, (2, 2, 3, 6))
    check_forward("BilinearSampler", [data, grid], sample_ref(data, grid))
    corners = np.array([-1.0, 1.0]).reshape(1, 1, 1, 2).repeat(2, axis=1)
    got = check_forward("BilinearSampler", [data[:1], corners],
                        sample_ref(data[:1], corners))[0]
    np.testing.assert_allclose(got[0, :, 0], data[0, :, [0, -1], [0, -1]].T)


def test_sampler_hidden_tmp_and_gradients():
    data = RNG.standard_normal((1, 2, 4, 4))
    grid = (np.round(RNG.uniform(-1.2, 1.2, (1, 2, 2, 3)) * 6) / 6 + 0.05)
    outs = run_op("BilinearSampler", [data, grid])
    np.testing.assert_array_equal(outs[1], grid.transpose(0, 2, 3, 1))
    check_numeric_gradient("BilinearSampler", [data, grid], rtol=1e-5, atol=1e-8)


def test_grid_generator_affine_and_warp():
    theta = RNG.standard_normal((2, 6))
    outs = run_op("GridGenerator", [theta], {"transform_type": "affine",
                                             "target_shape": (3, 4)})
    np.testing.assert_allclose(outs[0], affine_grid(theta, 3, 4), rtol=1e-12)
    assert outs[1].shape == (3, 12)
    og = RNG.standard_normal((2, 2, 3, 4))
    dst = affine_grid(np.tile([1.0, 0, 0, 0, 1, 0], (1, 1)), 3, 4).reshape(2, 12)
    want = np.einsum("nkp,jp->nkj", og.reshape(2, 2, 12), np.vstack([dst, np.ones(12)]))
    check_backward("GridGenerator", [theta], [og], [want.reshape(2, 6)],
                   {"transform_type": "affine", "target_shape": (3, 4)}, rtol=1e-10)
    flow = RNG.standard_normal((1, 2, 3, 5))
    xs, ys = np.meshgrid(np.arange(5), np.arange(3))
    want = np.stack([(flow[0, 0] + xs) / 2 - 1, (flow[0, 1] + ys) / 1 - 1])[None]
    check_forward("GridGenerator", [flow], want, {"transform_type": "warp"})
    check_numeric_gradient("GridGenerator", [flow], {"transform_type": "warp"},
                           rtol=1e-6, atol=1e-9)


def test_affine_grid_of_size_one_is_nan_as_in_mxnet():
    out = run_op("GridGenerator", [np.array([[1.0, 0, 0, 0, 1, 0]])],
                 {"transform_type": "affine", "target_shape": (1, 3)})[0]
    assert np.isnan(out).all()


def test_spatial_transformer_is_grid_then_sampler():
    data = RNG.standard_normal((2, 3, 6, 5))
    loc = np.array([[0.9, 0.1, 0.05, -0.2, 1.1, 0.1], [0.5, 0.0, 0.0, 0.0, 0.5, 0.0]])
    kw = {"target_shape": (4, 3), "transform_type": "affine", "sampler_type": "bilinear"}
    outs = run_op("SpatialTransformer", [data, loc], kw)
    np.testing.assert_allclose(outs[0], sample_ref(data, affine_grid(loc, 4, 3)), atol=1e-12)
    np.testing.assert_allclose(outs[2], affine_grid(loc, 4, 3).reshape(2, 2, 12), atol=1e-12)
    # no sample point of this loc lies within 0.06 pixel of a pixel line (a kink)
    smooth = np.array([[0.807, 0.16, 0.087, -0.127, 1.008, 0.053],
                       [0.504, -0.004, -0.096, -0.005, 0.469, 0.079]])
    check_numeric_gradient("SpatialTransformer", [data, smooth], kw, rtol=1e-5, atol=1e-8)


def test_inference_fills_what_it_can():
    stn = op_def("SpatialTransformer")
    p = parse(stn, {"target_shape": (3, 3), "transform_type": "affine",
                    "sampler_type": "bilinear"})
    ins, outs = stn.get_attr("FInferShape")(p, [(2, 3, 8, 8), None], [None] * 3)
    assert ins == [(2, 3, 8, 8), (2, 6)] and outs == [(2, 3, 3, 3), (3, 9), (2, 2, 9)]
    bs = op_def("BilinearSampler")
    assert infer(bs, parse(bs), [(2, 3, 4, 5), (2, 2, 6, 7)],
                 [np.float16] * 2)[1] == [(2, 3, 6, 7), (2, 6, 7, 2)]


def test_errors_name_op_and_argument():
    with pytest.raises(ShapeError, match="GridGenerator.*target_shape.*positive"):
        run_op("GridGenerator", [np.zeros((1, 6))], {"transform_type": "affine"})
    with pytest.raises(ShapeError, match="GridGenerator.*affine.*\\(batch, 6\\).*\\(1, 4\\)"):
        run_op("GridGenerator", [np.zeros((1, 4))], {"transform_type": "affine",
                                                     "target_shape": (2, 2)})
    with pytest.raises(ShapeError, match="BilinearSampler.*'grid'.*2 channels"):
        run_op("BilinearSampler", [np.zeros((1, 1, 3, 3)), np.zeros((1, 3, 2, 2))])
    with pytest.raises(ShapeError, match="BilinearSampler.*batch 2.*batch 1"):
        run_op("BilinearSampler", [np.zeros((1, 1, 3, 3)), np.zeros((2, 2, 2, 2))])
    with pytest.raises(ShapeError, match="SpatialTransformer.*'loc'.*\\(batch, 6\\)"):
        run_op("SpatialTransformer", [np.zeros((1, 1, 3, 3)), np.zeros((1, 4))],
               {"target_shape": (2, 2), "transform_type": "affine", "sampler_type": "bilinear"})
    with pytest.raises(ParamError, match="sampler_type"):
        parse(op_def("SpatialTransformer"), {"transform_type": "affine",
                                             "sampler_type": "nearest"})
