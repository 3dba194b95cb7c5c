"""``quantize_model``, ``quantize_graph`` and ``calib_graph``: MXNet's user-level INT8
quantization of a symbolic model, with calibration ``none``, ``naive`` (the layers' own
min and max on calibration data) or ``entropy`` (KL-optimal thresholds)."""

from __future__ import annotations

import logging

from ...context import Context, cpu
from ...io import DataBatch, DataDesc, DataIter
from ...module import Module
from ...ndarray import load as nd_load
from ...symbol import Symbol
from ...symbol import load as sym_load
from ._collect import (_collect_layer_histogram, _collect_layer_output_min_max,
                       _LayerHistogramCollector, _LayerOutputMinMaxCollector)
from ._symbols import _calibrate_quantized_sym, _quantize_params, _quantize_symbol
from ._thresholds import _get_optimal_thresholds

_DTYPES = ("int8", "uint8", "auto")
_GRANULARITIES = ("tensor-wise", "channel-wise")


def _load_sym(sym, logger=None):
    """``sym`` itself, or the symbol in file ``sym``."""
    if isinstance(sym, str):
        if logger:
            logger.info("Loading symbol from file %s", sym)
        return sym_load(sym)
    if isinstance(sym, Symbol):
        return sym
    raise ValueError(f"_load_sym only accepts Symbol or path to the symbol file, while "
                     f"received type {type(sym)}")


def _load_params(params, logger=None):
    """(arg_params, aux_params) from a ``.params`` file (``arg:`` / ``aux:`` keys) or a pair."""
    if isinstance(params, str):
        if logger:
            logger.info("Loading params from file %s", params)
        arg_params, aux_params = {}, {}
        for key, value in nd_load(params).items():
            kind, name = key.split(":", 1)
            if kind == "arg":
                arg_params[name] = value
            elif kind == "aux":
                aux_params[name] = value
        return arg_params, aux_params
    if isinstance(params, (tuple, list)) and len(params) == 2:
        return params[0], params[1]
    raise ValueError("Unsupported params provided. Must be either a path to the param file "
                     "or a pair of dictionaries representing arg_params and aux_params")


class _DataIterWrapper(DataIter):
    """A DataIter over any iterable of batches (a Gluon DataLoader): the first batch's
    arrays name the inputs ``data``, ``data0`` ... (``data0``, ``data1`` ... from three on);
    5-d data is folded to 4-d."""

    def __init__(self, calib_data):
        super().__init__()
        self._data = calib_data
        try:
            first = next(iter(calib_data))
        except TypeError as e:
            raise TypeError(f"calib_data is not a valid iterator. {e}") from None
        first = list(first) if isinstance(first, (list, tuple)) else [first]
        first[0] = _fold(first[0])
        if len(first) >= 3:
            self.provide_data = [DataDesc(f"data{i}", x.shape) for i, x in enumerate(first)]
        else:
            self.provide_data = [DataDesc("data", first[0].shape)] + [
                DataDesc(f"data{i}", x.shape) for i, x in enumerate(first[1:])]
        self.batch_size = first[0].shape[0]
        self.reset()

    def reset(self):
        self._iter = iter(self._data)

    def next(self):
        batch = next(self._iter)
        batch[0] = _fold(batch[0])
        return DataBatch(data=batch)


def _fold(x):
    return x.reshape((-1,) + x.shape[2:]) if len(x.shape) > 4 else x


def _as_data_iter(calib_data):
    """(DataIter, its provide_data) for a DataIter or any iterable of batches."""
    if not isinstance(calib_data, DataIter):
        calib_data = _DataIterWrapper(calib_data)
    return calib_data, calib_data.provide_data


def _check_options(excluded_sym_names, excluded_op_names, quantized_dtype,
                   quantize_granularity):
    for value, what in ((excluded_sym_names, "excluded_sym_names"),
                        (excluded_op_names, "excluded_op_names")):
        if not isinstance(value, list):
            raise ValueError(f"{what} must be a list of strings representing the names of the "
                             f"symbols that will not be quantized, while received type "
                             f"{type(value)}")
    if quantized_dtype not in _DTYPES:
        raise ValueError(f"unknown quantized_dtype {quantized_dtype} received, expected "
                         f"`int8`, `uint8` or `auto`")
    if quantize_granularity not in _GRANULARITIES:
        raise ValueError(f"unknown quantize_granularity {quantize_granularity} received, "
                         f"expected `tensor-wise` or `channel-wise`.")


def _calibrate(sym, arg_params, aux_params, names, calib, logger):
    """The thresholds of the float model's layers ``calib['layers']`` on its data."""
    mode, data = calib["mode"], calib["data"]
    if not isinstance(calib["ctx"], Context):
        raise ValueError(f"currently only supports single ctx, while received {calib['ctx']}")
    if data is None:
        raise ValueError(f"calib_data must be provided when calib_mode={mode}")
    if not isinstance(data, DataIter):
        raise ValueError(f"calib_data must be of DataIter type when calib_mode={mode}, while "
                         f"received type {type(data)}")
    if mode not in ("entropy", "naive"):
        raise ValueError(f"unknown calibration mode {mode} received, expected `none`, "
                         f"`naive`, or `entropy`")
    mod = Module(symbol=sym, data_names=names[0], label_names=names[1], context=calib["ctx"])
    labels = data.provide_label if len(data.provide_label) > 0 else None
    mod.bind(for_training=False, data_shapes=data.provide_data, label_shapes=labels)
    mod.set_params(arg_params, aux_params)
    if mode == "entropy":
        hist, num = _collect_layer_histogram(mod, data, calib["layers"], calib["num"], logger)
        if logger:
            logger.info("Collected layer outputs from FP32 model using %d examples", num)
        return _get_optimal_thresholds(hist, calib["dtype"], logger=logger)
    th_dict, num = _collect_layer_output_min_max(mod, data, calib["dtype"], calib["layers"],
                                                 calib["num"], logger)
    if logger:
        logger.info("Collected layer output min/max values from FP32 model using %d examples",
                    num)
    return th_dict


def quantize_model(sym, arg_params, aux_params, data_names=("data",),
                   label_names=("softmax_label",), ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", calib_data=None,
                   num_calib_examples=None, quantized_dtype="int8", quantize_mode="smart",
                   quantize_granularity="tensor-wise", logger=None):
    """(quantized symbol, quantized arg_params, aux_params) of a float model; with
    ``calib_mode`` ``naive`` or ``entropy`` the layers' ranges come from ``calib_data``
    (at most ``num_calib_examples`` examples), with ``none`` they are found at run time."""
    excluded_sym_names = [] if excluded_sym_names is None else excluded_sym_names
    excluded_op_names = [] if excluded_op_names is None else excluded_op_names
    _check_options(excluded_sym_names, excluded_op_names, quantized_dtype,
                   quantize_granularity)
    if logger:
        logger.info("Quantizing symbol")
    qsym, calib_layer = _quantize_symbol(
        sym, ctx, excluded_symbols=excluded_sym_names, excluded_operators=excluded_op_names,
        offline_params=list(arg_params), quantized_dtype=quantized_dtype,
        quantize_mode=quantize_mode, quantize_granularity=quantize_granularity)
    th_dict = {}
    if calib_mode is not None and calib_mode != "none":
        calib = {"mode": calib_mode, "data": calib_data, "ctx": ctx, "layers": calib_layer,
                 "num": num_calib_examples, "dtype": quantized_dtype}
        th_dict = _calibrate(sym, arg_params, aux_params, (data_names, label_names), calib,
                             logger)
        qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info("Quantizing parameters")
    return qsym, _quantize_params(qsym, arg_params, th_dict), aux_params


def quantize_model_mkldnn(sym, arg_params, aux_params, data_names=("data",),
                          label_names=("softmax_label",), ctx=cpu(), excluded_sym_names=None,
                          excluded_op_names=None, calib_mode="entropy", calib_data=None,
                          num_calib_examples=None, quantized_dtype="int8",
                          quantize_mode="smart", quantize_granularity="tensor-wise",
                          logger=None):
    """``quantize_model`` for the CPU. MXNet also fuses the graph with its oneDNN subgraph
    backend before and after; mxnext has none, so the graph is quantized unfused."""
    if not isinstance(ctx, Context):
        raise ValueError(f"currently only supports single ctx, while received {ctx}")
    if ctx.device_type != "cpu":
        raise ValueError("quantize_model_mkldnn only support Intel cpu platform with MKL-DNN "
                         "Backend")
    return quantize_model(sym, arg_params, aux_params, data_names, label_names, ctx,
                          excluded_sym_names, excluded_op_names, calib_mode, calib_data,
                          num_calib_examples, quantized_dtype, quantize_mode,
                          quantize_granularity, logger)


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", quantized_dtype="int8",
                   quantize_mode="full", quantize_granularity="tensor-wise",
                   LayerOutputCollector=None, logger=None):
    """(quantized symbol, arg_params, aux_params, collector): the graph quantized without
    calibration and, for ``naive`` / ``entropy`` / ``customize``, a collector to install as
    a monitor callback; ``calib_graph`` then calibrates with what it gathered."""
    excluded_sym_names = [] if excluded_sym_names is None else excluded_sym_names
    excluded_op_names = [] if excluded_op_names is None else excluded_op_names
    _check_options(excluded_sym_names, excluded_op_names, quantized_dtype,
                   quantize_granularity)
    if not isinstance(ctx, Context):
        raise ValueError(f"currently only supports single ctx, while received {ctx}")
    qsym, calib_layer = _quantize_symbol(
        sym, ctx, excluded_symbols=excluded_sym_names, excluded_operators=excluded_op_names,
        offline_params=list(arg_params), quantized_dtype=quantized_dtype,
        quantize_mode=quantize_mode, quantize_granularity=quantize_granularity)
    collector = None
    if calib_mode == "entropy":
        collector = _LayerHistogramCollector(include_layer=calib_layer, logger=logger)
    elif calib_mode == "naive":
        collector = _LayerOutputMinMaxCollector(quantized_dtype, calib_layer, logger)
    elif calib_mode == "customize" and LayerOutputCollector is not None:
        collector = LayerOutputCollector
    elif calib_mode is not None and calib_mode != "none":
        raise ValueError(f"unknown calibration mode {calib_mode} received, expected `none`, "
                         f"`naive`, `entropy` or `customize`")
    return qsym, _quantize_params(qsym, arg_params, {}), aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode="entropy",
                quantized_dtype="int8", logger=logging):
    """(calibrated symbol, quantized arg_params, aux_params) from a filled ``collector``."""
    if calib_mode == "entropy":
        th_dict = _get_optimal_thresholds(collector.hist_dict, quantized_dtype, logger=logger)
    elif calib_mode in ("naive", "customize"):
        th_dict = collector.min_max_dict
    elif calib_mode is None or calib_mode == "none":
        raise ValueError("please set calibration mode to naive or entropy.")
    else:
        raise ValueError(f"unknown calibration mode {calib_mode} received, expected `none`, "
                         f"`naive`, `entropy` or `customize`")
    qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info("Quantizing parameters")
    return qsym, _quantize_params(qsym, arg_params, th_dict), aux_params
