"""Pooling (max / avg / sum / lp; 1-D, 2-D, 3-D; valid / full / same conventions; global
pooling; channels-first or channels-last layouts) and its backward.

Windows are never materialised: the (padded) input is read once per kernel tap as a
strided view covering every output position, and taps are combined elementwise (a loop
over kernel taps only). As in MXNet, max pooling ignores padding, its gradient goes to the
first maximum of each window in raster order, and avg pooling divides by the window size
clipped to the padded input (or to the input, count_include_pad=False).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from math import ceil, prod
from typing import Literal

import numpy as np
from opsdk import AMP_FLOAT_DTYPES, Field, FloatOnly, Param, register_op
from opsdk.shape import dim_known, dim_op, shape_known
from pydantic import model_validator

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, namespace,
                           out_entry, put,
                           result_shapes, same_type, set_shape, spatial)

OP = "Pooling"
_CHANNELS_LAST = ("NWC", "NHWC", "NDHWC")


class PoolingParam(Param):
    kernel: tuple[int, ...] = Field((), description="Window extent per spatial axis, (x,), "
                                                    "(y, x) or (d, y, x).")
    pool_type: Literal["max", "avg", "sum", "lp"] = Field(
        "max", description="How a window's values are combined.")
    global_pool: bool = Field(False, description="Pool each whole feature map into one value, "
                                                 "disregarding kernel.")
    cudnn_off: bool = Field(False, description="Avoid cuDNN (ignored on cpu).")
    pooling_convention: Literal["full", "valid", "same"] = Field(
        "valid", description="Output size rule: 'valid' rounds down, 'full' rounds up, 'same' "
                             "keeps ceil(size/stride).")
    stride: tuple[int, ...] = Field((), description="Step between windows per spatial axis; "
                                                    "empty means 1 everywhere.")
    pad: tuple[int, ...] = Field((), description="Padding on both sides of each spatial axis; "
                                                 "empty means none.")
    p_value: int | None = Field(None, description="Exponent of lp pooling (1, 2 or 3); needed "
                                                  "with pool_type='lp'.")
    count_include_pad: bool | None = Field(
        None, description="avg pooling only: divide by the window size including padded "
                          "positions (None means True) rather than by the real elements.")
    layout: Literal["NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"] | None = Field(
        None, description="Axis order of data and output; None picks NCW, NCHW or NCDHW by "
                          "the data's rank.")

    @model_validator(mode="after")
    def _check(self):
        if len(self.kernel) > 3:
            raise ValueError(f"kernel must have at most 3 entries, got {self.kernel}")
        for name in ("kernel", "stride"):
            if any(v <= 0 for v in getattr(self, name)):
                raise ValueError(f"{name} entries must be positive, got {getattr(self, name)}")
        if any(v < 0 for v in self.pad):
            raise ValueError(f"pad entries must not be negative, got {self.pad}")
        for name in ("stride", "pad"):       # MXNet reads the first len(kernel) entries
            value = getattr(self, name)
            if self.kernel and value and len(value) < len(self.kernel):
                raise ValueError(f"{name} {value} must have at least as many entries as kernel "
                                 f"{self.kernel}")
        if self.pool_type == "lp" and self.p_value not in (1, 2, 3):
            raise ValueError(f"lp pooling needs p_value 1, 2 or 3, got {self.p_value}")
        return self


class _Geom:
    """Per (params, data shape): channels-last flag, kernel, stride, pad, output spatial size
    and how far the padded input must extend after the data."""

    def __init__(self, p, shape):
        nd = len(shape) - 2
        self.last = (p.layout or "") in _CHANNELS_LAST
        sp = shape[1:-1] if self.last else shape[2:]
        if p.global_pool:
            self.kernel, self.stride, self.pad = tuple(sp), (1,) * nd, (0,) * nd
            self.out = (1,) * nd
        else:
            self.kernel = p.kernel
            self.stride, self.pad = _stride(p, nd), _pad(p, nd)
            self.out = tuple(_out_size(p, *a) for a in zip(sp, self.kernel, self.stride, self.pad))
        self.size = tuple(sp)
        self.hi = tuple(max(q, (o - 1) * s + k - q - n) for n, k, s, q, o in
                        zip(sp, self.kernel, self.stride, self.pad, self.out))
        # windows tile the input exactly: every element is in one tap view of one window
        self.disjoint = (not any(self.pad) and self.stride == tuple(self.kernel)
                         and all(o * k == n for o, k, n in zip(self.out, self.kernel, sp)))

    def taps(self):
        """Per kernel tap: the index of its strided view into the padded input."""
        for t in product(*(range(k) for k in self.kernel)):
            yield (slice(None), slice(None)) + tuple(
                slice(ti, ti + s * (o - 1) + 1, s) for ti, s, o in zip(t, self.stride, self.out))

    def counts(self, include_pad):
        """Elements each avg window divides by, broadcastable over (N, C, *out)."""
        total = np.ones((), np.float64)
        for i, (n, k, s, q, o) in enumerate(zip(self.size, self.kernel, self.stride, self.pad,
                                                self.out)):
            start = np.arange(o) * s - q
            end = np.minimum(start + k, n + q)
            c = end - start if include_pad else np.minimum(end, n) - np.maximum(start, 0)
            total = total[..., None] * c if i else c.astype(np.float64)
        return total


@lru_cache(maxsize=1024)
def _geom(p, shape):
    return _Geom(p, shape)


def _out_size(p, n, k, s, q):
    if p.pooling_convention == "valid":
        return 1 + (n + 2 * q - k) // s
    if p.pooling_convention == "full":
        return 1 + int(ceil((n + 2 * q - k) / s))
    return int(ceil((n + 2 * q) / s))


def _stride(p, nd):
    return spatial(p.stride[:len(p.kernel)], nd, 1)


def _pad(p, nd):
    return spatial(p.pad[:len(p.kernel)], nd, 0)


def _check(p, x):
    nd = len(x) - 2
    if not 1 <= nd <= 3:
        fail(OP, f"data should be 3-d (batch, channel, x), 4-d (batch, channel, y, x) or 5-d "
                 f"(batch, channel, d, y, x), got shape {x}")
    if p.layout is not None and len(p.layout) != len(x):
        fail(OP, f"layout {p.layout!r} does not fit {len(x)}-d data {x}")
    if p.global_pool:
        return
    if not p.kernel:
        fail(OP, "kernel is required unless global_pool=True")
    if len(p.kernel) != nd:
        fail(OP, f"a {len(p.kernel)}-d kernel {p.kernel} needs {len(p.kernel) + 2}-d data, "
                 f"got shape {x}")
    if p.pooling_convention == "same":
        if nd != 1:
            fail(OP, "pooling_convention='same' supports 1-D pooling only (3-d data), as MXNet")
        if any(p.pad):
            fail(OP, "pooling_convention='same' does not take pad")
    sp = x[1:-1] if (p.layout or "") in _CHANNELS_LAST else x[2:]
    for i, (n, k, q) in enumerate(zip(sp, p.kernel, _pad(p, nd))):
        if dim_known(n) and k > n + 2 * q:
            fail(OP, f"kernel size ({k}) exceeds input ({n} padded to {n + 2 * q}) on "
                     f"spatial axis {i}")


def _out_shape(p, x):
    """The output shape for data ``x``; a spatial size stays unknown where the data's is."""
    _check(p, x)
    last = (p.layout or "") in _CHANNELS_LAST
    if shape_known(x):
        out = _geom(p, tuple(x)).out
    elif p.global_pool:
        out = (1,) * (len(x) - 2)
    else:
        nd = len(x) - 2
        out = tuple(dim_op(lambda n: _out_size(p, n, k, s, q), n) for n, k, s, q in zip(
            x[1:-1] if last else x[2:], p.kernel, _stride(p, nd), _pad(p, nd)))
    if last:
        return (x[0],) + out + (x[-1],)
    return tuple(x[:2]) + out


def _shape(p, ins, outs):
    if ins[0] is None:
        return list(ins), list(outs)
    return list(ins), result_shapes(OP, outs, [_out_shape(p, tuple(ins[0]))])


def _nc(a, last):
    """Channels-first view of a channels-last array."""
    return np.moveaxis(a, -1, 1) if last else a


def _padded(x, g, fill):
    """``x`` (N, C, *S) extended by ``pad`` before and ``hi`` after each axis with ``fill``."""
    if not any(g.pad) and not any(g.hi):
        return x
    shape = x.shape[:2] + tuple(n + q + h for n, q, h in zip(g.size, g.pad, g.hi))
    xp = namespace(x).full(shape, fill, x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(g.pad, g.size))] = x
    return xp


def _pool(p, g, x):
    """Pooled values (N, C, *out) of channels-first ``x`` in the compute dtype."""
    nd = x.ndim - 2
    if p.global_pool:
        axes = tuple(range(2, 2 + nd))
        if p.pool_type == "max":
            return x.max(axis=axes, keepdims=True)
        if p.pool_type == "avg":
            return x.mean(axis=axes, keepdims=True)
        return _root(p, (x if p.pool_type == "sum" else _power(p, x)).sum(axis=axes, keepdims=True))
    if p.pool_type == "max":
        xp = _padded(x, g, np.finfo(x.dtype).min)        # MXNet's window start value
        taps = g.taps()
        acc = xp[next(taps)].copy()
        for t in taps:
            np.maximum(acc, xp[t], out=acc)
        return acc
    xp = _padded(_power(p, x) if p.pool_type == "lp" else x, g, 0)
    taps = g.taps()
    acc = xp[next(taps)].copy()
    for t in taps:
        acc += xp[t]
    if p.pool_type == "avg":
        acc /= namespace(acc).asarray(g.counts(p.count_include_pad is not False), acc.dtype)
    return _root(p, acc) if p.pool_type == "lp" else acc


def _power(p, x):
    return x if p.p_value == 1 else x * x if p.p_value == 2 else x * x * x


def _root(p, s):
    if p.pool_type != "lp" or p.p_value == 1:
        return s
    return np.sqrt(s) if p.p_value == 2 else np.cbrt(s)


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    x = inputs[0]
    g = _geom(p, x.shape)
    dt = compute_dtype(x.dtype)
    y = _pool(p, g, _nc(x, g.last).astype(dt, copy=False))
    put(_nc(outputs[0], g.last), req[0], y)


def _unpool(p, g, og, x, y):
    """Input gradient (N, C, *S) of channels-first arrays."""
    if p.global_pool:
        return _global_unpool(p, og, x, y)
    shape = x.shape[:2] + tuple(n + q + h for n, q, h in zip(g.size, g.pad, g.hi))
    gxp = namespace(og).zeros(shape, og.dtype)
    if p.pool_type == "max":
        xp = _padded(x, g, np.finfo(x.dtype).min)
        taken = namespace(og).zeros(og.shape, bool)
        for t in g.taps():
            first = (xp[t] == y) & ~taken               # the first maximum of each window
            gxp[t] += np.where(first, og, 0)
            taken |= first
    elif p.pool_type == "lp" and p.p_value > 1:
        xp = _padded(x, g, 0)
        safe = np.where(y == 0, 1, y)
        for t in g.taps():
            r = xp[t] / safe
            gxp[t] += np.where(y == 0, 0, og * (r if p.p_value == 2 else r * r))
    else:
        share = og / namespace(og).asarray(g.counts(p.count_include_pad is not False)) \
            if p.pool_type == "avg" else og
        for t in g.taps():
            gxp[t] += share
    return gxp[(slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(g.pad, g.size))]


def _global_unpool(p, og, x, y):
    n, c = x.shape[:2]
    if p.pool_type == "max":
        flat = x.reshape(n, c, -1)
        g = namespace(og).zeros(flat.shape, og.dtype)
        np.put_along_axis(g, flat.argmax(axis=2)[..., None], og.reshape(n, c, 1), axis=2)
        return g.reshape(x.shape)
    if p.pool_type == "avg":
        return np.broadcast_to(og / prod(x.shape[2:]), x.shape)
    if p.pool_type == "sum" or p.p_value == 1:
        return np.broadcast_to(og, x.shape)
    r = x / np.where(y == 0, 1, y)
    return np.where(y == 0, 0, og * (r if p.p_value == 2 else r * r))


def _unpool_into(p, g, og, x, y, gx):
    """``gx`` <- the input gradient when the windows tile the input: each tap view of
    ``gx`` is written once (no zeroing, no accumulation)."""
    if p.pool_type == "max":
        seen = None                         # windows whose maximum an earlier tap holds
        for t in g.taps():
            hit = np.equal(x[t], y)
            if seen is None:
                np.multiply(og, hit, out=gx[t])
                seen = hit
            else:
                np.multiply(og, hit > seen, out=gx[t])
                seen |= hit
    else:
        share = og / prod(g.kernel) if p.pool_type == "avg" else og
        for t in g.taps():
            np.copyto(gx[t], share)


def _backward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    og, x, y = inputs
    g = _geom(p, x.shape)
    dt = compute_dtype(x.dtype)
    og, x, y = (_nc(a, g.last).astype(dt, copy=False) for a in (og, x, y))
    out = _nc(outputs[0], g.last)
    if (req[0] == 1 or req[0] == 2) and out.dtype == dt and g.disjoint and not p.global_pool \
            and p.pool_type != "lp":
        _unpool_into(p, g, og, x, y, out)
    else:
        put(out, req[0], _unpool(p, g, og, x, y))


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[0], out_entry(node, 0)])
    return grad_entries(n, 1)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if ins[1] is None and outs[0] is not None:
        ins[1] = tuple(outs[0])
    if ins[1] is not None:
        set_shape(f"_backward_{OP}", outs, 0, ins[1], "output 0")
        y = _out_shape(p, tuple(ins[1]))
        set_shape(f"_backward_{OP}", ins, 0, y, "input 'ograd'")
        set_shape(f"_backward_{OP}", ins, 2, y, "input 'output'")
    return ins, outs


_EXAMPLES = [
    {"inputs": [(2, 3, 6, 6)], "params": {"kernel": (2, 2), "stride": (2, 2)}},
    {"inputs": [(2, 2, 7, 5)], "params": {"kernel": "(3, 3)", "stride": "(2, 2)", "pad": "(1, 1)",
                                          "pool_type": "avg", "cudnn_off": "False"}},
    {"inputs": [(1, 2, 7, 6)], "params": {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 0),
                                          "pool_type": "avg", "count_include_pad": False,
                                          "pooling_convention": "full"}},
    {"inputs": [(2, 2, 9)], "params": {"kernel": (3,), "stride": (2,), "pool_type": "sum",
                                       "pooling_convention": "same"}},
    {"inputs": [(1, 2, 4, 5, 4)], "params": {"kernel": (2, 3, 2), "stride": (2, 1, 2),
                                             "pool_type": "max", "pad": (1, 1, 0)}},
    {"inputs": [(2, 3, 5, 4)], "params": {"kernel": (2, 2), "pool_type": "lp", "p_value": 2},
     "domain": (0.2, 1.0)},
    {"inputs": [(2, 3, 5)], "params": {"kernel": (2,), "pool_type": "lp", "p_value": 3,
                                       "stride": (2,)}, "domain": (0.2, 1.0)},
    {"inputs": [(2, 3, 4, 5)], "params": {"global_pool": True, "pool_type": "avg"}},
    {"inputs": [(2, 3, 4, 5)], "params": {"global_pool": True, "pool_type": "max",
                                          "kernel": (1, 1)}},
    {"inputs": [(2, 5, 4, 3)], "params": {"kernel": (2, 2), "layout": "NHWC",
                                          "pool_type": "avg", "pad": (1, 1)}},
]

(register_op(OP).add_alias("_npx_pooling")
    .describe("Reduces windows of 1-D, 2-D or 3-D data by max, avg, sum or lp, over kernel "
              "windows (valid: floor((x+2p-k)/s)+1 outputs, full: ceil, same: ceil((x+2p)/s)) "
              "or over the whole feature map (global_pool).")
    .set_attr_parser(PoolingParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, ["data"]), accepted=AMP_FLOAT_DTYPES))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", _EXAMPLES)
    .add_argument("data", "NDArray-or-Symbol", "Array to pool."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Pooling from the output gradient, the data and the output.")
    .set_attr_parser(PoolingParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 3, 3), (2, 3, 6, 6), (2, 3, 3, 3)],
         "params": {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg"}},
        {"inputs": [(2, 3, 1, 1), (2, 3, 4, 5), (2, 3, 1, 1)],
         "params": {"global_pool": True, "pool_type": "sum"}}]))
