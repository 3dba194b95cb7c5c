"""mx.image's functions, augmenters and ImageIter against MXNet 1.9.1: batches, augmenter
outputs under fixed seeds of Python's ``random`` and ``numpy.random`` (what MXNet's
augmenters draw from) and ``dumps()``, all written by
tests/fixtures/image_iter/make_image_iter_fixtures.py. Decoding needs Pillow."""

import json
import random
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx

pytest.importorskip("PIL")
HERE = Path(__file__).parent / "fixtures" / "image_iter"
EXPECTED = np.load(HERE / "expected.npz")
INFO = json.loads((HERE / "expected.json").read_text())
SHAPE = (3, 8, 8)


def _seed(s):
    random.seed(s)
    np.random.seed(s)


def _compare(it, name, epochs, atol=0.0):
    for epoch in range(epochs):
        count = 0
        for k, batch in enumerate(it):
            key = f"{name}_e{epoch}_b{k}"
            np.testing.assert_allclose(batch.data[0].asnumpy(), EXPECTED[key + "_data"],
                                       rtol=1e-5, atol=atol, err_msg=key)
            label = batch.label[0].asnumpy()
            assert label.dtype == EXPECTED[key + "_label"].dtype, key
            np.testing.assert_allclose(label, EXPECTED[key + "_label"], rtol=1e-6, err_msg=key)
            assert batch.pad == INFO[key + "_pad"], key
            count += 1
        assert count == INFO[f"{name}_e{epoch}_count"], (name, epoch)
        it.reset()


def test_record_file_with_index_pads_the_last_batch():
    it = mx.image.ImageIter(4, SHAPE, path_imgrec=str(HERE / "images.rec"),
                            path_imgidx=str(HERE / "images.idx"))
    assert it.provide_data == [("data", (4, 3, 8, 8))]
    assert it.provide_label == [("softmax_label", (4,))]
    _compare(it, "rec_pad", 2)


def test_record_file_read_front_to_back_discards_the_last_batch():
    it = mx.image.ImageIter(4, SHAPE, path_imgrec=str(HERE / "images.rec"),
                            last_batch_handle="discard")
    _compare(it, "rec_discard", 2)


def test_image_list_file_with_two_labels_rolls_over():
    it = mx.image.ImageIter(4, SHAPE, label_width=2, path_imglist=str(HERE / "images.lst"),
                            path_root=str(HERE), last_batch_handle="roll_over")
    assert it.provide_label == [("softmax_label", (4, 2))]
    _compare(it, "lst_roll", 3)


def test_python_image_list_with_int_labels():
    imglist = [[i * 1.5, f"images/img{i}.png"] for i in range(5)]
    it = mx.image.ImageIter(2, SHAPE, imglist=imglist, path_root=str(HERE), dtype="int32")
    _compare(it, "imglist_int", 2)


def test_num_parts_reads_one_part_of_the_index():
    it = mx.image.ImageIter(2, SHAPE, path_imgrec=str(HERE / "images.rec"),
                            path_imgidx=str(HERE / "images.idx"), num_parts=2, part_index=1)
    _compare(it, "part1", 1)


def test_shuffle_and_every_random_augmenter_repeat_mxnet_under_the_same_seeds():
    _seed(7)
    it = mx.image.ImageIter(3, SHAPE, path_imgrec=str(HERE / "images.rec"),
                            path_imgidx=str(HERE / "images.idx"), shuffle=True, rand_crop=True,
                            rand_mirror=True, brightness=0.3, contrast=0.3, saturation=0.3,
                            hue=0.1, pca_noise=0.1, rand_gray=0.3, mean=True, std=True)
    assert json.dumps([a.dumps() for a in it.auglist]) == INFO["random_dumps"]
    _compare(it, "random", 2, atol=1e-4)


def test_resizing_crops_repeat_mxnet_within_opencv_s_integer_rounding():
    # uint8 images: OpenCV sums in fixed point, here in float and rounded (off by 1 at most
    # per resize; the short-edge resize and the crop's resize make two)
    _seed(9)
    it = mx.image.ImageIter(3, SHAPE, path_imgrec=str(HERE / "images.rec"),
                            path_imgidx=str(HERE / "images.idx"), shuffle=True, resize=12,
                            rand_crop=True, rand_resize=True, inter_method=10)
    _compare(it, "resized", 2, atol=2.0)


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
def test_imresize_modes_match_opencv(interp):
    for size in ((20, 15), (4, 5), (6, 12)):
        for kind in ("u8", "f32"):
            image = EXPECTED["aug_" + ("u8" if kind == "u8" else "src")]
            out = mx.image.imresize(mx.nd.array(image, dtype=image.dtype), *size, interp=interp)
            want = EXPECTED[f"resize_{interp}_{size[0]}x{size[1]}_{kind}"]
            assert out.dtype == want.dtype and out.shape == want.shape
            np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=0,
                                       atol=1.0 if kind == "u8" else 0.02,
                                       err_msg=f"interp {interp} {size} {kind}")


@pytest.mark.parametrize("interp", [-1, 6, 9, 10])
def test_imresize_refuses_a_mode_opencv_does_not_have(interp):
    """MXNet's imresize hands interp to OpenCV, which refuses an unknown mode (9 and 10 are
    meant for the augmenters, which pick a real mode first)."""
    with pytest.raises(mx.base.MXNetError, match=f"unknown interpolation method interp={interp}"):
        mx.image.imresize(mx.nd.ones((12, 16, 3)), 3, 3, interp=interp)


@pytest.mark.parametrize("name, make, source", [
    ("brightness", lambda: mx.image.BrightnessJitterAug(0.5), "aug_src"),
    ("contrast", lambda: mx.image.ContrastJitterAug(0.5), "aug_src"),
    ("saturation", lambda: mx.image.SaturationJitterAug(0.5), "aug_src"),
    ("hue", lambda: mx.image.HueJitterAug(0.4), "aug_src"),
    ("lighting", lambda: mx.image.LightingAug(0.1, mx.image.augmenters.PCA_EIGVAL,
                                              mx.image.augmenters.PCA_EIGVEC), "aug_src"),
    ("colorjitter", lambda: mx.image.ColorJitterAug(0.3, 0.3, 0.3), "aug_src"),
    ("gray", lambda: mx.image.RandomGrayAug(1.0), "aug_src"),
    ("flip", lambda: mx.image.HorizontalFlipAug(1.0), "aug_src"),
    ("normalize", lambda: mx.image.ColorNormalizeAug(mx.nd.array([10.0, 20.0, 30.0]),
                                                     [2.0, 3.0, 4.0]), "aug_src"),
    ("order", lambda: mx.image.RandomOrderAug([mx.image.BrightnessJitterAug(0.2),
                                               mx.image.ContrastJitterAug(0.2)]), "aug_src"),
    ("sequential", lambda: mx.image.SequentialAug([mx.image.HorizontalFlipAug(1.0),
                                                   mx.image.SaturationJitterAug(0.2)]),
     "aug_src"),
    ("randomcrop", lambda: mx.image.RandomCropAug((5, 4)), "aug_u8"),
    ("centercrop", lambda: mx.image.CenterCropAug((6, 3)), "aug_u8"),
    ("cast", lambda: mx.image.CastAug(), "aug_u8"),
])
def test_augmenter_matches_mxnet(name, make, source):
    aug, image = make(), EXPECTED[source]
    for s in (3, 4):
        _seed(s)
        out = aug(mx.nd.array(image, dtype=image.dtype)).asnumpy()
        want = EXPECTED[f"aug_{name}_{s}"]
        assert out.dtype == want.dtype and out.shape == want.shape
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3, err_msg=f"{name} seed {s}")
    assert aug.dumps() == INFO[f"dumps_{name}"]


def test_create_augmenter_dumps_as_mxnet():
    augs = mx.image.CreateAugmenter(
        (3, 8, 8), resize=10, rand_crop=True, rand_resize=True, rand_mirror=True, mean=True,
        std=np.array([1.0, 2.0, 3.0]), brightness=0.1, contrast=0.2, saturation=0.3, hue=0.4,
        pca_noise=0.5, rand_gray=0.6, inter_method=1)
    assert json.dumps([a.dumps() for a in augs]) == INFO["create_dumps"]
    with pytest.raises(ValueError, match="rand_resize needs rand_crop"):
        mx.image.CreateAugmenter((3, 8, 8), rand_resize=True)
    with pytest.raises(ValueError, match="mean: expected True, None or an array"):
        mx.image.CreateAugmenter((3, 8, 8), mean=[1, 2, 3])


def test_copy_make_border_types_as_opencv():
    u8 = mx.nd.array(EXPECTED["aug_u8"], dtype=np.uint8)
    for t in range(5):
        out = mx.image.copyMakeBorder(u8, 1, 2, 3, 4, type=t, values=[5.0, 6.0, 7.0])
        assert out.dtype == np.uint8
        np.testing.assert_array_equal(out.asnumpy(), EXPECTED[f"border_{t}"], err_msg=str(t))
    out = mx.image.copyMakeBorder(mx.nd.array(EXPECTED["aug_src"]), 2, 0, 1, 1, value=9.5)
    np.testing.assert_array_equal(out.asnumpy(), EXPECTED["border_value"])
    with pytest.raises(mx.base.MXNetError, match="copyMakeBorder: type"):
        mx.image.copyMakeBorder(u8, 1, 1, 1, 1, type=7)


def test_random_crops_and_interp_choice_draw_as_mxnet():
    u8 = mx.nd.array(EXPECTED["aug_u8"], dtype=np.uint8)
    _seed(5)
    assert [list(mx.image.random_crop(u8, (5, 4))[1]) for _ in range(6)] == \
        INFO["random_crop_rects"]
    rects = [list(mx.image.random_size_crop(u8, (4, 4), (0.3, 0.9), (0.5, 2))[1])
             for _ in range(6)]
    assert rects == INFO["random_size_crop_rects"]
    assert [mx.image.image._get_interp_method(10) for _ in range(8)] == INFO["interp10"]
    assert [mx.image.image._get_interp_method(9, s) for s in
            [(4, 4, 8, 8), (8, 8, 4, 4), (4, 8, 8, 4)]] == INFO["interp9"]
    assert [list(mx.image.scale_down((640, 480), (720, 120))),
            list(mx.image.scale_down((10, 20), (30, 10)))] == INFO["scale_down"]


def test_imrotate_matches_mxnet_s_bilinear_sampler():
    chw = mx.nd.array(EXPECTED["rot_src"])
    for name, kw in (("plain", {}), ("in", {"zoom_in": True}), ("out", {"zoom_out": True})):
        np.testing.assert_allclose(mx.image.imrotate(chw, 17, **kw).asnumpy(),
                                   EXPECTED[f"rot_{name}"], atol=1e-5, err_msg=name)
    batch = mx.image.imrotate(mx.nd.stack(chw, chw), mx.nd.array([-30, 45]))
    np.testing.assert_allclose(batch.asnumpy(), EXPECTED["rot_batch"], atol=1e-5)
    with pytest.raises(ValueError, match="cannot be both True"):
        mx.image.imrotate(chw, 5, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="needs a scalar angle"):
        mx.image.imrotate(chw, mx.nd.array([1, 2]))
    with pytest.raises(TypeError, match="only float32"):
        mx.image.imrotate(chw.astype("float64"), 5)
    _seed(0)
    assert mx.image.random_rotate(mx.nd.stack(chw, chw, chw), (-5, 5)).shape == (3, 3, 10, 14)


def test_color_normalize_and_errors_name_what_is_wrong():
    src = np.random.RandomState(2).rand(6, 5, 3).astype(np.float32) * 255
    mean, std = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 8.0])
    out = mx.image.color_normalize(mx.nd.array(src), mx.nd.array(mean), mx.nd.array(std))
    np.testing.assert_allclose(out.asnumpy(), (src - mean) / std, rtol=1e-5)
    with pytest.raises(ValueError, match="give path_imgrec, path_imglist or imglist"):
        mx.image.ImageIter(2, SHAPE)
    with pytest.raises(ValueError, match="3 channels"):
        mx.image.ImageIter(2, (1, 8, 8), imglist=[[0, "x.png"]])
    with pytest.raises(ValueError, match="last_batch_handle"):
        mx.image.ImageIter(2, SHAPE, imglist=[[0, "x.png"]], last_batch_handle="keep")
    with pytest.raises(ValueError, match="need its index"):
        mx.image.ImageIter(2, SHAPE, path_imgrec=str(HERE / "images.rec"), shuffle=True)


def test_a_broken_image_is_named_and_hard_reset_drops_the_rolled_over_batch(tmp_path):
    (tmp_path / "bad.png").write_bytes(b"not an image")
    it = mx.image.ImageIter(1, SHAPE, imglist=[[0, "bad.png"]], path_root=str(tmp_path))
    with pytest.raises(RuntimeError, match="Broken image filename: bad.png"):
        it.next()
    imglist = [[i, f"images/img{i}.png"] for i in range(5)]
    it = mx.image.ImageIter(2, SHAPE, imglist=imglist, path_root=str(HERE),
                            last_batch_handle="roll_over")
    assert len(list(it)) == 2                 # the fifth image waits for the next epoch
    it.hard_reset()
    first = it.next()
    assert first.pad == 0 and first.label[0].asnumpy().tolist() == [0.0, 1.0]
