"""Operator parameters: pydantic models in the role of ``dmlc::Parameter``.

A ``Param`` subclass declares typed fields with bounds, defaults and
descriptions. It accepts MXNet's string kwargs exactly as MXNet code and
symbol JSON write them (``kernel="(3,3)"``, ``no_bias="True"``,
``eps="1e-3"``, ``axis="None"``) and prints them back the same way
(``to_mxnet_dict``). Errors are ``ParamError`` naming the op, the field, the
value given and what is allowed.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Annotated, Literal, Union

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from .base import MXNET_BFLOAT16, ParamError, as_dtype, did_you_mean

__all__ = ["Param", "Field", "DType", "normalize_dtype", "format_value", "mxnet_type"]

_TRUE = {"true", "1"}
_FALSE = {"false", "0"}

# MXNet dtype names (mshadow type flags) -> numpy dtype names.
_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "uint8": "uint8",
           "int8": "int8", "int32": "int32", "int64": "int64", "bool": "bool", "int16": "int16",
           "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
           "real_t": "float32", "bfloat16": "bfloat16"}


def normalize_dtype(value):
    """MXNet dtype spelling (``"float32"``, ``np.float32``, a numpy dtype) -> numpy dtype name."""
    if value is None or (isinstance(value, str) and value == "None"):
        return None
    if isinstance(value, str):
        name = _DTYPES.get(value)
        if name is None:
            raise ValueError(f"unknown dtype {value!r}; one of {sorted(set(_DTYPES) - {'real_t'})}")
        return name
    try:
        return as_dtype(value).name
    except TypeError as exc:
        raise ValueError(f"not a dtype: {value!r}") from exc


DType = Annotated[str, BeforeValidator(normalize_dtype)]
"""A field type for MXNet dtype strings; the parsed value is the numpy dtype name."""


def format_value(value) -> str:
    """A Python value as MXNet prints it in kwargs and symbol JSON."""
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return str(value)


def _union_args(ann):
    if typing.get_origin(ann) in (Union, types.UnionType):
        return typing.get_args(ann)
    return (ann,)


def _plan(ann):
    """How to pre-convert a string for a field of type ``ann``: (allows_none, kind)."""
    members = _union_args(ann)
    allows_none = type(None) in members
    kinds = set()
    for m in members:
        origin = typing.get_origin(m)
        if m is bool:
            kinds.add("bool")
        elif m is tuple or origin is tuple or origin is list:
            kinds.add("tuple")
    return allows_none, ("tuple" if "tuple" in kinds else "bool" if "bool" in kinds else None)


def _parse_scalar(text: str):
    text = text.strip()
    if text in ("None", ""):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _parse_tuple(text: str):
    body = text.strip()
    if body[:1] in "([" and body[-1:] in ")]":
        body = body[1:-1]
    return tuple(_parse_scalar(p) for p in body.split(",") if p.strip())


def mxnet_type(info) -> str:
    """A parameter's type as MXNet's operator registry describes it (``get_operator_arguments``,
    docstrings): ``"{'relu', 'tanh'}, required"``, ``"float, optional, default=0.25"``,
    ``"Shape(tuple), required"``, ``"int or None, optional, default='None'"``."""
    members = _union_args(info.annotation)
    optional = type(None) in members
    names = []
    for m in members:
        if m is type(None):
            continue
        origin = typing.get_origin(m)
        if origin is Literal:
            names.append("{" + ", ".join(repr(a) for a in sorted(typing.get_args(m))) + "}")
        elif isinstance(m, type) and issubclass(m, enum.Enum):
            names.append("{" + ", ".join(repr(e.value) for e in sorted(m, key=str)) + "}")
        elif m is bool:
            names.append("boolean")
        elif m is tuple or origin in (tuple, list):
            names.append("Shape(tuple)")
        elif m is str:
            names.append("string")
        else:
            names.append(getattr(m, "__name__", str(m)))
    text = " or ".join(names) + (" or None" if optional else "")
    if info.is_required():
        return f"{text}, required"
    default = info.default
    shown = (repr("None") if default is None else str(int(default)) if isinstance(default, bool)
             else repr(default) if isinstance(default, str) else format_value(default))
    return f"{text}, optional, default={shown}"


def _describe_allowed(info) -> str:
    ann = info.annotation
    members = [m for m in _union_args(ann) if m is not type(None)]
    parts = []
    for m in members:
        if typing.get_origin(m) is Literal:
            parts.append("one of " + ", ".join(repr(a) for a in typing.get_args(m)))
        elif isinstance(m, type) and issubclass(m, enum.Enum):
            parts.append("one of " + ", ".join(repr(e.value) for e in m))
        elif m is tuple or typing.get_origin(m) is tuple:
            parts.append("a tuple like (3, 3)")
        elif m is bool:
            parts.append("a bool (True/False/1/0)")
        else:
            parts.append(getattr(m, "__name__", str(m)))
    if len(parts) < len(_union_args(ann)):
        parts.append("None")
    bounds = [f"{op} {getattr(c, attr)}" for c in info.metadata
              for attr, op in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
              if getattr(c, attr, None) is not None]
    return " or ".join(parts) + (" " + ", ".join(bounds) if bounds else "")


class Param(BaseModel):
    """Base of every operator parameter model (frozen, hashable, extra fields forbidden)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs):
        super().__pydantic_init_subclass__(**kwargs)
        cls._plans = {name: _plan(info.annotation) for name, info in cls.model_fields.items()}

    @model_validator(mode="before")
    @classmethod
    def _coerce_mxnet_strings(cls, data):
        if not isinstance(data, dict):
            return data
        plans = cls.__dict__.get("_plans") or {}
        out = {}
        for key, value in data.items():
            allows_none, kind = plans.get(key, (False, None))
            if isinstance(value, str):
                text = value.strip()
                if allows_none and text == "None":
                    value = None
                elif kind == "bool" and text.lower() in _TRUE:
                    value = True
                elif kind == "bool" and text.lower() in _FALSE:
                    value = False
                elif kind == "tuple":
                    value = _parse_tuple(text)
            elif isinstance(value, np.dtype) and value == MXNET_BFLOAT16:
                value = "bfloat16"                 # MXNet's bfloat16 (any dtype field)
            elif kind == "tuple" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                value = (int(value),)
            elif kind == "tuple" and isinstance(value, list):
                value = tuple(value)
            out[key] = value
        return out

    @classmethod
    def parse(cls, kwargs: dict, op: str = "?"):
        """Validate ``kwargs`` (MXNet strings accepted) into an instance; ``ParamError`` if bad."""
        fields = cls.model_fields
        for key in kwargs:
            if key not in fields:
                raise ParamError(
                    f"Operator {op!r}: unknown parameter {key!r}{did_you_mean(key, fields)}; "
                    f"known parameters: {', '.join(fields) or 'none'}")
        try:
            return cls(**kwargs)
        except ValidationError as exc:
            err = exc.errors()[0]
            if not err["loc"]:             # a check across fields (a model validator)
                msg = err["msg"].removeprefix("Value error, ")
                raise ParamError(f"Operator {op!r}: {msg}") from None
            field = str(err["loc"][0])
            info = fields.get(field)
            allowed = _describe_allowed(info) if info is not None else "a valid value"
            if err["type"] == "missing":
                raise ParamError(f"Operator {op!r}: required parameter {field!r} is missing "
                                 f"(expected {allowed})") from None
            raise ParamError(f"Operator {op!r}: invalid value {kwargs.get(field)!r} for parameter "
                             f"{field!r}: expected {allowed} ({err['msg']})") from None

    def to_mxnet_dict(self, include_defaults: bool = False) -> dict[str, str]:
        """Parameters as MXNet strings (``"(3, 3)"``, ``"True"``, ``"None"``) for symbol JSON.

        Only the explicitly set fields unless ``include_defaults``, so the op's
        defaults stay the single source, as MXNet's JSON does.
        """
        fields = type(self).model_fields
        names = fields if include_defaults else [n for n in fields if n in self.model_fields_set]
        return {n: format_value(getattr(self, n)) for n in names}

