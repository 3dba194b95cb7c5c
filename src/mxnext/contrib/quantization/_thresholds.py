"""Entropy calibration: ``combine_histogram`` merges a new batch into a layer's histogram,
``_smooth_distribution`` smooths a discrete distribution, and ``_get_optimal_threshold(s)``
find the thresholds that quantize histograms with the least KL divergence (the
``_contrib_calibrate_entropy`` op).
"""

from __future__ import annotations

import numpy as np

from ... import ndarray as nd

__all__ = ["combine_histogram"]


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """``old_hist`` (hist, edges, min, max, threshold) with the values of ``arr`` added; a
    threshold above the old one widens the histogram by whole bins of the old width on
    each side."""
    hist, edges, old_min, old_max, old_th = old_hist
    lo, hi = min(old_min, new_min), max(old_max, new_max)
    if new_th <= old_th:
        added, _ = np.histogram(arr, bins=len(hist), range=(-old_th, old_th))
        return hist + added, edges, lo, hi, old_th
    step = 2 * old_th / len(hist)
    extra = int((new_th - old_th) // step + 1)
    th = extra * step + old_th
    wide, wide_edges = np.histogram(arr, bins=len(hist) + 2 * extra, range=(-th, th))
    wide[extra:len(wide) - extra] += hist
    return wide, wide_edges, lo, hi, th


def _smooth_distribution(p, eps=0.0001):
    """``p`` (not necessarily normalized) in float32 with every zero raised to ``eps`` and
    the same total taken evenly off the non-zero entries. ValueError when all are zero."""
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        raise ValueError("The discrete probability distribution is malformed. All entries "
                         "are 0.")
    eps1 = eps * n_zeros / n_nonzeros
    if eps1 >= 1.0:             # MXNet asserts both conditions, so AssertionError
        raise AssertionError(f"_smooth_distribution: eps * zeros / non-zeros = {eps1} must be "
                         f"below 1 (n_zeros={n_zeros}, n_nonzeros={n_nonzeros})")
    hist = p.astype(np.float32)
    hist += np.where(zeros, eps, -eps1).astype(np.float32)
    if (hist <= 0).any():
        raise AssertionError("_smooth_distribution: a non-zero entry is smaller than its share "
                         f"{eps1} of the smoothing")
    return hist


def _get_optimal_threshold(hist_data, quantized_dtype, num_quantized_bins=255):
    """(min, max, threshold, divergence) for one layer's ``hist_data`` (hist, edges, min,
    max, threshold); a non-negative layer quantized to uint8/auto gets ``2 n + 1`` bins."""
    hist, edges, min_val, max_val, _ = hist_data
    if len(hist) % 2 != 1:
        raise AssertionError(f"_get_optimal_threshold: the histogram needs an odd number of bins "
                         f"(a middle one at zero), got {len(hist)}")
    if min_val >= 0 and quantized_dtype in ("auto", "uint8"):
        num_quantized_bins = num_quantized_bins * 2 + 1
    threshold, divergence = nd.contrib.calibrate_entropy(
        hist=nd.array(hist), hist_edges=nd.array(edges), num_quantized_bins=num_quantized_bins)
    return min_val, max_val, threshold.asnumpy(), divergence.asnumpy()


def _get_optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins=255, logger=None):
    """{layer: (low, high)} from {layer: hist_data}: ``(0, th)`` for non-negative layers
    quantized to uint8/auto, ``(-th, th)`` otherwise. Empties ``hist_dict`` as it goes (as
    MXNet, to free each histogram)."""
    if not isinstance(hist_dict, dict):
        raise TypeError(f"_get_optimal_thresholds: hist_dict must be a dict, got "
                        f"{type(hist_dict).__name__}")
    if logger is not None:
        logger.info("Calculating optimal thresholds for quantization using KL divergence "
                    "with num_quantized_bins=%d", num_quantized_bins)
    th_dict = {}
    for name in list(hist_dict):
        min_val, max_val, th, divergence = _get_optimal_threshold(
            hist_dict.pop(name), quantized_dtype, num_quantized_bins=num_quantized_bins)
        unsigned = min_val >= 0 and quantized_dtype in ("auto", "uint8")
        th_dict[name] = (0, th) if unsigned else (-th, th)
        if logger:
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f",
                         name, min_val, max_val, th, divergence)
    return th_dict

