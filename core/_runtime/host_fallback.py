"""The opt-in host round trip for ops a device has no kernel for.

A device runs an op's ``FCompute<cpu>`` body on its own arrays through ``ctx.xp``; a body that
calls numpy on them fails (cupy refuses implicit host copies with ``TypeError``) and the op
then raises naming itself and the device: nothing crosses the host silently. With
``MXNEXT_DEVICE_HOST_FALLBACK=1`` such an op runs on the host instead: its inputs and the
current values of its outputs are copied to numpy, the body runs there, the outputs are
copied back (one warning per op). Ops asking for resources (random numbers, scratch space)
keep failing: those live on the device.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

__all__ = ["ENV", "enabled", "run_on_host"]

ENV = "MXNEXT_DEVICE_HOST_FALLBACK"
_warned: set = set()


def enabled() -> bool:
    return os.environ.get(ENV, "0").strip().lower() not in ("", "0", "false", "off")


def run_on_host(fcompute, name, device_type, ctx, inputs, req, outputs, params) -> bool:
    """Run ``fcompute`` on host copies and write its outputs back; False (nothing done)
    when the op uses device resources."""
    from . import device as _device
    from .opctx import OpContext
    if ctx is not None and ctx.requested:
        return False
    dev = _device.get(device_type)
    where = ctx.ctx if ctx is not None else None
    device_id = where.device_id if where is not None else 0
    host_in = [np.asarray(dev.to_host(a)) for a in inputs]
    host_out = [np.array(dev.to_host(o)) for o in outputs]    # 'add' and in-place read them
    fcompute(OpContext(ctx.is_train if ctx is not None else False,
                       ctx.run_ctx if ctx is not None else None, (), np),
             host_in, req, host_out, params)
    for o, h, r in zip(outputs, host_out, req):
        if r:
            dev.copy(o, dev.from_host(h, device_id))
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"Operator {name!r} has no {device_type} kernel: it runs on the host, "
                      f"its arrays copied there and back ({ENV}=1)", RuntimeWarning,
                      stacklevel=2)
    return True
