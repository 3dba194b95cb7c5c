"""io.ImageRecordIter's augmentation options (MXNet's default augmenter): settings that
draw nothing against MXNet 1.9.1's batches (tests/fixtures/image_iter/record_aug.npz, from
make_record_aug_fixtures.py), the random ones by their bounds, and their errors."""

import io
import json
import os

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError
from mxnext.io.image_record_aug import RecordAugmenter

pytest.importorskip("PIL")
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "image_iter")
REC = os.path.join(HERE, "images.rec")


def _batch(**kwargs):
    kwargs.setdefault("data_shape", (3, 6, 6))
    it = mx.io.ImageRecordIter(path_imgrec=REC, batch_size=6, **kwargs)
    return it.next().data[0].asnumpy()


def _augment(img, **kwargs):
    shape = kwargs.pop("data_shape", (3, img.shape[0], img.shape[1]))
    n, seed = kwargs.pop("n", 20), kwargs.pop("seed", 0)
    aug = RecordAugmenter(shape, np.random.default_rng(seed), **kwargs)
    return [aug(img) for _ in range(n)]


def test_settings_without_draws_match_mxnet():
    expected = np.load(os.path.join(HERE, "record_aug.npz"))
    for name, kwargs in json.loads(str(expected["cases"])).items():
        got, want = _batch(**kwargs), expected[name]
        assert got.shape == want.shape, name
        # OpenCV's fixed-point resizing and its gray decoding (Pillow rounds its own
        # way) may differ by one; its warpAffine weighs by 1/32 pixel steps
        warped = name in ("rotate", "scale", "img_size")
        np.testing.assert_allclose(got, want, atol=4 if warped else 1, err_msg=name)
        assert np.mean(np.abs(got - want)) < (0.8 if warped else 0.5), name
        if kwargs["data_shape"][0] == 3 and not warped:
            assert np.mean(got != want) < 0.1, name


def test_zero_settings_give_the_plain_batch():
    plain = _batch()
    same = _batch(brightness=0, contrast=0, saturation=0, pca_noise=0, random_h=0,
                  random_s=0, random_l=0, random_resized_crop=True, max_random_area=1,
                  min_random_area=1, max_aspect_ratio=1, min_aspect_ratio=1, seed_aug=3)
    assert np.array_equal(plain, same)


def test_random_resized_crop_windows_keep_to_area_and_aspect_bounds():
    yy, xx = np.mgrid[0:40, 0:40]
    img = np.stack([xx, yy, np.zeros_like(xx)], -1).astype(np.uint8)
    outs = _augment(img, data_shape=(3, 64, 64), random_resized_crop=True, inter_method=0,
                    min_random_area=0.3, max_random_area=0.6, min_aspect_ratio=0.75,
                    max_aspect_ratio=4 / 3)
    sizes = set()
    for out in outs:
        assert out.shape == (64, 64, 3) and out.dtype == np.uint8
        w = int(out[..., 0].max()) - int(out[..., 0].min()) + 1
        h = int(out[..., 1].max()) - int(out[..., 1].min()) + 1
        assert 0.3 - 0.05 <= w * h / 1600 <= 0.6 + 0.05
        assert 0.75 - 0.1 <= w / h <= 4 / 3 + 0.1
        sizes.add((w, h))
    assert len(sizes) > 5


def test_a_window_that_never_fits_falls_back_to_the_centre_crop():
    img = np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3)
    outs = _augment(img, data_shape=(3, 4, 4), random_resized_crop=True, min_random_area=4,
                    max_random_area=5, n=3)
    for out in outs:
        assert np.array_equal(out, img[2:6, 2:6])


def test_colour_jitter_stays_within_its_factors():
    img = np.full((6, 6, 3), 100, np.uint8)
    bright = _augment(img, brightness=0.4)
    values = {int(o[0, 0, 0]) for o in bright}
    assert all(np.all(o == o[0, 0, 0]) for o in bright) and len(values) > 5
    assert 60 <= min(values) and max(values) <= 140
    # a flat gray image has no contrast nor saturation to change
    for out in _augment(img, contrast=0.4, saturation=0.4):
        assert np.array_equal(out, img)


def test_hls_lightness_shift_and_pca_noise_are_bounded_per_image():
    img = np.full((5, 5, 3), 120, np.uint8)
    for out in _augment(img, random_l=20):
        assert np.all(out == out[0, 0, 0]) and abs(int(out[0, 0, 0]) - 120) <= 21
    hue = _augment(np.dstack([np.full((5, 5), 200), np.full((5, 5), 50),
                              np.full((5, 5), 50)]).astype(np.uint8), random_h=30)
    assert len({tuple(o[0, 0]) for o in hue}) > 3
    noisy = _augment(img, pca_noise=0.1)
    for out in noisy:
        assert np.all(out == out[0, 0]) and np.abs(out.astype(int) - 120).max() <= 40
    assert any(not np.array_equal(o, img) for o in noisy)


def test_affine_draws_keep_the_canvas_and_fill():
    img = np.full((10, 10, 3), 50, np.uint8)
    outs = _augment(img, data_shape=(3, 10, 10), max_rotate_angle=40, max_shear_ratio=0.2,
                    max_aspect_ratio=0.3, fill_value=200)
    filled = [np.mean(o == 200) for o in outs]
    assert all(set(np.unique(o)) <= set(range(50, 201)) for o in outs)
    assert max(filled) > 0.05 and len(set(filled)) > 5
    # scale 2 on a 5x5 image: a 10x10 canvas; the last row and column sample half a
    # pixel past the edge, so blend with the fill, as OpenCV's
    small = _augment(img[:5, :5], data_shape=(3, 10, 10), min_random_scale=2,
                     max_random_scale=2, fill_value=0, n=1)[0]
    assert small.shape == (10, 10, 3) and np.all(small[:9, :9] == 50)
    assert np.all(small[9, :9] == 25) and small[9, 9, 0] == 12


def test_draws_repeat_under_the_same_seed_aug():
    kwargs = dict(data_shape=(3, 6, 6), random_resized_crop=True, min_random_area=0.3,
                  min_aspect_ratio=0.75, max_aspect_ratio=4 / 3, brightness=0.4,
                  contrast=0.4, saturation=0.4, pca_noise=0.1, rand_mirror=True)
    first = _batch(seed_aug=5, **kwargs)
    assert np.array_equal(first, _batch(seed_aug=5, **kwargs))
    assert not np.array_equal(first, _batch(seed_aug=6, **kwargs))
    assert first.dtype == np.float32 and first.min() >= 0 and first.max() <= 255


def test_rand_mirror_flips_some_images_and_mirror_all():
    plain, flipped = _batch(), _batch(mirror=True)
    assert np.array_equal(flipped, plain[..., ::-1])
    mixed = _batch(rand_mirror=True, seed_aug=1)
    kinds = [np.array_equal(m, p) for m, p in zip(mixed, plain)]
    assert all(k or np.array_equal(m, p[..., ::-1]) for k, m, p in zip(kinds, mixed, plain))


@pytest.mark.parametrize("kwargs, match", [
    (dict(random_resized_crop=True, rand_crop=True), "random_resized_crop: expected rand_crop"),
    (dict(random_resized_crop=True, min_aspect_ratio=2, max_aspect_ratio=1),
     r"min_aspect_ratio/max_aspect_ratio: expected 0 < min <= max, got \[2, 1\]"),
    (dict(random_resized_crop=True, min_random_area=0.9, max_random_area=0.5),
     "min_random_area/max_random_area"),
    (dict(max_rotate_angle=10, inter_method=0), "inter_method: expected 1-4, 9 or 10 with"),
    (dict(random_resized_crop=True, max_random_scale=2), "random_resized_crop: expected min"),
    (dict(inter_method=5), r"inter_method: expected one of \(0, 1, 2, 3, 4, 9, 10\), got 5"),
    (dict(max_crop_size=20, min_crop_size=4), "max_crop_size: expected"),
])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(MXNetError, match=match):
        _batch(**kwargs)


def test_mean_img_file_written_by_mxnet_is_subtracted_as_mxnet_does():
    expected = np.load(os.path.join(HERE, "record_aug.npz"))
    got = _batch(data_shape=(3, 8, 8), mean_img=os.path.join(HERE, "mean_img.bin"), scale=0.5,
                 std_g=2)
    np.testing.assert_allclose(got, expected["mean_img_batch"], atol=0.51)


def test_mean_img_is_made_from_the_data_and_saved_when_missing(tmp_path):
    path = str(tmp_path / "mean.bin")
    _batch(data_shape=(3, 8, 8), mean_img=path, scale=0.5, std_g=2)
    made = mx.nd.load(path)
    want = mx.nd.load(os.path.join(HERE, "mean_img.bin"))
    assert list(made) == ["mean_img"]
    np.testing.assert_allclose(made["mean_img"].asnumpy(), want["mean_img"].asnumpy(),
                               atol=0.26)
    with pytest.raises(MXNetError, match=r"mean_img: expected an image of shape \(3, 6, 6\)"):
        _batch(data_shape=(3, 6, 6), mean_img=path)


def test_path_imglist_labels_by_image_index_as_mxnet():
    expected = np.load(os.path.join(HERE, "record_aug.npz"))
    it = mx.io.ImageRecordIter(path_imgrec=REC, batch_size=6, data_shape=(3, 6, 6),
                               label_width=2, path_imglist=os.path.join(HERE, "images.lst"))
    np.testing.assert_array_equal(it.next().label[0].asnumpy(), expected["imglist_label"])


def test_random_contrast_and_illumination_stay_in_their_bounds():
    plain = _batch(seed_aug=3)
    for _ in range(3):
        got = _batch(max_random_contrast=0.2, max_random_illumination=5, seed_aug=3)
        # per image: got = plain * c + i with c in [0.8, 1.2], i in [-5, 5]
        for g, p in zip(got, plain):
            c, i = np.polyfit(p.ravel(), g.ravel(), 1)
            assert 0.8 - 1e-4 <= c <= 1.2 + 1e-4 and -5 - 1e-3 <= i <= 5 + 1e-3


def test_rotate_list_picks_one_of_its_angles():
    img = np.random.default_rng(2).integers(0, 256, (9, 9, 3)).astype(np.uint8)
    fixed = [_augment(img, rotate=a, fill_value=0, n=1)[0] for a in (90, 180)]
    outs = _augment(img, rotate_list="90,180", fill_value=0, n=30)
    picks = [[np.array_equal(o, f) for f in fixed].index(True) for o in outs]
    assert set(picks) == {0, 1}
    with pytest.raises(MXNetError, match="rotate_list: expected whole degrees"):
        RecordAugmenter((3, 9, 9), np.random.default_rng(0), rotate_list="a,b")


def test_aug_seq_empty_skips_the_augmenter_and_unknown_names_fail():
    with pytest.raises(MXNetError, match=r"data_shape: expected images of 6x6 after the "
                                         r"augmenters \(''\)"):
        _batch(aug_seq="")
    with pytest.raises(MXNetError, match=r"aug_seq: expected names among \('aug_default',\), "
                                         r"got 'det_aug'"):
        _batch(aug_seq="aug_default,det_aug")


def test_rgba_images_with_mean_a_and_std_a(tmp_path):
    from PIL import Image
    rgba = np.random.default_rng(1).integers(0, 256, (6, 6, 4)).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, "PNG")
    rec = mx.recordio.MXRecordIO(str(tmp_path / "a.rec"), "w")
    rec.write(mx.recordio.pack((0, 1.0, 0, 0), buf.getvalue()))
    rec.close()
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "a.rec"), batch_size=1,
                               data_shape=(4, 6, 6), mean_a=10, std_a=2)
    got = it.next().data[0].asnumpy()[0]
    np.testing.assert_allclose(got[:3], rgba[..., :3].transpose(2, 0, 1))
    np.testing.assert_allclose(got[3], (rgba[..., 3] - 10.0) / 2)
    with pytest.raises(MXNetError, match=r"expected an image with 4 channels \(RGBA\), got 3"):
        next(iter(mx.io.ImageRecordIter(path_imgrec=REC, batch_size=1, data_shape=(4, 6, 6))))
