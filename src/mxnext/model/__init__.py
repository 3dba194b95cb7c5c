"""MXNet's ``mx.model``: checkpoints (``save_checkpoint``, ``load_checkpoint``,
``load_params``) and the older training API ``FeedForward``, loaded on first use."""

from .._checkpoint import load_checkpoint, load_params, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_params", "FeedForward",
           "BatchEndParam"]


def __getattr__(name):
    # FeedForward trains through mx.mod, which a program that only reads checkpoints
    # need not import
    if name == "FeedForward":
        from .feedforward import FeedForward
        return FeedForward
    if name == "BatchEndParam":
        from ..module.base_module import BatchEndParam
        return BatchEndParam
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
