"""MXNet's name -> class registries (``mx.init.register``, ``mx.metric.register``, their
``alias`` decorators, and what their ``create`` makes of a string): one table per kind,
names lower-cased, a re-registration warns."""

from __future__ import annotations

import json
import warnings

from ._runtime.base import ParamError, did_you_mean

# base class -> its table, shared with MXNet's helper ``mx.registry``
TABLES: dict[type, dict] = {}


def class_registry(kind: str, base: type, table: dict, api: str):
    """``(register, alias, from_string)`` filling and reading ``table`` with subclasses of
    ``base``; ``api`` is the user-facing module (``mx.init``) named in errors."""
    TABLES[base] = table
    def register(klass, name=None):
        """Make ``klass`` available to ``create`` under ``name`` (default: its class name),
        lower-cased. Re-registering a name warns and replaces it."""
        if not (isinstance(klass, type) and issubclass(klass, base)):
            raise ParamError(f"{kind}.register: expected a subclass of {base.__name__}, got "
                             f"{klass!r}")
        key = (name or klass.__name__).lower()
        old = table.get(key)
        if old is not None and old is not klass:
            warnings.warn(f"{kind} {klass.__module__}.{klass.__name__} registered as {key!r} "
                          f"replaces {old.__module__}.{old.__name__}", UserWarning,
                          stacklevel=2)
        table[key] = klass
        return klass

    def alias(*names):
        """Class decorator: register the class under each of ``names`` as well."""
        def decorate(klass):
            for name in names:
                register(klass, name)
            return klass
        return decorate

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
