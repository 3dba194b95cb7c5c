"""_histogram (MXNet's ``histogram.cc``): counts of the flattened data per bin, either
``bin_cnt`` equal bins over ``range`` (one input) or the bin edges given as a second input.

Bins are half-open ``[e_k, e_k+1)`` except the last, which also holds its right edge; values
outside the edges (and NaN) are not counted. Counts are int64, the edges output has the
data's dtype.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, MXNetError, Param, assign, register_op
from opsdk.shape import merge_shape

from ._layout import fail


class HistogramParam(Param):
    bin_cnt: int | None = Field(None, description="Number of bins for uniform case")
    range: tuple[float, ...] | None = Field(
        None, description="The lower and upper range of the bins; values outside are ignored. "
                          "Needed with bin_cnt (and only then).")


def _uniform(p):
    """The (low, high) of a ``bin_cnt`` histogram, widened by 0.5 on each side when equal (as
    MXNet); None for a histogram with given edges."""
    if (p.bin_cnt is None) != (p.range is None):
        fail("_histogram", "bin_cnt and range must be given both or neither, got "
                           f"bin_cnt={p.bin_cnt}, range={p.range}")
    if p.bin_cnt is None:
        return None
    if len(p.range) != 2:
        raise MXNetError(f"Operator '_histogram': range must hold 2 values, got {p.range}")
    low, high = p.range
    if low > high:
        raise MXNetError(f"Operator '_histogram': range must be (low, high) with low <= high, "
                         f"got {p.range}")
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def _shape(p, ins, outs):
    if _uniform(p) is not None:
        new = [(p.bin_cnt,), (p.bin_cnt + 1,)]
    elif ins[1] is None:
        return list(ins), list(outs)
    else:
        if len(ins[1]) != 1 or 0 < ins[1][0] < 2:
            fail("_histogram", f"bins must be a 1-D array of at least 2 edges, got shape "
                               f"{tuple(ins[1])}")
        n = ins[1][0]
        new = [(n - 1 if n > 0 else n,), tuple(ins[1])]
    return list(ins), [merge_shape("_histogram", o, s, f"output {k}")
                       for k, (o, s) in enumerate(zip(outs, new))]


def _type(p, ins, outs):
    """Counts are int64 and the edges take the data's dtype; the dtype of given edges is left
    open, as in MXNet (they are read as the data's dtype)."""
    return list(ins), [np.dtype(np.int64), ins[0] if ins[0] is not None else outs[1]]


def _bin_of_uniform(xp, d, edges, low, high):
    """MXNet's bin of each value: the bin its position in [low, high] falls in, moved by one
    where rounding put it on the wrong side of an edge; -1 outside."""
    n = edges.size - 1
    inside = (d >= low) & (d <= high)
    pos = xp.where(inside, (d - low) * n / (high - low), 0)
    k = xp.minimum(pos.astype(np.int64), n - 1)
    k = k - (d < edges[k])
    k = k + ((d >= edges[k + 1]) & (k != n - 1))
    return xp.where(inside, k, -1)


def _bin_of_edges(xp, d, edges):
    """The bin before the first edge greater than the value (the last bin for the right edge);
    -1 outside [edges[0], edges[-1]]."""
    n = edges.size - 1
    above = d[:, None] < edges[None, :]
    first = xp.where(above.any(axis=1), above.argmax(axis=1), n + 1)
    inside = (d >= edges[0]) & (d <= edges[n])
    return xp.where(inside, xp.minimum(first - 1, n - 1), -1)


def _histogram(ctx, inputs, req, outputs, params):
    xp, data = ctx.xp, inputs[0]
    d = data.reshape(-1).astype(np.float64)
    span = _uniform(params)
    if span is None:
        edges = inputs[1].astype(data.dtype)
        k = _bin_of_edges(xp, d, edges.astype(np.float64))
    else:
        low, high = span
        i = xp.arange(params.bin_cnt + 1, dtype=np.float64)
        edges = ((high * i + (params.bin_cnt - i) * low) / params.bin_cnt).astype(data.dtype)
        k = _bin_of_uniform(xp, d, edges.astype(np.float64), low, high)
    counts = xp.bincount(k[k >= 0], minlength=edges.size - 1).astype(np.int64)
    assign(outputs[0], req[0], counts)
    assign(outputs[1], req[1], edges)


def _numpy_ref(x, bins=None, bin_cnt=None, range=None):
    counts, edges = np.histogram(x, bins if bin_cnt is None else bin_cnt, range)
    return counts.astype(np.int64), edges.astype(x.dtype)


def _int_ref(x, bin_cnt, range):
    """MXNet on integer data: the equal-width edges truncated to its dtype, then binned."""
    edges = np.linspace(*range, bin_cnt + 1).astype(x.dtype)
    return np.histogram(x, edges)[0], edges


(register_op("_histogram")
    .describe("Histogram of the flattened data: bin_cnt equal bins over range, or the bin "
              "edges given as input bins. Returns (counts, bin edges).")
    .set_attr_parser(HistogramParam)
    .set_num_inputs(lambda p: 1 if p.bin_cnt is not None else 2).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: ["data"] if p.bin_cnt is not None else ["data", "bins"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", _histogram)
    .set_attr("TExamples", [
        {"inputs": [(3, 4)], "domain": (-3, 3), "params": {"bin_cnt": 5, "range": (-2, 2.5)},
         "ref": _numpy_ref, "int_ref": _int_ref},
        {"inputs": [(7,)], "dtype": "int32", "domain": (0, 9),
         "params": {"bin_cnt": 3, "range": (4, 4)}},
        {"inputs": [(2, 5), np.array([-1, 0.25, 0.5, 2], np.float32)], "domain": (-1.5, 1.5),
         "ref": _numpy_ref}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_argument("bins", "NDArray-or-Symbol", "Input ndarray"))
