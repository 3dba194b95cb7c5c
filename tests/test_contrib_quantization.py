"""mx.contrib.quant (mx.contrib.quantization): MXNet's entropy-calibration helpers on the
_contrib_calibrate_entropy op (the graph pass: test_quantize_graph.py)."""

import numpy as np
import pytest

import mxnext as mx

quant = mx.contrib.quant


def test_smooth_distribution():
    p = np.array([0, 0, 3, 1, 0], np.float64)
    got = quant._smooth_distribution(p, eps=0.01)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [0.01, 0.01, 2.985, 0.985, 0.01], rtol=1e-6)
    with pytest.raises(ValueError, match="All entries are 0"):
        quant._smooth_distribution(np.zeros(3))
    with pytest.raises(AssertionError, match="below 1"):
        quant._smooth_distribution(np.array([0, 0, 1.0]), eps=0.6)


def test_combine_histogram_widens_by_whole_bins():
    hist, edges = np.histogram([-0.5, 0.2, 0.9], bins=5, range=(-1, 1))
    same = quant.combine_histogram((hist, edges, -0.5, 0.9, 1.0), np.array([0.1]), 0.1, 0.1, 0.5)
    assert same[0].tolist() == [0, 1, 2, 0, 1] and same[4] == 1.0
    wide, wide_edges, lo, hi, th = quant.combine_histogram((hist, edges, -0.5, 0.9, 1.0),
                                                           np.array([1.3]), 1.3, 1.3, 1.3)
    assert th == pytest.approx(1.4) and len(wide) == 7 and (lo, hi) == (-0.5, 1.3)
    assert wide.tolist() == [0, 0, 1, 1, 0, 1, 1]
    np.testing.assert_allclose(wide_edges[[0, -1]], [-1.4, 1.4])


def test_optimal_thresholds_of_a_uniform_layer_cover_its_range():
    x = np.random.default_rng(3).uniform(-2.0, 3.0, 20000)
    th = np.abs(x).max()
    hist, edges = np.histogram(x, bins=801, range=(-th, th))
    got = quant._get_optimal_thresholds({"fc": (hist, edges, x.min(), x.max(), th)}, "int8")
    low, high = got["fc"]
    assert high[0] == pytest.approx(th, rel=0.02) and low == -high
    pos = {"relu": (hist, edges, 0.0, x.max(), th)}
    assert quant._get_optimal_thresholds(pos, "auto")["relu"][0] == 0 and pos == {}


def test_module_names():
    assert mx.contrib.quantization is quant
    with pytest.raises(AttributeError, match="has no attribute 'quantize_everything'"):
        quant.quantize_everything
