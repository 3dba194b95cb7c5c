"""One operator's definition (``OpDef``): name, aliases, description, parameter model,
arguments and the attribute entries plugins set on it, each with its provider and plevel."""

from __future__ import annotations

from typing import NamedTuple

from .base import PluginError
from .op_provider import current_provider

__all__ = ["OpDef", "AttrEntry", "Argument", "Conflict", "Refusal"]

_PARAM_CACHE_MAX = 4096
_conflicts: list = []        # Conflict: equal plevels from two providers


class AttrEntry(NamedTuple):
    value: object
    plevel: int
    provider: str


class Argument(NamedTuple):
    name: str
    type: str
    description: str = ""


class Conflict(NamedTuple):
    op: str
    key: str
    plevel: int
    first: str      # provider holding the entry
    second: str     # provider that tried to set it at the same level


class Refusal(NamedTuple):
    name: str       # the op name or alias
    owner: str      # the provider whose definition holds it
    refused: str    # the provider whose later definition of it was refused


class OpDef:
    """One operator: name, aliases, description, parameter model, arguments, attributes."""

    def __init__(self, name: str, provider: str | None = None):
        self.name = name
        self.aliases: list[str] = []
        self.description = ""
        self.param_model = None
        self.arguments: list[Argument] = []
        self.attrs: dict[str, AttrEntry] = {}
        self.provider = provider
        self.ignored: list[tuple[str, AttrEntry]] = []   # lower-plevel entries that lost
        self._values: dict = {}
        self._param_cache: dict = {}

    # -- attributes --------------------------------------------------------------------
    def set_attr(self, key: str, value, plevel: int = 10, provider: str | None = None) -> None:
        """Set ``key`` for ``provider`` (default: the current one). A value with a
        ``bind_op(name)`` method (opsdk's shape/type rules) is bound to this op first,
        so its errors name the op at no cost per call."""
        provider = provider or current_provider()
        bind = getattr(value, "bind_op", None)
        if bind is not None:
            value = bind(self.name)
        old = self.attrs.get(key)
        entry = AttrEntry(value, plevel, provider)
        if old is not None and plevel < old.plevel:
            self.ignored.append((key, entry))
            return
        if old is not None and plevel == old.plevel and old.provider != provider:
            _conflicts.append(Conflict(self.name, key, plevel, old.provider, provider))
            raise PluginError(
                f"Operator {self.name!r}: attribute {key!r} at plevel {plevel} is set by both "
                f"plugin {old.provider!r} and plugin {provider!r}; one of them must use a "
                f"higher plevel")
        if old is not None and plevel > old.plevel:
            self.ignored.append((key, old))
        self.attrs[key] = entry
        self._values[key] = value

    def get_attr(self, key: str, default=None):
        return self._values.get(key, default)

    def has_attr(self, key: str) -> bool:
        return key in self._values

    def set_param_model(self, model) -> None:
        self.param_model = model
        self._param_cache.clear()

    # -- parameters --------------------------------------------------------------------
    def parse_params(self, kwargs):
        """kwargs (MXNet strings accepted) -> the op's ``Param`` instance, cached per kwargs."""
        try:
            key = frozenset(kwargs.items())
            hit = self._param_cache.get(key)
        except TypeError:       # unhashable values (lists): parse without caching
            key = hit = None
        if hit is not None:
            return hit
        model = self.param_model
        if model is None:       # as MXNet's: an op without parameters ignores keywords
            return None
        params = model.parse(kwargs, op=self.name)
        if key is not None:
            if len(self._param_cache) >= _PARAM_CACHE_MAX:
                self._param_cache.clear()
            self._param_cache[key] = params
        return params

    # -- arity and names (MXNet defaults when the attribute is absent) -----------------
    def num_inputs(self, params) -> int:
        v = self._values.get("FNumInputs")
        if v is None:
            var_key = self._values.get("key_var_num_args")
            if var_key is not None and params is not None:
                return int(getattr(params, var_key))
            return len(self.arguments) if self.arguments else 1
        return v(params) if callable(v) else v

    def num_outputs(self, params) -> int:
        v = self._values.get("FNumOutputs", 1)
        return v(params) if callable(v) else v

    def num_visible_outputs(self, params) -> int:
        v = self._values.get("FNumVisibleOutputs")
        if v is None:
            return self.num_outputs(params)
        return v(params) if callable(v) else v

    def list_input_names(self, params) -> list[str]:
        fn = self._values.get("FListInputNames")
        if fn is not None:
            return list(fn(params))
        n = self.num_inputs(params)
        names = [a.name for a in self.arguments]
        var_args = "key_var_num_args" in self._values
        if len(names) == n and not var_args:
            return names
        return ["data"] if n == 1 and not var_args else [f"arg{i}" for i in range(n)]

    def list_output_names(self, params) -> list[str]:
        fn = self._values.get("FListOutputNames")
        if fn is not None:
            return list(fn(params))
        n = self.num_outputs(params)
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def mutate_inputs(self, params) -> list[int]:
        fn = self._values.get("FMutateInputs")
        return list(fn(params)) if fn is not None else []

    def __repr__(self):
        return f"<OpDef {self.name} by {self.provider or 'nobody (orphan)'}>"
