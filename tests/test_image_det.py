"""mx.image.detection against MXNet 1.9.1: ImageDetIter's parsed and padded labels and
batches, crop and pad proposals, flips and pads under fixed seeds, and dumps(), from
tests/fixtures/image_iter (make_image_iter_fixtures.py). Decoding needs Pillow."""

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
LABEL = np.array([[0, 0.1, 0.2, 0.6, 0.7], [1, 0.3, 0.1, 0.9, 0.5], [2, 0.0, 0.6, 0.2, 1.0]])


def _seed(s):
    random.seed(s)
    np.random.seed(s)


def _iter(**kw):
    return mx.image.ImageDetIter(2, (3, 8, 8), path_imgrec=str(HERE / "det.rec"),
                                 path_imgidx=str(HERE / "det.idx"), **kw)


def _compare(it, name, epochs, atol=0.0):
    for epoch in range(epochs):
        count = 0
        for k, batch in enumerate(it):
            key = f"{name}_e{epoch}_b{k}"
            np.testing.assert_allclose(batch.data[0].asnumpy(), EXPECTED[key + "_data"],
                                       rtol=0, atol=atol, err_msg=key)
            np.testing.assert_allclose(batch.label[0].asnumpy(), EXPECTED[key + "_label"],
                                       rtol=1e-6, atol=1e-7, err_msg=key)
            assert batch.pad == INFO[key + "_pad"], key
            count += 1
        assert count == INFO[f"{name}_e{epoch}_count"]
        it.reset()


def test_det_iter_parses_pads_and_batches_labels_as_mxnet():
    it = _iter()
    assert list(it.label_shape) == INFO["det_label_shape"]
    assert list(it.provide_label[0][1]) == INFO["det_provide_label"]
    _compare(it, "det_plain", 2)


def test_random_crop_pad_and_mirror_give_mxnet_s_labels_under_the_same_seeds():
    # the crops are resized (bicubic): OpenCV's uint8 fixed point is matched within 1
    _seed(11)
    it = _iter(shuffle=True, rand_crop=1, rand_pad=0.5, rand_mirror=True,
               min_object_covered=0.3, area_range=(0.3, 2.0))
    assert json.dumps([a.dumps() for a in it.auglist]) == INFO["det_dumps"]
    _compare(it, "det_random", 2, atol=1.0)


def _proposal(p):
    return [float(v) for v in p[:4]] + [p[4].tolist()] if p else []


def test_crop_and_pad_proposals_match_mxnet():
    crop = mx.image.DetRandomCropAug(min_object_covered=0.2, area_range=(0.2, 1.0))
    pad = mx.image.DetRandomPadAug(area_range=(1.0, 2.5))
    _seed(12)
    crops = [_proposal(crop._random_crop_proposal(LABEL, 40, 50)) for _ in range(8)]
    pads = [_proposal(pad._random_pad_proposal(LABEL, 40, 50)) for _ in range(8)]
    for got, want in zip(crops + pads, INFO["det_crops"] + INFO["det_pads"]):
        assert got[:4] == want[:4]
        np.testing.assert_allclose(got[4], want[4], rtol=1e-12)


def test_pad_and_flip_move_image_and_boxes_together():
    img = mx.nd.array(np.arange(4 * 5 * 3).reshape(4, 5, 3), dtype=np.uint8)
    _seed(13)
    padded, label = mx.image.DetRandomPadAug(area_range=(1.0, 2.5))(img, LABEL.copy())
    np.testing.assert_array_equal(padded.asnumpy(), EXPECTED["det_pad_image"])
    np.testing.assert_allclose(label, EXPECTED["det_pad_label"])
    flipped, label = mx.image.DetHorizontalFlipAug(1.0)(img, LABEL.copy())
    np.testing.assert_array_equal(flipped.asnumpy(), EXPECTED["det_flip_image"])
    np.testing.assert_allclose(label, EXPECTED["det_flip_label"])


def test_reshape_sync_label_shape_and_label_errors():
    a, b = _iter(), _iter()
    b.reshape(label_shape=(5, 5))
    assert a.sync_label_shape(b) is b
    assert a.label_shape == (5, 5) and a.provide_label[0][1] == (2, 5, 5)
    assert a.next().label[0].shape == (2, 5, 5)
    with pytest.raises(ValueError, match="reduce label count from 5 to 1"):
        a.reshape(label_shape=(1, 5))
    with pytest.raises(ValueError, match="object width inconsistent: 5 vs 6"):
        a.reshape(label_shape=(5, 6))
    a.reshape(data_shape=(3, 6, 6))     # the augmenters still resize to 8x8, as in MXNet
    assert a.provide_data == [("data", (2, 3, 6, 6))] and a.data_shape == (3, 6, 6)
    with pytest.raises(RuntimeError, match="Label shape is invalid"):
        mx.image.det_iter.parse_label(np.array([2, 5, 1.0]))
    with pytest.raises(RuntimeError, match="inconsistent with annotation width 5"):
        mx.image.det_iter.parse_label(np.array([2, 5, 0, .1, .1, .5, .5, 1]))
    with pytest.raises(RuntimeError, match="no valid label"):
        mx.image.det_iter.parse_label(np.array([2, 5, 0, 0.5, 0.5, 0.2, 0.9]))


def test_draw_next_yields_bgr_images_with_boxes():
    it = _iter(aug_list=[mx.image.DetBorrowAug(mx.image.CastAug())])
    image = next(it.draw_next(color=(255, 0, 0), thickness=1))
    assert image.dtype == np.uint8 and image.shape == (8, 8, 3)
    # the first object of the first image spans x 0.1..0.6, y 0.2..0.7 of 8 pixels
    assert (image[1, 0:4] == (0, 0, 255)).all() and (image[1:5, 4] == (0, 0, 255)).all()
    assert sum(1 for _ in it.draw_next()) == 4      # the rest of the five images


def test_det_augmenter_argument_errors():
    with pytest.raises(TypeError, match="expected an image Augmenter"):
        mx.image.DetBorrowAug(mx.image.DetHorizontalFlipAug(0.5))
    with pytest.raises(ValueError, match="holds DetAugmenters only"):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])
    with pytest.warns(UserWarning, match="Skip DetRandomCropAug"):
        assert not mx.image.DetRandomCropAug(area_range=(0.5, 0.1)).enabled
    multi = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5])
    assert [a.min_object_covered for a in multi.aug_list] == [0.1, 0.5]
