"""MXNet's name -> class registries of ``mx.init`` and ``mx.metric``: their ``register``
and ``alias`` are ``mx.registry``'s, and ``from_string`` is what their ``create`` makes of
a string."""

from __future__ import annotations

import json

from ._runtime.base import ParamError, did_you_mean
from .registry import TABLES, get_alias_func, get_register_func


def class_registry(kind: str, base: type, table: dict, api: str):
    """``(register, alias, from_string)`` filling and reading ``table`` with subclasses of
    ``base`` (``register`` and ``alias`` are ``mx.registry``'s for ``base``); ``api`` is the
    user-facing module (``mx.init``) named in errors."""
    TABLES[base] = table
    register, alias = get_register_func(base, kind), get_alias_func(base, kind)

    def from_string(spec, args, kwargs, create, from_dict):
        """``create``'s result for a string: JSON ``[name, {kwargs}]`` (back to ``create``)
        or a JSON object (``from_dict``), else a registered name built with the arguments."""
        if spec.startswith(("[", "{")):
            if args or kwargs:
                raise ParamError(f"{kind}.create: a JSON spec takes no extra arguments")
            try:
                loaded = json.loads(spec)
            except json.JSONDecodeError as err:
                raise ParamError(f"{kind}.create: {spec!r} is not valid JSON: {err}") from None
            if isinstance(loaded, dict):
                return from_dict(loaded)
            if not (isinstance(loaded, list) and len(loaded) == 2
                    and isinstance(loaded[1], dict)):
                raise ParamError(f"{kind}.create: expected '[name, {{kwargs}}]', got {spec!r}")
            return create(loaded[0], **loaded[1])
        klass = table.get(spec.lower())
        if klass is None:
            raise ParamError(f"{kind}.create: {spec!r} is not a registered {kind}"
                             f"{did_you_mean(spec.lower(), table)}; known: "
                             f"{', '.join(sorted(table))} (add one with {api}.register)")
        return klass(*args, **kwargs)

    return register, alias, from_string
