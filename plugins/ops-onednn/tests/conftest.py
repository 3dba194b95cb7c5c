"""Fixture ``compare``: run an op's winning kernel (ops-onednn's) and the kernel it outranks
(ops-nn's) on the same inputs and outputs."""

from __future__ import annotations

import numpy as np
import pytest
from opsdk import outranked
from opsdk.testing import make_context, op_def, parse, run_op

from mxnext_ops_onednn._dispatch import calls


def reference(op, inputs, params, req="write", outputs=None):
    """ops-nn's result: the outranked ``FCompute<cpu>`` run as ``run_op`` runs the winner."""
    from mxnext.opctx import as_req
    opdef = op_def(op)
    p = parse(opdef, params)
    outputs = [o.copy() for o in outputs] if outputs is not None else \
        [np.zeros_like(o) for o in run_op(op, [a.copy() for a in inputs], params)]
    reqs = [as_req(r) for r in req] if isinstance(req, list) else [as_req(req)] * len(outputs)
    outranked(opdef.name, "FCompute<cpu>")(make_context(opdef, p), inputs, reqs, outputs, p)
    return outputs


def compare(op, inputs, params, req="write", outputs=None, rtol=1e-4, atol=1e-4,
            path="onednn"):
    """The winner's outputs equal ops-nn's within float32 tolerance; the winner's call went
    ``path`` ('onednn' or 'fallback')."""
    before = calls[op, path]
    got = run_op(op, [a.copy() for a in inputs], params, req,
                 [o.copy() for o in outputs] if outputs is not None else None)
    assert calls[op, path] == before + 1, f"{op}: the call did not go the {path} way"
    want = reference(op, inputs, params, req, outputs)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{op} output {k}")
    return got


@pytest.fixture(name="compare")
def compare_fixture():
    return compare
