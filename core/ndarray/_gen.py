"""Build a frontend function for an ``OpDef`` (shared by ``mx.nd`` and ``mx.sym``).

``make_op_function(opdef, call)`` returns a plain Python function with a real
``inspect.Signature`` and a docstring built from the op's arguments and
parameter model. Parameters not passed stay absent from the kwargs handed to
``call(opdef, inputs, kwargs, out, name)``, so the op's model defaults remain
the single source. Variadic ops (``key_var_num_args``) take ``*args`` and get
their count parameter filled in.
"""

from __future__ import annotations

import inspect

__all__ = ["make_op_function", "input_names", "_Null"]


class _NullType:
    """The default of a parameter that was not passed ("use the op's default")."""

    __slots__ = ()

    def __repr__(self):
        return "_Null"

    def __bool__(self):
        return False


_Null = _NullType()


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


def make_op_function(opdef, call, name=None):
    """A function calling ``call(opdef, inputs, kwargs, out, name)`` with bound arguments."""
    fields = list(opdef.param_model.model_fields) if opdef.param_model is not None else []
    var_key = opdef.get_attr("key_var_num_args")
    if var_key is not None:
        fill_count = var_key in fields

        def op_function(*args, out=None, name=None, **kwargs):
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = args[0]
            if fill_count and var_key not in kwargs:
                kwargs[var_key] = len(args)
            return call(opdef, list(args), kwargs, out, name)
    else:
        ins = input_names(opdef)
        n_in = len(ins)
        in_set = frozenset(ins)
        positional = ins + fields

        def op_function(*args, out=None, name=None, **kwargs):
            if len(args) > n_in:
                if len(args) > len(positional):
                    raise TypeError(f"{opdef.name}() takes at most {len(positional)} positional "
                                    f"arguments ({len(args)} given)")
                for k, v in zip(fields, args[n_in:]):
                    if k in kwargs:
                        raise TypeError(f"{opdef.name}() got multiple values for argument {k!r}")
                    kwargs[k] = v
                args = args[:n_in]
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
    op_function.__signature__ = _signature(opdef, fields, var_key)
    op_function.__doc__ = _docstring(opdef, fields)
    op_function.opdef = opdef
    return op_function


def _signature(opdef, fields, var_key):
    P = inspect.Parameter
    model_fields = opdef.param_model.model_fields if fields else {}
    params = []
    if var_key is not None:
        params.append(P("args", P.VAR_POSITIONAL))
        kind = P.KEYWORD_ONLY
    else:
        params += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in input_names(opdef)]
        kind = P.POSITIONAL_OR_KEYWORD
    for f in fields:
        ann = model_fields[f].annotation
        params.append(P(f, kind, default=_Null, annotation=ann))
    params.append(P("out", P.KEYWORD_ONLY if var_key is not None else kind, default=None))
    params.append(P("name", P.KEYWORD_ONLY if var_key is not None else kind, default=None))
    return inspect.Signature(params)


def _type_name(ann) -> str:
    name = getattr(ann, "__name__", None)
    return name if name and not getattr(ann, "__args__", None) else str(ann).replace("typing.", "")


def _docstring(opdef, fields) -> str:
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
    lines += ["out : NDArray, optional", "    The output array to write the result into.", "",
              "Returns", "-------", "out : NDArray or list of NDArrays",
              "    The output of this function."]
    if opdef.aliases:
        lines += ["", f"Aliases: {', '.join(opdef.aliases)}"]
    return "\n".join(lines)
