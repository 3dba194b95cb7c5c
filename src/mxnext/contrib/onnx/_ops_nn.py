"""ONNX ops -> mxnext ops: convolution, pooling, normalization, activations, softmax,
matrix products, resizing and sampling (``fn(g, node)`` converters, as in ``_ops``)."""

from __future__ import annotations

import functools

import numpy as np

from ... import symbol as S
from ..._runtime.base import MXNetError, ParamError
from ._proto import np_dtype

__all__ = ["NN_CONVERTERS"]


def _where(node):
    return f"ONNX node {node.name or node.output[0]!r} ({node.op_type})"


def _need_shape(g, node, i):
    shape = g.shape(node, i)
    if shape is None:
        raise MXNetError(f"{_where(node)}: the shape of input {node.input[i]!r} must be known "
                         f"at import time")
    return shape


def _window(g, node, kernel):
    """(stride, dilate, pad_begin, pad_end) of a conv/pool node, auto_pad resolved."""
    a, nd = g.attrs(node), len(kernel)
    stride = tuple(a.get("strides", (1,) * nd))
    dilate = tuple(a.get("dilations", (1,) * nd))
    pads = tuple(a.get("pads", (0,) * (2 * nd)))
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        size = _need_shape(g, node, 0)[2:]
        total = [max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
                 for n, s, k, d in zip(size, stride, kernel, dilate)]
        small = [t // 2 for t in total]
        big = [t - t // 2 for t in total]
        begin, end = (small, big) if auto == "SAME_UPPER" else (big, small)
        pads = (*begin, *end)
    elif auto == "VALID":
        pads = (0,) * (2 * nd)
    return stride, dilate, tuple(pads[:nd]), tuple(pads[nd:])


def _explicit_pad(x, begin, end, value=0.0):
    width = (0, 0, 0, 0) + tuple(v for pair in zip(begin, end) for v in pair)
    return S.pad(x, mode="constant", pad_width=width, constant_value=value)


def _conv(g, node):
    a = g.attrs(node)
    wshape = _need_shape(g, node, 1)
    kernel = tuple(a.get("kernel_shape", wshape[2:]))
    stride, dilate, begin, end = _window(g, node, kernel)
    x = g.inp(node, 0)
    if begin != end:
        x, begin = _explicit_pad(x, begin, end), (0,) * len(kernel)
    ins = [x, g.inp(node, 1)] + ([g.inp(node, 2)] if g.has(node, 2) else [])
    return S.Convolution(*ins, kernel=kernel, stride=stride, dilate=dilate, pad=begin,
                         num_filter=wshape[0], num_group=a.get("group", 1),
                         no_bias=not g.has(node, 2), name=g.name(node))


def _deconv(g, node):
    a = g.attrs(node)
    wshape, group = _need_shape(g, node, 1), a.get("group", 1)
    kernel = tuple(a.get("kernel_shape", wshape[2:]))
    nd = len(kernel)
    stride = tuple(a.get("strides", (1,) * nd))
    dilate = tuple(a.get("dilations", (1,) * nd))
    adj = list(a.get("output_padding", (0,) * nd))
    pads = list(a.get("pads", (0,) * (2 * nd)))
    auto, target = a.get("auto_pad", "NOTSET"), a.get("output_shape")
    if target is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        size = _need_shape(g, node, 0)[2:]
        target = target[-nd:] if target is not None else [n * s for n, s in zip(size, stride)]
        for i in range(nd):
            full = stride[i] * (size[i] - 1) + adj[i] + (kernel[i] - 1) * dilate[i] + 1
            total = full - target[i]
            if total < 0:
                adj[i], total = adj[i] - total, 0
            small, big = total // 2, total - total // 2
            upper = auto != "SAME_LOWER"
            pads[i], pads[i + nd] = (small, big) if upper else (big, small)
    elif auto == "VALID":
        pads = [0] * (2 * nd)
    begin, end = pads[:nd], pads[nd:]
    ins = [g.inp(node, 0), g.inp(node, 1)] + ([g.inp(node, 2)] if g.has(node, 2) else [])
    sym_pad = begin if begin == end else [0] * nd
    out = S.Deconvolution(*ins, kernel=kernel, stride=stride, dilate=dilate,
                          pad=tuple(sym_pad), adj=tuple(adj), num_filter=wshape[1] * group,
                          num_group=group, no_bias=not g.has(node, 2),
                          name=g.name(node, "" if begin == end else "_full"))
    if begin != end:
        for i in range(nd):
            out = S.slice_axis(out, axis=2 + i, begin=begin[i], end=-end[i] or None)
        out = S.identity(out, name=g.name(node))
    return out


def _pool(pool_type, g, node):
    a = g.attrs(node)
    kernel = tuple(a["kernel_shape"])
    stride, dilate, begin, end = _window(g, node, kernel)
    if len(node.output) > 1 and node.output[1]:
        return _argmax_pool(g, node, kernel, stride, dilate, begin, end)
    if any(d != 1 for d in dilate):
        return _dilated_pool(pool_type, g, node, kernel, stride, dilate, begin, end)
    kw = dict(kernel=kernel, stride=stride,
              pooling_convention="full" if a.get("ceil_mode", 0) else "valid")
    keep = _ceil_windows(g, node, kernel, stride, begin, end) if a.get("ceil_mode", 0) else None
    if not keep:
        return _pool_body(pool_type, g, node, begin, end, kw, g.name(node))
    out = _pool_body(pool_type, g, node, begin, end, kw, g.name(node, "_full"))
    for axis, size in keep.items():
        out = S.slice_axis(out, axis=axis, begin=0, end=size)
    return S.identity(out, name=g.name(node))


def _window_slices(g, node, kernel, stride, dilate, begin, end):
    """Pooling as strided slices, one per window offset (for what Pooling lacks: dilation,
    MaxPool's Indices). Returns ``windows(padded) -> [slice per offset]``, the end padding
    that makes every window whole, and the extra part of it beyond ``end``."""
    shape, ceil = _need_shape(g, node, 0)[2:], g.attrs(node).get("ceil_mode", 0)
    outs, extra = [], []
    for i, n in enumerate(shape):
        span, full = (kernel[i] - 1) * dilate[i] + 1, n + begin[i] + end[i]
        out = (-(-(full - span) // stride[i]) if ceil else (full - span) // stride[i]) + 1
        if ceil and (out - 1) * stride[i] >= n + begin[i]:
            out -= 1
        outs.append(out)
        extra.append(max(0, (out - 1) * stride[i] + span - full))

    def windows(data):
        parts = []
        for offset in np.ndindex(*kernel):
            first = [o * d for o, d in zip(offset, dilate)]
            parts.append(S.slice(data, begin=(None, None, *first),
                                 end=(None, None, *[f + (o - 1) * s + 1 for f, o, s in
                                                    zip(first, outs, stride)]),
                                 step=(None, None, *stride)))
        return parts
    return windows, [e + x for e, x in zip(end, extra)], extra


def _dilated_pool(pool_type, g, node, kernel, stride, dilate, begin, end):
    """Pooling with dilated windows (Pooling has no dilate): the window's k offsets are
    strided slices of the padded input, combined by max or sum."""
    a, nd = g.attrs(node), len(kernel)
    windows, end_all, extra = _window_slices(g, node, kernel, stride, dilate, begin, end)
    fill = float("-inf") if pool_type == "max" else 0.0
    x = g.inp(node, 0)
    if pool_type == "lp":
        x = S.abs(x) ** float(a.get("p", 2))
    parts = windows(_explicit_pad(x, begin, end_all, fill))
    if pool_type == "max":
        return S.identity(functools.reduce(S.broadcast_maximum, parts), name=g.name(node))
    total = S.add_n(*parts)
    if pool_type == "lp":
        return S.identity(total ** (1.0 / float(a.get("p", 2))), name=g.name(node))
    ones = S.ones_like(x)
    if a.get("count_include_pad", 0):
        ones = _explicit_pad(ones, begin, end, 1.0)
        counted = _explicit_pad(ones, (0,) * nd, extra)
    else:
        counted = _explicit_pad(ones, begin, end_all)
    return S.broadcast_div(total, S.add_n(*windows(counted)), name=g.name(node))


def _argmax_pool(g, node, kernel, stride, dilate, begin, end):
    """MaxPool with its Indices output: each window's first maximum and its index into the
    flattened input (row-major, or column-major over the spatial axes with storage_order=1),
    from an index grid sliced as the data is."""
    shape = _need_shape(g, node, 0)
    windows, end_all, _ = _window_slices(g, node, kernel, stride, dilate, begin, end)
    spatial = shape[2:]
    order = np.arange(int(np.prod(spatial)), dtype=np.float64)
    if g.attrs(node).get("storage_order", 0):
        order = order.reshape(spatial[::-1]).transpose().ravel()
    index = (np.arange(shape[0] * shape[1], dtype=np.float64)[:, None] * order.size
             + order).reshape(shape)                 # float64: exact to 2**53, and Pad reads it
    x = S.cast(g.inp(node, 0), dtype="float64")
    values = windows(_explicit_pad(x, begin, end_all, float("-inf")))
    indices = windows(_explicit_pad(g.constant(node, "_index", index), begin, end_all, -1.0))
    best, where = values[0], indices[0]
    for value, idx in zip(values[1:], indices[1:]):
        better = S.broadcast_greater(value, best)
        best, where = S.where(better, value, best), S.where(better, idx, where)
    return (S.cast(best, dtype=g.dtype(node, 0).name, name=g.name(node)),
            S.cast(where, dtype="int64", name=g.name(node, "_indices")))


def _ceil_windows(g, node, kernel, stride, begin, end):
    """{axis: output size} where ceil_mode's last window would start in the end padding
    (ONNX drops it; the 'full' convention keeps it)."""
    shape = g.shape(node, 0)
    if shape is None:
        return None
    keep = {}
    for i, n in enumerate(shape[2:]):
        out = -(-(n + begin[i] + end[i] - kernel[i]) // stride[i]) + 1
        if (out - 1) * stride[i] >= n + begin[i]:
            keep[2 + i] = out - 1
    return keep


def _pool_body(pool_type, g, node, begin, end, kw, name):
    a, x, nd = g.attrs(node), g.inp(node, 0), len(begin)
    if pool_type == "lp":       # (sum |x|^p)^(1/p), any p
        p = float(a.get("p", 2))
        total = S.Pooling(_explicit_pad(S.abs(x) ** p, begin, end), pool_type="sum",
                          pad=(0,) * nd, **kw)
        return S.identity(total ** (1.0 / p), name=name)
    if pool_type == "max" and not np.issubdtype(g.dtype(node, 0), np.floating):
        x = S.cast(x, dtype="float64")         # Pooling computes in floats; exact for ints
        out = S.Pooling(_explicit_pad(x, begin, end, float("-inf")), pool_type="max",
                        pad=(0,) * nd, **kw)
        return S.cast(out, dtype=g.dtype(node, 0).name, name=name)
    if begin == end:
        include = bool(a.get("count_include_pad", 0))
        return S.Pooling(x, pool_type=pool_type, pad=begin, count_include_pad=include,
                         name=name, **kw)
    if pool_type == "max":
        return S.Pooling(_explicit_pad(x, begin, end, float("-inf")), pool_type="max",
                         pad=(0,) * nd, name=name, **kw)
    total = S.Pooling(_explicit_pad(x, begin, end), pool_type="sum", pad=(0,) * nd, **kw)
    if a.get("count_include_pad", 0):
        return S.identity(total / float(np.prod(kw["kernel"])), name=name)
    count = S.Pooling(_explicit_pad(S.ones_like(x), begin, end), pool_type="sum",
                      pad=(0,) * nd, **kw)
    return S.broadcast_div(total, count, name=name)


def _global_pool(pool_type, g, node):
    rank, x = g.rank(node, 0), g.inp(node, 0)
    if pool_type == "lp":
        p = float(g.attrs(node).get("p", 2))
        total = S.Pooling(S.abs(x) ** p, kernel=(1,) * (rank - 2), global_pool=True,
                          pool_type="sum")
        return S.identity(total ** (1.0 / p), name=g.name(node))
    return S.Pooling(x, kernel=(1,) * (rank - 2), global_pool=True, pool_type=pool_type,
                     name=g.name(node))


def _batch_norm(g, node):
    a = g.attrs(node)
    if a.get("training_mode", 0) and g.opset >= 14:
        return _batch_norm_training(g, node)
    if len([o for o in node.output if o]) > 1:
        raise ParamError(f"{_where(node)}: the mean and variance outputs of opsets before 14 "
                         f"are not converted; inference mode and training_mode=1 are")
    ins = [g.inp(node, i) for i in range(5)]
    return S.BatchNorm(*ins, eps=a.get("epsilon", 1e-5), momentum=a.get("momentum", 0.9),
                       fix_gamma=False, use_global_stats=True, name=g.name(node))


def _batch_norm_training(g, node):
    """training_mode=1: normalised by the batch's mean and (biased) variance over every axis
    but 1; the optional outputs are the running mean and variance moved by ``momentum``."""
    a, rank = g.attrs(node), g.rank(node, 0)
    eps, momentum = a.get("epsilon", 1e-5), a.get("momentum", 0.9)
    x, axes, per_channel = g.inp(node, 0), (0, *range(2, rank)), (1, -1) + (1,) * (rank - 2)
    mean = S.mean(x, axis=axes, keepdims=True)
    centred = S.broadcast_sub(x, mean)
    var = S.mean(S.square(centred), axis=axes, keepdims=True)
    scale, bias = (S.reshape(g.inp(node, i), shape=per_channel) for i in (1, 2))
    y = S.broadcast_add(S.broadcast_mul(S.broadcast_div(centred, S.sqrt(var + eps)), scale),
                        bias, name=g.name(node))
    outs = [y]
    for i, batch in ((3, mean), (4, var)):
        if len(node.output) > i - 2 and node.output[i - 2]:
            outs.append(S.identity(g.inp(node, i) * momentum
                                   + S.reshape(batch, shape=(-1,)) * (1 - momentum),
                                   name=g.name(node, f"_running_{'mean' if i == 3 else 'var'}")))
    return outs


def _instance_norm(g, node):
    return S.InstanceNorm(g.inp(node, 0), g.inp(node, 1), g.inp(node, 2),
                          eps=g.attrs(node).get("epsilon", 1e-5), name=g.name(node))


def _lrn(g, node):
    a = g.attrs(node)
    return S.LRN(g.inp(node, 0), alpha=a.get("alpha", 1e-4), beta=a.get("beta", 0.75),
                 knorm=a.get("bias", 1.0), nsize=a["size"], name=g.name(node))


def _dropout(g, node):
    out = S.identity(g.inp(node, 0), name=g.name(node))
    if len(node.output) > 1 and node.output[1]:
        return [out, S.cast(S.ones_like(g.inp(node, 0)), dtype="bool")]
    return out


def _leaky(act, default, g, node):
    return S.LeakyReLU(g.inp(node, 0), act_type=act, slope=g.attrs(node).get("alpha", default),
                       name=g.name(node))


def _selu(g, node):
    a = g.attrs(node)
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma",
                                                                       1.05070102214813232421875)
    x = g.inp(node, 0)
    neg = S.exp(x - S.relu(x)) - 1.0
    return S.identity(S.relu(x) * gamma + neg * (alpha * gamma), name=g.name(node))


def _prelu(g, node):
    """PRelu; a 1-D slope of one value per channel (as PyTorch writes it) applies per channel."""
    x, slope = g.inp(node, 0), g.inp(node, 1)
    xs, ss = g.shape(node, 0), g.shape(node, 1)
    if xs and ss and len(ss) == 1 and len(xs) > 2 and ss[0] == xs[1] != xs[-1]:
        slope = S.reshape(slope, shape=(ss[0],) + (1,) * (len(xs) - 2))
    return S.broadcast_add(S.relu(x), S.broadcast_mul(slope, x - S.relu(x)), name=g.name(node))


def _shrink(g, node):
    a = g.attrs(node)
    lambd, bias, x = a.get("lambd", 0.5), a.get("bias", 0.0), g.inp(node, 0)
    return S.identity(S.where(x < -lambd, x + bias, S.where(x > lambd, x - bias,
                                                            S.zeros_like(x))),
                      name=g.name(node))


def _hard_sigmoid(g, node):
    a = g.attrs(node)
    return S.hard_sigmoid(g.inp(node, 0), alpha=a.get("alpha", 0.2), beta=a.get("beta", 0.5),
                          name=g.name(node))


def _softplus(g, node):
    return S.Activation(g.inp(node, 0), act_type="softrelu", name=g.name(node))


def _softmax(kind, g, node):
    """Softmax, LogSoftmax, Hardmax: over ``axis`` from opset 13, before it over the input
    flattened to 2-D at ``axis``."""
    legacy = g.opset < 13
    axis = g.attrs(node).get("axis", 1 if legacy else -1)
    x = g.inp(node, 0)
    if not legacy and kind != "hardmax":
        return _softmax_along(kind, x, axis, None, None, g.name(node))
    rank = g.rank(node, 0)
    axis = axis + rank if axis < 0 else axis
    if legacy and axis != rank - 1:
        shape = _need_shape(g, node, 0)
        flat = S.reshape(x, shape=(int(np.prod(shape[:axis], dtype=np.int64)), -1))
        depth = int(np.prod(shape[axis:], dtype=np.int64))
        out = _softmax_along(kind, flat, 1, 2, depth, None, g.dtype(node, 0))
        return S.reshape_like(out, x, name=g.name(node))
    depth = _need_shape(g, node, 0)[axis] if kind == "hardmax" else None
    return _softmax_along(kind, x, axis, rank, depth, g.name(node), g.dtype(node, 0))


def _softmax_along(kind, x, axis, rank, depth, name, dtype=None):
    if kind == "softmax":
        return S.softmax(x, axis=axis, name=name)
    if kind == "log_softmax":
        return S.log_softmax(x, axis=axis, name=name)
    if axis != rank - 1:
        x = S.swapaxes(x, dim1=axis, dim2=rank - 1)
    hot = S.one_hot(S.argmax(x, axis=-1), depth=depth, dtype=dtype.name)
    if axis != rank - 1:
        hot = S.swapaxes(hot, dim1=axis, dim2=rank - 1)
    return S.identity(hot, name=name)


def _gemm(g, node):
    a = g.attrs(node)
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    ta, tb = bool(a.get("transA", 0)), bool(a.get("transB", 0))
    A, B = g.inp(node, 0), g.inp(node, 1)
    cshape = g.shape(node, 2) if g.has(node, 2) else None
    if not ta and tb and alpha == 1.0 and beta == 1.0 and cshape is not None \
            and len(cshape) == 1 and cshape[0] == _need_shape(g, node, 1)[0]:
        return S.FullyConnected(A, B, g.inp(node, 2), num_hidden=cshape[0], name=g.name(node))
    out = S.dot(A, B, transpose_a=ta, transpose_b=tb)
    if alpha != 1.0:
        out = out * alpha
    if g.has(node, 2):
        c = g.inp(node, 2) if beta == 1.0 else g.inp(node, 2) * beta
        out = S.broadcast_add(out, c)
    return S.identity(out, name=g.name(node))


def _matmul(g, node):
    sa, sb = _need_shape(g, node, 0), _need_shape(g, node, 1)
    A, B = g.inp(node, 0), g.inp(node, 1)
    if len(sa) <= 2 and len(sb) <= 2 or len(sb) == 2:
        if len(sa) == 1 and len(sb) == 1:
            return S.sum(A * B, axis=0, keepdims=False, name=g.name(node))
        return S.dot(A, B, name=g.name(node))
    a2, b2 = (sa if len(sa) > 1 else (1,) + sa), (sb if len(sb) > 1 else sb + (1,))
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    A = S.broadcast_to(S.reshape(A, shape=(1,) * (len(batch) + 2 - len(a2)) + a2),
                       shape=batch + a2[-2:])
    B = S.broadcast_to(S.reshape(B, shape=(1,) * (len(batch) + 2 - len(b2)) + b2),
                       shape=batch + b2[-2:])
    out = S.batch_dot(S.reshape(A, shape=(-1,) + a2[-2:]), S.reshape(B, shape=(-1,) + b2[-2:]))
    shape = batch + ((a2[-2],) if len(sa) > 1 else ()) + ((b2[-1],) if len(sb) > 1 else ())
    return S.reshape(out, shape=shape, name=g.name(node))


def _fc(g, node):
    return S.FullyConnected(g.inp(node, 0), g.inp(node, 1), g.inp(node, 2),
                            num_hidden=_need_shape(g, node, 1)[0], name=g.name(node))


def _roi_pool(g, node):
    a = g.attrs(node)
    return S.ROIPooling(g.inp(node, 0), g.inp(node, 1), pooled_size=tuple(a["pooled_shape"]),
                        spatial_scale=a.get("spatial_scale", 1.0), name=g.name(node))


def _depth_to_space(g, node):
    a = g.attrs(node)
    bs = a["blocksize"]
    if a.get("mode", "DCR") == "DCR":
        return S.depth_to_space(g.inp(node, 0), block_size=bs, name=g.name(node))
    b, c, h, w = _need_shape(g, node, 0)
    x = S.reshape(g.inp(node, 0), shape=(b, c // bs ** 2, bs, bs, h, w))
    x = S.transpose(x, axes=(0, 1, 4, 2, 5, 3))
    return S.reshape(x, shape=(b, c // bs ** 2, h * bs, w * bs), name=g.name(node))


def _space_to_depth(g, node):
    a = g.attrs(node)
    bs = a["blocksize"]
    if a.get("mode", "DCR") == "DCR":
        return S.space_to_depth(g.inp(node, 0), block_size=bs, name=g.name(node))
    b, c, h, w = _need_shape(g, node, 0)
    x = S.reshape(g.inp(node, 0), shape=(b, c, h // bs, bs, w // bs, bs))
    x = S.transpose(x, axes=(0, 1, 3, 5, 2, 4))
    return S.reshape(x, shape=(b, c * bs * bs, h // bs, w // bs), name=g.name(node))


def _lp_norm(g, node):
    a = g.attrs(node)
    axis, p, x = a.get("axis", -1), a.get("p", 2), g.inp(node, 0)
    if p == 1:
        norm = S.sum(S.abs(x), axis=axis, keepdims=True)
    else:
        norm = S.sqrt(S.sum(S.square(x), axis=axis, keepdims=True))
    return S.broadcast_div(x, norm + (norm == 0), name=g.name(node))     # 0 / 1 where x is 0


def _topk(g, node):
    a = g.attrs(node)
    k = a["k"] if g.opset < 10 else int(np.ravel(g.const(node, 1))[0])
    out = S.topk(g.inp(node, 0), axis=a.get("axis", -1), k=k, ret_typ="both",
                 is_ascend=not a.get("largest", 1), dtype="int64", name=g.name(node))
    return [out[0], out[1]]


def _random(kind, g, node):
    a = g.attrs(node)
    if node.op_type.endswith("Like"):
        shape = _need_shape(g, node, 0)
        dtype = np_dtype(a["dtype"]) if "dtype" in a else g.dtype(node, 0)
    else:
        shape, dtype = tuple(a["shape"]), np_dtype(a.get("dtype", 1))
    if kind == "uniform":
        return S.random_uniform(low=a.get("low", 0.0), high=a.get("high", 1.0), shape=shape,
                                dtype=dtype.name, name=g.name(node))
    return S.random_normal(loc=a.get("mean", 0.0), scale=a.get("scale", 1.0), shape=shape,
                           dtype=dtype.name, name=g.name(node))


def _multinomial(g, node):
    a = g.attrs(node)
    probs = S.softmax(g.inp(node, 0), axis=-1)
    return S.sample_multinomial(probs, shape=a.get("sample_size", 1),
                                dtype=np_dtype(a.get("dtype", 6)).name, name=g.name(node))


def _resize(g, node):
    """Resize (opset 10+) and Upsample: nearest by integer factors, and linear with
    align_corners (or half_pixel) on 4-D NCHW inputs."""
    a = g.attrs(node)
    shape = _need_shape(g, node, 0)
    if node.op_type == "Upsample" or g.opset < 11:
        scales = a.get("scales") if g.opset < 9 else g.const(node, 1)
        sizes = None
    else:
        scales, sizes = g.const(node, 2), g.const(node, 3)
    if sizes is not None and len(np.ravel(sizes)):
        out = tuple(int(s) for s in np.ravel(sizes))
    else:
        out = tuple(int(np.floor(n * s)) for n, s in zip(shape, np.ravel(scales)))
    mode = a.get("mode", "nearest")
    if len(shape) != 4 or out[:2] != shape[:2]:
        raise ParamError(f"{_where(node)}: resizing {shape} to {out} is not converted; the "
                         f"height and width of a 4-D NCHW input are")
    coord = a.get("coordinate_transformation_mode", "half_pixel" if g.opset >= 11
                  else "asymmetric")
    if mode == "nearest":
        fh, fw = out[2] // shape[2], out[3] // shape[3]
        if fh != fw or out[2] != fh * shape[2] or out[3] != fw * shape[3]:
            raise ParamError(f"{_where(node)}: nearest resizing by {out[2] / shape[2]} x "
                             f"{out[3] / shape[3]} is not converted; one integer factor is")
        return S.UpSampling(g.inp(node, 0), scale=fh, sample_type="nearest",
                            name=g.name(node))
    if mode == "linear" and coord in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        return S.contrib.BilinearResize2D(g.inp(node, 0), height=out[2], width=out[3],
                                          align_corners=coord == "align_corners",
                                          name=g.name(node))
    raise ParamError(f"{_where(node)}: mode={mode!r} with coordinate_transformation_mode="
                     f"{coord!r} is not converted; nearest, and linear with align_corners or "
                     f"half_pixel are")


NN_CONVERTERS = {
    "Conv": _conv, "ConvTranspose": _deconv,
    "MaxPool": functools.partial(_pool, "max"), "AveragePool": functools.partial(_pool, "avg"),
    "LpPool": functools.partial(_pool, "lp"),
    "GlobalAveragePool": functools.partial(_global_pool, "avg"),
    "GlobalMaxPool": functools.partial(_global_pool, "max"),
    "GlobalLpPool": functools.partial(_global_pool, "lp"),
    "BatchNormalization": _batch_norm, "SpatialBN": _batch_norm,
    "InstanceNormalization": _instance_norm, "LRN": _lrn, "Dropout": _dropout,
    "LeakyRelu": functools.partial(_leaky, "leaky", 0.01),
    "Elu": functools.partial(_leaky, "elu", 1.0), "Selu": _selu, "PRelu": _prelu,
    "HardSigmoid": _hard_sigmoid, "Shrink": _shrink, "Softplus": _softplus,
    "Softmax": functools.partial(_softmax, "softmax"),
    "LogSoftmax": functools.partial(_softmax, "log_softmax"),
    "Hardmax": functools.partial(_softmax, "hardmax"),
    "Gemm": _gemm, "MatMul": _matmul, "FC": _fc, "MaxRoiPool": _roi_pool,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth,
    "LpNormalization": _lp_norm, "TopK": _topk,
    "RandomUniform": functools.partial(_random, "uniform"),
    "RandomUniformLike": functools.partial(_random, "uniform"),
    "RandomNormal": functools.partial(_random, "normal"),
    "RandomNormalLike": functools.partial(_random, "normal"),
    "Multinomial": _multinomial, "Resize": _resize, "Upsample": _resize,
}
