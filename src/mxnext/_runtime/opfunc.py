"""Build a frontend function for an ``OpDef``: the one builder of ``mx.nd`` and ``mx.sym``.

``make_op_function(opdef, call, name, frontend)`` returns a plain Python function with a real
``inspect.Signature`` and a docstring built from the op's arguments and parameter model.
Parameters not passed stay absent from the kwargs handed to ``call(opdef, inputs, kwargs,
out, name)``, so the op's model defaults remain the single source. Variadic ops
(``key_var_num_args``) take ``*args`` and get their count parameter filled in.

The ``frontend`` says what differs between the two: the trailing keywords of the signature
(``out, name`` for NDArray; ``name, attr, out`` for Symbol, where ``attr`` reaches ``call``
in kwargs), the return type in the docstring, and whether the inputs of a fixed-arity op
reach ``call`` as a list of the given ones (NDArray) or as a dict by input name (Symbol,
which fills a missing input with a variable in its place).
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

__all__ = ["Frontend", "NDARRAY", "SYMBOL", "make_op_function", "input_names", "_Null"]


class _NullType:
    """The default of a parameter that was not passed ("use the op's default")."""

    __slots__ = ()

    def __repr__(self):
        return "_Null"

    def __bool__(self):
        return False


_Null = _NullType()


class Frontend(NamedTuple):
    kind: str                         # what the function returns: "NDArray" or "Symbol"
    trailing: tuple[str, ...]         # keyword parameters after the op's parameters
    trailing_doc: tuple[str, ...]     # their docstring lines
    named_inputs: bool                # inputs as {name: value} (else a list of those given)


NDARRAY = Frontend("NDArray", ("out", "name"), (
    "out : NDArray, optional", "    The output array to write the result into."), False)
SYMBOL = Frontend("Symbol", ("name", "attr", "out"), (
    "name : str, optional", "    The name of the resulting symbol (default: automatic).",
    "attr : dict of str to str, optional", "    Attributes to set on the resulting symbol."),
    True)


def input_names(opdef) -> list[str]:
    """Names of the op's tensor arguments, in order; for an op that declares none (backward
    ops), its default input names when its input count does not depend on parameters."""
    names = [a.name for a in opdef.arguments if "NDArray" in a.type or "Symbol" in a.type]
    if names or opdef.get_attr("key_var_num_args") is not None:
        return names
    try:
        return opdef.list_input_names(opdef.parse_params({}))
    except Exception:  # required parameters: the count is unknown until called
        return []


def make_op_function(opdef, call, name=None, frontend=NDARRAY):
    """A function calling ``call(opdef, inputs, kwargs, out, name)`` with bound arguments."""
    fields = list(opdef.param_model.model_fields) if opdef.param_model is not None else []
    var_key = opdef.get_attr("key_var_num_args")
    if var_key is not None or _variadic(opdef):
        fill_count = var_key is not None and var_key in fields

        def op_function(*args, out=None, name=None, **kwargs):
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = args[0]
            if fill_count and var_key not in kwargs:
                kwargs[var_key] = len(args)
            return call(opdef, list(args), kwargs, out, name)
    elif frontend.named_inputs:
        ins = input_names(opdef)
        n_in = len(ins)

        def op_function(*args, out=None, name=None, **kwargs):
            if len(args) > n_in:
                args = _positional_params(opdef, args, n_in, fields, kwargs)
            inputs = dict(zip(ins, args))
            for k in ins:
                if k in kwargs:
                    if inputs.get(k) is not None:
                        raise TypeError(f"{opdef.name}() got multiple values for input {k!r}")
                    inputs[k] = kwargs.pop(k)
            return call(opdef, {k: v for k, v in inputs.items() if v is not None}, kwargs,
                        out, name)
    else:
        ins = input_names(opdef)
        n_in = len(ins)
        in_set = frozenset(ins)

        def op_function(*args, out=None, name=None, **kwargs):
            if len(args) > n_in:
                args = _positional_params(opdef, args, n_in, fields, kwargs)
            if in_set and not in_set.isdisjoint(kwargs):
                inputs = list(args) + [None] * (n_in - len(args))
                for i, k in enumerate(ins):
                    if k in kwargs:
                        if inputs[i] is not None:
                            raise TypeError(f"{opdef.name}() got multiple values for input {k!r}")
                        inputs[i] = kwargs.pop(k)
            else:
                inputs = args
            given = []                  # a plain loop: no comprehension frame per call
            for a in inputs:
                if a is not None:
                    given.append(a)
            return call(opdef, given, kwargs, out, name)

    fname = name or opdef.name
    op_function.__name__ = op_function.__qualname__ = fname
    op_function.__signature__ = _signature(opdef, fields,
                                           var_key is not None or _variadic(opdef), frontend)
    op_function.__doc__ = _docstring(opdef, fields, frontend)
    op_function.opdef = opdef
    return op_function


def _variadic(opdef) -> bool:
    """Whether the op takes a list of inputs (an ``NDArray-or-Symbol[]`` argument) whose
    count no parameter gives (``Custom``: its operator's)."""
    return any(a.type.endswith("[]") for a in opdef.arguments)


def _positional_params(opdef, args, n_in, fields, kwargs):
    """Move positional arguments past the inputs into ``kwargs`` as the op's parameters, in
    field order; returns the inputs part of ``args``."""
    if len(args) > n_in + len(fields):
        raise TypeError(f"{opdef.name}() takes at most {n_in + len(fields)} positional "
                        f"arguments ({len(args)} given)")
    for k, v in zip(fields, args[n_in:]):
        if k in kwargs:
            raise TypeError(f"{opdef.name}() got multiple values for argument {k!r}")
        kwargs[k] = v
    return args[:n_in]


def _signature(opdef, fields, variadic, frontend):
    P = inspect.Parameter
    model_fields = opdef.param_model.model_fields if fields else {}
    params = []
    if variadic:
        params.append(P("args", P.VAR_POSITIONAL))
        kind = P.KEYWORD_ONLY
    else:
        params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in input_names(opdef)]
        kind = P.POSITIONAL_OR_KEYWORD
    for f in fields:
        ann = model_fields[f].annotation
        params.append(P(f, kind, default=_Null, annotation=ann))
    for extra in frontend.trailing:
        params.append(P(extra, P.KEYWORD_ONLY if variadic else kind, default=None))
    if opdef.param_model is not None and opdef.param_model.model_config.get("extra") == "allow":
        params.append(P("kwargs", P.VAR_KEYWORD))       # the op's own parameters (Custom)
    return inspect.Signature(params)


def _type_name(ann) -> str:
    name = getattr(ann, "__name__", None)
    return name if name and not getattr(ann, "__args__", None) else str(ann).replace("typing.", "")


def _docstring(opdef, fields, frontend) -> str:
    lines = [opdef.description.strip() or f"The {opdef.name} operator.", "", "Parameters",
             "----------"]
    for a in opdef.arguments:
        lines.append(f"{a.name} : {a.type}")
        if a.description:
            lines.append(f"    {a.description}")
    model_fields = opdef.param_model.model_fields if fields else {}
    for f in fields:
        info = model_fields[f]
        if info.is_required():
            head = f"{f} : {_type_name(info.annotation)}, required"
        else:
            head = f"{f} : {_type_name(info.annotation)}, optional, default={info.default!r}"
        lines.append(head)
        if info.description:
            lines.append(f"    {info.description}")
    kind = frontend.kind
    lines += [*frontend.trailing_doc, "", "Returns", "-------",
              f"out : {kind} or list of {kind}s", "    The output of this function."]
    if opdef.aliases:
        lines += ["", f"Aliases: {', '.join(opdef.aliases)}"]
    return "\n".join(lines)
