"""The contrib detection ops (detection.py, box_nms.py, multibox.py) against MXNet 1.9.1's
documented examples and unit-test values, hand-worked cases of their quirks, their gradients,
hidden outputs, inference and errors."""

import numpy as np
import pytest
from opsdk import ParamError, ShapeError, TypeInferError
from opsdk.testing import check_backward, check_forward, run_op

import mxnext as mx

RNG = np.random.default_rng(0)
NMS = "_contrib_box_nms"
F32 = np.float32


def test_gradientmultiplier_is_identity_forward_and_scales_the_gradient():
    x = RNG.standard_normal((3, 4)).astype(F32)
    check_forward("_contrib_gradientmultiplier", [x], x, {"scalar": -0.7})
    og = RNG.standard_normal((3, 4)).astype(F32)
    check_backward("_contrib_gradientmultiplier", [x], [og], [og * F32(-0.7)], {"scalar": -0.7})


def test_gradientmultiplier_through_autograd():
    x = mx.nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.gradientmultiplier(x * x, scalar=0.5)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [1, 4, 9])
    np.testing.assert_allclose(x.grad.asnumpy(), [1, -2, 3])


def test_box_iou_documented_example_and_shape():
    x = np.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]], F32)
    y = np.array([[0.25, 0.25, 0.75, 0.75]], F32)
    check_forward("_contrib_box_iou", [x, y], np.full((2, 1), 1 / 7, F32), rtol=1e-5)
    out = run_op("_contrib_box_iou", [np.zeros((2, 3, 4), F32), np.zeros((5, 4), F32)])[0]
    assert out.shape == (2, 3, 5) and not out.any()       # empty boxes: 0, not nan


def test_box_iou_center_matches_corner():
    xy, wh = RNG.uniform(0, 1, (6, 2)), RNG.uniform(0.1, 0.5, (6, 2))
    corner = np.concatenate([xy - wh / 2, xy + wh / 2], axis=1)
    center = np.concatenate([xy, wh], axis=1)
    a = run_op("_contrib_box_iou", [corner[:4], corner[2:]])[0]
    b = run_op("_contrib_box_iou", [center[:4], center[2:]], {"format": "center"})[0]
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(np.diag(a[2:, :2]), 1.0)


def test_box_iou_and_matching_gradients_are_zero():
    x = mx.nd.array(RNG.uniform(0, 1, (3, 4)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_iou(x, x) + mx.nd.contrib.bipartite_matching(x, threshold=0.1)[0]
    y.backward()
    assert not x.grad.asnumpy().any()


def test_box_encode_mxnet_example_and_a_worked_target():
    anchors = np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]], F32)
    means, stds = np.zeros(4, F32), np.array([0.1, 0.1, 0.2, 0.2], F32)
    ins = [np.array([[0, 1]], F32), np.array([[0, 1]], F32), anchors, anchors, means, stds]
    check_forward("_contrib_box_encode", ins, [np.zeros((1, 2, 4), F32),
                                               np.array([[[0] * 4, [1] * 4]], F32)])
    refs = np.array([[[0.0, 0.0, 0.4, 0.2], [0.2, 0.3, 0.4, 0.6]]], F32)
    ins = [np.array([[1, 1]], F32), np.array([[1, 0]], F32), anchors, refs, means + 0.5, stds]
    # anchor 0 (centre 0.2, 0.3, size 0.2) against ref 1 (centre 0.3, 0.45, size 0.2 x 0.3)
    t0 = [(0.5 - 0.5) / 0.1, (0.75 - 0.5) / 0.1, (np.log(1.0) - 0.5) / 0.2,
          (np.log(1.5) - 0.5) / 0.2]
    t, mask = run_op("_contrib_box_encode", ins)
    np.testing.assert_allclose(t[0, 0], t0, rtol=1e-5, atol=1e-5)
    assert mask.all()


def test_box_decode_mxnet_example_clip_and_corner_anchors():
    data = np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]], F32)
    want = np.array([[[-0.0562755, -0.00865743, 0.26227552, 0.42465743],
                      [0.13240421, 0.17859563, 0.93759584, 1.1174043]]], F32)
    kw = {"std0": 0.1, "std1": 0.1, "std2": 0.2, "std3": 0.2}
    check_forward("_contrib_box_decode", [data, data], want, kw, rtol=1e-5)
    y = mx.nd.contrib.box_decode(mx.nd.array(data), mx.nd.array(data), .1, .1, .2, .2)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5)
    clipped = run_op("_contrib_box_decode", [data, data], {**kw, "clip": 0.05})[0]
    half = data[0, :, 2:] * np.exp(0.05) / 2          # every exponent clips to 0.05
    np.testing.assert_allclose(clipped[0, :, 2:] - clipped[0, :, :2], 2 * half, rtol=1e-5)
    corner = np.array([[[0.0, 0.0, 0.2, 0.4]]], F32)   # centre (0.1, 0.2), size (0.2, 0.4)
    out = run_op("_contrib_box_decode", [np.zeros((1, 1, 4), F32), corner],
                 {"format": "corner"})[0]
    np.testing.assert_allclose(out, corner, atol=1e-7)


BOXES = np.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                  [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]], F32)
NO_BOX = [-1] * 6


def test_box_nms_documented_example_forward_record_and_gradient():
    kw = {"overlap_thresh": 0.1, "id_index": 0, "force_suppress": True}
    out, record = run_op(NMS, [BOXES], kw)
    np.testing.assert_array_equal(out, np.array([BOXES[3], BOXES[0], NO_BOX, NO_BOX], F32))
    np.testing.assert_array_equal(record[:, 0], [3, 0, -1, -1])
    og = np.repeat(np.array([[0.1], [0.2], [0.3], [0.4]], F32), 6, axis=1)
    want = np.zeros((4, 6), F32)
    want[0], want[3] = 0.2, 0.1
    check_backward(NMS, [BOXES], [og, np.zeros((4, 1), F32)], [want], kw)


def test_box_nms_per_class_topk_and_valid_thresh():
    out = run_op(NMS, [BOXES], {"overlap_thresh": 0.1, "id_index": 0})[0]   # per class
    np.testing.assert_array_equal(out, np.array([BOXES[3], BOXES[0], BOXES[1], NO_BOX], F32))
    out, record = run_op(NMS, [np.stack([BOXES, BOXES[::-1]])],
                         {"topk": 2, "valid_thresh": 0.45, "overlap_thresh": 0.9})
    np.testing.assert_array_equal(out[1], np.array([BOXES[3], BOXES[0], NO_BOX, NO_BOX], F32))
    np.testing.assert_array_equal(record[:, :, 0], [[3, 0, -1, -1], [4, 7, -1, -1]])


def test_box_nms_background_is_dropped_and_formats_convert():
    out = run_op(NMS, [BOXES], {"id_index": 0, "background_id": 0})[0]
    np.testing.assert_array_equal(out, np.array([BOXES[3], BOXES[1], NO_BOX, NO_BOX], F32))
    box = np.array([[0, 0.9, -0.2, 0.1, 0.4, 0.5], [1, 0.8, 0.3, 0.3, 0.6, 0.9]], F32)
    out = run_op(NMS, [box], {"out_format": "center"})[0]
    # as MXNet: a box whose first coordinate is negative is taken for an empty row, unconverted
    np.testing.assert_allclose(out, [box[0], [1, 0.8, 0.45, 0.6, 0.3, 0.6]], rtol=1e-6)
    back = run_op(NMS, [out[1:]], {"in_format": "center"})[0]
    np.testing.assert_allclose(back, box[1:], rtol=1e-6)


def test_box_nms_topk_zero_copies_and_all_filtered_gives_minus_one():
    data = RNG.uniform(0, 1, (2, 3, 4, 6)).astype(F32)
    out, record = run_op(NMS, [data], {"topk": 0})
    np.testing.assert_array_equal(out, data)
    np.testing.assert_array_equal(record.reshape(-1), np.arange(24))
    out, record = run_op(NMS, [data], {"valid_thresh": 2.0})
    assert (out == -1).all() and (record == -1).all()


def test_box_nms_honours_add_to():
    kw = {"overlap_thresh": 0.1, "id_index": 0, "force_suppress": True}
    want = run_op(NMS, [BOXES], kw)
    base = [np.ones((4, 6), F32), np.ones((4, 1), F32)]
    got = run_op(NMS, [BOXES], kw, req="add", outputs=[b.copy() for b in base])
    for g, w, b in zip(got, want, base):
        np.testing.assert_array_equal(g, w + b)


def test_box_nms_symbol_shows_one_output_and_infers_the_record_shape():
    sym = mx.sym.contrib.box_non_maximum_suppression(mx.sym.var("x"))
    assert sym.list_outputs() == [f"{sym.name}_output0"]
    _, out_shapes, _ = sym.infer_shape(x=(2, 3, 4, 6))
    assert out_shapes == [(2, 3, 4, 6)]
    assert run_op(NMS, [np.zeros((2, 3, 4, 6), F32)])[1].shape == (2, 3, 4, 1)


@pytest.mark.parametrize("params, shape", [
    ({}, (4, 4)),                                   # width 4 < 5
    ({"id_index": 0}, (4, 5)),                      # with an id, 6 needed
    ({"score_index": 3}, (4, 6)),                   # score inside the coordinates
    ({"coord_start": 3}, (4, 6)),                   # coordinates past the end
    ({"id_index": 1}, (4, 6)),                      # id on the score
])
def test_box_nms_rejects_bad_layouts(params, shape):
    with pytest.raises(ShapeError, match="_contrib_box_nms"):
        run_op(NMS, [np.zeros(shape, F32)], params)


def test_bipartite_matching_documented_examples_and_topk():
    s = np.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]], F32)
    check_forward("_contrib_bipartite_matching", [s], [np.array([1, -1, 0], F32),
                                                      np.array([2, 0], F32)],
                  {"threshold": 1e-12})
    check_forward("_contrib_bipartite_matching", [s], [np.array([-1, 0, 1], F32),
                                                      np.array([1, 2], F32)],
                  {"threshold": 100, "is_ascend": True})
    s = np.array([[0.9, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.3, 0.2]], F32)
    # MXNet stops only once the count exceeds topk: topk=1 makes two matches
    check_forward("_contrib_bipartite_matching", [s], [np.array([0, 1, -1], F32)] * 2,
                  {"threshold": 0.05, "topk": 1})


def test_bipartite_matching_batches_like_a_greedy_loop():
    s = RNG.uniform(0, 1, (2, 3, 5, 4)).round(1)
    row, col = run_op("_contrib_bipartite_matching", [s], {"threshold": 0.35})
    for idx in np.ndindex(2, 3):
        r, c = -np.ones(5), -np.ones(4)
        for k in np.argsort(-s[idx].reshape(-1), kind="stable"):
            i, j = divmod(k, 4)
            if r[i] < 0 and c[j] < 0 and s[idx][i, j] > 0.35:
                r[i], c[j] = j, i
        np.testing.assert_array_equal(row[idx], r)
        np.testing.assert_array_equal(col[idx], c)


def test_multibox_prior_mxnet_values_and_layout():
    x = mx.nd.zeros((1, 3, 561, 728))
    y = mx.nd.contrib.MultiBoxPrior(x, sizes=[0.75, 0.5, 0.25], ratios=[1, 2, 0.5])
    assert y.shape == (1, 2042040, 4)
    boxes = y.asnumpy().reshape(561, 728, 5, 4)
    np.testing.assert_allclose(boxes[250, 250, 0], [0.055117, 0.071524, 0.63307, 0.821524],
                               atol=1e-5)
    y = mx.nd.contrib.MultiBoxPrior(x, sizes=[0.75, 0.5, 0.25], ratios=[20, 2, 0.5])
    np.testing.assert_allclose(y.asnumpy().reshape(561, 728, 5, 4)[250, 250, 0],
                               [-0.948249, 0.362671, 1.636436, 0.530377], atol=1e-5)


def test_multibox_prior_steps_offsets_and_clip():
    p = {"sizes": (0.4,), "ratios": (1, 4), "steps": (0.25, 0.5), "offsets": (0, 1),
         "clip": True}
    out = run_op("_contrib_MultiBoxPrior", [np.zeros((1, 1, 2, 2), F32)], p)[0].reshape(2, 2, 2, 4)
    # cell (1, 0): centre y = 1 * 0.25, x = 1 * 0.5; ratio 4 box: half sizes 0.4 and 0.1
    np.testing.assert_allclose(out[1, 0, 1], [0.1, 0.15, 0.9, 0.35], atol=1e-6)
    np.testing.assert_allclose(out[1, 1, 0], [0.8, 0.05, 1.0, 0.45], atol=1e-6)   # clipped


def test_multibox_target_mxnet_values():
    anchors = np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]], F32)
    label = np.array([[[1, 0.1, 0.1, 0.5, 0.6]]], F32)
    cls_pred = np.arange(10, dtype=F32).reshape(1, -1, 2)
    check_forward("_contrib_MultiBoxTarget", [anchors, label, cls_pred], [
        np.array([[5.0, 2.5000005, 3.4657357, 4.581454, 0, 0, 0, 0]], F32),
        np.array([[1, 1, 1, 1, 0, 0, 0, 0]], F32), np.array([[2, 0]], F32)],
        {"overlap_threshold": 0.5, "negative_mining_ratio": 3,
         "negative_mining_thresh": 0.4}, rtol=1e-5, atol=1e-5)


def test_multibox_target_mining_keeps_the_hardest_negatives():
    anchors = np.array([[[0.0, 0.0, 0.5, 0.5], [0.6, 0.6, 0.7, 0.7], [0.7, 0.0, 0.9, 0.2],
                         [0.0, 0.7, 0.2, 0.9], [0.1, 0.1, 0.5, 0.5]]], F32)
    label = np.array([[[3, 0.0, 0.0, 0.5, 0.5], [-1] * 5], [[-1] * 5, [-1] * 5]], F32)
    pred = np.zeros((2, 2, 5), F32)
    pred[0, 1] = [0, 2.0, 0.5, 1.0, 0]       # background is least likely for anchor 1, then 3
    loc, mask, cls = run_op("_contrib_MultiBoxTarget", [anchors, label, pred],
                            {"negative_mining_ratio": 1, "ignore_label": -5})
    np.testing.assert_array_equal(cls, [[4, 0, -5, 0, 4], [-5] * 5])   # anchor 4: IoU 0.64
    np.testing.assert_array_equal(mask[0].reshape(5, 4)[:, 0], [1, 0, 0, 0, 1])
    assert not loc[1].any() and not mask[1].any()
    _, _, cls = run_op("_contrib_MultiBoxTarget", [anchors, label, pred])
    np.testing.assert_array_equal(cls[0], [4, 0, 0, 0, 4])          # no mining: all negative


def test_multibox_detection_decodes_sorts_and_suppresses():
    prob = np.array([[[0.1, 0.2, 0.3], [0.5, 0.3, 0.1], [0.4, 0.5, 0.6]]], F32)
    anchors = np.array([[[0.1, 0.1, 0.5, 0.5], [0.12, 0.1, 0.5, 0.52], [0.6, 0.6, 0.9, 0.9]]],
                       F32)
    loc = np.zeros((1, 12), F32)
    a = anchors[0]
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors])[0]   # classes differ
    np.testing.assert_allclose(out[0], [[1, 0.6, *a[2]], [0, 0.5, *a[0]], [1, 0.5, *a[1]]],
                               rtol=1e-6)
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors], {"force_suppress": True})[0]
    np.testing.assert_allclose(out[0], [[1, 0.6, *a[2]], [0, 0.5, *a[0]], [-1, 0.5, *a[1]]],
                               rtol=1e-6)
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors], {"nms_topk": 1})[0]
    # beyond nms_topk the rows keep their unsorted contents with id -1, as in MXNet
    np.testing.assert_allclose(out[0], [[1, 0.6, *a[2]], [-1, 0.5, *a[1]], [-1, 0.6, *a[2]]],
                               rtol=1e-6)
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors],
                 {"threshold": 0.55, "nms_threshold": 0})[0]
    np.testing.assert_allclose(out[0], [[1, 0.6, *a[2]], NO_BOX, NO_BOX], rtol=1e-6)


def test_multibox_detection_box_decoding_and_clip():
    anchors = np.array([[[0.2, 0.2, 0.6, 0.4]]], F32)
    prob = np.array([[[0.1], [0.9]]], F32)
    loc = np.array([[1.0, -1.0, np.log(2) / 0.2, 0.0]], F32)
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors], {"clip": False})[0]
    # centre (0.4 + 0.1 * 0.4, 0.3 - 0.1 * 0.2), width 0.8, height 0.2
    np.testing.assert_allclose(out[0, 0], [0, 0.9, 0.04, 0.18, 0.84, 0.38], rtol=1e-5)
    out = run_op("_contrib_MultiBoxDetection", [prob, loc, anchors])[0]
    np.testing.assert_allclose(out[0, 0, 2:], [0.04, 0.18, 0.84, 0.38], rtol=1e-5)


def test_multibox_ops_take_float32_only_as_mxnet():
    sym = mx.sym.contrib.MultiBoxPrior(mx.sym.var("x"))
    with pytest.raises(TypeInferError, match="MultiBoxPrior"):
        sym.infer_type(x="float64")
    assert sym.infer_type(x="float32")[1] == [np.float32]


def test_multibox_shape_and_param_errors():
    with pytest.raises(ShapeError, match="anchor"):
        run_op("_contrib_MultiBoxTarget", [np.zeros((2, 3, 4), F32), np.zeros((2, 1, 5), F32),
                                           np.zeros((2, 2, 3), F32)])
    with pytest.raises(ShapeError, match="loc_pred"):
        run_op("_contrib_MultiBoxDetection", [np.zeros((1, 2, 3), F32), np.zeros((1, 8), F32),
                                              np.zeros((1, 3, 4), F32)])
    with pytest.raises(ParamError, match="offsets"):
        run_op("_contrib_MultiBoxPrior", [np.zeros((1, 1, 2, 2), F32)], {"offsets": (0.5, 2)})
    with pytest.raises(ParamError, match="variances"):
        run_op("_contrib_MultiBoxDetection", [np.zeros((1, 2, 3), F32), np.zeros((1, 12), F32),
                                              np.zeros((1, 3, 4), F32)], {"variances": (1, 2)})


def test_aliases():
    for alias in ("_npx_multibox_prior", "_npx_multibox_target", "_npx_multibox_detection",
                  "_contrib_box_non_maximum_suppression"):
        assert hasattr(mx.nd, alias)
