"""Whole-Symbol helpers of MXNet's tests: ``check_speed`` (seconds per executor run) and
``same_symbol_structure`` (the op of each graph node compared)."""

from __future__ import annotations

import json
import time

import numpy as np

from ._inputs import default_context

__all__ = ["check_speed", "same_symbol_structure"]


def _bind(sym, location, ctx, grad_req, kwargs):
    """An executor of ``sym`` with its arguments filled from ``location`` (None: N(0, 1)
    values drawn from numpy's global generator for every argument)."""
    if location is None:
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape, scale=1.0)
                    for k, a in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise ValueError(f"check_speed: argument 'location' expected a dict of argument "
                             f"name -> array, got {type(location).__name__}")
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req,
                              **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = value.astype(exe.arg_dict[name].dtype)
    return exe


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Mean seconds of one run of ``sym``'s executor over ``N`` runs after a warm-up:
    forward and backward (from the outputs as head gradients) for ``typ="whole"``,
    inference forward for ``"forward"``. ``kwargs`` are ``simple_bind``'s shapes when
    ``location`` is None."""
    from .. import ndarray as nd
    if typ not in ("whole", "forward"):
        raise ValueError(f'check_speed: argument \'typ\' expected "whole" or "forward", '
                         f"got {typ!r}")
    exe = _bind(sym, location, ctx or default_context(), grad_req or "write", kwargs)
    train = typ == "whole"

    def run():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    run()
    for output in exe.outputs:
        output.wait_to_read()
    tic = time.time()
    for _ in range(N):
        run()
    nd.waitall()
    return (time.time() - tic) / N


def same_symbol_structure(sym1, sym2) -> bool:
    """Whether the two graphs' nodes, paired in order by ``zip`` as MXNet pairs them, have the
    same ops (variables are ``"null"``); attributes and names are not compared, and the
    longer graph's extra nodes are not looked at."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(nodes1, nodes2))
