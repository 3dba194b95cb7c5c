"""MXNet's ``mx.test_utils``: comparison, random-input and gradient-checking helpers.

Every helper accepts NDArrays and numpy arrays (and Python scalars/lists) alike.
``check_numeric_gradient`` and ``check_consistency`` take a Python callable over NDArrays for
now: Symbol does not exist yet, so the symbolic forms of MXNet (and ``check_symbolic_forward``
/ ``check_symbolic_backward``) come with it.
"""

from __future__ import annotations

import numbers

import numpy as np

from .base import ParamError
from .context import Context, current_context

__all__ = ["default_context", "set_default_context", "default_dtype", "default_rtols",
           "default_atols", "default_numeric_eps", "get_tolerance", "get_tols", "get_rtol",
           "get_atol", "get_etol", "random_arrays", "random_uniform_arrays", "rand_ndarray",
           "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "same", "almost_equal",
           "assert_almost_equal", "assert_allclose", "assert_exception", "numeric_grad",
           "check_numeric_gradient", "check_consistency"]


def default_context() -> Context:
    """The context tests run on: the current one (``with ctx:`` or :func:`set_default_context`)."""
    return current_context()


def set_default_context(ctx) -> None:
    """Make ``ctx`` this thread's default context, as MXNet does."""
    Context._local.value = Context(ctx)


def default_dtype():
    return np.float32


_INT_TYPES = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64)


def default_rtols() -> dict:
    """Relative tolerance per dtype for comparisons (MXNet's defaults)."""
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            **{np.dtype(t): 0 for t in _INT_TYPES}}


def default_atols() -> dict:
    """Absolute tolerance per dtype for comparisons (MXNet's defaults)."""
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            **{np.dtype(t): 0 for t in _INT_TYPES}}


def default_numeric_eps() -> dict:
    """Finite-difference step per dtype: powers of two, so adding one drops no bits."""
    return {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
            np.dtype(np.float64): 2.0 ** -14}


def get_tolerance(dat, tol, default_tol: dict):
    """``tol`` if it is a number, else its (or ``default_tol``'s) entry for ``dat``'s dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = getattr(dat, "dtype", None)
    dtype = np.dtype(np.asarray(dat).dtype if dtype is None else dtype)
    tol = tol or {}
    return tol.get(dtype, default_tol.get(dtype, default_tol[np.dtype(np.float64)]))


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing ``x`` and ``y``: the looser default of the two dtypes."""
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_etol(etol=None):
    return 0 if etol is None else etol


# ---------------------------------------------------------------------------- random inputs

def random_arrays(*shapes):
    """Standard-normal float32 numpy arrays, one per shape (a single array for one shape)."""
    arrays = [np.asarray(np.random.randn(*s), dtype=default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform numpy arrays in [low, high), one per shape (always a list, as MXNet)."""
    dtype = dtype or default_dtype()
    return [np.asarray(np.random.uniform(low, high, size=s), dtype=dtype) for s in shapes]


def rand_ndarray(shape, stype="default", density=None, dtype=None, ctx=None):
    """A standard-normal NDArray of ``shape`` on ``ctx`` (default context), float32 by default.

    Only dense storage exists in mxnext: ``stype`` other than ``'default'`` is an error, and
    ``density`` (meaningful for sparse arrays only) is ignored, as MXNet does for dense ones.
    """
    if stype != "default":
        raise ParamError(f"rand_ndarray: argument 'stype' expected 'default' (mxnext has dense "
                         f"storage only), got {stype!r}")
    from . import ndarray as nd
    return nd.array(random_arrays(tuple(shape)), ctx=ctx or default_context(),
                    dtype=dtype or default_dtype())


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


# ---------------------------------------------------------------------------- comparisons

def _np(x) -> np.ndarray:
    """A numpy view of an NDArray (waits for it), numpy array, scalar or nested list."""
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def same(a, b) -> bool:
    """Exactly equal shapes and values."""
    return bool(np.array_equal(_np(a), _np(b)))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True) -> bool:
    """``|a - b| <= atol + rtol * |b|`` everywhere (defaults: MXNet's float64 tolerances)."""
    a, b = _np(a), _np(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _violation(a, b, rtol, atol, equal_nan):
    """Per-element |a-b| / (atol + rtol*|b|): > 1 where the elements are not close."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        absdiff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))  # equal infs count as equal
        nan_a, nan_b = np.isnan(a64), np.isnan(b64)
        absdiff = np.where(nan_a | nan_b, np.inf, absdiff)
        if equal_nan:
            absdiff = np.where(nan_a & nan_b, 0.0, absdiff)
        viol = absdiff / (atol + rtol * np.abs(b64) + 1e-20)
    return np.where(np.isnan(viol), np.inf, viol)  # inf vs finite: inf / inf


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError unless ``a`` and ``b`` agree within tolerance.

    Unset tolerances default to the looser of the two dtypes' defaults (float32: rtol 1e-4,
    atol 1e-3). The message names both arrays, the worst element (index and both values), how
    many elements mismatch, and up to ``mismatches[0]`` of the worst locations.
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    if not use_broadcast and a.shape != b.shape:
        raise AssertionError(f"{names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} "
                             f"are not equal")
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise AssertionError(f"{names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} "
                             f"do not broadcast") from None
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        rtol = atol = 0
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    viol = _violation(a, b, rtol, atol, equal_nan)
    bad = viol > 1
    order = np.argsort(-viol, axis=None, kind="stable")[:max(1, min(int(bad.sum()), mismatches[0]))]
    locs = [np.unravel_index(i, a.shape) if a.ndim else () for i in order]
    worst = locs[0]
    lines = [f"Error {float(viol[worst]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
             f"({int(bad.sum())} of {a.size} elements mismatch, {100.0 * bad.sum() / max(a.size, 1):.4g}%).",
             f"Location of maximum error: {tuple(int(i) for i in worst)}, "
             f"{names[0]}={a[worst]}, {names[1]}={b[worst]}"]
    if len(locs) > 1:
        lines.append(f"Worst {len(locs)} mismatches:")
        lines += [f"  {tuple(int(i) for i in loc)}: {names[0]}={a[loc]}, {names[1]}={b[loc]}, "
                  f"error {float(viol[loc]):f}" for loc in locs]
    with np.printoptions(threshold=20, edgeitems=3, suppress=True):
        lines += [f" {names[0]}: {a!r}", f" {names[1]}: {b!r}"]
    raise AssertionError("\n".join(lines))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_exception(f, exception_type, *args, **kwargs):
    """Call ``f(*args, **kwargs)``; return the ``exception_type`` it raises, else fail."""
    try:
        f(*args, **kwargs)
    except exception_type as e:
        return e
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {exception_type.__name__}")


# ---------------------------------------------------------------------------- gradients

def _named(location, op: str):
    """(names, numpy values, as_kwargs) of a list/tuple/dict of arrays."""
    if isinstance(location, dict):
        return list(location), [_np(v) for v in location.values()], True
    if isinstance(location, (list, tuple)):
        return [str(i) for i in range(len(location))], [_np(v) for v in location], False
    raise ParamError(f"{op}: argument 'location' expected a list or dict of arrays, "
                     f"got {type(location).__name__}")


def _require_callable(fn, op: str):
    if not callable(fn) or hasattr(fn, "list_arguments"):
        raise ParamError(f"{op}: argument 'sym' expected a Python callable over NDArrays "
                         f"(Symbol is not supported yet), got {type(fn).__name__}")


def _call(fn, names, arrays, as_kwargs) -> list:
    out = fn(**dict(zip(names, arrays))) if as_kwargs else fn(*arrays)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def numeric_grad(fn, location, projections, eps, use_forward_train=True, dtype=np.float32,
                 ctx=None, grad_nodes=None) -> dict:
    """Central differences of ``sum_i sum(out_i * projections[i])`` w.r.t. each grad node.

    Each input element is moved by +-eps/2 in ``dtype`` (dividing by the step as rounded);
    the objective is accumulated in float64. Returns ``{name: numpy gradient}``.
    """
    from . import autograd, ndarray as nd
    ctx = ctx or default_context()
    dtype = np.dtype(dtype).type
    names, values, as_kwargs = _named(location, "numeric_grad")
    values = [np.array(v, dtype=dtype) for v in values]
    mode = autograd.train_mode if use_forward_train else autograd.predict_mode

    def objective():
        with mode():
            outs = _call(fn, names, [nd.array(v, ctx=ctx, dtype=dtype) for v in values], as_kwargs)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * p))
                   for o, p in zip(outs, projections))

    grads = {}
    for name, v in zip(names, values):
        if grad_nodes is not None and name not in grad_nodes:
            continue
        g = np.zeros(v.shape, dtype=np.float64)
        flat, gflat = v.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + dtype(eps / 2)
            hi, f_plus = float(flat[i]), objective()
            flat[i] = orig - dtype(eps / 2)
            lo, f_minus = float(flat[i]), objective()
            flat[i] = orig
            if hi == lo:
                raise ParamError(f"numeric_grad: eps {eps} vanishes next to {name}[{i}] = {orig} "
                                 f"in {np.dtype(dtype).name}; pass a larger numeric_eps")
            gflat[i] = (f_plus - f_minus) / (hi - lo)  # the step as rounded in dtype
        grads[name] = g
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           dtype=default_dtype()):
    """Check autograd's gradient of ``sym`` against finite differences.

    ``sym`` is (for now) a Python callable over NDArrays returning an NDArray or a list of
    them; Symbol is not supported until it exists, nor ``aux_states`` (kept so MXNet's
    positional calls line up). ``location`` is a list (positional arguments) or dict (keyword
    arguments) of arrays. ``grad_nodes``: names (list indices as strings) to check, or a dict
    name -> grad_req ('write', 'add', 'null'); default all with 'write'. The outputs are
    weighted by a random projection (elements in [0.1, 1.1)) so every output element counts.
    """
    op = "check_numeric_gradient"
    _require_callable(sym, op)
    if aux_states is not None:
        raise ParamError(f"{op}: argument 'aux_states' is for Symbol, which is not supported yet")
    dtype = np.dtype(dtype)
    if dtype not in default_numeric_eps():
        raise ParamError(f"{op}: argument 'dtype' expected float16, float32 or float64, got {dtype}")
    from . import autograd, ndarray as nd
    ctx = ctx or default_context()
    names, values, as_kwargs = _named(location, op)
    if grad_nodes is None:
        reqs = {n: "write" for n in names}
    elif isinstance(grad_nodes, dict):
        reqs = {str(k): v for k, v in grad_nodes.items()}
    else:
        reqs = {str(k): "write" for k in grad_nodes}
    unknown = [n for n in reqs if n not in names]
    bad_req = {n: r for n, r in reqs.items() if r not in ("write", "add", "null")}
    if unknown or bad_req:
        raise ParamError(f"{op}: argument 'grad_nodes' expected names among {names} with grad_req "
                         f"'write', 'add' or 'null', got unknown {unknown}, bad reqs {bad_req}")
    eps = get_tolerance(np.zeros((), dtype), numeric_eps, default_numeric_eps())

    xs = [nd.array(v, ctx=ctx, dtype=dtype) for v in values]
    for name, x in zip(names, xs):  # unchecked inputs still join the graph
        x.attach_grad(grad_req=reqs.get(name, "write"))
    passes = 2 if "add" in reqs.values() else 1  # 'add' must accumulate: run backward twice
    projections = None
    for _ in range(passes):
        with autograd.record(train_mode=use_forward_train):
            outs = _call(sym, names, xs, as_kwargs)
        if projections is None:
            projections = [np.asarray(np.random.rand(*o.shape) + 0.1, dtype=dtype) for o in outs]
        autograd.backward(outs, head_grads=[nd.array(p, ctx=ctx, dtype=dtype) for p in projections])
    numeric = numeric_grad(sym, location, projections, eps, use_forward_train, dtype.type, ctx,
                           grad_nodes=[n for n, r in reqs.items() if r != "null"])
    for name, x in zip(names, xs):
        req = reqs.get(name)
        if req is None:
            continue
        got = x.grad.asnumpy()
        expected = np.zeros_like(got) if req == "null" else numeric[name] * (passes if req == "add" else 1)
        assert_almost_equal(expected, got, rtol, atol, names=(f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None, tol=None,
                      raise_on_err=True, ground_truth=None, equal_nan=False, rand_type=np.float64):
    """Run ``sym`` (a callable over NDArrays, for now) in several settings and compare results.

    Each ``ctx_list`` entry is a dict as in MXNet: ``'ctx'`` (a Context), one entry per
    argument name giving its shape, optional ``'type_dict'`` {name: dtype} and, mxnext's
    addition, optional ``'engine'`` (an engine name run with ``engine.use_engine``). Inputs
    (``arg_params`` or ``scale`` * normal draws in ``rand_type``) and head gradients are drawn
    once and shared; every setting's outputs and (unless ``grad_req='null'``) input gradients
    are compared with ``ground_truth`` or the most precise setting's, within ``tol`` (per dtype
    dict or a number). Returns the list of per-setting results ``{'out_i'|'grad_<name>': numpy}``.
    Symbol is not supported until it exists.
    """
    op = "check_consistency"
    _require_callable(sym, op)
    if not ctx_list:
        raise ParamError(f"{op}: argument 'ctx_list' expected at least one setting, got none")
    from . import autograd, engine, ndarray as nd
    default_tol = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
                   np.dtype(np.float64): 1e-5, **{np.dtype(t): 0 for t in _INT_TYPES}}
    if isinstance(tol, numbers.Number):
        tol = {dt: tol for dt in default_tol}
    tol = {**default_tol, **{np.dtype(k): v for k, v in (tol or {}).items()}}
    reserved = ("ctx", "type_dict", "engine")
    names = [k for k in ctx_list[0] if k not in reserved]
    base = {n: np.asarray(_np(arg_params[n]) if arg_params and n in arg_params
                          else np.random.normal(size=ctx_list[0][n], scale=scale), dtype=rand_type)
            for n in names}
    dtypes = [{n: np.dtype(s.get("type_dict", {}).get(n, np.float32)) for n in names}
              for s in ctx_list]

    def run(setting, types):
        ctx = setting.get("ctx") or default_context()
        xs = [nd.array(base[n], ctx=ctx, dtype=types[n]) for n in names]
        if grad_req != "null":
            for x in xs:
                x.attach_grad(grad_req=grad_req)
        with autograd.record():
            outs = _call(sym, names, xs, as_kwargs=True)
        result = {f"out_{i}": o.asnumpy() for i, o in enumerate(outs)}
        if grad_req != "null":
            heads = [nd.array(g, ctx=ctx, dtype=o.dtype) for g, o in zip(head_grads(outs), outs)]
            autograd.backward(outs, head_grads=heads)
            result.update({f"grad_{n}": x.grad.asnumpy() for n, x in zip(names, xs)})
        return result

    drawn = []

    def head_grads(outs):
        if not drawn:
            drawn.extend(np.random.normal(size=o.shape, scale=scale) for o in outs)
        return drawn

    results = []
    for setting, types in zip(ctx_list, dtypes):
        if setting.get("engine"):
            with engine.use_engine(setting["engine"]):
                results.append(run(setting, types))
        else:
            results.append(run(setting, types))

    precision = [max((np.finfo(t).resolution for t in ty.values() if t.kind == "f"), default=0)
                 for ty in dtypes]
    gt_index = int(np.argmin(precision))
    truth = ground_truth if ground_truth is not None else results[gt_index]
    for i, (res, types) in enumerate(zip(results, dtypes)):
        if ground_truth is None and i == gt_index:
            continue
        loosest = max((tol[t] for t in types.values()), default=0)
        for key, value in res.items():
            try:
                assert_almost_equal(value, truth[key], rtol=loosest, atol=loosest, equal_nan=equal_nan,
                                    names=(f"{key}@setting{i}", f"{key}@ground_truth"))
            except AssertionError as e:
                if raise_on_err:
                    raise AssertionError(f"{op}: setting {i} ({ctx_list[i]}) disagrees on {key}:\n{e}") from None
                print(f"{op}: setting {i} disagrees on {key}:\n{e}")
    return results
