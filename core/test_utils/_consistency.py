"""check_consistency: one computation in several settings (contexts, dtypes, engines) agrees."""

from __future__ import annotations

import contextlib

import numpy as np

from ..base import ParamError
from ._compare import _np, assert_almost_equal
from ._gradients import _call, _grad_reqs, _require_callable
from ._inputs import default_context
from ._tolerance import get_tols

_RESERVED = ("ctx", "type_dict", "engine")


def _less_precise(dt1, dt2):
    """The less precise of two dtypes (by size); ``dt1`` when ``dt2`` is None."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


class _Setting:
    """One entry of ``ctx_list``: its callable, inputs, and the results of each pass."""

    def __init__(self, fn, spec, names, arg_params, reqs):
        from .. import ndarray as nd
        self.fn, self.spec, self.names, self.reqs = fn, spec, names, reqs
        self.ctx = spec.get("ctx") or default_context()
        types = spec.get("type_dict", {})
        self.inputs = [nd.array(arg_params[n], ctx=self.ctx, dtype=types.get(n, np.float32))
                       for n in names]
        self.outputs = []

    def _engine(self):
        from .. import engine
        name = self.spec.get("engine")
        return engine.use_engine(name) if name else contextlib.nullcontext()

    def predict(self) -> dict:
        from .. import autograd
        with self._engine(), autograd.predict_mode():
            outs = _call(self.fn, self.names, self.inputs, as_kwargs=True)
        return {f"output{i}": o for i, o in enumerate(outs)}

    def forward_train(self) -> None:
        from .. import autograd
        with self._engine():
            for name, x in zip(self.names, self.inputs):
                x.attach_grad(grad_req=self.reqs[name])
            with autograd.record(train_mode=True):
                self.outputs = _call(self.fn, self.names, self.inputs, as_kwargs=True)

    def backward(self, golden) -> dict:
        """Backward from ``golden`` (numpy head gradients); outputs and gradients by name."""
        from .. import autograd, ndarray as nd
        with self._engine():
            autograd.backward(self.outputs, head_grads=[
                nd.array(g, ctx=self.ctx, dtype=o.dtype) for g, o in zip(golden, self.outputs)])
        result = {f"output{i}": o for i, o in enumerate(self.outputs)}
        result.update({n: (None if self.reqs[n] == "null" else x.grad)
                       for n, x in zip(self.names, self.inputs)})
        return result


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Check that callable ``sym`` (keyword inputs; or a list, one per setting) gives the same
    outputs and input gradients in every setting of ``ctx_list``.

    A setting is a dict as in MXNet: ``'ctx'`` (a Context), one entry per input name giving its
    shape, optional ``'type_dict'`` {name: dtype} (default float32) and, mxnext's addition,
    optional ``'engine'`` (an engine name to run under). Inputs are ``arg_params`` or draws
    made once, in sorted name order: normal with std ``scale`` (uniform in ±0.92 ``scale`` with
    ``use_uniform``), in ``rand_type``. As in MXNet: outputs are compared in predict mode; then
    every setting runs forward in train mode and backward from the first setting's outputs
    (cast to the least precise output dtype), and outputs and gradients (unless ``grad_req``
    is 'null') are compared. The reference is the setting with the most precise first output,
    or ``ground_truth`` (``{'output0': ..., input name: gradient}``), against which every
    setting is checked. Unset tolerances: the looser default of the two dtypes compared (a
    gradient more precise than its setting's output is judged at the output's precision).
    Returns the reference: ``{'output0': NDArray, ..., input name: gradient NDArray or None}``.
    A mismatch raises AssertionError, or only prints it when ``raise_on_err`` is False.
    """
    op = "check_consistency"
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    for fn in syms:
        _require_callable(fn, op)
    if len(ctx_list) < (1 if ground_truth is not None else 2) or len(syms) != len(ctx_list):
        raise ParamError(f"{op}: argument 'ctx_list' expected at least two settings (one with "
                         f"ground_truth) and one callable per setting, got {len(ctx_list)} "
                         f"settings and {len(syms)} callables")
    if aux_params:
        raise ParamError(f"{op}: argument 'aux_params' is for Symbols, which mxnext does not "
                         f"support yet; a callable keeps its state itself")
    names = [k for k in ctx_list[0] if k not in _RESERVED]
    reqs = _grad_reqs(grad_req, names, op)
    arg_params = dict(arg_params or {})
    for name in sorted(names):
        if name not in arg_params:
            shape = ctx_list[0][name]
            draw = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=shape) if use_uniform
                    else np.random.normal(size=shape, scale=scale))
            arg_params[name] = draw.astype(rand_type)
    settings = [_Setting(fn, spec, names, {k: _np(v) for k, v in arg_params.items()}, reqs)
                for fn, spec in zip(syms, ctx_list)]

    predicted = [s.predict() for s in settings]
    primary = [np.dtype(p["output0"].dtype) for p in predicted]
    gt_idx = int(np.argmax([d.itemsize for d in primary]))

    def fail(kind, i, name, message):
        report = (f"{op}: {kind} setting {i} ({ctx_list[i]}) disagrees with the reference at "
                  f"{name}:\n{message}")
        if raise_on_err:
            raise AssertionError(report)
        print(report)

    def check(kind, i, reference, got):
        for name, arr in got.items():
            if name not in reference:
                raise ParamError(f"{op}: argument 'ground_truth' expected an entry {name!r}, "
                                 f"got keys {sorted(reference)}")
            want = reference[name]
            if want is None or arr is None:
                if want is not None or arr is not None:
                    fail(kind, i, name, "one side has a gradient, the other none")
                continue
            rt, at = rtol, atol
            mine = _less_precise(arr.dtype, primary[i])
            theirs = _less_precise(want.dtype, primary[gt_idx])
            if np.dtype(mine) != np.dtype(arr.dtype) or np.dtype(theirs) != np.dtype(want.dtype):
                rt, at = get_tols(_np(arr).astype(mine), _np(want).astype(theirs), rtol, atol)
            try:
                assert_almost_equal(arr, want, rtol=rt, atol=at, equal_nan=equal_nan,
                                    names=(f"{name}@setting{i}", f"{name}@reference"))
            except AssertionError as e:
                fail(kind, i, name, e)

    compared = [i for i in range(len(settings)) if ground_truth is not None or i != gt_idx]
    for i in compared:
        check("predict", i, ground_truth if ground_truth is not None else predicted[gt_idx],
              predicted[i])
    if reqs and all(r == "null" for r in reqs.values()):
        return ground_truth if ground_truth is not None else predicted[gt_idx]

    for s in settings:
        s.forward_train()
    least = [o.dtype for o in settings[0].outputs]
    for s in settings:
        least = [_less_precise(o.dtype, dt) for o, dt in zip(s.outputs, least)]
    golden = [o.asnumpy().astype(dt) for o, dt in zip(settings[0].outputs, least)]
    trained = [s.backward(golden) for s in settings]
    reference = ground_truth if ground_truth is not None else trained[gt_idx]
    for i in compared:
        check("train", i, reference, trained[i])
    return reference
