"""A oneDNN kernel with its per-call fallback: the body runs what it covers and says so; every
other call (a dtype, a layout, a parameter it does not cover, or no usable library) goes to
the kernel this one outranks (ops-nn's), with no error."""

from __future__ import annotations

from collections import Counter

import numpy as np
from opsdk import assign, cpu_share, outranked, thread_policy

from . import _dnnl

KEY = "FCompute<cpu>"
calls: Counter = Counter()
"""(op, "onednn" | "fallback") -> how many calls went that way in this process."""
wins: dict = {}
"""op (or ``op:part`` for a part of a call, see ``part_wins``) -> ``rule(ctx, inputs, params)``:
True where oneDNN was measured faster than the outranked kernel; calls outside it go there
without trying oneDNN. Read at every call, so a rule may be replaced (the tests drop them to
check the oneDNN code at small shapes)."""
_below: dict = {}


def kernel(op: str, body, rule=None):
    """``FCompute<cpu>`` for ``op``: ``body(lib, ctx, inputs, req, outputs, params)`` returns
    True when it computed the call, False to hand it to the outranked kernel; ``rule``, when
    given, becomes ``wins[op]``. It runs on the OpenMP threads of the cores
    ``opsdk.cpu_share`` gives it (those no other kernel holds)."""
    if rule is not None:
        wins[op] = rule

    def compute(ctx, inputs, req, outputs, params):
        rule = wins.get(op)     # first: a call the rule sends back pays for nothing else
        lib = _dnnl.lib() if (rule is None or rule(ctx, inputs, params)) and \
            _host(inputs, outputs) else None
        if lib is not None:
            with cpu_share(thread_policy().openmp) as n:
                lib.use_threads(n)
                done = body(lib, ctx, inputs, req, outputs, params)
            if done:
                calls[op, "onednn"] += 1
                return
        calls[op, "fallback"] += 1
        below(op)(ctx, inputs, req, outputs, params)
    compute.__name__ = compute.__qualname__ = f"onednn_{op.lstrip('_')}"
    return compute


def below(op: str):
    """The kernel of ``op`` this plugin outranks (ops-nn's)."""
    if op not in _below:
        _below[op] = outranked(op, KEY)
    return _below[op]


def part_wins(key: str, ctx, inputs, params) -> bool:
    """Whether oneDNN computes the part ``key`` (``op:part``) of a call its op's rule took:
    a gradient's parts (data, weight) were measured apart and may go different ways."""
    rule = wins.get(key)
    return rule is None or rule(ctx, inputs, params)


def _host(inputs, outputs) -> bool:
    """Every array is a numpy array in host memory (a device running cpu kernels on its own
    arrays, such as testdev, gets the outranked kernel)."""
    for a in (*inputs, *outputs):
        if type(a) is not np.ndarray:
            return False
    return True


def plain_f32(*arrays) -> bool:
    """Every array is float32 and C-contiguous (what the plans read and write)."""
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)


def target(out, req, inputs):
    """Where to compute a result for ``out``: ``out`` itself when it is overwritten, plain
    float32 and shares no memory with an input; else a new array (``finish`` assigns it)."""
    if req in (1, 2) and plain_f32(out) and not any(np.may_share_memory(out, a)
                                                     for a in inputs):
        return out
    return np.empty(out.shape, np.float32)


def finish(out, req, result) -> None:
    """``result`` into ``out`` as ``req`` says (nothing when it was computed in place)."""
    if result is not out:
        assign(out, req, result)
