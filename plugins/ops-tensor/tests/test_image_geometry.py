"""_image_flip_left_right, _image_flip_top_bottom and _image_crop (mx.nd.image /
mx.sym.image): values, gradients, shape errors."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("op, axis", [("_image_flip_left_right", -2),
                                      ("_image_flip_top_bottom", -3)])
def test_flips(op, axis):
    x = RNG.integers(0, 256, (4, 5, 3)).astype(np.uint8)
    check_forward(op, [x], np.flip(x, axis))
    x4 = RNG.uniform(size=(2, 3, 4, 1))
    check_forward(op, [x4], np.flip(x4, axis))
    og = RNG.uniform(size=x4.shape)
    check_backward(op, [x4], [og], [np.flip(og, axis)])
    with pytest.raises(ShapeError, match=f"'{op}': data must have shape \\(H, W, C\\)"):
        run_op(op, [np.ones((2, 2))])


def test_crop_values_and_gradient():
    x = np.arange(60, dtype=np.float64).reshape(5, 4, 3)
    p = {"x": 1, "y": 2, "width": 3, "height": 2}
    check_forward("_image_crop", [x], x[2:4, 1:4], p)
    out = mx.nd.image.crop(mx.nd.array(x), 1, 2, 3, 2)
    assert out.shape == (2, 3, 3)
    og = RNG.uniform(size=(2, 3, 3))
    want = np.zeros_like(x)
    want[2:4, 1:4] = og
    check_backward("_image_crop", [x], [og], [want], p)
    check_numeric_gradient("_image_crop", [RNG.uniform(size=(2, 5, 4, 3))], p)
    sym = mx.sym.image.crop(mx.sym.Variable("data"), 0, 1, 3, 2)
    assert sym.infer_shape(data=(5, 4, 3))[1] == [(2, 3, 3)]


@pytest.mark.parametrize("params, match", [
    ({"x": 2, "y": 0, "width": 3, "height": 1}, r"x \+ width \(2 \+ 3\) must not exceed the "
                                                r"image width 4"),
    ({"x": 0, "y": 4, "width": 1, "height": 2}, r"y \+ height \(4 \+ 2\) must not exceed the "
                                                r"image height 5"),
    ({"x": 0, "y": 0, "width": -1, "height": 2},
     r"x and y must be >= 0 and width and height > 0, got .*width=-1"),
])
def test_crop_outside_the_image(params, match):
    with pytest.raises(ShapeError, match=f"'_image_crop': {match}"):
        run_op("_image_crop", [np.ones((5, 4, 3))], params)
