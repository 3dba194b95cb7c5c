"""MXNet's ``mx.contrib.quantization`` (``mx.contrib.quant``): INT8 quantization of a float
model's graph (``_quantize_symbol``, ``quantize_model`` ...) and its calibration helpers.

The graph pass finds quantized ops through their ``FQuantizes`` attributes (see
docs/quantization.md); the compute ops come from plugins.
"""

from ... import _missing
from ._symbols import (_calibrate_quantized_sym, _quantize_params,  # noqa: F401
                       _quantize_symbol)
from ._thresholds import (_get_optimal_threshold, _get_optimal_thresholds,  # noqa: F401
                          _smooth_distribution, combine_histogram)

__all__ = ["combine_histogram"]

def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
