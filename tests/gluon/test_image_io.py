"""mx.image's resize and crops, io.ImageRecordIter over an image RecordIO file,
vision.ImageFolderDataset's classes, and contrib.io.DataLoaderIter's padded batches.
Decoding needs Pillow: those tests skip without it, and the error says what is missing."""

import io
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon
from mxnext.base import MXNetError
from mxnext.contrib.io import DataLoaderIter


def _img(h, w):
    return mx.nd.array(np.arange(h * w * 3).reshape(h, w, 3) % 251, dtype=np.uint8)


def test_crops_and_resizes_follow_mxnet_s_geometry():
    src = _img(40, 60)
    out, (x0, y0, w, h) = mx.image.center_crop(src, (20, 10))
    assert (x0, y0, w, h) == (20, 15, 20, 10) and out.shape == (10, 20, 3)
    assert np.array_equal(out.asnumpy(), src.asnumpy()[15:25, 20:40])
    # a window larger than the image shrinks to fit, then is resized back to the size
    assert mx.image.scale_down((60, 40), (80, 80)) == (40, 40)
    assert mx.image.center_crop(src, (80, 80))[0].shape == (80, 80, 3)
    assert mx.image.resize_short(src, 20).shape == (20, 30, 3)
    assert mx.image.imresize(src, 7, 5).dtype == np.uint8
    assert mx.image.ResizeAug(10)(src).shape == (10, 15, 3)
    assert mx.image.CenterCropAug((8, 8))(src).shape == (8, 8, 3)
    x0, y0 = mx.image.random_crop(src, (8, 6))[1][:2]
    assert 0 <= x0 <= 52 and 0 <= y0 <= 34
    assert mx.img is mx.image


def test_dataloaderiter_pads_the_short_last_batch_and_reports_it():
    data = gluon.data.ArrayDataset(np.arange(10, dtype=np.float32).reshape(5, 2),
                                   np.arange(5, dtype=np.float32))
    it = DataLoaderIter(gluon.data.DataLoader(data, batch_size=2))
    assert it.provide_data[0].shape == (2, 2) and it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[2].data[0].asnumpy().tolist() == [[8, 9], [0, 0]]
    it.reset()
    assert len(list(it)) == 3


def test_image_folder_lists_classes_and_skips_other_files(tmp_path):
    for cls, names in (("cat", ["b.png", "a.jpg", "notes.txt"]), ("ant", ["x.JPEG"])):
        (tmp_path / cls).mkdir()
        for name in names:
            (tmp_path / cls / name).write_bytes(b"")
    (tmp_path / "readme").write_text("")
    with pytest.warns(UserWarning):
        ds = gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["ant", "cat"]
    assert [(p.split("/")[-1], l) for p, l in ds.items] == [("x.JPEG", 0), ("a.jpg", 1),
                                                            ("b.png", 1)]


def test_decoding_without_pillow_says_so(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(MXNetError, match="needs Pillow"):
        mx.image.imread(str(tmp_path / "x.png"))


def _png(pixels):
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    return buf.getvalue()


def test_image_record_iter_decodes_crops_and_pads_like_mxnet(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (10, 12, 3)).astype(np.uint8) for _ in range(5)]
    rec = mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "w")
    for i, img in enumerate(images):
        rec.write(mx.recordio.pack((0, float(i), i, 0), _png(img)))
    rec.close()
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "x.rec"), data_shape=(3, 8, 8),
                               batch_size=2, mean_r=1.0, scale=0.5, preprocess_threads=4)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    first = batches[0].data[0].asnumpy()
    centre = images[0][1:9, 2:10].transpose(2, 0, 1).astype(np.float32)
    assert np.allclose(first[0, 0], (centre[0] - 1) * 0.5) and np.allclose(first[0, 1:],
                                                                          centre[1:] * 0.5)
    assert batches[2].label[0].asnumpy().tolist() == [4, 0]
    part = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "x.rec"), data_shape=(1, 8, 8),
                                 batch_size=1, num_parts=2, part_index=1, round_batch=False)
    assert [b.label[0].asscalar() for b in part] == [2, 3, 4]
    with pytest.raises(MXNetError, match=r"unknown parameter\(s\) \['mean_x'\]"):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "x.rec"), data_shape=(3, 8, 8),
                              batch_size=2, mean_x=1)


def test_image_folder_reads_images_as_hwc_uint8(tmp_path):
    pytest.importorskip("PIL")
    (tmp_path / "c").mkdir()
    pixels = np.full((4, 5, 3), 7, np.uint8)
    (tmp_path / "c" / "a.png").write_bytes(_png(pixels))
    img, label = gluon.data.vision.ImageFolderDataset(str(tmp_path))[0]
    assert label == 0 and np.array_equal(img.asnumpy(), pixels)
    gray, _ = gluon.data.vision.ImageFolderDataset(str(tmp_path), flag=0)[0]
    assert gray.shape == (4, 5, 1)


def test_image_record_dataset_decodes_records_and_their_labels(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (6, 4, 3)).astype(np.uint8) for _ in range(3)]
    labels = [2.0, [1.0, 0.5, 3.0], 7.0]
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "x.idx"), str(tmp_path / "x.rec"), "w")
    for i, (img, label) in enumerate(zip(images, labels)):
        rec.write_idx(i, mx.recordio.pack((0, label, i, 0), _png(img)))
    rec.close()
    ds = gluon.data.vision.ImageRecordDataset(str(tmp_path / "x.rec"))
    assert len(ds) == 3
    img, label = ds[1]
    assert img.dtype == np.uint8 and np.array_equal(img.asnumpy(), images[1])
    assert label.dtype == np.float32 and label.tolist() == [1.0, 0.5, 3.0]
    assert ds[2][1] == 7.0
    flipped = gluon.data.vision.ImageRecordDataset(
        str(tmp_path / "x.rec"), flag=0, transform=lambda d, l: (d.shape, l + 1))
    assert flipped[0] == ((6, 4, 1), 3.0)
