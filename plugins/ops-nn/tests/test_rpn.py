"""_contrib_Proposal, _contrib_MultiProposal and _contrib_PSROIPooling against MXNet 1.9.1
(fixtures/rpn_ref.npz, written by fixtures/make_rpn_ref.py), plus their rules."""

import json
import os

import numpy as np
import pytest

import mxnext as mx

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "rpn_ref.npz"))
PROPOSALS = sorted({k.split(":")[0] for k in REF.files if k.startswith("p")})
PSROIS = sorted({k.split(":")[0] for k in REF.files if k.startswith("s")})
NAMES = ("cls_prob", "bbox_pred", "im_info")


def _proposal_case(case):
    params = json.loads(str(REF[f"{case}:params"]))
    op = getattr(mx.nd.contrib, params.pop("op"))
    return op, params, [mx.nd.array(REF[f"{case}:in:{n}"]) for n in NAMES]


@pytest.mark.parametrize("case", PROPOSALS)
def test_proposals_match_mxnet(case):
    op, params, inputs = _proposal_case(case)
    rois, scores = op(*inputs, **params)
    np.testing.assert_allclose(rois.asnumpy(), REF[f"{case}:out:0"], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(scores.asnumpy(), REF[f"{case}:out:1"], rtol=1e-6)


def test_multi_proposal_is_proposal_per_image():
    op, params, (cls, deltas, info) = _proposal_case(PROPOSALS[0])
    multi = op(cls, deltas, info, **params)[0].asnumpy()
    rows = params["rpn_post_nms_top_n"]
    for b in range(cls.shape[0]):
        one = mx.nd.contrib.Proposal(cls[b:b + 1], deltas[b:b + 1], info[b:b + 1], **params)
        np.testing.assert_array_equal(multi[b * rows:(b + 1) * rows, 1:], one[0].asnumpy()[:, 1:])
        assert (multi[b * rows:(b + 1) * rows, 0] == b).all()


def test_proposal_hides_scores_and_sends_zero_gradients():
    _, params, inputs = _proposal_case(PROPOSALS[0])
    params["output_score"] = False
    for x in inputs:
        x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.MultiProposal(*inputs, **params)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2 * params["rpn_post_nms_top_n"], 5)
    out.backward(mx.nd.ones(out.shape))
    for x in inputs:
        assert not x.grad.asnumpy().any()


def test_proposal_shapes_and_errors():
    sym = mx.sym.contrib.MultiProposal(mx.sym.var("cls_prob"), mx.sym.var("bbox_pred"),
                                       mx.sym.var("im_info"), rpn_post_nms_top_n=7,
                                       output_score=True, scales=(8,), ratios=(1, 2))
    args, outs, _ = sym.infer_shape(cls_prob=(3, 4, 5, 6))
    assert args == [(3, 4, 5, 6), (3, 8, 5, 6), (3, 3)] and outs == [(21, 5), (21, 1)]
    with pytest.raises(mx.base.MXNetError, match="one image"):
        mx.nd.contrib.Proposal(mx.nd.zeros((2, 2, 3, 3)), mx.nd.zeros((2, 4, 3, 3)),
                               mx.nd.zeros((2, 3)), scales=(8,), ratios=(1,))
    with pytest.raises(mx.base.MXNetError, match="anchors per cell"):
        mx.nd.contrib.Proposal(mx.nd.zeros((1, 2, 3, 3)), mx.nd.zeros((1, 4, 3, 3)),
                               mx.nd.array([[48, 48, 1]])).wait_to_read()


@pytest.mark.parametrize("case", PSROIS)
def test_psroipooling_matches_mxnet(case):
    params = json.loads(str(REF[f"{case}:params"]))
    data = mx.nd.array(REF[f"{case}:in:data"], dtype=np.float64)
    rois = mx.nd.array(REF[f"{case}:in:rois"], dtype=np.float64)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.PSROIPooling(data, rois, **params)
    out.backward(mx.nd.array(REF[f"{case}:head"], dtype=np.float64))
    np.testing.assert_allclose(out.asnumpy(), REF[f"{case}:out"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(data.grad.asnumpy(), REF[f"{case}:grad"], rtol=1e-12,
                               atol=1e-12)


def test_psroipooling_bin_reads_its_group_channel():
    data = np.arange(2 * 4 * 4 * 4, dtype=np.float32).reshape(1, 8, 4, 4)
    out = mx.nd.contrib.PSROIPooling(mx.nd.array(data), mx.nd.array([[0, 0, 0, 3, 3]]),
                                     spatial_scale=1.0, output_dim=2, pooled_size=2).asnumpy()
    for c in range(2):
        for i in range(2):
            for j in range(2):
                window = data[0, (c * 2 + i) * 2 + j, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                assert out[0, c, i, j] == window.mean()


def test_psroipooling_needs_enough_channels():
    with pytest.raises(mx.base.MXNetError, match="output_dim"):
        mx.nd.contrib.PSROIPooling(mx.nd.zeros((1, 7, 4, 4)), mx.nd.zeros((1, 5)),
                                   spatial_scale=1.0, output_dim=2, pooled_size=2)
