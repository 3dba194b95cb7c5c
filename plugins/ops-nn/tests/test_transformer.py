"""The interleaved attention matmuls (_contrib_interleaved_matmul_*): values against the
reshape/transpose/batch_dot compositions MXNet documents, gradients, shapes and errors."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import ops as registry
from opsdk import ParamError, ShapeError, TypeInferError
from opsdk.testing import check_forward, check_numeric_gradient, infer, run_op

rng = np.random.default_rng(11)
SELF_QK = "_contrib_interleaved_matmul_selfatt_qk"
SELF_VAL = "_contrib_interleaved_matmul_selfatt_valatt"
ENC_QK = "_contrib_interleaved_matmul_encdec_qk"
ENC_VAL = "_contrib_interleaved_matmul_encdec_valatt"


def r(*shape):
    return rng.uniform(-1, 1, shape)


def split(x, heads, k, part):
    """Projection ``part`` of (S, B, heads * k * d) as (B * heads, S, d)."""
    s, b, e = x.shape
    p = x.reshape(s, b, heads, k, e // (heads * k))[:, :, :, part]
    return p.transpose(1, 2, 0, 3).reshape(b * heads, s, -1)


def merge(x, heads):
    bh, s, d = x.shape
    return x.reshape(bh // heads, heads, s, d).transpose(2, 0, 1, 3).reshape(s, bh // heads, -1)


def shapes(op, *in_shapes, dtype="float32", heads=2):
    d = registry.get(op)
    return infer(d, d.parse_params({"heads": heads}), list(in_shapes),
                 [np.dtype(dtype)] * len(in_shapes))[1]


def test_selfatt_matches_separate_projections():
    qkv, heads = r(5, 2, 3 * 3 * 4), 3
    q, k, v = (split(qkv, heads, 3, i) for i in range(3))
    scores = q @ k.transpose(0, 2, 1) / 2.0     # sqrt(head_dim = 4)
    check_forward(SELF_QK, [qkv], scores, {"heads": heads}, rtol=1e-12, atol=1e-12)
    att = r(6, 5, 5)
    check_forward(SELF_VAL, [qkv, att], merge(att @ v, heads), {"heads": heads},
                  rtol=1e-12, atol=1e-12)


def test_encdec_matches_separate_projections():
    q, kv, heads = r(4, 2, 2 * 3), r(7, 2, 2 * 2 * 3), 2
    k, v = split(kv, heads, 2, 0), split(kv, heads, 2, 1)
    qh = split(q, heads, 1, 0)
    check_forward(ENC_QK, [q, kv], qh @ k.transpose(0, 2, 1) / np.sqrt(3), {"heads": heads},
                  rtol=1e-12, atol=1e-12)
    att = r(4, 4, 7)
    check_forward(ENC_VAL, [kv, att], merge(att @ v, heads), {"heads": heads},
                  rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op, inputs", [
    (SELF_QK, [(3, 2, 12)]), (SELF_VAL, [(3, 2, 12), (4, 3, 3)]),
    (ENC_QK, [(3, 2, 4), (5, 2, 8)]), (ENC_VAL, [(5, 2, 8), (4, 3, 5)])])
def test_gradients(op, inputs):
    check_numeric_gradient(op, [r(*s) for s in inputs], {"heads": 2})


def test_unused_projection_gets_zero_gradient():
    """qk reads only queries and keys; valatt only the values: the rest of the interleaved
    input gets a zero gradient, written even over garbage."""
    qkv = r(3, 1, 6)
    og = r(1, 3, 3)
    g = np.full_like(qkv, np.nan)
    run_op("_backward_interleaved_matmul_selfatt_qk", [og, qkv], {"heads": 1}, outputs=[g])
    assert (g.reshape(3, 1, 3, 2)[:, :, 2] == 0).all() and np.isfinite(g).all()
    outs = [np.full_like(qkv, np.nan), np.zeros((1, 3, 3))]
    run_op("_backward_interleaved_matmul_selfatt_valatt", [r(3, 1, 2), qkv, r(1, 3, 3)],
           {"heads": 1}, outputs=outs)
    assert (outs[0].reshape(3, 1, 3, 2)[:, :, :2] == 0).all()


def test_shapes():
    assert shapes(SELF_QK, (7, 2, 30), heads=5) == [(10, 7, 7)]
    assert shapes(SELF_VAL, (7, 2, 30), (10, 7, 7), heads=5) == [(7, 2, 10)]
    assert shapes(ENC_QK, (4, 2, 6), (9, 2, 12), heads=3) == [(6, 4, 9)]
    assert shapes(ENC_VAL, (9, 2, 12), (6, 4, 9), heads=3) == [(4, 2, 6)]


def test_shape_errors_name_op_argument_and_values():
    with pytest.raises(ShapeError, match=f"{SELF_QK}.*queries_keys_values must be 3-D.*2, 12"):
        shapes(SELF_QK, (2, 12))
    with pytest.raises(ShapeError, match=f"{SELF_QK}.*last dim 10, expected a multiple of 6"):
        shapes(SELF_QK, (2, 2, 10))
    with pytest.raises(ShapeError, match=f"{SELF_VAL}.*attention.shape\\[1\\].*3 vs 4"):
        shapes(SELF_VAL, (3, 2, 12), (4, 4, 3))
    with pytest.raises(ShapeError, match=f"{ENC_QK}.*queries.shape\\[2\\] \\* 2.*8 vs 6"):
        shapes(ENC_QK, (3, 2, 4), (5, 2, 6))
    with pytest.raises(ShapeError, match=f"{ENC_VAL}.*keys_values.shape\\[1\\] \\* heads.*4 vs 3"):
        shapes(ENC_VAL, (5, 2, 8), (3, 3, 5))


def test_type_and_param_errors():
    with pytest.raises(TypeInferError, match=f"{SELF_QK}.*int32, expected float16, float32 or "
                                             "float64"):
        shapes(SELF_QK, (2, 2, 6), dtype="int32")
    with pytest.raises(ParamError, match="heads"):
        registry.get(SELF_QK).parse_params({})
    with pytest.raises(ParamError, match="heads"):
        registry.get(SELF_QK).parse_params({"heads": 0})


def test_frontends_and_autograd():
    qkv = mx.nd.array(r(3, 2, 12))
    qkv.attach_grad()
    with mx.autograd.record():
        att = mx.nd.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2)
        out = mx.nd.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2)
    out.backward()
    assert out.shape == (3, 2, 4) and qkv.grad.shape == (3, 2, 12)
    sym = mx.sym.contrib.interleaved_matmul_encdec_qk(mx.sym.var("q"), mx.sym.var("kv"), heads=2)
    assert sym.list_arguments() == ["q", "kv"]
    assert sym.infer_shape(q=(3, 2, 4), kv=(5, 2, 8))[1] == [(4, 3, 5)]
