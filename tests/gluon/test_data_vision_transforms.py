"""mx.gluon.data.vision.transforms: values, shapes, errors, randomness and use in workers."""

from __future__ import annotations

import random

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon.data import ArrayDataset, DataLoader
from mxnext.gluon.data.vision import transforms as T


def _img(h, w, seed=0, dtype="uint8"):
    return mx.nd.array(np.random.RandomState(seed).randint(0, 256, (h, w, 3)), dtype=dtype)


def test_to_tensor_normalize_cast_and_compose_hybridized():
    x = _img(4, 5)
    t = T.ToTensor()(x)
    assert t.shape == (3, 4, 5) and t.dtype == np.float32
    assert np.allclose(t.asnumpy(), x.asnumpy().transpose(2, 0, 1) / 255)
    n = T.Normalize(mean=(0.1, 0.2, 0.3), std=(1, 2, 4))(t)
    assert np.allclose(n.asnumpy(), (t.asnumpy() - [[[0.1]], [[0.2]], [[0.3]]]) /
                       [[[1]], [[2]], [[4]]], atol=1e-6)
    assert T.Cast("float16")(x).dtype == np.float16
    pipeline = T.Compose([T.Cast("float32"), T.ToTensor(), T.Normalize(0.5, 0.25)])
    assert len(pipeline) == 1 and isinstance(pipeline[0], mx.gluon.nn.HybridSequential)
    expected = (x.asnumpy().transpose(2, 0, 1) / 255 - 0.5) / 0.25
    assert np.allclose(pipeline(x).asnumpy(), expected, atol=1e-5)
    with pytest.raises(mx.MXNetError, match="must have shape"):
        T.ToTensor()(mx.nd.ones((1, 2, 3, 4, 3)))


def test_resize_bilinear_nearest_and_keep_ratio():
    x = _img(6, 8, dtype="float32")
    a = x.asnumpy()
    half = T.Resize((4, 3))(x).asnumpy()                 # (width, height)
    blocks = a.reshape(3, 2, 4, 2, 3).mean(axis=(1, 3))  # bilinear at 1/2: 2x2 means
    assert half.shape == (3, 4, 3) and np.allclose(half, blocks, atol=1e-4)
    twice = T.Resize((16, 12), interpolation=0)(x).asnumpy()
    assert (twice == a.repeat(2, axis=0).repeat(2, axis=1)).all()
    u8 = T.Resize(3)(_img(6, 6)).asnumpy()
    assert u8.dtype == np.uint8 and u8.shape == (3, 3, 3)
    tall = mx.nd.zeros((300, 200, 3))
    assert T.Resize(150, keep_ratio=True)(tall).shape == (225, 150, 3)
    assert T.Resize(100)(mx.nd.zeros((2, 30, 20, 3))).shape == (2, 100, 100, 3)
    assert T.Resize(7)(mx.nd.full((5, 9, 3), 42, dtype="uint8")).asnumpy().min() == 42
    for bad in (-150, (100, 100, 100)):
        with pytest.raises(mx.MXNetError, match="size must be a positive int"):
            T.Resize(bad, keep_ratio=True)(tall)


def test_crop_resize_and_center_crop():
    x = mx.nd.arange(60).reshape((5, 4, 3))
    out = T.CropResize(0, 0, 3, 2)(x).asnumpy()
    assert out.shape == (2, 3, 3) and out.sum() == 180 and out[0:2, 1, 1].tolist() == [4, 16]
    batch = T.CropResize(1, 2, 3, 4)(mx.nd.arange(180).reshape((2, 6, 5, 3))).asnumpy()
    assert batch.sum() == 7524
    assert T.CropResize(0, 0, 2, 2, size=(4, 4))(x).shape == (4, 4, 3)
    with pytest.raises(mx.MXNetError, match="must lie inside the image of width 4"):
        T.CropResize(2, 0, 3, 2)(x)
    img = _img(6, 8)
    centre = T.CenterCrop((4, 2))(img).asnumpy()
    assert (centre == img.asnumpy()[2:4, 2:6]).all()
    assert T.CenterCrop(10)(img).shape == (10, 10, 3)       # a smaller image is scaled up


def test_random_resized_crop():
    random.seed(1)
    img = _img(20, 30)
    assert T.RandomResizedCrop(8)(img).shape == (8, 8, 3)
    whole = T.RandomResizedCrop((30, 20), scale=(1, 1), ratio=(1.5, 1.5))(img)
    assert (whole.asnumpy() == img.asnumpy()).all()
    # no region of that ratio fits: the centre crop
    centre = T.RandomResizedCrop(4, scale=(1, 1), ratio=(10, 10))(img)
    assert (centre.asnumpy() == T.CenterCrop(4)(img).asnumpy()).all()


@pytest.mark.parametrize("cls, axis", [(T.RandomFlipLeftRight, 1), (T.RandomFlipTopBottom, 0)])
def test_random_flips(cls, axis):
    random.seed(0)
    img = _img(3, 4)
    a = img.asnumpy()
    flip = cls()
    seen = {bool((flip(img).asnumpy() == np.flip(a, axis)).all()) for _ in range(20)}
    assert seen == {True, False}
    batch = mx.nd.array(np.stack([a, a]), dtype="uint8")
    out = [flip(batch).asnumpy() for _ in range(10)]
    assert all((o == np.flip(batch.asnumpy(), axis + 1)).all() or (o == a).all() for o in out)


def test_colour_changes():
    random.seed(0)
    img = _img(4, 4, dtype="float32")
    a = img.asnumpy()
    gray = mx.nd.full((4, 4, 3), 100.0)
    for t in (T.RandomBrightness(0), T.RandomContrast(0), T.RandomSaturation(0),
              T.RandomHue(0), T.RandomLighting(0), T.RandomColorJitter()):
        assert np.allclose(t(img).asnumpy(), a, atol=1e-3), t
    for t in (T.RandomSaturation(0.5), T.RandomHue(0.5), T.RandomContrast(0.5)):
        assert np.allclose(t(gray).asnumpy(), 100, atol=1e-3), t     # gray stays gray
    brighter = [T.RandomBrightness(0.5)(img).asnumpy() / a for _ in range(5)]
    assert all(np.allclose(r, r.flat[0], atol=1e-4) and 0.5 <= r.flat[0] <= 1.5
               for r in brighter)
    jitter = T.RandomColorJitter(0.3, 0.3, 0.3, 0.1)(_img(8, 8))
    assert jitter.dtype == np.uint8 and jitter.shape == (8, 8, 3)
    lit = T.RandomLighting(0.5)(img).asnumpy() - a
    assert np.allclose(lit, lit[0, 0], atol=1e-4)                     # one RGB offset


def test_rotate():
    image = mx.nd.array([[[0., 0., 0.], [0., 0., 1.], [0., 0., 0.]]])
    expected = {90: (0, 1), 180: (1, 0), 270: (2, 1), 360: (1, 2)}
    for angle, (row, col) in expected.items():
        out = np.zeros((1, 3, 3), np.float32)
        out[0, row, col] = 1
        assert np.allclose(T.Rotate(angle)(image).asnumpy(), out, atol=1e-6), angle
    with pytest.raises(TypeError, match="only float32"):
        T.Rotate(10)(mx.nd.ones((3, 4, 4), dtype="uint8"))
    square = mx.nd.ones((1, 9, 9))
    assert T.Rotate(45)(square).asnumpy()[0, 0, 0] == 0                # a corner empties
    assert np.allclose(T.Rotate(45, zoom_in=True)(square).asnumpy(), 1, atol=1e-5)
    out = T.Rotate(45, zoom_out=True)(square).asnumpy()[0]
    assert out[4, 0] > 0.5 and out[0, 0] == 0                          # all of it shows
    with pytest.raises(ValueError, match="cannot both be True"):
        T.Rotate(10, zoom_in=True, zoom_out=True)


def test_random_rotation_and_random_apply():
    with pytest.raises(ValueError, match=r"rotate_with_proba must be in \[0, 1\], got 1.1"):
        T.RandomRotation([-10, 10], rotate_with_proba=1.1)
    data = mx.nd.random.normal(shape=(3, 30, 60))
    assert T.RandomRotation([-100, 100], rotate_with_proba=0)(data) is data
    assert T.RandomRotation([-10, 10])(mx.nd.ones((2, 3, 8, 8))).shape == (2, 3, 8, 8)
    assert T.RandomRotation([90, 90])(mx.nd.array([[[0, 0], [0, 1.]]])).shape == (1, 2, 2)
    shrink = T.Compose([T.Resize(5)])
    img = _img(10, 10)
    assert T.RandomApply(shrink, p=0)(img) is img
    assert T.RandomApply(shrink, p=1)(img).shape == (5, 5, 3)


def test_transforms_run_in_dataloader_workers():
    images = np.random.RandomState(0).randint(0, 256, (6, 10, 12, 3)).astype(np.uint8)
    ds = ArrayDataset(mx.nd.array(images, dtype="uint8"), np.arange(6)).transform_first(
        T.Compose([T.Resize((8, 6)), T.ToTensor(), T.Normalize(0.5, 0.5)]))
    (x, y), _ = list(DataLoader(ds, 3, num_workers=2))
    assert x.shape == (3, 3, 6, 8) and y.asnumpy().tolist() == [0, 1, 2]
    here = ds[0][0].asnumpy()
    assert np.allclose(x.asnumpy()[0], here, atol=1e-5)
