"""Cells that change another cell: ``ModifierCell`` and its ``ZoneoutCell`` and
``ResidualCell``. The wrapped cell is then used only through its modifier."""

from __future__ import annotations

from .. import symbol
from .._runtime.base import ParamError
from ._sequence import normalize_sequence
from .base_cell import BaseRNNCell
from .fused import FusedRNNCell
from .stacks import BidirectionalCell, SequentialRNNCell

__all__ = ["ModifierCell", "ZoneoutCell", "ResidualCell"]


class ModifierCell(BaseRNNCell):
    """Base of the cells that wrap ``base_cell``: states and weights are the base cell's."""

    def __init__(self, base_cell):
        if not isinstance(base_cell, BaseRNNCell):
            raise ParamError(f"{type(self).__name__}: base_cell must be an RNN cell, got "
                             f"{type(base_cell).__name__}")
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    def reset(self):
        super().reset()
        if hasattr(self, "base_cell"):
            self.base_cell.reset()

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The base cell's begin states (``init_sym=`` is MXNet's other name for ``func``)."""
        self._check_not_modified()
        func = kwargs.pop("init_sym", func)
        with _unwrapped(self.base_cell):
            return self.base_cell.begin_state(func, **kwargs)

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} does not define a step")


class _unwrapped:
    """Lets the modifier itself use its base cell for the duration of a ``with``."""

    def __init__(self, cell):
        self.cell = cell

    def __enter__(self):
        self.cell._modified = False

    def __exit__(self, *exc):
        self.cell._modified = True


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): in training, each output and state element keeps its
    previous step's value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if isinstance(base_cell, FusedRNNCell):
            raise ParamError("ZoneoutCell: a FusedRNNCell cannot take zoneout; wrap the cells "
                             "of its unfuse() instead")
        if isinstance(base_cell, BidirectionalCell) or (
                isinstance(base_cell, SequentialRNNCell)
                and any(isinstance(c, BidirectionalCell) for c in base_cell._cells)):
            raise ParamError("ZoneoutCell: a bidirectional cell cannot be stepped, so it cannot "
                             "take zoneout; wrap the cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, new, old):
            # Dropout of ones is nonzero where the new value is kept (always, at inference)
            mask = symbol.Dropout(symbol.ones_like(new), p=p)
            return symbol.where(mask, new, old)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (keep_new(self.zoneout_outputs, next_output, prev)
                  if self.zoneout_outputs != 0.0 else next_output)
        if self.zoneout_states != 0.0:
            next_states = [keep_new(self.zoneout_states, new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (Wu et al. 2016), named
    ``<output name>_plus_residual``."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return _residual(output, inputs), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        with _unwrapped(self.base_cell):
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        merged = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = normalize_sequence(length, inputs, layout, merged)
        if merged:
            return _residual(outputs, inputs), states
        return [_residual(o, x) for o, x in zip(outputs, inputs)], states


def _residual(output, inputs):
    return symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
