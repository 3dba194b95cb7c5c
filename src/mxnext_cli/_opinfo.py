"""Plain-data views of registry entries for ``ops list`` / ``ops show`` (and their ``--json``)."""

from __future__ import annotations

import inspect
import types
import typing

__all__ = ["FRONTENDS", "default_params", "summary", "details", "field_info", "devices_of"]

# The ``mx.<frontend>`` namespaces whose call form ``ops show`` prints.
FRONTENDS = ("nd", "sym")

_COMPUTE = "FCompute<"


def devices_of(opdef) -> list[str]:
    """Device types with a compute function for ``opdef`` (an ``OpDef`` or ``OpInfo``: from
    its ``FCompute<dev>`` keys)."""
    return sorted(k[len(_COMPUTE):-1] for k in opdef.attrs if k.startswith(_COMPUTE))


def default_params(opdef):
    """``(ok, params)``: the op's parameters with every default, ``ok=False`` when some
    parameter is required (then counts and names that depend on it are unknown)."""
    if opdef.param_model is None:
        return True, None
    try:
        return True, opdef.parse_params({})
    except Exception:  # a required parameter: nothing to evaluate with
        return False, None


def _call(fn, params):
    try:
        return fn(params)
    except Exception:  # depends on a parameter we could not fill
        return None


def summary(info) -> dict:
    """``ops list``'s row of a ``registry.OpInfo`` (counts are None where they read a
    parameter without default, shown as "var")."""
    return {
        "name": info.name,
        "plugin": info.provider,
        "aliases": sorted(info.aliases),
        "num_inputs": info.num_inputs,
        "num_outputs": info.num_outputs,
        "devices": devices_of(info),
    }


def details(opdef, functions: dict) -> dict:
    """Everything ``ops show`` prints; ``functions`` maps a frontend (``FRONTENDS``) to the
    op's generated function there, whose real signature is the call form shown."""
    from mxnext import ops as registry
    ok, params = default_params(opdef)
    var_arg = opdef.get_attr("key_var_num_args")
    out = summary(registry.OpInfo.of(opdef))
    out.update({
        "description": opdef.description or "",
        "inputs": [{"name": a.name, "type": a.type, "description": a.description}
                   for a in opdef.arguments],
        "input_names": None if var_arg and not ok else _call(opdef.list_input_names, params),
        "output_names": _call(opdef.list_output_names, params),
        "variadic_inputs": var_arg,
        "params": [field_info(n, f) for n, f in
                   (opdef.param_model.model_fields.items() if opdef.param_model else ())],
        "attrs": [{"key": k, "plevel": e.plevel, "provider": e.provider}
                  for k, e in sorted(opdef.attrs.items())],
        # entries a higher plevel outranks: the winner may hand them calls it does not cover
        "outranked": [{"key": k, "plevel": e.plevel, "provider": e.provider}
                      for k, e in sorted(opdef.ignored, key=lambda ke: (ke[0], -ke[1].plevel))],
        "gradient": "FGradient" in opdef.attrs,
        "inplace": _attr_call(opdef, "FInplaceOption", params),
        "mutate_inputs": _attr_call(opdef, "FMutateInputs", params),
        "resources": [getattr(r, "name", str(r)) for r in
                      (_attr_call(opdef, "FResourceRequest", params) or [])],
        "signature": {ns: f"mx.{ns}.{opdef.name}{_signature(fn)}"
                      for ns, fn in functions.items()},
    })
    return out


def _attr_call(opdef, key, params):
    """The attribute evaluated at the default parameters (None when absent or when it
    reads a parameter that has no default)."""
    fn = opdef.get_attr(key)
    if fn is None:
        return None
    value = _call(fn, params) if callable(fn) else fn
    return [list(v) if isinstance(v, tuple) else v for v in value] if value is not None else None


def _signature(fn) -> str:
    """MXNet's style: names and defaults; the types are in the parameter table."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    empty = inspect.Parameter.empty
    params = [p.replace(annotation=empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=empty))


def field_info(name, info) -> dict:
    ann = info.annotation
    members = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, types.UnionType) else (ann,)
    enum = [v for m in members if typing.get_origin(m) is typing.Literal for v in typing.get_args(m)]
    bounds = {attr: getattr(c, attr) for c in info.metadata
              for attr in ("ge", "gt", "le", "lt") if getattr(c, attr, None) is not None}
    required = info.is_required()
    return {
        "name": name,
        "type": " or ".join(_type_name(m) for m in members),
        "required": required,
        "default": None if required else _jsonable(info.get_default(call_default_factory=True)),
        "enum": enum or None,
        "bounds": bounds or None,
        "description": info.description or "",
    }


def _type_name(t) -> str:
    from mxnext.params import DType
    if t is type(None):
        return "None"
    if t == DType:
        return "dtype"
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(t)[0])
    if origin is typing.Literal:
        return "enum"
    if origin in (tuple, list):
        args = [a for a in typing.get_args(t) if a is not Ellipsis]
        return f"tuple of {_type_name(args[0])}" if args else "tuple"
    return getattr(t, "__name__", str(t))


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
