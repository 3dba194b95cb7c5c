"""_contrib_quantize, _contrib_quantize_v2, _contrib_dequantize, _contrib_requantize,
_contrib_quantized_flatten, _contrib_quantized_embedding, _contrib_calibrate_entropy: bit-exact
(the divergence of calibrate_entropy: to float32 rounding)
against MXNet 1.9.1 (fixtures/quantization_ref.npz, written by
fixtures/make_quantization_ref.py), shape/type inference, errors and the zero gradient."""

import json
import os

import numpy as np
import pytest

import mxnext as mx
from opsdk import ShapeError, TypeInferError
from opsdk.testing import infer, op_def, parse, run_op

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "quantization_ref.npz"))
CASES = sorted(int(k.split(":")[1]) for k in REF.files if k.startswith("op:"))
F32 = np.float32


def _rng(lo, hi):
    return [np.array([lo], F32), np.array([hi], F32)]


@pytest.mark.parametrize("i", CASES)
def test_matches_mxnet(i):
    op, params = str(REF[f"op:{i}"]), json.loads(str(REF[f"params:{i}"]))
    inputs = [REF[f"in{k}:{i}"] for k in range(4) if f"in{k}:{i}" in REF.files]
    outs = run_op(op, inputs, params)
    for k, got in enumerate(outs):
        want = REF[f"out{k}:{i}"]
        assert got.dtype == want.dtype and got.shape == want.shape, (op, params, k)
        if op == "_contrib_calibrate_entropy" and k == 1:   # float32 sums in another order
            np.testing.assert_allclose(got, want, rtol=2e-5)
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {params} output {k}")


def test_mxnet_unit_test_values():
    """MXNet's test_quantization_op: int8 quantize over (0, 1), then dequantize."""
    a = mx.nd.array([[0.1392, 0.5928], [0.6027, 0.8579]])
    qa, lo, hi = mx.nd.contrib.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]),
                                        out_type="int8")
    np.testing.assert_array_equal(qa.asnumpy(), [[18, 75], [77, 109]])
    assert (lo.asscalar(), hi.asscalar()) == (-1.0, 1.0)
    back = mx.nd.contrib.dequantize(qa, lo, hi).asnumpy()
    np.testing.assert_allclose(back, np.array([[18, 75], [77, 109]]) / F32(127.5), rtol=1e-6)


def test_rounding_is_half_to_even_and_saturates_to_full_range():
    x = np.array([0.5, 1.5, 2.5, -2.5, -300.0, 300.0], F32)
    q, lo, hi = run_op("_contrib_quantize", [x, *_rng(-127.0, 1.0)], {"out_type": "int8"})
    np.testing.assert_array_equal(q, [0, 2, 2, -2, -128, 127])
    q, _, _ = run_op("_contrib_quantize", [x, *_rng(0.0, 255.0)], {"out_type": "uint8"})
    np.testing.assert_array_equal(q, [0, 2, 2, 0, 0, 255])


def test_infinities_saturate():
    """As MXNet 1.9.1's oneDNN build gives them."""
    x = np.array([np.inf, -np.inf, 1.0], F32)
    params = {"out_type": "int8", "min_calib_range": -1.0, "max_calib_range": 1.0}
    q, _, _ = run_op("_contrib_quantize_v2", [x], params)
    np.testing.assert_array_equal(q, [127, -128, 127])
    params.update(out_type="uint8", min_calib_range=0.0)
    q, _, _ = run_op("_contrib_quantize_v2", [x], params)
    np.testing.assert_array_equal(q, [255, 0, 255])


def test_quantize_v2_output_type_and_ranges():
    x = np.array([[0.25, 1.0], [0.5, 0.0]], F32)
    q, lo, hi = run_op("_contrib_quantize_v2", [x], {"out_type": "auto", "min_calib_range": 0,
                                                     "max_calib_range": 1})
    assert q.dtype == np.uint8 and (lo[0], hi[0]) == (0, 1)
    np.testing.assert_array_equal(q, [[64, 255], [128, 0]])      # x * 255.5, half to even
    q, lo, hi = run_op("_contrib_quantize_v2", [x], {"out_type": "auto"})
    assert q.dtype == np.int8 and (lo[0], hi[0]) == (-1, 1)
    np.testing.assert_array_equal(q, [[32, 127], [64, 0]])       # x * 127.5
    i8 = np.array([-128, 5], np.int8)
    q, lo, hi = run_op("_contrib_quantize_v2", [i8], {"out_type": "uint8"})
    assert q.dtype == np.uint8 and q.tolist() == [128, 5] and (lo[0], hi[0]) == (-127.5, 127.5)


def test_requantize_without_calibration_uses_data_range():
    x = np.array([-2 ** 30, 2 ** 29, 0], np.int32)
    q, lo, hi = run_op("_contrib_requantize", [x, *_rng(-8.0, 8.0)])
    assert q.dtype == np.int8 and q.tolist() == [-127, 64, 0]
    assert (lo[0], hi[0]) == (-4.0, 4.0)


def _infer(op, shapes, dtypes, params=None):
    d = op_def(op)
    return infer(d, parse(d, params), shapes, dtypes)


def test_shape_and_type_inference():
    ins, outs, _, touts = _infer("_contrib_quantize", [(2, 5), None, None], [np.float32] * 3,
                                 {"out_type": "int8"})
    assert ins == [(2, 5), (1,), (1,)] and outs == [(2, 5), (1,), (1,)]
    assert touts == [np.int8, np.float32, np.float32]
    _, _, tins, touts = _infer("_contrib_requantize", [(3,), (1,), (1,)], [None] * 3,
                               {"out_type": "auto", "min_calib_range": 0.0,
                                "max_calib_range": 1.0})
    assert tins == [np.int32, np.float32, np.float32]
    assert touts == [np.uint8, np.float32, np.float32]
    assert _infer("_contrib_dequantize", [(3,), (1,), (1,)], [np.uint8, None, None])[3] == \
        [np.float32]
    ins, outs, _, touts = _infer("_contrib_quantized_embedding", [(2, 5), None, None, None],
                                 [np.float32, None, None, None],
                                 {"input_dim": 7, "output_dim": 3})
    assert ins[1:] == [(7, 3), (1,), (1,)] and outs == [(2, 5, 3), (1,), (1,)]
    assert touts == [np.int8, np.float32, np.float32]
    assert _infer("_contrib_quantized_flatten", [(2, 3, 4), None, None],
                  [np.uint8, None, None])[1:4:2] == ([(2, 12), (1,), (1,)],
                                                     [np.uint8, np.float32, np.float32])
    s = mx.sym.contrib.quantize_v2(mx.sym.var("x"), out_type="uint8")
    assert s.list_outputs()[1:] == [s.name + "_min_output", s.name + "_max_output"]
    assert s.infer_shape(x=(4, 2))[1] == [(4, 2), (1,), (1,)]


def test_errors_name_op_and_argument():
    with pytest.raises(TypeInferError, match="_contrib_dequantize.*float32.*uint8, int8"):
        run_op("_contrib_dequantize", [np.zeros(3, F32), *_rng(0, 1)])
    with pytest.raises(TypeInferError, match="_contrib_quantize'.*int32.*float32"):
        run_op("_contrib_quantize", [np.zeros(3, np.int32), *_rng(0, 1)])
    with pytest.raises(ShapeError, match="_contrib_quantize.*input 1"):
        run_op("_contrib_quantize", [np.zeros(3, F32), np.zeros(2, F32), np.ones(1, F32)])
    with pytest.raises(TypeInferError, match="quantized_embedding.*weight.*float32.*int8"):
        run_op("_contrib_quantized_embedding", [np.zeros(2, F32), np.zeros((3, 2), F32),
                                                *_rng(0, 1)], {"input_dim": 3, "output_dim": 2})
    with pytest.raises(TypeInferError, match="quantized_flatten.*float32.*int8 or uint8"):
        run_op("_contrib_quantized_flatten", [np.zeros((2, 2), F32), *_rng(0, 1)])
    with pytest.raises(Exception, match="out_type"):
        run_op("_contrib_quantize", [np.zeros(3, F32), *_rng(0, 1)], {"out_type": "int32"})


def test_gradient_is_zero():
    x = mx.nd.array([0.2, -0.7])
    x.attach_grad()
    with mx.autograd.record():
        q, lo, hi = mx.nd.contrib.quantize_v2(x)
        y = mx.nd.contrib.dequantize(q, lo, hi)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])


def test_calibrate_entropy_edge_cases():
    hist = np.array([0, 0, 5, 0, 0], F32)
    edges = np.linspace(-1, 1, 6).astype(F32)
    th, div = run_op("_contrib_calibrate_entropy", [hist, edges], {"num_quantized_bins": 3})
    assert th[0] == edges[4] and div[0] == 0        # the narrowest window already holds it all
    with pytest.raises(Exception, match="calibrate_entropy.*hist_edges.*6"):
        run_op("_contrib_calibrate_entropy", [hist, edges[:4]])
    with pytest.raises(Exception, match="calibrate_entropy.*num_quantized_bins=255"):
        run_op("_contrib_calibrate_entropy", [hist, edges])


def test_quantize_asym_rules():
    """uint8 output with (scale, shift) outputs; float32 data only (as MXNet's type rule); the
    data's batch size back from its output; calibration asked for its input; any number of
    dimensions (MXNet's pip build runs only 3-d data)."""
    ins, outs, tins, touts = _infer("_contrib_quantize_asym", [(2, 5, 3)], [None])
    assert ins == [(2, 5, 3)] and outs == [(2, 5, 3), (1,), (1,)]
    assert tins == [np.float32] and touts == [np.uint8, np.float32, np.float32]
    with pytest.raises(TypeInferError, match="_contrib_quantize_asym.*int8.*float32"):
        run_op("_contrib_quantize_asym", [np.zeros((1, 2, 3), np.int8)])
    d = op_def("_contrib_quantize_asym")
    assert d.get_attr("FNeedCalibrateInput")({}) == [0]
    s = mx.sym.contrib.quantize_asym(mx.sym.var("x", shape=(0, 4)), name="q")
    assert s.list_outputs() == ["q_output", "q_scale", "q_shift"]
    assert mx.sym.elemwise_add(s[0], mx.sym.var("y")).infer_shape(y=(3, 4))[0][0] == (3, 4)
    q, scale, shift = mx.nd.contrib.quantize_asym(mx.nd.array([[-1.0, 0.5], [3.0, 1.0]]))
    assert scale.asscalar() == F32(255) / F32(4) and shift.asscalar() == F32(63.75)
    np.testing.assert_array_equal(q.asnumpy(), [[0, 96], [255, 128]])     # 95.625, 127.5
