"""Converters for the neural-network layers: convolution, dense, normalization, pooling,
activations, softmax and the output layers."""

from __future__ import annotations

import numpy as np

from ._table import converts


def _spatial(n, key, default, dims):
    value = n.attr(key, None)
    return list(value) if value else [default] * dims


def _conv_attrs(n):
    dims = len(n.attr("kernel"))
    pad = _spatial(n, "pad", 0, dims)
    return {"kernel_shape": list(n.attr("kernel")), "strides": _spatial(n, "stride", 1, dims),
            "dilations": _spatial(n, "dilate", 1, dims), "pads": pad + pad,
            "group": int(n.attr("num_group", 1))}


def _channels_first(n):
    if n.attr("layout") not in (None, "NCW", "NCHW", "NCDHW"):
        raise n.fail(f"layout {n.attr('layout')!r} does not export (ONNX is channels-first)")


@converts("Convolution")
def convolution(b, n):
    _channels_first(n)
    inputs = n.inputs[:2] if n.attr("no_bias", False) else n.inputs[:3]
    b.add("Conv", inputs, [n.out], **_conv_attrs(n))


@converts("Deconvolution")
def deconvolution(b, n):
    _channels_first(n)
    attrs = _conv_attrs(n)
    adj = n.attr("adj", None)
    if adj:
        attrs["output_padding"] = list(adj)
    inputs = n.inputs[:2] if n.attr("no_bias", True) else n.inputs[:3]
    b.add("ConvTranspose", inputs, [n.out], **attrs)


@converts("FullyConnected")
def fully_connected(b, n):
    x = n.x
    if n.attr("flatten", True):
        if len(n.in_shapes[0]) != 2:
            x = b.add("Flatten", [x], axis=1)
        inputs = [x, n.inputs[1]] + ([] if n.attr("no_bias", False) else [n.inputs[2]])
        b.add("Gemm", inputs, [n.out], transB=1)
        return
    wt = b.add("Transpose", [n.inputs[1]], perm=[1, 0])
    if n.attr("no_bias", False):
        b.add("MatMul", [x, wt], [n.out])
    else:
        b.add("Add", [b.add("MatMul", [x, wt]), n.inputs[2]], [n.out])


@converts("BatchNorm", "_contrib_SyncBatchNorm")
def batch_norm(b, n):
    axis = n.attr("axis", 1) % len(n.in_shapes[0])
    gamma = n.inputs[1]
    if n.attr("fix_gamma", True):
        gamma = b.const(np.ones(n.in_shapes[1], n.in_dtypes[1]), hint=f"{n.name}_fixed_gamma")
    inputs = [n.x, gamma, *n.inputs[2:5]]
    attrs = {"epsilon": float(n.attr("eps", 1e-3)), "momentum": float(n.attr("momentum", 0.9))}
    if axis == 1:
        b.add("BatchNormalization", inputs, [n.out], **attrs)
        return
    rank = len(n.in_shapes[0])
    perm = [0, axis] + [i for i in range(1, rank) if i != axis]
    moved = b.add("Transpose", [n.x], perm=perm)
    normed = b.add("BatchNormalization", [moved, *inputs[1:]], **attrs)
    b.add("Transpose", [normed], [n.out], perm=list(np.argsort(perm)))


@converts("InstanceNorm")
def instance_norm(b, n):
    b.add("InstanceNormalization", n.inputs[:3], [n.out], epsilon=float(n.attr("eps", 1e-3)))


@converts("LayerNorm")
def layer_norm(b, n):
    axis = n.attr("axis", -1) % len(n.in_shapes[0])
    eps = float(n.attr("eps", 1e-5))
    if axis == len(n.in_shapes[0]) - 1 and b.opset >= 17:
        b.add("LayerNormalization", n.inputs[:3], [n.out], axis=axis, epsilon=eps)
        return
    mean = b.reduce("ReduceMean", n.x, [axis], True)
    centred = b.add("Sub", [n.x, mean])
    var = b.reduce("ReduceMean", b.add("Mul", [centred, centred]), [axis], True)
    std = b.add("Sqrt", [b.add("Add", [var, b.const(eps, n.in_dtypes[0])])])
    shape = [1] * len(n.in_shapes[0])
    shape[axis] = -1
    gamma = b.add("Reshape", [n.inputs[1], b.ints(shape)])
    beta = b.add("Reshape", [n.inputs[2], b.ints(shape)])
    b.add("Add", [b.add("Mul", [b.add("Div", [centred, std]), gamma]), beta], [n.out])


@converts("L2Normalization")
def l2_normalization(b, n):
    mode = n.attr("mode", "instance")
    axes = {"instance": list(range(1, len(n.in_shapes[0]))), "channel": [1],
            "spatial": list(range(2, len(n.in_shapes[0])))}[mode]
    square = b.add("Mul", [n.x, n.x])
    total = b.reduce("ReduceSum", square, axes, True)
    eps = b.const(float(n.attr("eps", 1e-10)), n.in_dtypes[0])
    b.add("Div", [n.x, b.add("Sqrt", [b.add("Add", [total, eps])])], [n.out])


@converts("LRN")
def lrn(b, n):
    b.add("LRN", [n.x], [n.out], alpha=float(n.attr("alpha", 1e-4)),
          beta=float(n.attr("beta", 0.75)), bias=float(n.attr("knorm", 2.0)),
          size=int(n.attr("nsize")))


@converts("Pooling")
def pooling(b, n):
    kind = n.attr("pool_type", "max")
    _channels_first(n)
    if kind not in ("max", "avg", "lp"):
        raise n.fail(f"pool_type {kind!r} does not export (ONNX has max, avg and lp)")
    if n.attr("global_pool", False):
        op = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool", "lp": "GlobalLpPool"}[kind]
        attrs = {"p": int(n.attr("p_value", 2))} if kind == "lp" else {}
        b.add(op, [n.x], [n.out], **attrs)
        return
    convention = n.attr("pooling_convention", "valid")
    if convention == "same":
        raise n.fail("pooling_convention 'same' does not export")
    dims = len(n.attr("kernel"))
    pad = _spatial(n, "pad", 0, dims)
    attrs = {"kernel_shape": list(n.attr("kernel")), "strides": _spatial(n, "stride", 1, dims),
             "pads": pad + pad}
    if kind == "lp":
        b.add("LpPool", [n.x], [n.out], p=int(n.attr("p_value", 2)), **attrs)
        return
    attrs["ceil_mode"] = int(convention == "full")
    if kind == "avg":
        attrs["count_include_pad"] = int(n.attr("count_include_pad", True))
    b.add("MaxPool" if kind == "max" else "AveragePool", [n.x], [n.out], **attrs)


@converts("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pooling(b, n):
    size = n.attr("output_size", 1)
    size = [size, size] if isinstance(size, int) else list(size) * (2 // len(size))
    if size == [1, 1]:
        b.add("GlobalAveragePool", [n.x], [n.out])
        return
    h, w = n.in_shapes[0][2:]
    if h % size[0] or w % size[1]:
        raise n.fail(f"output_size {tuple(size)} does not divide the input's {h}x{w}, so the "
                     f"windows are uneven and ONNX's AveragePool cannot express them")
    kernel = [h // size[0], w // size[1]]
    b.add("AveragePool", [n.x], [n.out], kernel_shape=kernel, strides=kernel)


_ACTIVATIONS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
                "softsign": "Softsign"}


@converts("Activation")
def activation(b, n):
    kind = n.attr("act_type")
    if kind == "log_sigmoid":
        b.add("Log", [b.add("Sigmoid", [n.x])], [n.out])
    elif kind == "mish":
        b.add("Mul", [n.x, b.add("Tanh", [b.add("Softplus", [n.x])])], [n.out])
    elif kind in _ACTIVATIONS:
        b.add(_ACTIVATIONS[kind], [n.x], [n.out])
    else:
        raise n.fail(f"act_type {kind!r} does not export")


def gelu(b, x, dtype, out):
    """x * (1 + erf(x / sqrt 2)) / 2, MXNet's exact GELU."""
    erf = b.add("Erf", [b.add("Div", [x, b.const(np.sqrt(2.0), dtype)])])
    half = b.add("Mul", [x, b.const(0.5, dtype)])
    b.add("Mul", [half, b.add("Add", [erf, b.const(1.0, dtype)])], [out])


@converts("LeakyReLU")
def leaky_relu(b, n):
    kind = n.attr("act_type", "leaky")
    slope = float(n.attr("slope", 0.25))
    if kind == "leaky":
        b.add("LeakyRelu", [n.x], [n.out], alpha=slope)
    elif kind == "elu":
        b.add("Elu", [n.x], [n.out], alpha=slope)
    elif kind == "selu":
        b.add("Selu", [n.x], [n.out])
    elif kind == "gelu":
        gelu(b, n.x, n.in_dtypes[0], n.out)
    elif kind == "rrelu":      # inference: the mean of the slope's range
        mean = (float(n.attr("lower_bound", 0.125)) + float(n.attr("upper_bound", 0.334))) / 2
        b.add("LeakyRelu", [n.x], [n.out], alpha=mean)
    elif kind == "prelu":
        shape = [-1] + [1] * (len(n.in_shapes[0]) - 2) if len(n.in_shapes[0]) > 1 else [-1]
        gamma = n.inputs[1]
        if n.in_shapes[1] != (1,):
            gamma = b.add("Reshape", [gamma, b.ints(shape)])
        b.add("PRelu", [n.x, gamma], [n.out])
    else:
        raise n.fail(f"act_type {kind!r} does not export")


def _softmax(b, n, op_type):
    axis = n.attr("axis", -1)
    x = n.x
    temperature = n.attr("temperature", None)
    if temperature not in (None, 1, 1.0):
        x = b.add("Div", [x, b.const(float(temperature), n.in_dtypes[0])])
    if n.attr("use_length", False):
        raise n.fail("use_length=True does not export")
    b.add(op_type, [x], [n.out], axis=axis)


@converts("softmax")
def softmax(b, n):
    _softmax(b, n, "Softmax")


@converts("log_softmax")
def log_softmax(b, n):
    _softmax(b, n, "LogSoftmax")


@converts("softmin")
def softmin(b, n):
    neg = b.add("Neg", [n.x])
    b.add("Softmax", [neg], [n.out], axis=n.attr("axis", -1))


@converts("SoftmaxOutput", "Softmax")
def softmax_output(b, n):
    if n.attr("multi_output", False) or len(n.in_shapes[0]) == 2:
        b.add("Softmax", [n.x], [n.out], axis=1)
        return
    flat = b.add("Flatten", [n.x], axis=1)
    b.add("Reshape", [b.add("Softmax", [flat], axis=1), b.add("Shape", [n.x])], [n.out])


@converts("SoftmaxActivation")
def softmax_activation(b, n):
    if n.attr("mode", "instance") == "channel":
        b.add("Softmax", [n.x], [n.out], axis=1)
    else:
        softmax_output(b, n)


@converts("LogisticRegressionOutput")
def logistic_output(b, n):
    b.add("Sigmoid", [n.x], [n.out])


@converts("LinearRegressionOutput", "MAERegressionOutput", "MakeLoss", "make_loss",
          "BlockGrad", "stop_gradient", "Dropout", "_copy", "identity",
          "_identity_with_attr_like_rhs")
def identity(b, n):
    b.add("Identity", [n.x], [n.out])


def _heads(b, n, qkv, which):
    """(batch*heads, seq, head_dim) of the query, key or value part of MXNet's interleaved
    (seq, batch, heads*3*head_dim) projection."""
    seq, batch, width = n.in_shapes[0]
    heads = int(n.attr("heads"))
    dim = width // heads // 3
    split = b.add("Reshape", [qkv, b.ints([seq, batch, heads, 3, dim])])
    part = b.add("Gather", [split, b.const(which, np.int64)], axis=3)
    moved = b.add("Transpose", [part], perm=[1, 2, 0, 3])
    return b.add("Reshape", [moved, b.ints([batch * heads, seq, dim])]), dim


@converts("_contrib_interleaved_matmul_selfatt_qk")
def selfatt_qk(b, n):
    q, dim = _heads(b, n, n.x, 0)
    k, _ = _heads(b, n, n.x, 1)
    scaled = b.add("Div", [q, b.const(np.sqrt(dim), n.in_dtypes[0])])
    b.add("MatMul", [scaled, b.add("Transpose", [k], perm=[0, 2, 1])], [n.out])


@converts("_contrib_interleaved_matmul_selfatt_valatt")
def selfatt_valatt(b, n):
    seq, batch, width = n.in_shapes[0]
    heads = int(n.attr("heads"))
    v, dim = _heads(b, n, n.x, 2)
    out = b.add("Reshape", [b.add("MatMul", [n.inputs[1], v]), b.ints([batch, heads, seq, dim])])
    moved = b.add("Transpose", [out], perm=[2, 0, 1, 3])
    b.add("Reshape", [moved, b.ints([seq, batch, heads * dim])], [n.out])

