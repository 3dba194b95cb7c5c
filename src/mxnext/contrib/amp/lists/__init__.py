"""MXNet's op lists for automatic mixed precision: ``symbol_fp16`` and ``symbol_bf16``."""

from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_fp16", "symbol_bf16"]
