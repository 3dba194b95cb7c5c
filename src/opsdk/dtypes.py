"""Which dtypes an op's inputs take, declared by its ``FInferType`` rule.

MXNet's floating-point-only kernels (``MSHADOW_REAL_TYPE_SWITCH``) fail only when they run
("This operation only support floating point types"); here the op's type rule rejects an
integer input instead, so ``mx.nd`` and ``mx.sym`` both stop before anything computes, with
one message naming the op, the input, the dtype given and the dtypes accepted.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from mxnext import ops as registry
from mxnext.base import OpNotFound, TypeInferError

__all__ = ["FLOAT_DTYPES", "AMP_FLOAT_DTYPES", "FloatOnly"]

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
AMP_FLOAT_DTYPES = FLOAT_DTYPES + (np.dtype(ml_dtypes.bfloat16),)
"""The floating dtypes and bfloat16 (``ml_dtypes``), for the ops ``mx.contrib.amp`` runs in
bfloat16 (MXNet runs those through oneDNN on the CPU)."""
_BFLOAT16 = AMP_FLOAT_DTYPES[-1]


def _names(dtypes) -> str:
    names = [d.name for d in dtypes if d != _BFLOAT16]
    text = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return text + (" (or bfloat16, for mx.contrib.amp)" if _BFLOAT16 in dtypes else "")


class FloatOnly:
    """An ``FInferType`` rule: ``rule`` whose ``inputs`` (indices, default all) must have one
    of the ``accepted`` dtypes (default the floating ones), checked on the known input dtypes
    and again on those ``rule`` fills in from the outputs."""

    __slots__ = ("rule", "inputs", "accepted", "op")

    def __init__(self, rule, inputs=None, accepted=FLOAT_DTYPES, op: str = "?"):
        self.rule, self.op = rule, op
        self.inputs = None if inputs is None else tuple(inputs)
        self.accepted = tuple(np.dtype(d) for d in accepted)

    def bind_op(self, name: str):
        bind = getattr(self.rule, "bind_op", None)
        return type(self)(bind(name) if bind else self.rule, self.inputs, self.accepted, name)

    def __call__(self, params, ins, outs):
        self._check(params, ins)
        ins, outs = self.rule(params, ins, outs)
        self._check(params, ins)
        return ins, outs

    def _check(self, params, ins):
        for i in range(len(ins)) if self.inputs is None else self.inputs:
            if i < len(ins) and ins[i] is not None and np.dtype(ins[i]) not in self.accepted:
                raise TypeInferError(f"Operator {self.op!r}: input {self._name(params, i)!r} has "
                                     f"dtype {np.dtype(ins[i]).name}, expected "
                                     f"{_names(self.accepted)}")

    def _name(self, params, i):
        try:
            return registry.get(self.op).list_input_names(params)[i]
        except OpNotFound:   # a rule not registered on an op: its index names the input
            return i
