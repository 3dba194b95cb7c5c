"""MXNet's ``mx.contrib.amp``: automatic mixed precision in float16 and bfloat16 (see
``amp.amp``); ``from mxnet.contrib.amp import amp`` and ``amp.lists`` work as in MXNet."""

from . import amp, lists, loss_scaler
from .amp import (bfloat16, convert_bucketing_module, convert_hybrid_block, convert_model,
                  convert_symbol, init, init_trainer, list_conditional_fp32_ops,
                  list_fp32_ops, list_loss_output_functions, list_lp16_fp32_ops,
                  list_lp16_ops, list_lp16_use_fp32_params, list_widest_type_cast,
                  scale_loss, unscale)
from .loss_scaler import LossScaler

__all__ = ["amp", "lists", "loss_scaler", "LossScaler", "bfloat16", "init", "init_trainer",
           "scale_loss", "unscale", "convert_symbol", "convert_model", "convert_hybrid_block",
           "convert_bucketing_module", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops", "list_widest_type_cast", "list_loss_output_functions",
           "list_lp16_use_fp32_params"]
