"""check_consistency: one computation in several settings (contexts, dtypes, engines) agrees."""

from __future__ import annotations

import contextlib

import numpy as np

from .._runtime.base import ParamError
from ._args import fill, grad_reqs, is_symbol
from ._callable import call, output_names
from ._compare import _np, assert_almost_equal
from ._inputs import default_context
from ._tolerance import get_tols

_RESERVED = ("ctx", "type_dict", "engine")


def _less_precise(dt1, dt2):
    """The less precise of two dtypes (by size); ``dt1`` when ``dt2`` is None."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


class _Setting:
    """One entry of ``ctx_list``: where it runs (``ctx``, optional ``engine``). ``engines``
    holds one engine per name for the whole check, so an executor's operators are made and
    run on the same engine."""

    def __init__(self, spec, engines, op):
        from .._runtime import engine
        self.spec = spec
        self.ctx = spec.get("ctx") or default_context()
        name = spec.get("engine")
        if name is not None and name not in engines:
            if name not in engine.ENGINES:
                raise ParamError(f"{op}: setting entry 'engine' expected one of "
                                 f"{list(engine.ENGINES)}, got {name!r}")
            engines[name] = engine.ENGINES[name]()
        self._engine = engines.get(name)

    def engine(self):
        from .._runtime import engine
        return engine.use_engine(self._engine) if self._engine else contextlib.nullcontext()


class _Bound(_Setting):
    """A Symbol bound by ``simple_bind`` with the setting's shapes and ``type_dict``."""

    def __init__(self, sym, spec, engines, op, grad_req):
        super().__init__(spec, engines, op)
        self.output_names, self.arg_names = sym.list_outputs(), sym.list_arguments()
        shapes_and_types = {k: v for k, v in spec.items() if k not in ("ctx", "engine")}
        with self.engine():
            self.executor = sym.simple_bind(self.ctx, grad_req=grad_req, **shapes_and_types)

    def load(self, arg_params, aux_params, grad_req):
        exe = self.executor
        for name, arr in exe.arg_dict.items():
            fill(arr, arg_params[name])
        for name, arr in exe.aux_dict.items():
            fill(arr, aux_params[name])
        if isinstance(grad_req, str) and grad_req == "add":     # accumulate from zero
            for arr in exe.grad_dict.values():
                if arr is not None:
                    fill(arr, 0)

    def forward(self, is_train) -> list:
        with self.engine():
            return self.executor.forward(is_train=is_train)

    def backward(self, golden) -> dict:
        from .. import ndarray as nd
        exe = self.executor
        with self.engine():
            exe.backward([nd.array(g, ctx=self.ctx, dtype=o.dtype)
                          for g, o in zip(golden, exe.outputs)])
        return {n: exe.grad_dict.get(n) for n in self.arg_names}


class _Run(_Setting):
    """A Python callable, called with keyword NDArrays (dtypes from ``type_dict``, float32
    otherwise); its outputs are named "output0", ...."""

    def __init__(self, fn, spec, engines, op, names, reqs):
        super().__init__(spec, engines, op)
        self.fn, self.arg_names, self.reqs = fn, names, reqs
        self.inputs, self.outputs, self.output_names = [], [], []

    def load(self, arg_params, aux_params, grad_req):
        from .. import ndarray as nd
        types = self.spec.get("type_dict", {})
        self.inputs = [nd.array(_np(arg_params[n]), ctx=self.ctx, dtype=types.get(n, np.float32))
                       for n in self.arg_names]

    def forward(self, is_train) -> list:
        from .. import autograd
        with self.engine():
            if is_train:
                for name, x in zip(self.arg_names, self.inputs):
                    x.attach_grad(grad_req=self.reqs[name])
                with autograd.record(train_mode=True):
                    self.outputs = call(self.fn, self.arg_names, self.inputs, as_kwargs=True)
            else:
                with autograd.predict_mode():
                    self.outputs = call(self.fn, self.arg_names, self.inputs, as_kwargs=True)
        self.output_names = output_names(len(self.outputs))
        return self.outputs

    def backward(self, golden) -> dict:
        from .. import autograd, ndarray as nd
        with self.engine():
            autograd.backward(self.outputs, head_grads=[
                nd.array(g, ctx=self.ctx, dtype=o.dtype) for g, o in zip(golden, self.outputs)])
        return {n: (None if self.reqs[n] == "null" else x.grad)
                for n, x in zip(self.arg_names, self.inputs)}


def _settings(syms, ctx_list, engines, grad_req, aux_params, op):
    """The settings, the shape of every argument and the names of the auxiliary states (from
    the first setting)."""
    if all(is_symbol(s, op) for s in syms):
        settings = [_Bound(s, spec, engines, op, grad_req) for s, spec in zip(syms, ctx_list)]
        first = settings[0]
        for i, s in enumerate(settings[1:], 1):
            if (s.arg_names, s.output_names) != (first.arg_names, first.output_names):
                raise ParamError(f"{op}: argument 'sym' expected symbols with the same "
                                 f"arguments and outputs; symbol {i} has {s.arg_names} -> "
                                 f"{s.output_names}, symbol 0 {first.arg_names} -> "
                                 f"{first.output_names}")
        arrays = first.executor
        return settings, {n: a.shape for n, a in arrays.arg_dict.items()}, list(arrays.aux_dict)
    if any(is_symbol(s, op) for s in syms):
        raise ParamError(f"{op}: argument 'sym' expected Symbols or callables, not a mix")
    if aux_params:
        raise ParamError(f"{op}: argument 'aux_params' is for Symbols; a callable keeps its "
                         f"state itself")
    names = [k for k in ctx_list[0] if k not in _RESERVED]
    reqs = grad_reqs(grad_req, names, op)
    reqs = {n: reqs.get(n, "null") for n in names}
    settings = [_Run(fn, spec, engines, op, names, reqs) for fn, spec in zip(syms, ctx_list)]
    return settings, {n: ctx_list[0][n] for n in names}, []


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Check that ``sym`` (a Symbol or a callable taking keyword inputs; or a list, one per
    setting) gives the same outputs and argument gradients in every setting of ``ctx_list``.

    A setting is a dict as in MXNet: ``'ctx'`` (a Context), the shape of each input by name
    (for a Symbol, what ``simple_bind`` needs to infer the rest), optional ``'type_dict'``
    {name: dtype} and, mxnext's addition, optional ``'engine'`` (an engine name to run under).
    Arguments are ``arg_params``, else drawn once, in sorted name order: normal with std
    ``scale`` (uniform in ±0.92 ``scale`` with ``use_uniform``), in ``rand_type``; a Symbol's
    auxiliary states are ``aux_params``, else 0. As in MXNet the draws are added to the
    ``arg_params`` and ``aux_params`` dicts passed in.

    As in MXNet: outputs are compared in predict mode; then, unless ``grad_req`` is 'null',
    every setting runs forward in train mode and backward from the first setting's outputs
    (cast to the least precise output dtype), and outputs and gradients are compared. The
    reference is the setting with the most precise first output, or ``ground_truth`` (a dict
    by output and argument name), against which every setting is checked. Unset tolerances
    (``rtol``/``atol``: a number or a dict by dtype) are the looser default of the two dtypes
    compared; in training, a gradient more precise than its setting's first output is judged
    at that output's precision. Returns the reference: ``{output name: NDArray, ..., argument
    name: gradient NDArray or None}``. A mismatch raises AssertionError, or only prints it
    when ``raise_on_err`` is False.
    """
    op = "check_consistency"
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(ctx_list) < (1 if ground_truth is not None else 2) or len(syms) != len(ctx_list):
        raise ParamError(f"{op}: argument 'ctx_list' expected at least two settings (one with "
                         f"ground_truth) and one symbol or callable per setting, got "
                         f"{len(ctx_list)} settings and {len(syms)} symbols or callables")
    engines = {}
    try:
        settings, arg_shapes, aux_names = _settings(syms, ctx_list, engines, grad_req,
                                                    aux_params, op)
        arg_params = {} if arg_params is None else arg_params
        aux_params = {} if aux_params is None else aux_params
        for name in sorted(arg_shapes):
            if name not in arg_params:
                shape = arg_shapes[name]
                draw = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=shape)
                        if use_uniform else np.random.normal(size=shape, scale=scale))
                arg_params[name] = draw.astype(rand_type)
        for name in aux_names:
            aux_params.setdefault(name, 0)
        for s in settings:
            s.load(arg_params, aux_params, grad_req)
        judge = _Judge(op, ctx_list, rtol, atol, equal_nan, raise_on_err)
        return _run(settings, judge, grad_req, ground_truth)
    finally:
        for e in engines.values():
            e.shutdown()


class _Judge:
    """Compares a setting's results with the reference, reporting as ``raise_on_err`` says."""

    def __init__(self, op, ctx_list, rtol, atol, equal_nan, raise_on_err):
        self.op, self.ctx_list, self.rtol, self.atol = op, ctx_list, rtol, atol
        self.equal_nan, self.raise_on_err = equal_nan, raise_on_err
        self.primary, self.gt_idx = [], 0

    def fail(self, kind, i, name, message):
        report = (f"{self.op}: {kind} setting {i} ({self.ctx_list[i]}) disagrees with the "
                  f"reference at {name}:\n{message}")
        if self.raise_on_err:
            raise AssertionError(report)
        print(report)

    def check(self, kind, i, reference, got):
        for name, arr in got.items():
            if name not in reference:
                raise ParamError(f"{self.op}: argument 'ground_truth' expected an entry "
                                 f"{name!r}, got keys {sorted(reference)}")
            want = reference[name]
            if want is None or arr is None:
                if want is not None or arr is not None:
                    self.fail(kind, i, name, "one side has a gradient, the other none")
                continue
            rt, at = self.rtol, self.atol
            if kind == "train":        # judged no stricter than the setting's first output
                mine = _less_precise(arr.dtype, self.primary[i])
                theirs = _less_precise(want.dtype, self.primary[self.gt_idx])
                if (np.dtype(mine) != np.dtype(arr.dtype)
                        or np.dtype(theirs) != np.dtype(want.dtype)):
                    rt, at = get_tols(_np(arr).astype(mine), _np(want).astype(theirs), rt, at)
            try:
                assert_almost_equal(arr, want, rtol=rt, atol=at, equal_nan=self.equal_nan,
                                    names=(f"{name}@setting{i}", f"{name}@reference"))
            except AssertionError as e:
                self.fail(kind, i, name, e)


def _run(settings, judge, grad_req, ground_truth):
    """Predict, then train, in every setting; compare each with the reference."""
    predicted = [s.forward(is_train=False) for s in settings]
    names = settings[0].output_names
    judge.primary = [np.dtype(outs[0].dtype) for outs in predicted]
    judge.gt_idx = gt_idx = int(np.argmax([d.itemsize for d in judge.primary]))
    compared = [i for i in range(len(settings)) if ground_truth is not None or i != gt_idx]
    reference = (ground_truth if ground_truth is not None
                 else dict(zip(names, predicted[gt_idx])))
    for i in compared:
        judge.check("predict", i, reference, dict(zip(names, predicted[i])))
    if isinstance(grad_req, str) and grad_req == "null":
        return reference

    trained = [s.forward(is_train=True) for s in settings]
    least = [o.dtype for o in trained[0]]
    for outs in trained:
        least = [_less_precise(o.dtype, dt) for o, dt in zip(outs, least)]
    golden = [o.asnumpy().astype(dt) for o, dt in zip(trained[0], least)]
    results = [{**dict(zip(names, outs)), **s.backward(golden)}
               for s, outs in zip(settings, trained)]
    reference = ground_truth if ground_truth is not None else results[gt_idx]
    for i in compared:
        judge.check("train", i, reference, results[i])
    return reference
