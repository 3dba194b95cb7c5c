"""The fused body graph a MXNet 1.9.1 oneDNN subgraph node (``_sg_mkldnn_conv``,
``_sg_mkldnn_fully_connected``) carries in its JSON ``subgraphs`` field: what it fuses is
read from the body's ops (the conv / FC parameters, BatchNorm's ``eps`` and ``fix_gamma``,
the activations before and after the sum)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from opsdk import Field, MXNetError, Param
from pydantic import ConfigDict, field_validator

_SUMS = ("elemwise_add", "_plus", "_Plus", "broadcast_add", "_add")
_F32 = np.float32
# oneDNN's eltwise post-ops MXNet fuses, by kind; (kind, alpha) is a fused activation
_ACTS = {
    "relu": lambda y, a: np.maximum(y, _F32(0)),
    "sigmoid": lambda y, a: _F32(1) / (_F32(1) + np.exp(-y)),
    "tanh": lambda y, a: np.tanh(y),
    "softrelu": lambda y, a: np.logaddexp(_F32(0), y),
    "leaky": lambda y, a: np.where(y > 0, y, y * _F32(a)),
    "clip": lambda y, a: np.clip(y, _F32(0), _F32(a)),       # bounded relu
}
UNSIGNED_ACTS = ("relu", "sigmoid", "softrelu", "clip")   # MXNet's uint8-output activations


def activate(y, act):
    """``y`` through a fused activation ``(kind, alpha)`` (None: as it is)."""
    return y if act is None else _ACTS[act[0]](y, act[1]).astype(y.dtype)


def _activation(op, node):
    """The (kind, alpha) of an activation node of the body."""
    name, p = node.op.name, node.params
    if name == "Activation" and p.act_type in _ACTS:
        return p.act_type, None
    if name == "LeakyReLU" and p.act_type == "leaky":
        return "leaky", p.slope
    if name == "clip" and p.a_min == 0:
        return "clip", p.a_max
    kind = getattr(p, "act_type", name)
    raise MXNetError(f"Operator {op!r}: fused activation {name} {kind!r} is not supported "
                     f"(relu, sigmoid, tanh, softrelu, leaky, clip from 0)")


def _topo(heads):
    """The body's op nodes (inputs first)."""
    seen, order = set(), []

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for e in node.inputs:
            visit(e.node)
        if node.op is not None:
            order.append(node)
    for e in heads:
        visit(e.node)
    return order


class FusedBody:
    """One body graph (``graphs`` as the JSON writer reads it) and what it fuses: ``main``
    (the conv / FC node's parameters), ``bn`` (BatchNorm's, or None), ``act`` and
    ``postsum_act`` (the activation before / after the sum as (kind, alpha), or None)."""

    def __init__(self, op, graphs, main):
        graphs = tuple(list(getattr(g, "_outputs", g)) for g in graphs)
        if len(graphs) != 1:
            raise MXNetError(f"Operator {op!r}: expected one body graph in subgraphs, got "
                             f"{len(graphs)}")
        self.graphs = graphs
        self.main = self.bn = self.act = self.postsum_act = None
        summed = False
        for node in _topo(graphs[0]):
            name = node.op.name
            if name == main:
                self.main = node.params
            elif name == "BatchNorm":
                self.bn = node.params
            elif name in _SUMS:
                summed = True
            elif name in ("Activation", "LeakyReLU", "clip"):
                act = _activation(op, node)
                self.postsum_act, self.act = (act, self.act) if summed else (None, act)
            else:
                raise MXNetError(f"Operator {op!r}: its body graph holds {name!r}, which "
                                 f"it cannot fuse")
        if self.main is None:
            raise MXNetError(f"Operator {op!r}: its body graph holds no {main}")

    def __repr__(self):
        return f"<fused body of {len(self.graphs)} graph(s)>"


class FusedParam(Param):
    """What the fused ops' parameters share: the body graph (JSON: the subgraphs field,
    never written as an attribute), the calibration, and MXNet's older attribute names."""
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True,
                              arbitrary_types_allowed=True)
    op_name: ClassVar[str]
    fuses: ClassVar[str]                        # the body's main op
    renamed: ClassVar[dict] = {}                # older MXNet's attribute names
    quantized: bool = Field(False, description="Enable quantization.")
    min_calib_range: float | None = Field(None, description="Calibrated output minimum.")
    max_calib_range: float | None = Field(None, description="Calibrated output maximum.")
    subgraphs: Any = Field(description="The fused body graph (JSON: the subgraphs field).")

    @classmethod
    def parse(cls, kwargs, op="?"):
        return super().parse({cls.renamed.get(k, k): v for k, v in kwargs.items()}, op)

    @field_validator("subgraphs", mode="before")
    @classmethod
    def _body(cls, value):
        return value if isinstance(value, FusedBody) else FusedBody(cls.op_name, value,
                                                                     cls.fuses)

    def to_mxnet_dict(self, include_defaults=False):
        d = super().to_mxnet_dict(include_defaults)
        d.pop("subgraphs", None)
        return d

    @property
    def main(self):
        """The fused conv / FC node's own parameters."""
        return self.subgraphs.main

    def fused_act(self, on, after_sum=False):
        """The body's activation (before or after the sum) when the flag ``on`` is set."""
        if not on:
            return None
        return self.subgraphs.postsum_act if after_sum else self.subgraphs.act

    @property
    def calibrated(self) -> bool:
        return self.min_calib_range is not None and self.max_calib_range is not None
