"""The converter table: MXNet op name -> function writing the op's ONNX nodes.

A converter is ``fn(b, n)``: ``b`` is the ``_graph.Builder`` (emits nodes and constants,
knows the opset), ``n`` the ``_graph.OpNode`` being converted (its parsed attributes, its
inputs' and outputs' ONNX names, shapes and dtypes). It writes ``n.outputs``.
"""

from __future__ import annotations

import ast

__all__ = ["CONVERTERS", "converts", "parse_attr"]

# op name -> (lowest opset it exports to, converter)
CONVERTERS: dict = {}


def converts(*names: str, opset: int = 13):
    """Register the decorated converter for MXNet ops ``names`` from ``opset`` on."""
    def register(fn):
        for name in names:
            CONVERTERS[name] = (opset, fn)
        return fn
    return register


_WORDS = {"true": True, "false": False, "none": None}


def parse_attr(text: str):
    """An MXNet attribute string as a Python value: ``"(3, 3)"`` -> (3, 3), ``"True"`` ->
    True, ``"2"`` -> 2, ``"relu"`` -> "relu"."""
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
