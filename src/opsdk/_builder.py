"""The NNVM-style registration builder: ``register_op`` defines, ``extend_op`` attaches."""

from __future__ import annotations

import sys

from mxnext import ops as registry
from mxnext.base import PluginError


def caller_module(depth: int = 2) -> str | None:
    """The module of the code calling an opsdk registration function (``depth`` frames up):
    what the registry attributes an op to when it is registered outside a plugin load (an
    op module imported before mxnext loaded the plugins)."""
    return sys._getframe(depth).f_globals.get("__name__")


class OpBuilder:
    """Chainable setters on one ``OpDef`` (``NNVM_REGISTER_OP(name).set_attr(...)...``),
    all attributed to ``provider``."""

    __slots__ = ("opdef", "provider", "_defines")

    def __init__(self, opdef, provider: str, defines: bool):
        self.opdef = opdef
        self.provider = provider
        self._defines = defines

    def _definition(self, what: str):
        if not self._defines:
            raise PluginError(f"Operator {self.opdef.name!r}: extend_op() only adds attributes; "
                              f"{what} belongs to the plugin that defines the op (register_op)")

    def add_alias(self, alias: str) -> "OpBuilder":
        self._definition("add_alias")
        registry.add_alias(self.opdef, alias)
        return self

    def describe(self, text: str) -> "OpBuilder":
        self._definition("describe")
        self.opdef.description = text
        return self

    def set_attr_parser(self, param_model) -> "OpBuilder":
        self._definition("set_attr_parser")
        self.opdef.set_param_model(param_model)
        return self

    def add_argument(self, name: str, type_str: str, description: str = "") -> "OpBuilder":
        self._definition("add_argument")
        self.opdef.arguments.append(registry.Argument(name, type_str, description))
        return self

    def set_num_inputs(self, n, plevel: int = 10) -> "OpBuilder":
        return self.set_attr("FNumInputs", n, plevel)

    def set_num_outputs(self, n, plevel: int = 10) -> "OpBuilder":
        return self.set_attr("FNumOutputs", n, plevel)

    def set_attr(self, key: str, value, plevel: int = 10) -> "OpBuilder":
        self.opdef.set_attr(key, value, plevel, self.provider)
        return self

    # decorator sugar: @register_op("x").compute("cpu") / .attr("FGradient")
    def attr(self, key: str, plevel: int = 10):
        """Decorator form of ``set_attr``; returns the function unchanged."""
        def deco(fn):
            self.set_attr(key, fn, plevel)
            return fn
        return deco

    def compute(self, device: str = "cpu", plevel: int = 10):
        """Decorator setting ``FCompute<device>``."""
        return self.attr(f"FCompute<{device}>", plevel)

    def infer_shape(self, fn):
        return self.attr("FInferShape")(fn)

    def infer_type(self, fn):
        return self.attr("FInferType")(fn)

    def gradient(self, fn):
        return self.attr("FGradient")(fn)


def register_op(name: str) -> OpBuilder:
    """Define op ``name`` for the current plugin (get-or-create) and return its builder."""
    d = registry.define(name, module=caller_module())
    return OpBuilder(d, d.provider, defines=True)


def extend_op(name: str) -> OpBuilder:
    """Add attributes (e.g. ``FCompute<gpu>``) to an op another plugin defines, in any load
    order; this does not claim the op, and definition setters raise ``PluginError``."""
    d = registry.op(name)
    return OpBuilder(d, registry.current_provider(caller_module()), defines=False)


def outranked(name: str, key: str):
    """The value of attribute ``key`` of op ``name`` that the winning entry outranks: the
    highest-plevel entry another plugin set (an ops-nn kernel under a faster provider's),
    for a kernel that falls back per call; ``PluginError`` when there is none."""
    d = registry.get(name)
    winner = d.attrs.get(key)
    lost = [e for k, e in d.ignored
            if k == key and (winner is None or e.provider != winner.provider)]
    if not lost:
        raise PluginError(f"Operator {name!r}: no other plugin set {key!r} below "
                          f"{winner.provider if winner else 'the winning entry'!r}, so there "
                          f"is nothing to fall back to")
    return max(lost, key=lambda e: e.plevel).value
