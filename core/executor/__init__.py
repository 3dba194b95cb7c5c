"""The graph executor (DESIGN.md §7): passes over a Symbol's graph (shape and type
inference, gradient, memory plan) and the ``Executor`` that runs it as pre-built engine
operators."""

from ._infer import merge_dims, merge_dtype

__all__ = ["merge_dims", "merge_dtype"]
