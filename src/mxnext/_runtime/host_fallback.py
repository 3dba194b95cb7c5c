"""The opt-in host round trip (docs/internals.md, "Devices"): with
``MXNEXT_DEVICE_HOST_FALLBACK=1`` an op whose generic body cannot run on a device's arrays
(cupy refuses implicit host copies) runs on host copies of them, written back, warning once
per op; without it the op fails naming itself and the device. Ops using device resources
(random numbers, scratch space) keep failing."""

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
    if ctx is None or ctx.requested:
        return False
    dev = _device.get(device_type)
    device_id = ctx.ctx.device_id if ctx.run_ctx is not None else 0
    host_out = [np.array(dev.to_host(o)) for o in outputs]    # 'add' and in-place read them
    fcompute(type(ctx)(ctx.is_train, ctx.run_ctx, (), np),      # an OpContext on the host
             [np.asarray(dev.to_host(a)) for a in inputs], req, host_out, params)
    for o, h, r in zip(outputs, host_out, req):
        if r:
            dev.copy(o, dev.from_host(h, device_id))
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"Operator {name!r} has no {device_type} kernel: it runs on the host, "
                      f"its arrays copied there and back ({ENV}=1)", RuntimeWarning,
                      stacklevel=2)
    return True
