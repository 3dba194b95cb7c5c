"""_image_normalize and _image_to_tensor (mx.nd.image / mx.sym.image): values as MXNet
1.9.1, gradients, shape rules."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(0)


def test_normalize_per_channel_and_scalar():
    x = RNG.uniform(0, 1, (3, 4, 2)).astype(np.float32)
    want = (x - np.float32([0, 1, 2])[:, None, None]) / np.float32([3, 2, 1])[:, None, None]
    check_forward("_image_normalize", [x], want, {"mean": (0, 1, 2), "std": (3, 2, 1)})
    x4 = RNG.uniform(0, 1, (2, 3, 2, 2)).astype(np.float32)
    check_forward("_image_normalize", [x4], (x4 - 1) / 2, {"mean": 1.0, "std": "2"})
    check_forward("_image_normalize", [np.full((1, 2, 2), 3, np.int32)],   # MXNet: int truncates
                  np.ones((1, 2, 2), np.int32), {"mean": 1, "std": 2})
    (h,) = run_op("_image_normalize", [np.ones((1, 1, 1), np.float16)], {"mean": 0.5, "std": 3})
    assert h.dtype == np.float16


def test_normalize_gradient_is_one_over_std():
    x = RNG.uniform(0, 1, (2, 3, 2, 2))
    p = {"mean": (0, 1, 2), "std": (3, 2, 0.5)}
    want = np.broadcast_to((1 / np.array([3, 2, 0.5]))[:, None, None], x.shape)
    check_backward("_image_normalize", [x], [np.ones_like(x)], [want], p)
    check_numeric_gradient("_image_normalize", [x], p)


@pytest.mark.parametrize("shape, params, match", [
    ((3, 2, 2), {}, "mean must have 1 or 3 elements for data of shape \\(3, 2, 2\\), got "
                    "mean=\\(0.0, 0.0, 0.0, 0.0\\)"),        # MXNet's default needs 4 channels
    ((2, 2, 2), {"mean": 1}, "the channel dimension 0 of data must have 1 or 3 elements"),
    ((1, 2, 2, 2), {"mean": 1}, "the channel dimension 1 of data"),
    ((3, 2), {"mean": 1}, "data must have shape \\(C, H, W\\) or \\(N, C, H, W\\)"),
    ((1, 2, 2), {"mean": 1, "std": (1, 2)}, "std must have 1 or 1 elements"),
])
def test_normalize_shape_errors(shape, params, match):
    with pytest.raises(ShapeError, match=f"'_image_normalize': {match}"):
        run_op("_image_normalize", [np.ones(shape, np.float32)], params)


def test_normalize_param_errors():
    with pytest.raises(ParamError, match="'_image_normalize'.*mean"):
        mx.nd.image.normalize(mx.nd.ones((3, 2, 2)), mean="red")


def test_to_tensor_matches_mxnet():
    x = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    want = x.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    check_forward("_image_to_tensor", [x], want)
    x4 = RNG.integers(0, 256, (2, 4, 2, 3)).astype(np.uint8)
    check_forward("_image_to_tensor", [x4],
                  x4.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255))
    with pytest.raises(ShapeError, match="'_image_to_tensor': data must have shape \\(H, W, C\\)"):
        run_op("_image_to_tensor", [np.ones((2, 2), np.uint8)])


def test_to_tensor_gradient_goes_back_to_the_image_layout():
    x = RNG.uniform(0, 1, (2, 2, 3))
    og = RNG.uniform(-1, 1, (3, 2, 2)).astype(np.float32)
    check_backward("_image_to_tensor", [x], [og], [og.transpose(1, 2, 0) / 255])


def test_frontends():
    data = mx.nd.random.uniform(0, 1, (3, 5, 5))
    out = mx.nd.image.normalize(data, mean=(0, 1, 2), std=(3, 2, 1))
    np.testing.assert_allclose(out.asnumpy()[1], (data.asnumpy()[1] - 1) / 2, rtol=1e-6)
    s = mx.sym.image.to_tensor(mx.sym.var("img"))
    assert s.infer_shape(img=(4, 5, 3))[1] == [(3, 4, 5)]
    assert s.infer_type(img=np.uint8)[1] == [np.float32]
    img = mx.nd.array(np.full((2, 2, 3), 51), dtype="uint8")
    assert mx.nd.image.to_tensor(img).asnumpy().max() == np.float32(51) / np.float32(255)
