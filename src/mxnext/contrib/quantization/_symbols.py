"""``_quantize_symbol``, ``_calibrate_quantized_sym`` and ``_quantize_params``: MXNet's
symbol-level quantization steps, on the pass in ``_rewrite``."""

from __future__ import annotations

import numpy as np

from ... import ndarray
from ..._runtime.base import MXNetError
from ..._runtime.graph import IndexedGraph
from ...symbol import Symbol, _create
from ...symbol._symbol import _copy_graph
from ._rewrite import _CALIB_INPUT, _ask, output_name, quantize_graph

_DTYPES = ("int8", "uint8", "auto")


def _names(value, what):
    if value is None:
        return []
    if not isinstance(value, list):
        raise AssertionError(f"_quantize_symbol: {what} must be a list of names, got "
                             f"{type(value).__name__}")
    return value


def _quantize_symbol(sym, ctx, excluded_symbols=None, excluded_operators=None,
                     offline_params=None, quantized_dtype="int8", quantize_mode="smart",
                     quantize_granularity="tensor-wise"):
    """(quantized symbol, names of the float outputs to calibrate) for float ``sym``."""
    excluded_symbols = _names(excluded_symbols, "excluded_symbols")
    excluded_operators = _names(excluded_operators, "excluded_operators")
    if quantized_dtype not in _DTYPES:
        raise MXNetError(f"_quantize_symbol: quantized_dtype must be one of {_DTYPES}, got "
                         f"{quantized_dtype!r}")
    if getattr(ctx, "device_type", "cpu") == "gpu" and quantize_granularity == "channel-wise":
        raise MXNetError("_quantize_symbol: `channel-wise` quantization is not supported on "
                         "GPU; use quantize_granularity='tensor-wise'")
    outputs, calib = quantize_graph(sym._outputs, excluded_symbols, excluded_operators,
                                    list(offline_params or []), quantized_dtype, quantize_mode)
    return Symbol(outputs), calib


def _calibrate_quantized_sym(qsym, th_dict):
    """A copy of ``qsym`` whose calibrated quantize_v2 / requantize nodes (and any op with
    ``FNeedCalibrateOutput``) carry ``min_calib_range`` / ``max_calib_range`` from
    ``th_dict`` ({float output name: (min, max)}), written as MXNet writes them."""
    if not th_dict:
        return qsym
    outputs = _copy_graph(qsym._outputs)
    for node in IndexedGraph(outputs).nodes:
        if node.op is None:
            continue
        attrs = _create.node_dict(node)
        idx = _ask(node.op, "FNeedCalibrateInput", attrs,
                   default=_CALIB_INPUT.get(node.op.name))
        if idx is not None:
            e = node.inputs[idx[0]]
            _set_range(node, e.node, e.index, th_dict)
            continue
        idx = _ask(node.op, "FNeedCalibrateOutput", attrs)
        if idx is not None:
            _set_range(node, node, idx[0], th_dict)
    return Symbol(outputs)


def _set_range(node, src, index, th_dict) -> None:
    name = output_name(src, index)
    if src.name.startswith("quantized_"):
        name = name[len("quantized_"):]
    if name not in th_dict:
        return
    low, high = th_dict[name]
    _create.set_node_attrs(node, {"min_calib_range": _float_text(low),
                                  "max_calib_range": _float_text(high)})


def _float_text(value) -> str:
    """A float32 written as C++'s ``std::to_string`` writes it (six decimals)."""
    return f"{float(np.float32(np.asarray(value).reshape(-1)[0])):f}"


def _quantize_params(qsym, params, th_dict):
    """The parameters ``qsym`` reads: ``*weight_quantize`` / ``*bias_quantize`` quantized to
    int8 over each parameter's own min and max (with ``_min`` / ``_max``), others copied,
    ``<output>_min`` / ``<output>_max`` from ``th_dict``."""
    out = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            param = params[name[:-len("_quantize")]]
            val, vmin, vmax = ndarray.contrib.quantize(
                data=param, min_range=ndarray.min(param), max_range=ndarray.max(param),
                out_type="int8")
            out[name], out[name + "_min"], out[name + "_max"] = val, vmin, vmax
        elif name in params:
            out[name] = params[name]
        elif name.endswith(("_min", "_max")) and name[:-4] in th_dict:
            out[name] = ndarray.array([th_dict[name[:-4]][name.endswith("_max")]])
    return out
