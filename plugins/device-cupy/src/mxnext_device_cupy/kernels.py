"""Dedicated ``FCompute<gpu>`` kernels where the generic xp body is slow or leaves the device;
every other op runs its ``FCompute<cpu>`` body with ``ctx.xp`` = cupy. Importing this module
imports neither cupy nor cudnn: that happens when a kernel first runs."""

from __future__ import annotations

from opsdk import extend_op

from . import batch_norm, cudnn_conv, fused_updates, pooling, softmax

extend_op("Convolution").set_attr("FCompute<gpu>", cudnn_conv.forward)
extend_op("_backward_Convolution").set_attr("FCompute<gpu>", cudnn_conv.backward)

for _op, _fn in (("sgd_update", fused_updates.sgd), ("sgd_mom_update", fused_updates.sgd_mom),
                 ("adam_update", fused_updates.adam),
                 ("multi_sgd_update", fused_updates.multi_sgd),
                 ("multi_sgd_mom_update", fused_updates.multi_sgd_mom)):
    extend_op(_op).set_attr("FCompute<gpu>", _fn)

for _op in batch_norm.OPS:
    extend_op(_op).set_attr("FCompute<gpu>", batch_norm.forward[_op])
    extend_op(f"_backward_{_op}").set_attr("FCompute<gpu>", batch_norm.backward[_op])

extend_op("Pooling").set_attr("FCompute<gpu>", pooling.forward)
extend_op("_backward_Pooling").set_attr("FCompute<gpu>", pooling.backward)

for _op in softmax.forward:
    extend_op(_op).set_attr("FCompute<gpu>", softmax.forward[_op])
    extend_op(f"_backward_{_op}").set_attr("FCompute<gpu>", softmax.backward[_op])
extend_op("SoftmaxOutput").set_attr("FCompute<gpu>", softmax.softmax_output)
