"""The measured rules (``_dispatch.wins``) send each call the way the bench found faster:
oneDNN inside them, ops-nn outside, with the same results either way."""

from __future__ import annotations

import numpy as np
import pytest

rng = np.random.default_rng(7)


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("act, shape, path", [
    ("relu", (32, 64, 32, 32), "fallback"), ("tanh", (64, 500), "fallback"),
    ("sigmoid", (64, 500), "fallback"), ("sigmoid", (8, 64, 32, 32), "onednn"),
    ("softrelu", (64, 500), "fallback"), ("softrelu", (2, 64, 32, 32), "onednn")])
def test_activation_forward(act, shape, path, compare):
    compare("Activation", [_f(*shape)], {"act_type": act}, path=path)


def test_tanh_gradient_by_isa(compare):
    from mxnext_ops_onednn import _dnnl
    p = {"act_type": "tanh"}
    y = compare("Activation", [_f(64, 20, 24, 24)], p, path="fallback")[0]
    compare("_backward_Activation", [_f(*y.shape), y], p,
            path="onednn" if _dnnl.avx512() else "fallback")
    compare("_backward_Activation", [_f(64, 500), np.tanh(_f(64, 500))], p, path="fallback")


def test_activation_gradient(compare):
    p = {"act_type": "sigmoid"}
    y = compare("Activation", [_f(1 << 19)], p)[0]
    compare("_backward_Activation", [_f(1 << 19), y], p, path="fallback")
    y = compare("Activation", [_f(1 << 21)], p)[0]
    compare("_backward_Activation", [_f(1 << 21), y], p)


@pytest.mark.parametrize("shape, is_train, path", [
    ((32, 512, 4, 4), True, "onednn"), ((32, 512, 4, 4), False, "fallback"),
    ((32, 64, 8, 8), True, "fallback"), ((32, 512, 1, 1), True, "fallback")])
def test_batch_norm(shape, is_train, path, compare):
    c = shape[1]
    ins = [_f(*shape), _f(c), _f(c), _f(c), np.abs(_f(c)) + 0.5]
    p = {"fix_gamma": False}
    out = compare("BatchNorm", ins, p, is_train=is_train, path=path)
    compare("_backward_BatchNorm", [_f(*shape), out[1], out[2], ins[0], ins[1], ins[3], ins[4]],
            p, is_train=is_train, mutated=[5, 6], path=path)


def test_lrn_forward_by_size_gradient_never(compare):
    p = {"nsize": 5}
    compare("LRN", [_f(2, 4, 8, 8)], p, path="fallback")
    x = _f(1, 16, 64, 64)
    out = compare("LRN", [x], p)
    compare("_backward_LRN", [_f(*x.shape), x, out[1]], p, path="fallback")


@pytest.mark.parametrize("f, path", [(3, "fallback"), (8, "onednn")])
def test_deconvolution_forward_by_num_filter_gradients_always(f, path, compare):
    p = {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1), "num_filter": f}
    x, w = _f(2, 4, 5, 5), _f(4, f, 4, 4)
    y = compare("Deconvolution", [x, w], p, path=path)[0]
    compare("_backward_Deconvolution", [_f(*y.shape), x, w], p)


def test_fully_connected_small_products_go_to_ops_nn(compare):
    x, w, b = _f(64, 500), _f(10, 500), _f(10)
    p = {"num_hidden": 10}
    y = compare("FullyConnected", [x, w, b], p, path="fallback")[0]
    compare("_backward_FullyConnected", [_f(*y.shape), x, w, b], p, path="fallback")


def test_fully_connected_large_products_on_avx512(compare):
    """An MLP's 128x784 @ 784x1024: oneDNN's matmul where the core has AVX-512, ops-nn
    elsewhere."""
    from mxnext_ops_onednn import _dnnl
    path = "onednn" if _dnnl.lib().block == 16 else "fallback"
    x, w, b = _f(128, 784), _f(1024, 784), _f(1024)
    p = {"num_hidden": 1024}
    y = compare("FullyConnected", [x, w, b], p, path=path)[0]
    compare("_backward_FullyConnected", [_f(*y.shape), x, w, b], p, path=path)


@pytest.mark.parametrize("shape, params, path", [
    ((64, 20, 24, 24), {"kernel": (2, 2), "stride": (2, 2)}, "fallback"),      # LeNet's
    ((32, 64, 32, 32), {"kernel": (2, 2), "stride": (2, 2)}, "onednn"),        # 2^21 elements
    ((2, 8, 9, 9), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}, "onednn"),  # overlap
    ((2, 8, 4, 4), {"kernel": (1, 1), "global_pool": True}, "fallback")])
def test_pooling_by_windows_and_size(shape, params, path, compare):
    p = dict(params, pool_type="max")
    x = _f(*shape)
    y = compare("Pooling", [x], p, path=path)[0]
    compare("_backward_Pooling", [_f(*y.shape), x, y], p, path=path)


def _conv(x_shape, f, k, pad):
    p = {"kernel": (k, k), "pad": (pad, pad), "num_filter": f, "no_bias": True}
    return p, _f(*x_shape), _f(f, x_shape[1], k, k)


def test_convolution_few_output_pixels_split_gradient(compare):
    """At 2x2 outputs the forward and the weight gradient go to ops-nn, the data gradient
    stays on oneDNN."""
    from mxnext_ops_onednn._dispatch import calls
    p, x, w = _conv((2, 256, 2, 2), 64, 3, 1)
    y = compare("Convolution", [x, w], p, path="fallback")[0]
    before = calls["_backward_Convolution:weight", "fallback"]
    compare("_backward_Convolution", [_f(*y.shape), x, w], p)
    assert calls["_backward_Convolution:weight", "fallback"] > before


def test_convolution_one_input_channel_gradient_by_isa(compare):
    """The data part goes to ops-nn; the weight part too, but on AVX-512 cores."""
    from mxnext_ops_onednn import _dnnl
    p, x, w = _conv((2, 1, 12, 12), 8, 5, 0)
    y = compare("Convolution", [x, w], p)[0]
    compare("_backward_Convolution", [_f(*y.shape), x, w], p,
            path="onednn" if _dnnl.avx512() else "fallback")


def test_convolution_large_images_on_onednn(compare):
    from mxnext_ops_onednn._dispatch import calls
    p, x, w = _conv((2, 16, 8, 8), 16, 3, 1)
    y = compare("Convolution", [x, w], p)[0]
    before = calls["_backward_Convolution:data", "fallback"], \
        calls["_backward_Convolution:weight", "fallback"]
    compare("_backward_Convolution", [_f(*y.shape), x, w], p)
    assert (calls["_backward_Convolution:data", "fallback"],
            calls["_backward_Convolution:weight", "fallback"]) == before
