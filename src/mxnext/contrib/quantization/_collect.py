"""Calibration statistics of a float model's layers, gathered by an executor's monitor
callback (``set_monitor_callback(collector.collect, monitor_all=True)``): each layer's
min and max (``naive``) or histogram (``entropy``), for the layers the pass named."""

from __future__ import annotations

import numpy as np

from ... import ndarray
from ...io import DataIter
from ._thresholds import combine_histogram


def _text(name) -> str:
    return name.decode() if isinstance(name, bytes) else name


class _LayerHistogramCollector:
    """{layer: (hist, edges, min, max, threshold)} over ``num_bins`` bins symmetric about
    zero, widened as later batches need (``combine_histogram``)."""

    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        self.hist_dict = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        name = _text(name)
        if name not in self.include_layer:
            return
        arr = arr.asnumpy()
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s", name, arr.shape)
        lo, hi = np.min(arr), np.max(arr)
        th = max(abs(lo), abs(hi))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], arr, lo, hi, th)
        else:
            hist, edges = np.histogram(arr, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (hist, edges, lo, hi, th)


class _LayerOutputMinMaxCollector:
    """{layer: (min, max)} over every batch seen."""

    def __init__(self, quantized_dtype, include_layer=None, logger=None):
        self.min_max_dict = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        name = _text(name)
        if name not in self.include_layer:
            return
        lo = ndarray.min(arr).asscalar()
        hi = ndarray.max(arr).asscalar()
        if name in self.min_max_dict:
            old_lo, old_hi = self.min_max_dict[name]
            lo, hi = min(old_lo, lo), max(old_hi, hi)
        self.min_max_dict[name] = (lo, hi)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f", name, lo, hi)


def _collect_layer_statistics(mod, data, collector, max_num_examples=None, logger=None):
    """Run bound Module ``mod`` over ``data`` (a DataIter) with ``collector`` watching,
    stopping once ``max_num_examples`` were seen; the number of examples seen."""
    if not isinstance(data, DataIter):
        raise ValueError(f"Only supports data as a type of DataIter, while received type "
                         f"{type(data)}")
    mod._exec_group.execs[0].set_monitor_callback(collector.collect, monitor_all=True)
    num_batches = num_examples = 0
    for batch in data:
        mod.forward(data_batch=batch, is_train=False)
        num_batches += 1
        num_examples += data.batch_size
        if max_num_examples is not None and num_examples >= max_num_examples:
            break
    if logger is not None:
        logger.info("Collected statistics from %d batches with batch_size=%d",
                    num_batches, data.batch_size)
    return num_examples


def _collect_layer_output_min_max(mod, data, quantized_dtype, include_layer=None,
                                  max_num_examples=None, logger=None):
    collector = _LayerOutputMinMaxCollector(quantized_dtype, include_layer, logger)
    num = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.min_max_dict, num


def _collect_layer_histogram(mod, data, include_layer=None, max_num_examples=None,
                             logger=None):
    collector = _LayerHistogramCollector(include_layer=include_layer, logger=logger)
    num = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.hist_dict, num
