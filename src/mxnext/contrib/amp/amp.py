"""Automatic mixed precision (MXNet's ``mx.contrib.amp.amp``), float16 and bfloat16.

Two ways in, as in MXNet:

- training: ``init()`` before the model is built makes the op functions of ``mx.nd`` and
  ``mx.sym`` cast their inputs by MXNet's op lists; ``init_trainer(trainer)`` attaches a
  dynamic ``LossScaler``; ``with scale_loss(loss, trainer) as scaled: scaled.backward()``
  scales the loss, and the trainer's step unscales the gradients, or skips the update
  when they overflowed;
- inference: ``convert_symbol`` / ``convert_model`` / ``convert_hybrid_block`` /
  ``convert_bucketing_module`` rewrite a float32 graph with ``amp_cast`` /
  ``amp_multicast`` nodes.
"""

from __future__ import annotations

import contextlib
import logging

import ml_dtypes
import numpy as np

from ... import ndarray, symbol
from ...symbol import Symbol
from ..._runtime.context import cpu
from ..._runtime.base import FLAG_TO_DTYPE, MXNetError
from . import _convert, _wrap, lists
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_symbol", "convert_bucketing_module",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
           "bfloat16", "AMPError"]


class AMPError(MXNetError, AssertionError):
    """A bad argument or state for an AMP function. MXNet checks these with ``assert``, so
    code written for it (its own tests among them) catches AssertionError."""


bfloat16 = np.dtype(ml_dtypes.bfloat16)
"""numpy's bfloat16 (from ``ml_dtypes``); ``target_dtype="bfloat16"`` means this."""

_state = {"initialized": False, "scaler": None, "scaler_taken": False}
_amp_initialized = False
"""MXNet's module flag, True once ``init`` ran (GluonNLP's attention cells read it)."""
_gluon = {}
"""Gluon's ``Trainer``, ``HybridBlock`` and ``SymbolBlock``, which ``mxnext.gluon`` hands in
when it loads (``use_gluon``): gluon sits above contrib, so contrib never imports it."""


def use_gluon(trainer, hybrid_block, symbol_block):
    """Called by ``mxnext.gluon`` on import with its classes."""
    _gluon.update(Trainer=trainer, HybridBlock=hybrid_block, SymbolBlock=symbol_block)


def _is(obj, name) -> bool:
    """Whether ``obj`` is a gluon ``name`` (never, while gluon is not loaded)."""
    return name in _gluon and isinstance(obj, _gluon[name])


# -- op lists ------------------------------------------------------------------------------
def _lists(target_dtype, fn):
    try:
        dt = np.dtype(target_dtype)
    except TypeError:
        dt = None
    if dt == np.float16:
        return lists.symbol_fp16
    if dt == bfloat16:
        return lists.symbol_bf16
    raise AMPError(f"amp.{fn}: target_dtype must be float16 or bfloat16, got {target_dtype!r}")


def list_lp16_ops(target_dtype):
    """The ops that run in ``target_dtype``."""
    m = _lists(target_dtype, "list_lp16_ops")
    return m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS


def list_fp32_ops(target_dtype):
    """The ops that run in float32."""
    return _lists(target_dtype, "list_fp32_ops").FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """The ops that run in either type, as their inputs come."""
    m = _lists(target_dtype, "list_lp16_fp32_ops")
    return m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype):
    """``(op, parameter, values)``: the op runs in float32 when the parameter has one of
    the values."""
    return _lists(target_dtype, "list_conditional_fp32_ops").CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """The ops whose inputs are all cast to the widest type among them."""
    return _lists(target_dtype, "list_widest_type_cast").WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """The loss outputs whose gradient ``init`` scales by the loss scale."""
    return _lists(target_dtype, "list_loss_output_functions").LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """``{op: [input names]}``: inputs kept float32 when the op runs in low precision
    (None for float16)."""
    m = _lists(target_dtype, "list_lp16_use_fp32_params")
    return None if m is lists.symbol_fp16 else m.BF16_USE_FP32_PARAMS


# -- training --------------------------------------------------------------------------------
def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Make ``mx.nd`` and ``mx.sym`` compute in mixed precision (once per process; later
    calls do nothing). Call it before building the model. The lists override MXNet's."""
    if _state["initialized"]:
        return
    target = np.dtype(bfloat16 if target_dtype == "bfloat16" else target_dtype) \
        if target_dtype in ("float16", "bfloat16", np.float16, bfloat16) else None
    if target is None:
        raise AMPError(f"amp.init: target_dtype must be 'float16' or 'bfloat16', got "
                      f"{target_dtype!r}")
    global _amp_initialized
    _state["initialized"] = _amp_initialized = True
    logging.info("Using AMP")
    lp = target_precision_ops if target_precision_ops is not None else list_lp16_ops(target)
    fp32 = fp32_ops if fp32_ops is not None else list_fp32_ops(target)
    cond = conditional_fp32_ops if conditional_fp32_ops is not None \
        else list_conditional_fp32_ops(target)
    for module in (symbol, ndarray):
        _wrap.wrap_module(module, target, lp, fp32, cond, list_widest_type_cast(target),
                          list_lp16_use_fp32_params(target))
    _state["scaler"] = LossScaler()
    for module in (ndarray, symbol):
        _wrap.wrap_loss_outputs(module, _state["scaler"], list_loss_output_functions(target))


def init_trainer(optimizer_or_trainer):
    """Give a Gluon ``Trainer`` dynamic loss scaling (the first trainer shares the scaler
    ``init`` made for the loss outputs; later ones get their own)."""
    from ...optimizer.optimizer import Optimizer
    if not _state["initialized"]:
        raise AMPError("amp.init_trainer: AMP is not initialized; call amp.init() first")
    if isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("amp.init_trainer: AMP works with a Gluon Trainer, not an Optimizer")
    if not _is(optimizer_or_trainer, "Trainer"):
        raise TypeError(f"amp.init_trainer: expected a Gluon Trainer, got "
                        f"{type(optimizer_or_trainer).__name__}")
    if _state["scaler_taken"]:
        scaler = LossScaler()
    else:
        scaler, _state["scaler_taken"] = _state["scaler"], True
    optimizer_or_trainer._amp_loss_scaler = scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """``with scale_loss(loss, trainer) as scaled:`` the loss (or list of losses) times
    the loss scale; the trainer's next step divides the gradients by it."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise AMPError("amp.scale_loss: the trainer has no loss scaler; call "
                      "amp.init_trainer(trainer) first")
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield loss * scaler.loss_scale


def unscale(optimizer_or_trainer):
    """Divide the gradients by the loss scale now (to clip or read them before the step)."""
    if not _is(optimizer_or_trainer, "Trainer"):
        raise TypeError(f"amp.unscale: expected a Gluon Trainer, got "
                        f"{type(optimizer_or_trainer).__name__}")
    for p in optimizer_or_trainer._params:
        if p.grad_req != "null":
            for g in p.list_grad():
                g[:] *= optimizer_or_trainer._scale
    optimizer_or_trainer._scale = 1.0


# -- conversion ------------------------------------------------------------------------------
def _check_names(fn, what, value):
    if value is not None and not isinstance(value, list):
        raise AMPError(f"amp.{fn}: {what} must be a list, got {type(value).__name__}")


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of float32 ``sym`` with ``amp_cast`` / ``amp_multicast`` nodes where MXNet
    puts them: the inputs of ``target_dtype_ops`` cast to ``target_dtype``, those of
    ``fp32_ops`` (and of ``conditional_fp32_ops`` when their parameter matches) to float32,
    those of the widest-type ops to one type, every output back to float32. Nodes named
    in ``excluded_sym_names`` run in float32. ``data_names`` are the inputs that are data
    (default: those without ``__dtype__``); the other inputs, the parameters, get
    ``__dtype__`` attributes. With ``cast_optional_params`` parameters read only in low
    precision are not cast in the graph but expected in ``target_dtype``."""
    if not isinstance(sym, Symbol):
        raise AMPError(f"amp.convert_symbol: sym must be a Symbol, got {type(sym).__name__}")
    if target_dtype not in ("float16", "bfloat16"):
        raise AMPError(f"amp.convert_symbol: target_dtype must be 'float16' or "
                      f"'bfloat16', got {target_dtype!r}")
    for what, value in (("target_dtype_ops", target_dtype_ops), ("fp32_ops", fp32_ops),
                        ("conditional_fp32_ops", conditional_fp32_ops),
                        ("excluded_sym_names", excluded_sym_names)):
        _check_names("convert_symbol", what, value)
    target = np.dtype(bfloat16 if target_dtype == "bfloat16" else np.float16)
    lp = list(list_lp16_ops(target) if target_dtype_ops is None else target_dtype_ops)
    fp32 = list(list_fp32_ops(target) if fp32_ops is None else fp32_ops)
    cond_list = list_conditional_fp32_ops(target) if conditional_fp32_ops is None \
        else conditional_fp32_ops
    conditional = {}
    for entry in cond_list:
        if not (len(entry) == 3 and isinstance(entry[0], str) and isinstance(entry[1], str)
                and isinstance(entry[2], list)):
            raise AMPError(f"amp.convert_symbol: conditional_fp32_ops entries must be "
                          f"(op, parameter, [values]), got {entry!r}")
        conditional.setdefault(entry[0], {})[entry[1]] = [str(v) for v in entry[2]]
    _check_lists(target, lp, fp32, list(conditional))
    attrs = sym.attr_dict()
    if data_names is None:
        data_names = [n for n in sym.list_inputs() if "__dtype__" not in attrs.get(n, {})]
    heads = _convert.reduce_precision(sym._outputs, target, lp, fp32,
                                      list_widest_type_cast(target), conditional,
                                      excluded_sym_names or [], data_names,
                                      cast_optional_params)
    return Symbol(heads)


def _check_lists(target, lp, fp32, conditional):
    """MXNet's rules: an op in one list only, and only ops MXNet's lists know."""
    for (a, an), (b, bn) in (((lp, "target_dtype_ops"), (fp32, "fp32_ops")),
                             ((lp, "target_dtype_ops"), (conditional, "conditional_fp32_ops")),
                             ((conditional, "conditional_fp32_ops"), (fp32, "fp32_ops"))):
        common = set(a) & set(b)
        if common:
            raise AMPError(f"amp.convert_symbol: ops cannot be in two lists; in both {an} "
                          f"and {bn}: {sorted(common)}")
    known = set(list_lp16_ops(target) + list_fp32_ops(target) + list_lp16_fp32_ops(target)
                + [c[0] for c in list_conditional_fp32_ops(target)])
    unknown = set(lp + fp32 + conditional) - known
    if unknown:
        raise AMPError(f"amp.convert_symbol: ops {sorted(unknown)} are in none of "
                      f"amp.list_lp16_ops, list_fp32_ops, list_lp16_fp32_ops, "
                      f"list_conditional_fp32_ops for {target.name}")


def _cast_params(sym, params, names):
    """``params`` with each array cast to its ``__dtype__`` in converted ``sym``."""
    attrs = sym.attr_dict()
    out = dict(params)
    for name in names:
        flag = attrs.get(name, {}).get("__dtype__", "-1")
        if name in out and flag != "-1":
            dtype = FLAG_TO_DTYPE[int(flag)]
            if np.dtype(out[name].dtype) != dtype:
                out[name] = out[name].astype(dtype)
    return out


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """``convert_symbol`` on ``sym``, and its parameters cast to the dtypes it gives them:
    ``(sym, arg_params, aux_params)``."""
    if not isinstance(arg_params, dict) or not isinstance(aux_params, dict):
        raise AMPError("amp.convert_model: arg_params and aux_params must be dicts of "
                      "name to NDArray")
    data_names = list(set(sym.list_inputs()) - set(arg_params) - set(aux_params))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    return (sym, _cast_params(sym, arg_params, sym.list_arguments()),
            _cast_params(sym, aux_params, sym.list_auxiliary_states()))


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None,
                         cast_optional_params=False):
    """A ``SymbolBlock`` running hybridized ``block``'s graph in mixed precision, with its
    parameters (cast where the converted graph says) on ``ctx`` (default: the CPU; MXNet's
    default, ``gpu(0)``, only where there is one). The block must have been hybridized
    and run once."""
    if not _is(block, "HybridBlock"):
        raise AMPError(f"amp.convert_hybrid_block: block must be a HybridBlock, got "
                      f"{type(block).__name__}")
    if not block._cached_graph:
        raise RuntimeError("amp.convert_hybrid_block: call block.hybridize() and run a "
                           "forward pass with the block before converting it")
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               [i.name for i in inputs], cast_optional_params)
    params = {name: p._reduce() for name, p in block.collect_params().items()}
    params = _cast_params(converted, params, list(params))
    ret = _gluon["SymbolBlock"](converted, inputs)
    for name, p in ret.collect_params().items():
        if name in params and p.dtype != params[name].dtype:
            p.cast(params[name].dtype)
    ret.collect_params().load_dict(params, ctx=ctx or cpu())
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None,
                             excluded_sym_names=None, cast_optional_params=False):
    """A new ``BucketingModule`` whose buckets' symbols are converted, with the current
    parameters (cast where the converted symbols say)."""
    from ...module.bucketing_module import BucketingModule
    if not isinstance(bucketing_mod, BucketingModule):
        raise AMPError(f"amp.convert_bucketing_module: expected a BucketingModule, got "
                      f"{type(bucketing_mod).__name__}")
    if not bucketing_mod._buckets or not bucketing_mod.params_initialized:
        raise AMPError("amp.convert_bucketing_module: the module has no buckets or its "
                      "parameters are not initialized; bind and init_params it first")
    arg_params, aux_params = bucketing_mod.get_params()
    syms = {}
    for key, mod in bucketing_mod._buckets.items():
        syms[key], args, auxs = convert_model(
            mod.symbol, arg_params, aux_params, target_dtype, target_dtype_ops, fp32_ops,
            conditional_fp32_ops, excluded_sym_names, cast_optional_params)
    kw = bucketing_mod._module_kwargs
    return BucketingModule.load_dict(
        syms, sym_gen=bucketing_mod._sym_gen, arg_params=args, aux_params=auxs,
        default_bucket_key=bucketing_mod._default_bucket_key, **kw)
