"""MXNet's registry for serializable objects: per base class, a name -> subclass table
that libraries fill and read at import time (``get_register_func``, ``get_alias_func``,
``get_create_func``, ``get_registry``), as ``mxnet.registry`` in MXNet 1.9.1.

``mx.init`` and ``mx.metric`` keep their tables here too, so ``get_registry(
mx.init.Initializer)`` lists the registered initializers. The operator registry is
``mxnext.ops``.
"""

from __future__ import annotations

import json
import warnings

from ._runtime.base import ParamError

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

# base class -> its name -> class table
TABLES: dict[type, dict] = {}


def get_registry(base_class: type) -> dict:
    """A copy of the name -> class table of ``base_class``."""
    return dict(TABLES.setdefault(base_class, {}))


def get_register_func(base_class: type, nickname: str):
    """``register(klass, name=None)`` for subclasses of ``base_class`` under ``name``
    (default: the class name), lower-cased as MXNet does; re-registering a name warns and
    replaces it. ``nickname`` names the kind in messages."""
    table = TABLES.setdefault(base_class, {})

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise ParamError(f"{nickname}.register: can only register a subclass of "
                             f"{base_class.__name__}, got {klass!r}")
        name = (name or klass.__name__).lower()
        old = table.get(name)
        if old is not None:
            warnings.warn(f"New {nickname} {klass.__module__}.{klass.__name__} registered "
                          f"with name {name} is overriding existing {nickname} "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        table[name] = klass
        return klass

    register.__doc__ = f"Register {nickname} to the {nickname} factory"
    return register


def get_alias_func(base_class: type, nickname: str):
    """``alias(*names)``: a class decorator registering the class under every name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class: type, nickname: str):
    """``create(name_or_instance, *args, **kwargs)``: an instance of the class registered
    under ``name`` (case-insensitive), built with the arguments. The name may also come as
    keyword ``nickname``, as a dict of keyword arguments, or as JSON (``'["name",
    {kwargs}]'`` or ``'{kwargs}'``); an instance of ``base_class`` is returned as is."""
    table = TABLES.setdefault(base_class, {})

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise ParamError(f"{nickname} create: expected the {nickname} name as the first "
                             f"argument or keyword {nickname!r}, got neither")
        if isinstance(name, base_class):
            if args or kwargs:
                raise ParamError(f"{nickname} create: {name!r} is already an instance; "
                                 f"additional arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise ParamError(f"{nickname} create: {nickname} must be a string or a "
                             f"{base_class.__name__}, got {type(name).__name__}")
        if name.startswith(("[", "{")):
            if args or kwargs:
                raise ParamError(f"{nickname} create: a JSON spec takes no extra arguments")
            spec = json.loads(name)
            return create(spec[0], **spec[1]) if name.startswith("[") else create(**spec)
        klass = table.get(name.lower())
        if klass is None:
            raise ParamError(f"{nickname} create: {name.lower()!r} is not registered; "
                             f"register it with {nickname}.register first (known: "
                             f"{', '.join(sorted(table)) or 'none'})")
        return klass(*args, **kwargs)

    create.__doc__ = (f"Create a {nickname} instance from config: the name of a registered "
                      f"{base_class.__name__} subclass, or an instance (returned as is)")
    return create
