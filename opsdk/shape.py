"""Shape and type rules for elementwise ops (MXNet's ``ElemwiseShape<n_in, n_out>``).

Each helper returns an ``FInferShape`` / ``FInferType`` callable. Registering it
on an op binds the op's name, so its errors say which op failed.
"""

from __future__ import annotations

import numpy as np

from mxnext.base import ShapeError, TypeInferError

__all__ = ["ElemwiseShape", "ElemwiseType", "merge_out_shapes"]


def merge_out_shapes(op: str, inferred, given) -> list:
    """Inferred output shapes with unknown ones taken from ``given``; ``ShapeError`` when
    both are known and differ (a caller-fixed output shape the inputs contradict)."""
    merged = list(inferred)
    for k, g in enumerate(list(given)[:len(merged)]):
        if g is None:
            continue
        if merged[k] is None:
            merged[k] = g
        elif tuple(merged[k]) != tuple(g):
            raise ShapeError(f"Operator {op!r}: output {k} has shape {tuple(g)}, but the "
                             f"inputs give {tuple(merged[k])}")
    return merged


class _ElemwiseRule:
    __slots__ = ("n_in", "n_out", "op")
    what = ""
    error = ShapeError

    def __init__(self, n_in: int = -1, n_out: int = 1, op: str = "?"):
        self.n_in, self.n_out, self.op = n_in, n_out, op

    def bind_op(self, name: str):
        return type(self)(self.n_in, self.n_out, name)

    def _same(self, a, b) -> bool:
        return a == b

    def __call__(self, params, ins, outs):
        if self.n_in >= 0 and len(ins) != self.n_in:
            raise self.error(f"Operator {self.op!r}: expected {self.n_in} input(s), got {len(ins)}")
        known = where = None
        for kind, items in (("input", ins), ("output", outs)):
            for i, v in enumerate(items):
                if v is None:
                    continue
                if known is None:
                    known, where = v, f"{kind} {i}"
                elif not self._same(v, known):
                    raise self.error(f"Operator {self.op!r}: {self.what} of {kind} {i} is "
                                     f"{self._fmt(v)}, expected {self._fmt(known)} (as {where})")
        if known is None:
            return list(ins), list(outs)
        known = self._norm(known)
        return [known] * len(ins), [known] * len(outs)


class ElemwiseShape(_ElemwiseRule):
    """All inputs and outputs share one shape; unknown (None) ones are filled."""

    __slots__ = ()
    what = "shape"
    error = ShapeError

    @staticmethod
    def _norm(v):
        return tuple(v)

    @staticmethod
    def _fmt(v):
        return str(tuple(v))


class ElemwiseType(_ElemwiseRule):
    """All inputs and outputs share one dtype; unknown (None) ones are filled."""

    __slots__ = ()
    what = "dtype"
    error = TypeInferError

    def _same(self, a, b) -> bool:
        return np.dtype(a) == np.dtype(b)

    @staticmethod
    def _norm(v):
        return np.dtype(v)

    @staticmethod
    def _fmt(v):
        return np.dtype(v).name
