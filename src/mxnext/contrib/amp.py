"""MXNet's ``mx.contrib.amp`` (automatic mixed precision), importable so that training
scripts which import it run; mxnext has no mixed-precision graph rewriting or loss
scaling, so each of its calls raises an ``MXNetError`` saying so."""

from __future__ import annotations

from .._runtime.base import MXNetError

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_symbol", "convert_bucketing_module",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params"]


def _unsupported(name):
    def call(*args, **kwargs):
        raise MXNetError(f"mx.contrib.amp.{name}: automatic mixed precision is not supported "
                         f"by mxnext (it casts no graph to float16/bfloat16 and scales no "
                         f"loss); train in float32 without amp")
    call.__name__ = call.__qualname__ = name
    return call


for _name in __all__:
    globals()[_name] = _unsupported(_name)
del _name
