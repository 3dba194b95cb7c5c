"""_contrib_calibrate_entropy (MXNet 1.9's ``quantization/calibrate.cc``): the threshold that
quantizes a histogram with the least KL divergence, as MXNet's entropy calibration picks it.

Follows MXNet's CPU kernel step by step, its quirks included: the histogram counts are
truncated to integers where the candidate distribution q is built (not in the reference p),
the two edge bins of p collect everything outside the window, and both distributions are
smoothed (zeros -> 1e-4, taken off the non-zero bins) before the divergence, in float32.
A sequential search over host arrays, as MXNet has it (a CPU kernel only).
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, MXNetError, Param, TypeInferError, assign, register_op

from ._common import check_outs

OP = "_contrib_calibrate_entropy"
_F32 = np.float32
_EPS = _F32(1e-4)


class CalibrateEntropyParam(Param):
    num_quantized_bins: int = Field(255, ge=1, description="The number of quantized bins.")


def _smooth(p):
    """Zeros become eps, the non-zero bins give that mass up evenly; None where every bin is
    zero or the non-zero bins would give up a whole unit."""
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = _EPS * _F32(n_zeros) / _F32(n_nonzeros)
    if eps1 >= 1:
        return None
    return p + np.where(zeros, _EPS, -eps1).astype(_F32)


def _entropy(p, q):
    p, q = p / p.sum(dtype=_F32), q / q.sum(dtype=_F32)
    if not ((p > 0).all() and (q > 0).all()):
        raise MXNetError(f"Operator {OP!r}: a smoothed distribution has a bin <= 0 (a "
                         f"histogram count below the smoothing's share); expected positive "
                         f"bins")
    return _F32((p * np.log(p / q)).sum(dtype=_F32))


def _candidate(sliced, p, nq):
    """q: ``sliced`` merged into ``nq`` bins (the last one takes the remainder), each merged
    count spread evenly over the bins that are non-zero in ``sliced``, kept where p != 0."""
    m = sliced.size // nq
    merged = sliced[:nq * m].reshape(nq, m).sum(axis=1) if m else np.zeros(nq, np.int64)
    merged[-1] += sliced[nq * m:].sum()
    owner = np.minimum(np.arange(sliced.size) // m, nq - 1) if m else np.full(sliced.size,
                                                                               nq - 1)
    norm = np.bincount(owner, weights=sliced != 0, minlength=nq)
    spread = np.divide(merged.astype(_F32), norm, out=np.zeros(nq), where=norm > 0)
    return np.where((p != 0) & (norm[owner] > 0), spread[owner], 0).astype(_F32)


def _divergence(hist, i, nq):
    """KL divergence of the window of half-width ``i`` around the middle bin."""
    zero = hist.size // 2
    start, stop = zero - i, zero + i + 1
    p = hist[start:stop].copy()
    p[0] = hist[:start + 1].sum(dtype=_F32)
    p[-1] = hist[stop - 1:].sum(dtype=_F32)
    if p.size == 1:             # one bin: both edges, everything
        p[0] = hist.sum(dtype=_F32)
    sliced = np.trunc(hist[start:stop]).astype(np.int64)
    sliced[0] = 0
    q = _smooth(_candidate(sliced, p, nq))
    if q is None:
        return _F32(np.inf)
    p = _smooth(p)
    if p is None:
        raise MXNetError(f"Operator {OP!r}: hist is all zeros; expected a non-empty histogram")
    return _entropy(p, q)


def _calibrate(ctx, inputs, req, outputs, params):
    xp = ctx.xp                 # a host search: a device's arrays are copied over and back
    hist, edges = (np.asarray(x if xp is np else xp.asnumpy(x), _F32).reshape(-1)
                   for x in inputs)
    if edges.size != hist.size + 1:
        raise MXNetError(f"Operator {OP!r}: hist_edges has {edges.size} elements, expected "
                         f"len(hist) + 1 = {hist.size + 1}")
    nq = params.num_quantized_bins
    widths = range(nq // 2, hist.size // 2 + 1)
    div = np.array([_divergence(hist, i, nq) for i in widths], _F32)
    if div.size == 0:
        raise MXNetError(f"Operator {OP!r}: num_quantized_bins={nq} exceeds the {hist.size} "
                         f"bins of hist")
    best = int(np.argmin(div))
    low = div[best] if np.isfinite(div[best]) else np.finfo(_F32).max
    assign(outputs[0], req[0], xp.asarray(np.full((1,), edges[hist.size // 2 + widths[best] + 1],
                                                  _F32)))
    assign(outputs[1], req[1], xp.asarray(np.full((1,), low, _F32)))


def _shape(params, ins, outs):
    return list(ins), check_outs(OP, outs, [(1,), (1,)])


def _type(params, ins, outs):
    ins, outs = list(ins), list(outs)
    for what, types in (("input", ins), ("output", outs)):
        for i, t in enumerate(types):
            if t is not None and np.dtype(t) != _F32:
                raise TypeInferError(f"Operator {OP!r}: {what} {i} has dtype {np.dtype(t)}, "
                                     f"expected float32")
            types[i] = np.dtype(_F32)
    return ins, outs


(register_op(OP)
    .describe("Entropy calibration: the threshold (a hist_edges value) whose symmetric window "
              "around the histogram's middle bin, quantized into num_quantized_bins bins, "
              "loses the least information (KL divergence); returns (threshold, divergence). "
              "Inference only.")
    .set_attr_parser(CalibrateEntropyParam).set_num_inputs(2).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: ["hist", "hist_edges"])
    .set_attr("FListOutputNames", lambda p: ["threshold", "divergence"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", _calibrate)
    .set_attr("TExamples", [
        {"inputs": [np.array([0, 1, 3, 9, 20, 9, 3, 1, 0], _F32),
                    np.linspace(-1, 1, 10).astype(_F32)],
         "params": {"num_quantized_bins": 3}}])
    .add_argument("hist", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_argument("hist_edges", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`"))
