"""MXNet's ``mx.contrib.quantization`` (``mx.contrib.quant``): INT8 quantization of a float
model's graph (``_quantize_symbol``, ``quantize_model`` ...) and its calibration helpers.

The graph pass finds quantized ops through their ``FQuantizes`` attributes (see
docs/quantization.md); the compute ops come from plugins.
"""

import importlib

from ... import _missing
from ._symbols import (_calibrate_quantized_sym, _quantize_params,  # noqa: F401
                       _quantize_symbol)
from ._thresholds import (_get_optimal_threshold, _get_optimal_thresholds,  # noqa: F401
                          _smooth_distribution, combine_histogram)

__all__ = ["calib_graph", "combine_histogram", "quantize_graph", "quantize_model",
           "quantize_model_mkldnn", "quantize_net", "quantize_net_v2"]

# these read mx.io, mx.mod and mx.gluon, which import after mx.contrib: loaded on first use
_LATER = {"_collect": """_collect_layer_histogram _collect_layer_output_min_max
                         _collect_layer_statistics _LayerHistogramCollector
                         _LayerOutputMinMaxCollector""",
          "_model": """_as_data_iter _DataIterWrapper _load_params _load_sym calib_graph
                       quantize_graph quantize_model quantize_model_mkldnn""",
          "_gluon": "quantize_net quantize_net_v2"}
_HOME = {name: module for module, names in _LATER.items() for name in names.split()}


def __getattr__(name):
    module = _HOME.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
