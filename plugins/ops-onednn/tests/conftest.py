"""Fixture ``compare``: run an op's winning kernel (ops-onednn's) and the kernel it outranks
(ops-nn's) on the same inputs and outputs."""

from __future__ import annotations

import numpy as np
import pytest
from opsdk import outranked
from opsdk.testing import make_context, op_def, parse, run_op

from mxnext_ops_onednn._dispatch import calls


def reference(op, inputs, params, req="write", outputs=None, is_train=True):
    """ops-nn's result: the outranked ``FCompute<cpu>`` run as ``run_op`` runs the winner."""
    from mxnext.opctx import as_req
    opdef = op_def(op)
    p = parse(opdef, params)
    outputs = [o.copy() for o in outputs] if outputs is not None else \
        [np.zeros_like(o) for o in run_op(op, [a.copy() for a in inputs], params,
                                          is_train=is_train)]
    reqs = [as_req(r) for r in req] if isinstance(req, list) else [as_req(req)] * len(outputs)
    outranked(opdef.name, "FCompute<cpu>")(make_context(opdef, p, is_train), inputs, reqs,
                                           outputs, p)
    return outputs


def compare(op, inputs, params, req="write", outputs=None, rtol=1e-4, atol=1e-4,
            path="onednn", is_train=True, mutated=None):
    """The winner's outputs equal ops-nn's within float32 tolerance; the winner's call went
    ``path`` ('onednn' or 'fallback'). ``mutated`` lists the inputs the op updates in place
    (a BatchNorm gradient's moving statistics): those must agree too, and come after the
    outputs in the result."""
    before = calls[op, path]
    mine, theirs = [a.copy() for a in inputs], [a.copy() for a in inputs]
    got = run_op(op, mine, params, req,
                 [o.copy() for o in outputs] if outputs is not None else None, is_train=is_train)
    assert calls[op, path] == before + 1, f"{op}: the call did not go the {path} way"
    want = reference(op, theirs, params, req, outputs, is_train)
    for i in mutated or ():
        got, want = [*got, mine[i]], [*want, theirs[i]]
    for k, (g, w) in enumerate(zip(got, want)):
        # atol scales with the output's magnitude: two float32 sums in different orders of
        # terms about 20 in size differ by 1e-4 where they cancel to near 0
        scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale,
                                   err_msg=f"{op} output {k}")
    return got


@pytest.fixture(name="compare")
def compare_fixture():
    return compare


@pytest.fixture(name="no_rules")
def no_rules_fixture(monkeypatch):
    """oneDNN takes every call it covers, whatever the measured rules (``_dispatch.wins``)
    would send to ops-nn: the small shapes of the tests check its code."""
    from mxnext import ops as registry

    from mxnext_ops_onednn import _dispatch
    from mxnext_ops_onednn.plugin import COVERED
    for op in COVERED:          # import the kernel modules first: they set their rules
        registry.get(op).attrs["FCompute<cpu>"]
    monkeypatch.setattr(_dispatch, "wins", {})
