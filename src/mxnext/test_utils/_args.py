"""Argument handling the gradient and consistency checks share, for Symbols and callables."""

from __future__ import annotations

import numpy as np

from .._runtime.base import ParamError

_FLOATS = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_REQS = ("write", "add", "null")


def is_symbol(sym, op: str) -> bool:
    """True for a Symbol, False for a Python callable over NDArrays; anything else is an error."""
    from ..symbol import Symbol
    if isinstance(sym, Symbol):
        return True
    if not callable(sym):
        raise ParamError(f"{op}: argument 'sym' expected a Symbol or a Python callable over "
                         f"NDArrays, got {type(sym).__name__}")
    return False


def float_dtype(dtype, op: str, allow_asnumpy=False):
    """``dtype`` as a numpy float dtype; None for ``"asnumpy"`` (each input keeps its own)."""
    if allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy":
        return None
    if np.dtype(dtype) not in _FLOATS:
        raise ParamError(f"{op}: argument 'dtype' expected float16, float32 or float64"
                         f"{' or asnumpy' if allow_asnumpy else ''}, got {dtype}")
    return np.dtype(dtype)


def check_stypes(stypes, what: str, op: str) -> None:
    """A dict of input name -> storage type ('default', 'csr', 'row_sparse'; None counts as
    'default'); a gradient buffer of a sparse type keeps it (its values are compared)."""
    if stypes is None:
        return
    if not isinstance(stypes, dict):
        raise ParamError(f"{op}: argument '{what}' expected a dict of input name -> storage "
                         f"type, got {type(stypes).__name__}")
    if any(s not in (None, "default", "csr", "row_sparse") for s in stypes.values()):
        raise ParamError(f"{op}: argument '{what}' expected storage types 'default', 'csr' or "
                         f"'row_sparse', got {stypes}")


def grad_reqs(grad_req, names, op: str, what="grad_req") -> dict:
    """{input name: 'write' | 'add' | 'null'} from a str (all inputs), a list (one per input, in
    order) or a dict (the inputs it names)."""
    if isinstance(grad_req, str):
        reqs = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ParamError(f"{op}: argument '{what}' expected {len(names)} requests (one per "
                             f"input of {names}), got {len(grad_req)}")
        reqs = dict(zip(names, grad_req))
    elif isinstance(grad_req, dict):
        reqs = {str(k): v for k, v in grad_req.items()}
    else:
        raise ParamError(f"{op}: argument '{what}' expected a str, list or dict, got "
                         f"{type(grad_req).__name__}")
    bad = {n: r for n, r in reqs.items() if r not in _REQS}
    unknown = [n for n in reqs if n not in names]
    if bad or unknown:
        raise ParamError(f"{op}: argument '{what}' expected 'write', 'add' or 'null' for inputs "
                         f"among {list(names)}, got bad reqs {bad}, unknown inputs {unknown}")
    return reqs



def node_reqs(grad_nodes, names, op: str) -> dict:
    """``grad_nodes`` (None: every input; names; or a dict name -> req) as
    {input name: req}."""
    if grad_nodes is None:
        return dict.fromkeys(names, "write")
    if isinstance(grad_nodes, dict):
        return grad_reqs(grad_nodes, names, op, "grad_nodes")
    return grad_reqs({str(k): "write" for k in grad_nodes}, names, op, "grad_nodes")

def per_output(values, names, what: str, op: str, allow_fewer=False, allow_more=False) -> list:
    """A list/tuple (one per output, in order; with ``allow_fewer`` the first outputs only, as
    MXNet's zip does; with ``allow_more`` extra entries are ignored, as MXNet's executor
    ignores extra head gradients), or a dict keyed by output name, as a list."""
    if isinstance(values, dict):
        missing = [n for n in names if n not in values]
        if missing:
            raise ParamError(f"{op}: argument '{what}' expected keys {list(names)}, missing "
                             f"{missing}")
        return [values[n] for n in names]
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if allow_more:
        values = values[:len(names)]
    if len(values) > len(names) or (len(values) < len(names) and not allow_fewer):
        raise ParamError(f"{op}: argument '{what}' expected {len(names)} arrays (one per "
                         f"output), got {len(values)}")
    return values


def fill(dst, value) -> None:
    """Copy ``value`` (a number, numpy array or NDArray) into NDArray ``dst``, cast to its dtype."""
    dst[() if dst.ndim == 0 else slice(None)] = value


def central_differences(value: np.ndarray, eps: float, objective, name: str, op: str):
    """Central-difference gradient of the scalar ``objective(x)`` at ``value``.

    Each element in turn moves by ±eps/2 in ``value``'s dtype; the difference is divided by
    the step as rounded in that dtype (not by ``eps``) and accumulated in float64. The
    gradient comes back in ``value``'s dtype.
    """
    x = np.array(value, order="C")
    step = x.dtype.type(eps / 2)
    grad = np.zeros(x.shape, dtype=np.float64)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + step
        hi, f_plus = float(flat[i]), objective(x)
        flat[i] = orig - step
        lo, f_minus = float(flat[i]), objective(x)
        flat[i] = orig
        if hi == lo:
            raise ParamError(f"{op}: eps {eps} vanishes next to {name}[{i}] = {orig} in "
                             f"{x.dtype.name}; pass a larger numeric_eps")
        gflat[i] = (f_plus - f_minus) / (hi - lo)
    return grad.astype(x.dtype)
