"""cupy, imported on first use; without it (or without a CUDA device) every use says why."""

from __future__ import annotations

from mxnext.base import MXNetError

__all__ = ["cupy", "unusable", "generic"]

_module = None


def cupy():
    """The cupy module; ``MXNetError`` naming the reason when it cannot be imported."""
    global _module
    if _module is None:
        try:
            import cupy as cp
        except Exception as e:   # ImportError, or a broken CUDA install failing at import
            raise MXNetError(f"no CUDA device: cupy cannot be imported ({type(e).__name__}: "
                             f"{e}); install mxnext-device-cupy[cuda12] or [cuda13]") from e
        _module = cp
    return _module


def unusable(err) -> MXNetError:
    return MXNetError(f"no CUDA device: {type(err).__name__}: {err}")


def generic(name, ctx, inputs, req, outputs, params):
    """Run op ``name``'s generic body (its ``FCompute<cpu>``, on cupy through ``ctx.xp``): what
    a dedicated kernel does not cover."""
    from mxnext import ops as registry
    registry.get(name).get_attr("FCompute<cpu>")(ctx, inputs, req, outputs, params)
