"""Conformance examples: the ``TExamples`` op attribute, the default example and the
integer inputs of the dtypes check."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

EXAMPLES_KEY = "TExamples"
TRUNCATES_KEY = "TTruncatesIntegers"
"""Op attribute (True): integer inputs are computed in floating point and truncated back to
the integer dtype, even where that leaves nothing but zeros (MXNet's sigmoid of an int32)."""
_DEFAULT_SHAPE = (2, 3)
_KEYS = {"inputs", "dtype", "domain", "params", "grad", "rtol", "atol", "ref", "int_ref", "seed"}


@dataclass(frozen=True)
class Example:
    inputs: tuple                      # per input: a shape tuple or a numpy array
    dtype: tuple                       # per input: numpy dtype
    domain: tuple                      # per input: (low, high)
    params: dict = field(default_factory=dict)
    grad: Any = True                   # bool, or a tuple of input indices
    rtol: float = 1e-2
    atol: float = 1e-3
    ref: Callable | None = None
    seed: int = 0
    int_ref: Callable | None = None    # the result on integer_inputs, where not float64's

    def grad_inputs(self) -> list[int]:
        """Indices of the float inputs whose gradient the example asks to check."""
        if self.grad is False:
            return []
        wanted = range(len(self.inputs)) if self.grad is True else self.grad
        return [i for i in wanted if np.issubdtype(self.dtype[i], np.floating)]


def _per_input(value, n, is_single):
    if is_single(value):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"{EXAMPLES_KEY}: expected {n} entries, got {value!r}")
    return value


def _is_domain(v):
    return len(v) == 2 and all(isinstance(x, (int, float)) for x in v)


def parse_example(spec: dict, n_inputs: int | None = None) -> Example:
    """An ``Example`` from a ``TExamples`` dict (see the package docstring)."""
    unknown = set(spec) - _KEYS
    if unknown:
        raise ValueError(f"{EXAMPLES_KEY}: unknown keys {sorted(unknown)}; allowed {sorted(_KEYS)}")
    inputs = spec.get("inputs")
    if inputs is None:
        inputs = [_DEFAULT_SHAPE] * (n_inputs or 0)
    inputs = tuple(x if isinstance(x, np.ndarray) else tuple(x) for x in inputs)
    n = len(inputs)
    dtype = _per_input(spec.get("dtype", "float32"), n, lambda v: isinstance(v, (str, type, np.dtype)))
    dtype = tuple(x.dtype if isinstance(x, np.ndarray) else np.dtype(d) for x, d in zip(inputs, dtype))
    domain = _per_input(spec.get("domain", (-1.0, 1.0)), n, _is_domain)
    grad = spec.get("grad", True)
    return Example(inputs, dtype, domain, dict(spec.get("params", {})),
                   grad if isinstance(grad, bool) else tuple(grad),
                   spec.get("rtol", 1e-2), spec.get("atol", 1e-3), spec.get("ref"),
                   spec.get("seed", 0), spec.get("int_ref"))


def examples_for(opdef) -> tuple[list[Example], str]:
    """The op's examples and, when there are none, the reason."""
    specs = opdef.get_attr(EXAMPLES_KEY)
    if specs is not None:
        return [parse_example(s, None if "inputs" in s else
                              opdef.num_inputs(opdef.parse_params(s.get("params", {}))))
                for s in specs], f"{EXAMPLES_KEY} is empty"
    if opdef.get_attr("key_var_num_args") is not None:
        return [], "variadic inputs and no TExamples"
    try:
        params = opdef.parse_params({})
    except Exception as err:  # required params: the suite cannot guess values
        return [], f"params need values and no TExamples ({type(err).__name__}: {err})"
    try:
        n = opdef.num_inputs(params)
    except Exception as err:
        return [], f"input count unknown without TExamples ({err})"
    return [parse_example({}, n)], ""


def make_inputs(example: Example) -> list[np.ndarray]:
    """Fresh input arrays for an example (deterministic per example seed)."""
    rng = np.random.default_rng(example.seed)
    out = []
    for spec, dt, (lo, hi) in zip(example.inputs, example.dtype, example.domain):
        if isinstance(spec, np.ndarray):
            out.append(spec.copy())
        elif np.issubdtype(dt, np.integer):
            out.append(rng.integers(lo, hi, size=spec).astype(dt))
        elif dt == np.bool_:
            out.append(rng.integers(0, 2, size=spec).astype(bool))
        else:
            out.append(rng.uniform(lo, hi, size=spec).astype(dt))
    return out


def integer_inputs(example: Example) -> list[np.ndarray] | None:
    """The example's inputs with each floating one made int32: integers drawn from its domain
    ``[low, high]`` (both ends included), a fixed array cast when its values are whole.
    None when the example has no floating input, a domain holds no integer or a fixed
    floating array holds fractions, infinities or NaN."""
    rng = np.random.default_rng(example.seed)
    out, changed = [], False
    for a, spec, (lo, hi) in zip(make_inputs(example), example.inputs, example.domain):
        if not np.issubdtype(a.dtype, np.floating):
            out.append(a)
            continue
        changed = True
        if isinstance(spec, np.ndarray):
            if not (np.isfinite(a).all() and np.array_equal(a, np.trunc(a))):
                return None
            out.append(a.astype(np.int32))
        elif math.ceil(lo) > math.floor(hi):
            return None
        else:
            out.append(rng.integers(math.ceil(lo), math.floor(hi), size=a.shape,
                                    endpoint=True).astype(np.int32))
    return out if changed else None
