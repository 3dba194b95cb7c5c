"""``quantize_net_v2`` / ``quantize_net``: a Gluon HybridBlock exported, quantized (and
calibrated) as a symbol, and returned as a SymbolBlock holding the int8 parameters."""

from __future__ import annotations

import importlib
import os
import tempfile
import warnings

from ... import ndarray as nd
from ... import symbol as sym_mod
from ...context import Context, cpu
from ...io import DataIter
from ...model import load_checkpoint
from ...module import Module
from ._collect import _collect_layer_statistics
from ._model import _as_data_iter, _DataIterWrapper, calib_graph, quantize_graph


def _trace(network, calib_data, data_shapes):
    """Run ``network`` once on zeros of ``data_shapes`` (from ``calib_data`` when not
    given), dropping trailing inputs it does not take (a loader's labels); returns
    (calib_data as a DataIter or None, the data shapes it takes)."""
    if calib_data is not None:
        if isinstance(calib_data, DataIter):
            shapes = calib_data.provide_data
        else:
            calib_data, shapes = _as_data_iter(calib_data)
        data_shapes = data_shapes or shapes
    if not data_shapes:
        raise ValueError("data_shapes required")
    data_shapes = list(data_shapes)
    inputs = [nd.zeros(desc.shape) for desc in data_shapes]
    while True:
        try:
            network(*inputs)
            return calib_data, data_shapes[:len(inputs)]
        except TypeError:
            if len(inputs) <= 1:
                raise
            inputs.pop()
            if isinstance(calib_data, _DataIterWrapper):
                calib_data.provide_data.pop()


def _excluded(symnet, exclude_layers, exclude_layers_match):
    names = list(exclude_layers or [])
    for part in exclude_layers_match or []:
        names.extend(s.name for s in symnet.get_internals() if part in s.name)
    return names


def _symbol_block(qsym, data_names, qarg_params, aux_params, ctx):
    # mx.gluon by name, loaded on first use as contrib.onnx does: gluon imports contrib
    SymbolBlock = importlib.import_module("mxnext.gluon").SymbolBlock
    net = SymbolBlock(qsym, [sym_mod.var(name) for name in data_names])
    with tempfile.TemporaryDirectory() as tmp:
        fname = os.path.join(tmp, "net-quantized-0000.params")
        saved = {f"arg:{k}": v.as_in_context(cpu()) for k, v in qarg_params.items()}
        saved.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        nd.save(fname, saved)
        net.collect_params().load(fname, cast_dtype=True, dtype_source="saved")
    net.collect_params().reset_ctx(ctx)
    return net


def quantize_net_v2(network, quantized_dtype="auto", quantize_mode="full",
                    quantize_granularity="tensor-wise", exclude_layers=None,
                    exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None):
    """A SymbolBlock of HybridBlock ``network`` quantized: layers named in
    ``exclude_layers`` or containing a string of ``exclude_layers_match``, and ops in
    ``exclude_operators``, stay float; ``calib_mode`` as ``quantize_model`` (plus
    ``customize`` with ``LayerOutputCollector``), calibrated on ``calib_data`` (a DataIter
    or any iterable of batches, such as a DataLoader)."""
    if logger:
        logger.info("Export HybridBlock")
    network.hybridize()
    calib_data, data_shapes = _trace(network, calib_data, data_shapes)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "tmp")
        network.export(prefix, epoch=0)
        symnet, args, auxs = load_checkpoint(prefix, 0)
    excluded = _excluded(symnet, exclude_layers, exclude_layers_match)
    if logger:
        logger.info("These layers have been excluded %s", excluded)
    qsym, qarg_params, aux_params, collector = quantize_graph(
        symnet, args, auxs, ctx=ctx, excluded_sym_names=excluded,
        excluded_op_names=list(exclude_operators or []), calib_mode=calib_mode,
        quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity,
        LayerOutputCollector=LayerOutputCollector, logger=logger)
    data_names = [desc[0] for desc in data_shapes]
    if calib_mode is not None and calib_mode != "none":
        if not isinstance(ctx, Context):
            raise ValueError(f"currently only supports single ctx, while received {ctx}")
        if calib_data is None:
            raise ValueError(f"calib_data must be provided when calib_mode={calib_mode}")
        mod = Module(symbol=symnet, context=ctx, data_names=data_names, label_names=None)
        mod.bind(for_training=False, data_shapes=data_shapes)
        mod.set_params(args, auxs, allow_missing=False, force_init=True)
        num = _collect_layer_statistics(mod, calib_data, collector, num_calib_examples, logger)
        if logger:
            logger.info("Collected layer output values from FP32 model using %d examples", num)
        qsym, qarg_params, aux_params = calib_graph(
            qsym, args, auxs, collector, calib_mode=calib_mode,
            quantized_dtype=quantized_dtype, logger=logger)
    return _symbol_block(qsym, data_names, qarg_params, aux_params, ctx)


def quantize_net(network, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                 logger=None):
    """``quantize_net_v2`` with tensor-wise granularity (deprecated in MXNet for it)."""
    warnings.warn("WARNING: This will be deprecated after MXNet 2.0, please use "
                  "quantize_net_v2.")
    return quantize_net_v2(network, quantized_dtype, quantize_mode, "tensor-wise",
                           exclude_layers, exclude_layers_match, exclude_operators,
                           calib_data, data_shapes, calib_mode, num_calib_examples, ctx,
                           None, logger)
