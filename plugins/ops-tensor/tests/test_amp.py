"""amp_cast, amp_multicast, all_finite, multi_all_finite: dtype rules and values as MXNet
1.9.1, gradients cast back, init_output."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import TypeInferError
from opsdk.testing import check_backward, check_forward, infer, op_def, run_op

F16, F32, F64, I32 = (np.dtype(t) for t in ("float16", "float32", "float64", "int32"))


def _types(op, params, dtypes):
    opdef = op_def(op)
    return infer(opdef, opdef.parse_params(params), [(2,)] * len(dtypes), dtypes)[3]


def test_amp_cast_casts_only_amp_floats():
    check_forward("amp_cast", [np.array([1.00048828125, 70000], np.float32)],
                  np.array([1, np.inf], np.float16), {"dtype": "float16"})
    assert _types("amp_cast", {"dtype": "float16"}, [I32]) == [I32]
    assert _types("amp_cast", {"dtype": "float16"}, [F64]) == [F64]
    assert _types("amp_cast", {"dtype": np.float32}, [F16]) == [F32]


@pytest.mark.parametrize("dtypes, narrow, want", [        # MXNet 1.9.1's choices
    ([F16, F32, I32], False, [F32, F32, I32]),
    ([F16, F32, F64], True, [F16, F16, F64]),
    ([F64, F16], False, [F64, F64]),
    ([F32, F64], True, [F32, F64]),
])
def test_amp_multicast_target_dtype(dtypes, narrow, want):
    assert _types("amp_multicast", {"num_outputs": len(dtypes), "cast_narrow": narrow},
                  dtypes) == want


def test_amp_multicast_output_fills_the_target():
    opdef = op_def("amp_multicast")
    rule = opdef.get_attr("FInferType")
    p = opdef.parse_params({"num_outputs": 2})
    assert rule(p, [F16, F16], [None, F32]) == ([F16, F16], [F32, F32])
    with pytest.raises(TypeInferError, match="'amp_multicast': output 0 has dtype float64"):
        rule(p, [F16, F32], [F64, None])


def test_gradients_cast_back_to_the_input_dtype():
    x = np.array([0.5, 1.5], np.float16)
    og = np.array([1 / 3, 3.0], np.float32)
    (g,) = check_backward("amp_cast", [x], [og], [og.astype(np.float16)], {"dtype": "float32"},
                          rtol=0, atol=0)
    assert g.dtype == np.float16
    a, b = np.ones(2, np.float16), np.ones(3, np.float32)
    ga, gb = check_backward("amp_multicast", [a, b], [np.full(2, 0.1, np.float32),
                                                      np.full(3, 0.2, np.float32)],
                            [np.full(2, 0.1, np.float16), np.full(3, 0.2, np.float32)],
                            {"num_outputs": 2}, rtol=0, atol=0)
    assert (ga.dtype, gb.dtype) == (F16, F32)


def test_all_finite_values_and_init_output():
    check_forward("all_finite", [np.array([[0, 0]], np.float32)], np.ones(1, np.float32))
    check_forward("all_finite", [np.array([[np.inf, 1]], np.float32)], np.zeros(1, np.float32))
    # init_output=False only ever clears the flag (MXNet 1.9.1: 0.5 stays, a NaN gives 0)
    (out,) = run_op("all_finite", [np.array([1, 2], np.float32)], {"init_output": False},
                    outputs=[np.full(1, 0.5, np.float32)])
    assert out[0] == 0.5
    (out,) = run_op("all_finite", [np.array([1, np.nan], np.float32)], {"init_output": False},
                    outputs=[np.full(1, 0.5, np.float32)])
    assert out[0] == 0
    (out,) = run_op("multi_all_finite", [np.ones(2), np.array([np.inf], np.float16)],
                    {"num_arrays": 2, "init_output": False}, outputs=[np.full(1, 0.5, np.float32)])
    assert out[0] == 0


def test_all_finite_rejects_integers():
    with pytest.raises(TypeInferError, match="'multi_all_finite': input 1 must be a floating "
                                             "point array, got int32"):
        _types("multi_all_finite", {"num_arrays": 2}, [F32, I32])


def test_frontends():
    x = mx.sym.Variable("x", dtype=np.float32)
    exe = mx.sym.amp_cast(x, dtype=np.float16).bind(mx.cpu(), {"x": mx.nd.array([1.5, 2])})
    exe.forward()
    assert exe.outputs[0].dtype == np.float16
    outs = mx.nd.amp_multicast(mx.nd.ones(2, dtype="float16"), mx.nd.ones(2), num_outputs=2)
    assert [o.dtype for o in outs] == [np.float32, np.float32]
    flag = mx.nd.multi_all_finite(mx.nd.ones(2), mx.nd.array([np.nan]), num_arrays=2)
    assert flag.asnumpy().tolist() == [0.0]
    assert mx.sym.multi_all_finite(mx.sym.var("a"), mx.sym.var("b"),
                                   num_arrays=2).list_arguments() == ["a", "b"]
    a = mx.nd.ones(3)                     # same dtype: the output is the input's data
    assert mx.nd.amp_cast(a, dtype="float32").asnumpy().tolist() == [1, 1, 1]


def test_cast_to_bfloat16_and_its_gradient():
    bf16 = np.dtype("bfloat16")
    check_forward("Cast", [np.array([1.5, -2.3, 3.1], np.float32)],
                  np.array([1.5, -2.296875, 3.09375], bf16), {"dtype": "bfloat16"})
    x = mx.nd.array([1.5, -2.3])
    x.attach_grad()
    with mx.autograd.record():
        y = x.astype(np.dtype([("bfloat16", np.uint16)]))      # MXNet's spelling
    y.backward(mx.nd.ones((2,), dtype="bfloat16"))
    assert y.dtype == bf16 and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 1])
