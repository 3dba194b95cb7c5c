"""ROIPooling, ROIAlign and RROIAlign against MXNet's documented example and per-sample
loops, their gradients, hidden outputs, inference and errors."""

import numpy as np
import pytest
from opsdk import MXNetError, ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(0)
ALIGN = "_contrib_ROIAlign"


def test_roi_pooling_documented_example():
    x = np.arange(48, dtype=np.float32).reshape(1, 1, 8, 6)
    rois = np.array([[0, 0, 0, 4, 4]], np.float32)
    kw = {"pooled_size": (2, 2), "spatial_scale": 1.0}
    check_forward("ROIPooling", [x, rois], np.array([[[[14, 16], [26, 28]]]], np.float32), kw)
    check_forward("ROIPooling", [x, rois], np.array([[[[7, 9], [19, 21]]]], np.float32),
                  {**kw, "spatial_scale": 0.7})


def pool_ref(x, rois, ph, pw, scale):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) * scale + 0.5)) for v in box)
        if not 0 <= int(b) < x.shape[0]:
            continue
        h, w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i, j in np.ndindex(ph, pw):
            hs = min(max(int(np.floor(i * h / ph)) + y1, 0), x.shape[2])
            he = min(max(int(np.ceil((i + 1) * h / ph)) + y1, 0), x.shape[2])
            ws = min(max(int(np.floor(j * w / pw)) + x1, 0), x.shape[3])
            we = min(max(int(np.ceil((j + 1) * w / pw)) + x1, 0), x.shape[3])
            if he > hs and we > ws:
                out[r, :, i, j] = x[int(b), :, hs:he, ws:we].max(axis=(1, 2))
    return out


def test_roi_pooling_matches_loop_and_routes_gradient_to_maxima():
    x = RNG.permutation(2 * 2 * 9 * 7).reshape(2, 2, 9, 7).astype(np.float64)
    rois = np.array([[1, 0.5, 1.5, 5.4, 7.6], [0, -2, -3, 2, 2], [0, 6, 8, 20, 20],
                     [1, 3, 3, 3, 3], [2, 0, 0, 3, 3]])
    kw = {"pooled_size": (3, 2), "spatial_scale": 1.0}
    check_forward("ROIPooling", [x, rois], pool_ref(x, rois, 3, 2, 1.0), kw)
    outs = run_op("ROIPooling", [x, rois], kw)
    assert outs[1].dtype == np.int32 and (outs[1][4] == -1).all()
    flat = x.reshape(-1)
    hit = outs[1] >= 0
    np.testing.assert_array_equal(flat[outs[1][hit]], outs[0][hit])
    og = RNG.standard_normal(outs[0].shape)
    want = np.zeros(x.size)
    np.add.at(want, outs[1][hit], og[hit])
    check_backward("ROIPooling", [x, rois], [og], [want.reshape(x.shape), np.zeros((5, 5))], kw)


def bilinear(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return 0 * img[..., 0, 0]
    y, x = max(y, 0), max(x, 0)
    y0, x0 = min(int(y), h - 1), min(int(x), w - 1)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = (y - y0 if y0 < h - 1 else 0), (x - x0 if x0 < w - 1 else 0)
    return ((1 - ly) * (1 - lx) * img[..., y0, x0] + (1 - ly) * lx * img[..., y0, x1]
            + ly * (1 - lx) * img[..., y1, x0] + ly * lx * img[..., y1, x1])


def align_ref(x, rois, ph, pw, scale, ratio=-1, aligned=False):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = np.array(box) * scale - (0.5 if aligned else 0)
        rh, rw = y2 - y1, x2 - x1
        if not aligned:
            rh, rw = max(rh, 1), max(rw, 1)
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        for i, j in np.ndindex(ph, pw):
            for a, c in np.ndindex(gh, gw):
                y = y1 + i * rh / ph + (a + 0.5) * rh / ph / gh
                xx = x1 + j * rw / pw + (c + 0.5) * rw / pw / gw
                out[r, :, i, j] += bilinear(x[int(b)], y, xx) / (gh * gw)
    return out


@pytest.mark.parametrize("kw", [{}, {"sample_ratio": 2}, {"aligned": True, "sample_ratio": 3}])
def test_roi_align_matches_loop(kw):
    x = RNG.standard_normal((2, 3, 9, 8))
    rois = np.array([[1, 0.5, 1.5, 5.4, 7.6], [0, -2.2, -3.1, 2.3, 2.6], [0, 6, 8, 20, 20],
                     [1, 3.3, 3.2, 3.6, 3.9]])
    scale = 0.8
    check_forward(ALIGN, [x, rois], align_ref(x, rois, 2, 3, scale, kw.get("sample_ratio", -1),
                                              kw.get("aligned", False)),
                  {"pooled_size": (2, 3), "spatial_scale": scale, **kw}, rtol=1e-10)
    check_numeric_gradient(ALIGN, [x, rois], {"pooled_size": (2, 3), "spatial_scale": scale,
                                              **kw}, grad_inputs=[0], rtol=1e-5, atol=1e-8)


def test_roi_align_in_roi_chunks_matches_one_pass(monkeypatch):
    """Many rois are pooled a chunk at a time (bounded intermediates); forward and gradient
    do not depend on where the chunks split, and rois of two images interleave."""
    from mxnext_ops_nn import roi
    x = RNG.standard_normal((2, 4, 10, 12))
    box = RNG.uniform(0, 9, (9, 2))
    rois = np.concatenate([np.arange(9)[:, None] % 2, box, box + RNG.uniform(1, 5, (9, 2))], 1)
    kw = {"pooled_size": (3, 2), "spatial_scale": 0.9, "sample_ratio": 2}
    og = [RNG.standard_normal((9, 4, 3, 2))]
    whole = run_op(ALIGN, [x, rois], kw)[0], check_backward(ALIGN, [x, rois], og, [None, None], kw)[0]
    monkeypatch.setattr(roi, "CHUNK_BYTES", 3 * 4 * 12 * 8 * 2)   # two rois a chunk
    np.testing.assert_allclose(run_op(ALIGN, [x, rois], kw)[0], whole[0], rtol=1e-12)
    np.testing.assert_allclose(check_backward(ALIGN, [x, rois], og, [None, None], kw)[0], whole[1],
                               rtol=1e-12)


def test_roi_align_position_sensitive_and_ignored_rois():
    x = RNG.standard_normal((1, 8, 6, 6))
    rois = np.array([[0, 0.3, 0.7, 4.2, 5.1], [-1, 0, 0, 3, 3]])
    kw = {"pooled_size": (2, 2), "spatial_scale": 1.0}
    plain = run_op(ALIGN, [x, rois], kw)[0]
    ps = run_op(ALIGN, [x, rois], {**kw, "position_sensitive": True})[0]
    assert ps.shape == (2, 2, 2, 2)
    for c, i, j in np.ndindex(2, 2, 2):
        assert ps[0, c, i, j] == pytest.approx(plain[0, c * 4 + i * 2 + j, i, j])
    assert not ps[1].any() and not plain[1].any()
    g = check_backward(ALIGN, [x, rois], [np.ones((2, 8, 2, 2))], [None, np.zeros((2, 5))], kw)
    assert g[0].sum() == pytest.approx(8 * 4)   # every bin's weights sum to one


def test_rroi_align_rotation():
    x = RNG.standard_normal((1, 2, 10, 9))
    box = np.array([[0, 4.4, 5.2, 5.0, 3.0, 0.0]], np.float32)
    kw = {"pooled_size": (2, 3), "spatial_scale": 1.0}
    plain = run_op(ALIGN, [x.astype(np.float32),
                           np.array([[0, 1.9, 3.7, 6.9, 6.7]], np.float32)], kw)[0]
    check_forward("_contrib_RROIAlign", [x.astype(np.float32), box], plain, kw, atol=1e-5)
    turned = box.copy()
    turned[0, 5] = 180
    half_turn = run_op("_contrib_RROIAlign", [x.astype(np.float32), turned], kw)[0]
    np.testing.assert_allclose(half_turn[..., ::-1, ::-1], plain, atol=1e-5)


def test_errors_name_op_and_argument():
    x = np.zeros((1, 2, 4, 4))
    with pytest.raises(ShapeError, match="ROIPooling.*'rois'.*\\(num_rois, 5\\).*\\(3, 4\\)"):
        run_op("ROIPooling", [x, np.zeros((3, 4))], {"pooled_size": (2, 2),
                                                     "spatial_scale": 1})
    with pytest.raises(ShapeError, match="ROIAlign.*position_sensitive.*divisible.*4.*got 2"):
        run_op(ALIGN, [x, np.zeros((1, 5))], {"pooled_size": (2, 2), "spatial_scale": 1,
                                              "position_sensitive": True})
    with pytest.raises(MXNetError, match="ROIAlign.*aligned=True.*positive width"):
        run_op(ALIGN, [x, np.array([[0, 2, 2, 1, 3.0]])], {"pooled_size": (2, 2),
                                                           "spatial_scale": 1, "aligned": True})
    with pytest.raises(ParamError, match="pooled_size"):
        run_op("ROIPooling", [x, np.zeros((1, 5))], {"pooled_size": (2,), "spatial_scale": 1})
    with pytest.raises(ParamError, match="spatial_scale"):
        run_op("_contrib_RROIAlign", [x, np.zeros((1, 6))], {"pooled_size": (2, 2),
                                                             "spatial_scale": 2})
