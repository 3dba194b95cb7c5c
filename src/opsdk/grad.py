"""Gradient rules (``FGradient``) that build backward nodes, as MXNet's helpers do.

A rule is ``fn(node, out_grads) -> list[NodeEntry | None]`` with one entry per
forward input. The ``ElemwiseGradUse*`` helpers make one ``bwd_op`` node
(same params as the forward node) whose output ``i`` is the gradient of
input ``i``; they differ in what that node reads besides the output grads.
"""

from __future__ import annotations

from mxnext.graph import NodeEntry, make_node, outputs_of

__all__ = ["ElemwiseGradUseIn", "ElemwiseGradUseOut", "ElemwiseGradUseInOut",
           "ElemwiseGradUseNone", "CloneGradient", "MakeZeroGradNodes", "make_backward_node"]


def make_backward_node(bwd_op, node, inputs):
    """A ``bwd_op`` node for ``node``'s gradient: same params, named ``<name>_backward``,
    ordered after the forward node."""
    n = make_node(bwd_op, inputs, node.params, name=f"{node.name}_backward")
    n.control_deps.append(node)
    return n


class _UseRule:
    __slots__ = ("bwd_op",)

    def __init__(self, bwd_op):
        self.bwd_op = bwd_op

    def _extra(self, node) -> list:
        raise NotImplementedError

    def __call__(self, node, out_grads):
        n = make_backward_node(self.bwd_op, node, list(out_grads) + self._extra(node))
        return [NodeEntry(n, i, 0) for i in range(len(node.inputs))]

    def __repr__(self):
        return f"{type(self).__name__}({self.bwd_op!r})"


class ElemwiseGradUseIn(_UseRule):
    """Backward node reads ``out_grads + forward inputs``."""
    __slots__ = ()

    def _extra(self, node):
        return list(node.inputs)


class ElemwiseGradUseOut(_UseRule):
    """Backward node reads ``out_grads + forward outputs``."""
    __slots__ = ()

    def _extra(self, node):
        return outputs_of(node)


class ElemwiseGradUseInOut(_UseRule):
    """Backward node reads ``out_grads + forward inputs + forward outputs``."""
    __slots__ = ()

    def _extra(self, node):
        return list(node.inputs) + outputs_of(node)


class ElemwiseGradUseNone(_UseRule):
    """Backward node reads only ``out_grads``."""
    __slots__ = ()

    def _extra(self, node):
        return []


class CloneGradient:
    """Every input's gradient is ``out_grads[0]`` itself (MXNet's ``CloneGradient``; the
    op name some registrations pass, e.g. ``_backward_add_n``, is not used)."""

    __slots__ = ()

    def __init__(self, bwd_op=None):
        pass

    def __call__(self, node, out_grads):
        return [out_grads[0]] * len(node.inputs)


def MakeZeroGradNodes(node, out_grads):
    """Zero gradients: a ``zeros_like`` node per input (usable directly as ``FGradient``)."""
    return [NodeEntry(make_node("zeros_like", [e], None, name=f"{node.name}_in{i}_zero_grad"), 0, 0)
            for i, e in enumerate(node.inputs)]
