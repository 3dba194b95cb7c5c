"""Shape and type rules: MXNet's partial shapes, ``SHAPE_ASSIGN_CHECK`` and the elementwise
rules (``ElemwiseShape<n_in, n_out>``).

Shapes may be partial, as in MXNet: outside ``np_shape`` semantics a dimension of 0 is not
known yet (``(0, 784)``), under ``np_shape`` the unknown dimension is -1 (and 0 is a real,
empty dimension). A rule fills in what it can: it merges shapes dimension by dimension
(``merge_shape``, ``assign_shape``), skips a check whose dimensions are unknown, and leaves
an output dimension unknown when it depends on an unknown one (``dim_op``, ``dims_prod``).

Each elementwise helper returns an ``FInferShape`` / ``FInferType`` callable. Registering it
on an op binds the op's name, so its errors say which op failed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mxnext.base import ShapeError, TypeInferError
from mxnext._runtime.graph.infer import merge_dims, merge_dtype
from mxnext.util import is_np_shape

__all__ = ["ElemwiseShape", "ElemwiseType", "merge_out_shapes", "unknown_dim", "dim_known",
           "shape_known", "merge_shape", "assign_shape", "dim_op", "dims_prod", "fmt_shape",
           "used_taps"]


def unknown_dim() -> int:
    """The value of an unknown dimension: 0 in MXNet's legacy semantics, -1 under np_shape."""
    return -1 if is_np_shape() else 0


def dim_known(d) -> bool:
    """Whether dimension ``d`` is known (legacy: > 0; np_shape: >= 0)."""
    return d >= 0 if is_np_shape() else d > 0


def shape_known(shape) -> bool:
    """Whether ``shape`` (a tuple or None) is known in every dimension."""
    if shape is None:
        return False
    lo = 0 if is_np_shape() else 1
    return all(d >= lo for d in shape)


def fmt_shape(shape) -> str:
    return "unknown" if shape is None else str(tuple(shape))


def merge_shape(op: str, old, new, what: str = "shape"):
    """``old`` and ``new`` merged dimension by dimension (either may be None, either may have
    unknown dimensions); ``ShapeError`` naming ``op`` and ``what`` when they conflict."""
    if new is None:
        return None if old is None else tuple(old)
    merged = merge_dims(None if old is None else tuple(old), new, unknown_dim())
    if merged is not None:
        return merged
    old, new = tuple(old), tuple(new)
    raise ShapeError(f"Operator {op!r}: {what} has shape {old}, expected {new}")


def assign_shape(op: str, shapes: list, i: int, want, what: str) -> None:
    """MXNet's ``SHAPE_ASSIGN_CHECK``: ``shapes[i]`` merged with ``want`` in place."""
    shapes[i] = merge_shape(op, shapes[i], want, what)


def dim_op(fn, *dims) -> int:
    """``fn(*dims)`` when every dimension is known, else the unknown dimension."""
    return fn(*dims) if all(dim_known(d) for d in dims) else unknown_dim()


def dims_prod(dims) -> int:
    """The product of ``dims``, unknown when one of them is (1 for none)."""
    n = 1
    for d in dims:
        if not dim_known(d):
            return unknown_dim()
        n *= d
    return n


def merge_out_shapes(op: str, inferred, given) -> list:
    """Inferred output shapes merged with the ``given`` (caller-fixed) ones dimension by
    dimension; ``ShapeError`` where both know a dimension and differ."""
    merged = list(inferred)
    for k, g in enumerate(list(given)[:len(merged)]):
        merged[k] = merge_shape(op, g, merged[k], f"output {k}")
    return merged


class _ElemwiseRule:
    __slots__ = ("n_in", "n_out", "op")
    what = ""
    error = ShapeError

    def __init__(self, n_in: int = -1, n_out: int = 1, op: str = "?"):
        self.n_in, self.n_out, self.op = n_in, n_out, op

    def bind_op(self, name: str):
        return type(self)(self.n_in, self.n_out, name)

    def __call__(self, params, ins, outs):
        if self.n_in >= 0 and len(ins) != self.n_in:
            raise self.error(f"Operator {self.op!r}: expected {self.n_in} input(s), got {len(ins)}")
        known = where = None
        for kind, items in (("input", ins), ("output", outs)):
            for i, v in enumerate(items):
                if v is None:
                    continue
                merged = self._merge(known, v)
                if merged is None:
                    raise self.error(f"Operator {self.op!r}: {self.what} of {kind} {i} is "
                                     f"{self._fmt(v)}, expected {self._fmt(known)} (as {where})")
                known, where = merged, where or f"{kind} {i}"
        if known is None:
            return list(ins), list(outs)
        return [known] * len(ins), [known] * len(outs)


class ElemwiseShape(_ElemwiseRule):
    """All inputs and outputs share one shape, merged from the partial ones they have."""

    __slots__ = ()
    what = "shape"
    error = ShapeError

    @staticmethod
    def _merge(known, v):
        return merge_dims(known, v, unknown_dim())

    @staticmethod
    def _fmt(v):
        return str(tuple(v))


class ElemwiseType(_ElemwiseRule):
    """All inputs and outputs share one dtype; unknown (None) ones are filled."""

    __slots__ = ()
    what = "dtype"
    error = TypeInferError

    _merge = staticmethod(merge_dtype)

    @staticmethod
    def _fmt(v):
        return np.dtype(v).name


@lru_cache(maxsize=1024)
def used_taps(sizes, kernel, stride, dilate, pad, most=0.25):
    """The kernel taps of a convolution that read its data, where few of them do.

    For spatial ``sizes`` and zero ``pad`` on both sides, per axis ``(first, stop, lo, hi)``:
    the taps ``first:stop`` reach the data at some output position, and ``lo``/``hi`` pad
    the same convolution with its kernel cut to them (same output size; a negative pad
    crops). Cutting changes no value: the other taps only ever multiply padding zeros (a
    3x3 kernel over a 1x1 image reads its centre tap only). None unless the kept taps are at
    most ``most`` of the kernel's: the cut weight is a strided copy, which cost more than
    it saved where 4 of 9 taps stayed (a stride-2 3x3 over 2x2 images, 256 to 512 channels:
    1.26 ms against 0.49 uncut) and paid where 1 of 9 did (0.28 against 0.94 ms)."""
    axes, kept = [], 1
    for n, k, s, d, p in zip(sizes, kernel, stride, dilate, pad):
        out = (n + 2 * p - d * (k - 1) - 1) // s + 1
        used = []
        for t in range(k):
            first = max(0, -((t * d - p) // s))      # the first output whose input is >= 0
            if first < out and first * s + t * d - p < n:
                used.append(t)
        if not used:
            return None
        t0, t1 = used[0], used[-1] + 1
        lo = p - t0 * d
        axes.append((t0, t1, lo, (out - 1) * s + d * (t1 - t0 - 1) + 1 - n - lo))
        kept *= (t1 - t0) / k
    return tuple(axes) if kept <= most else None
