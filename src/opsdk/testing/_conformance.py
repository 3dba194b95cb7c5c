"""The conformance checks run for every (op, example): see ``CHECKS``."""

from __future__ import annotations

import math
import typing

import numpy as np
import pytest

from mxnext.base import MXNetError, ParamError, ShapeError, TypeInferError

from ..shape import dim_known
from ._checks import _as_list, _close, check_numeric_gradient
from ._examples import TRUNCATES_KEY, Example, integer_inputs, make_inputs
from ._harness import infer, op_def, parse, run_op

__all__ = ["CHECKS", "inapplicable", "run_check"]


def _setup(op_name, example: Example):
    opdef = op_def(op_name)
    p = parse(opdef, example.params)
    inputs = make_inputs(example)
    return opdef, p, inputs


def _uses_random(opdef, p):
    reqs = opdef.get_attr("FResourceRequest")
    return bool(reqs and reqs(p))


def _run(opdef, p, inputs, req="write", outputs=None):
    seed = 7 if _uses_random(opdef, p) else None
    return run_op(opdef, [a.copy() for a in inputs], p, req, outputs, seed=seed)


def _filled(shape, dtype, kind):
    if dtype == np.bool_:
        return np.full(shape, kind == "base", dtype)
    if np.issubdtype(dtype, np.floating):
        value = np.nan if kind == "garbage" else 0.5
    else:
        value = 3 if kind == "base" else 101
    return np.full(shape, value, dtype)


class _Watched(np.ndarray):
    """An output buffer that remembers the shapes of whole-array writes, so a compute
    whose result numpy silently broadcasts into a wrongly inferred shape is caught."""

    def __setitem__(self, key, value):
        if key is Ellipsis or (isinstance(key, slice) and key == slice(None)):
            self.__dict__.setdefault("written", []).append(np.shape(value))
        super().__setitem__(key, value)


def _check_written(opdef, outs):
    for k, o in enumerate(outs):
        for shape in o.__dict__.get("written", []):
            if shape and shape != o.shape and np.prod(shape) < o.size:
                raise AssertionError(f"{opdef.name}: output {k} was inferred as {o.shape} but "
                                     f"compute produced shape {shape}")


def check_infer(op_name, example):
    """Inference is complete, matches the reference, is stable, fills backwards
    consistently and rejects a conflicting output shape."""
    opdef, p, inputs = _setup(op_name, example)
    shapes, types = [a.shape for a in inputs], [a.dtype for a in inputs]
    in_s, out_s, in_t, out_t = infer(opdef, p, shapes, types)
    assert in_s == shapes and in_t == types, f"{opdef.name}: inference changed known inputs"
    outs = _run_into_inferred(opdef, p, inputs, out_s, out_t)
    if example.ref is not None:
        _check_reference(opdef, example, inputs, outs, out_s, out_t)
    again = infer(opdef, p, in_s, in_t, out_s, out_t)
    assert again == (in_s, out_s, in_t, out_t), f"{opdef.name}: inference is not stable"
    _check_backward_fill(opdef, p, shapes, types, out_s, out_t)
    _check_rejects_conflict(opdef, p, shapes, out_s)


def _run_into_inferred(opdef, p, inputs, out_s, out_t):
    """The outputs computed into buffers of the inferred shapes and dtypes, which the
    compute must fill whole."""
    outs = [np.zeros(s, t).view(_Watched) for s, t in zip(out_s, out_t)]
    _run(opdef, p, inputs, "write", outs)
    _check_written(opdef, outs)
    return [np.asarray(o) for o in outs]


def _check_reference(opdef, example, inputs, outs, out_s, out_t):
    """The inferred shapes and dtypes, and the outputs, are the reference's."""
    want = example.ref(*[a.copy() for a in inputs], **example.params)
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    for k, w in enumerate(want):
        w = np.asarray(w)
        assert out_s[k] == w.shape, f"{opdef.name}: inferred shape {out_s[k]} != {w.shape}"
        assert out_t[k] == w.dtype, f"{opdef.name}: inferred dtype {out_t[k]} != {w.dtype}"
        _close(f"{opdef.name}: output {k} vs reference", outs[k], w, 1e-5, 1e-6)


def _check_backward_fill(opdef, p, shapes, types, out_s, out_t):
    """Whatever input shapes and dtypes the op deduces from its outputs alone are right."""
    try:
        back_s, _ = opdef.get_attr("FInferShape")(p, [None] * len(shapes), list(out_s))
    except ShapeError:
        back_s = []
    for k, s in enumerate(back_s):   # a deduced shape may be partial (unknown dims)
        assert s is None or (len(s) == len(shapes[k]) and all(
            not dim_known(a) or a == b for a, b in zip(s, shapes[k]))), \
            f"{opdef.name}: input {k} shape deduced as {s}, really {shapes[k]}"
    try:
        back_t, _ = opdef.get_attr("FInferType")(p, [None] * len(types), list(out_t))
    except TypeInferError:
        back_t = []
    for k, t in enumerate(back_t):
        assert t is None or np.dtype(t) == types[k], \
            f"{opdef.name}: input {k} dtype deduced as {t}, really {types[k]}"


def _check_rejects_conflict(opdef, p, shapes, out_s):
    """Output shapes given with one axis too many raise ``ShapeError``."""
    if out_s:
        bad = [s + (1,) for s in out_s]
        with pytest.raises(ShapeError):
            opdef.get_attr("FInferShape")(p, list(shapes), bad)


def check_req(op_name, example):
    """NULL leaves outputs alone, WRITE_TO overwrites garbage, ADD_TO accumulates."""
    opdef, p, inputs = _setup(op_name, example)
    ref = _run(opdef, p, inputs)
    for kind, req in (("garbage", "null"), ("garbage", "write"), ("base", "add")):
        start = [_filled(o.shape, o.dtype, kind) for o in ref]
        got = _run(opdef, p, inputs, req, [s.copy() for s in start])
        for k, (g, s, r) in enumerate(zip(got, start, ref)):
            if req == "null":
                want = s
            elif req == "write":
                want = r
            else:
                want = (s | r) if r.dtype == np.bool_ else (s + r).astype(r.dtype)
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, equal_nan=True,
                                       err_msg=f"{opdef.name}: req={req} output {k}")


def _claims(opdef, p):
    fn = opdef.get_attr("FInplaceOption")
    return fn(p) if fn is not None else []


def check_inplace(op_name, example):
    """Each ``FInplaceOption`` claim holds: output aliasing the input gives the same result;
    and where ``FInplaceIdentity`` says so, the output is the input itself (same shape)."""
    opdef, p, inputs = _setup(op_name, example)
    claims = _claims(opdef, p)
    ident = opdef.get_attr("FInplaceIdentity")
    ident = ident(p) if ident is not None else [False] * len(claims)
    ref = _run(opdef, p, inputs)
    tried = 0
    for (i, o), same in zip(claims, ident):
        if same and inputs[i].shape == ref[o].shape and inputs[i].dtype == ref[o].dtype:
            np.testing.assert_array_equal(ref[o], inputs[i], err_msg=f"{opdef.name}: output "
                                          f"{o} is claimed identical to input {i}")
        if inputs[i].size != ref[o].size or inputs[i].dtype != ref[o].dtype:
            continue
        ins = [a.copy() for a in inputs]
        outs = [np.zeros_like(r) for r in ref]
        outs[o] = ins[i].reshape(ref[o].shape)   # a view: output memory is the input's
        req = ["write"] * len(ref)
        req[o] = "inplace"
        seed = 7 if _uses_random(opdef, p) else None
        got = run_op(opdef, ins, p, req, outs, seed=seed)
        np.testing.assert_allclose(got[o], ref[o], rtol=1e-5, atol=1e-6, equal_nan=True,
                                   err_msg=f"{opdef.name}: in-place input {i} -> output {o}")
        tried += 1
    assert tried, (f"{opdef.name}: inferred output shapes and dtypes let an in-place claim "
                   f"apply, the computed outputs do not")


def check_grad(op_name, example):
    """``FGradient`` matches central differences."""
    opdef, p, inputs = _setup(op_name, example)
    check_numeric_gradient(opdef, inputs, p, example.grad_inputs(), example.rtol, example.atol,
                           seed=example.seed)


def _bad_value(info):
    ann = info.annotation
    members = typing.get_args(ann) if typing.get_origin(ann) is not None else (ann,)
    for m in members:
        if typing.get_origin(m) is typing.Literal:
            return "__not_a_choice__"
    for c in info.metadata:
        for attr, delta in (("ge", -1), ("gt", 0), ("le", 1), ("lt", 0)):
            bound = getattr(c, attr, None)
            if bound is not None:
                return bound + delta
    return None


def check_params(op_name, example):
    """An unknown field and an out-of-range/enum value raise ``ParamError``; an op without
    parameters ignores keywords, as MXNet's."""
    opdef = op_def(op_name)
    unknown = {**example.params, "no_such_param_xyz": "1"}
    model = opdef.param_model
    if model is None:
        assert opdef.parse_params(unknown) is None
        return
    with pytest.raises(ParamError):
        opdef.parse_params(unknown)
    for name, info in model.model_fields.items():
        bad = _bad_value(info)
        if bad is not None:
            with pytest.raises(ParamError, match=name):
                opdef.parse_params({**example.params, name: bad})


def _float_twin(opdef, p, ints, example):
    """The integer inputs' values as float64 (as the example's own float dtype where the op
    rejects float64): the inputs of the reference run."""
    def cast(wide):
        return [a.astype(np.float64 if wide else dt) if np.issubdtype(dt, np.floating) else a
                for a, dt in zip(ints, example.dtype)]
    xs = cast(True)
    try:
        infer(opdef, p, [a.shape for a in xs], [a.dtype for a in xs])
    except MXNetError:      # an op taking narrower floats only
        xs = cast(False)
    return xs


def check_dtypes(op_name, example):
    """On int32 inputs (the example's floating ones made integer) the op either rejects them in
    ``FInferType`` with a ``TypeInferError`` naming the op and the dtype, or computes what it
    computes on the same values in float64, truncated to its integer output dtype. Outputs
    left all zeros where the float64 ones are not (every value within (-1, 1)) are silently
    wrong unless the op declares ``TRUNCATES_KEY``."""
    opdef, p, _ = _setup(op_name, example)
    ints = integer_inputs(example)
    try:
        infer(opdef, p, [a.shape for a in ints], [a.dtype for a in ints])
    except TypeInferError as err:
        assert opdef.name in str(err) and "int32" in str(err), \
            f"{opdef.name}: the error rejecting int32 inputs must name the op and dtype: {err}"
        return
    try:
        got = _run(opdef, p, ints)
    except Exception as err:
        raise AssertionError(f"{opdef.name}: FInferType accepts int32 inputs, then the compute "
                             f"fails ({type(err).__name__}: {err}); reject them in FInferType "
                             f"(opsdk.FloatOnly)") from err
    n_vis = opdef.num_visible_outputs(p)
    if example.int_ref is not None:
        want = example.int_ref(*[a.copy() for a in ints], **example.params)
        for k, (g, w) in enumerate(zip(got[:n_vis], _as_list(want))):
            _close(f"{opdef.name}: output {k} on int32 inputs vs int_ref", g, w, 0, 0)
        return
    ref = _run(opdef, p, _float_twin(opdef, p, ints, example))
    only_zeros = True
    for k, (g, r) in enumerate(zip(got[:n_vis], ref[:n_vis])):
        known = np.isfinite(r) if r.dtype.kind == "f" else np.ones(r.shape, bool)
        with np.errstate(invalid="ignore"):     # C leaves casting inf or NaN undefined
            want = r.astype(g.dtype)
        _close(f"{opdef.name}: output {k} on int32 inputs vs float64 cast to {g.dtype}",
               g[known], want[known], 1e-5, 1e-6)
        only_zeros &= g.dtype.kind in "iub" and not g.any() and bool(r[known].any())
    if only_zeros and not opdef.get_attr(TRUNCATES_KEY):
        raise AssertionError(f"{opdef.name}: on int32 inputs every output is 0, float64 gives "
                             f"fractions: the integer result says nothing. Reject integer "
                             f"inputs in FInferType (opsdk.FloatOnly), or declare "
                             f"{TRUNCATES_KEY} where truncating is the op's contract")


CHECKS = {"infer": check_infer, "req": check_req, "inplace": check_inplace,
          "grad": check_grad, "params": check_params, "dtypes": check_dtypes}


def _inplace_inapplicable(opdef, example):
    p = opdef.parse_params(example.params)
    claims = _claims(opdef, p)
    if not claims:
        return "no FInplaceOption claims"
    shapes = [a.shape if isinstance(a, np.ndarray) else a for a in example.inputs]
    _, out_s, _, out_t = infer(opdef, p, shapes, example.dtype)
    if not any(math.prod(shapes[i]) == math.prod(out_s[o]) and example.dtype[i] == out_t[o]
               for i, o in claims):
        return "in-place claims never apply here (sizes or dtypes differ)"
    return None


def _grad_inapplicable(opdef, example):
    if opdef.name.startswith("_backward"):
        return "backward op"
    if opdef.get_attr("FGradient") is None:
        return "no FGradient"
    if not example.grad_inputs():
        return "example checks no gradient"
    return None


def _dtypes_inapplicable(opdef, example):
    if opdef.get_attr("TIsBackward") or opdef.name.startswith("_backward"):
        return "backward op: its dtypes follow its forward op's"
    if integer_inputs(example) is None:
        return "no floating input here can hold integers"
    return None


_APPLIES = {"inplace": _inplace_inapplicable, "grad": _grad_inapplicable,
            "dtypes": _dtypes_inapplicable}


def inapplicable(check, opdef, example) -> str | None:
    """Why ``check`` does not apply to ``opdef`` on ``example``, or None when it does.

    Decided from the registry and the example alone (inference at most, no kernel runs),
    so the suite generates only the cases that apply. Where the op's own rules fail, the
    case is kept: running it reports the failure.
    """
    rule = _APPLIES.get(check)
    if rule is None:
        return None
    try:
        return rule(opdef, example)
    except Exception:  # bad params or a broken rule of the op: running the check reports it
        return None


def run_check(op_name, example, check):
    """Run one named conformance check of ``op_name`` on ``example`` (skipped with the
    reason when it does not apply)."""
    why = inapplicable(check, op_def(op_name), example)
    if why is not None:
        pytest.skip(why)
    CHECKS[check](op_name, example)
