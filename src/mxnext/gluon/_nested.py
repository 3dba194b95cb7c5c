"""Nested lists of NDArrays or Symbols, a HybridBlock's inputs and outputs, as a flat list
and a format to rebuild them (MXNet 1.9's encoding)."""

from __future__ import annotations

from ..ndarray import NDArray
from ..symbol import Symbol


def _flatten(args, inout_str):
    """Nested lists of arrays/symbols as a flat list and a format to rebuild them: 0 for
    one array, -1 for None, n > 0 for a symbol of n outputs, a list for a list."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"HybridBlock {inout_str} must be (nested) list of Symbol or NDArray, "
                         f"but got {args} of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """Inverse of ``_flatten``."""
    return _merge(args, fmt)[0]


def _merge(args, fmt):
    """(the structure ``fmt`` rebuilt from the head of ``args``, the rest of ``args``)."""
    if isinstance(fmt, int):
        if fmt < -1:
            raise ValueError(f"Unsupported encoded format {fmt}.")
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError(f"We do not support passing types that are not None when "
                                 f"the initial HybridBlock has received NoneType and has "
                                 f"been hybridized. Received arg = {args[0]}, fmt = {fmt}.")
            return None, args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        res, args = _merge(args, f)
        ret.append(res)
    return ret, args


def _gather_type_ctx_info(args):
    """(has a Symbol, has an NDArray, the set of contexts, the first context) of nested
    ``args``."""
    has_sym = has_nd = False
    ctxs, first = set(), None
    stack = list(args)
    while stack:
        a = stack.pop(0)
        if isinstance(a, NDArray):
            has_nd = True
            if first is None:
                first = a.context
            ctxs.add(a.context)
        elif isinstance(a, Symbol):
            has_sym = True
        elif isinstance(a, (list, tuple)):
            stack[:0] = list(a)
    return has_sym, has_nd, ctxs, first


def _compatible_format(fmt, stored):
    """Whether call format ``fmt`` matches ``stored`` up to trailing Nones (defaults)."""
    if not isinstance(fmt, list) or not isinstance(stored, list):
        return False
    short, long_ = (fmt, stored) if len(fmt) < len(stored) else (stored, fmt)
    return len(short) != len(long_) and long_[:len(short)] == short and \
        all(f == -1 for f in long_[len(short):])
