"""UpSampling: nearest (several inputs, concat and sum) and bilinear (depthwise
deconvolution) against loops, gradients, inference and errors."""

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import check_forward, check_numeric_gradient, infer, op_def, parse

RNG = np.random.default_rng(0)


def nearest_ref(x, s):
    out = np.empty(x.shape[:2] + (x.shape[2] * s, x.shape[3] * s))
    for i, j in np.ndindex(*out.shape[2:]):
        out[:, :, i, j] = x[:, :, i // s, j // s]
    return out


def test_nearest_concat_and_sum():
    a, b = RNG.standard_normal((1, 2, 2, 2)), RNG.standard_normal((1, 3, 4, 4))
    kw = {"scale": 2, "sample_type": "nearest", "num_args": 2}
    check_forward("UpSampling", [a, b], np.concatenate([nearest_ref(a, 2), nearest_ref(b, 1)],
                                                       axis=1), kw)
    c = RNG.standard_normal((1, 2, 1, 1))
    check_forward("UpSampling", [a, c], nearest_ref(a, 3) + nearest_ref(c, 6),
                  {**kw, "scale": 3, "multi_input_mode": "sum"})
    check_numeric_gradient("UpSampling", [a, b], kw, rtol=1e-6, atol=1e-9)
    assert op_def("UpSampling").list_input_names(parse(op_def("UpSampling"), kw)) == \
        ["arg0", "arg1"]


@pytest.mark.parametrize("scale", [2, 3])
def test_bilinear_is_a_depthwise_deconvolution(scale):
    x = RNG.standard_normal((2, 3, 3, 2))
    k = 2 * scale - scale % 2
    w = RNG.standard_normal((3, 1, k, k))
    pad = -(-(scale - 1) // 2)
    full = np.zeros((2, 3, 3 * scale + k, 2 * scale + k))
    for i, j, a, b in np.ndindex(3, 2, k, k):        # scatter each input through the kernel
        full[:, :, i * scale + a, j * scale + b] += x[:, :, i, j] * w[:, 0, a, b]
    want = full[:, :, pad:pad + 3 * scale, pad:pad + 2 * scale]
    kw = {"scale": scale, "sample_type": "bilinear", "num_filter": 3, "num_args": 2}
    check_forward("UpSampling", [x, w], want, kw, rtol=1e-10, atol=1e-12)
    check_numeric_gradient("UpSampling", [x, w], kw, rtol=1e-6, atol=1e-9)


def test_bilinear_inference_names_and_errors():
    opdef = op_def("UpSampling")
    p = parse(opdef, {"scale": 4, "sample_type": "bilinear", "num_filter": 8, "num_args": 2})
    ins, outs, _, _ = infer(opdef, p, [(2, 8, 5, 5), None], ["float32", None])
    assert ins[1] == (8, 1, 8, 8) and outs == [(2, 8, 20, 20)]
    assert opdef.list_input_names(p) == ["data", "weight"]
    with pytest.raises(ShapeError, match="needs num_filter equal to the data's channels 6"):
        opdef.get_attr("FInferShape")(p, [(2, 6, 5, 5), None], [None])
    q = parse(opdef, {"scale": 2, "sample_type": "nearest", "num_args": 2})
    with pytest.raises(ShapeError, match="input 'arg1' of spatial size \\(3, 3\\) does not "
                                         "divide the output size \\(4, 4\\)"):
        opdef.get_attr("FInferShape")(q, [(1, 2, 2, 2), (1, 2, 3, 3)], [None])
