"""Cells made of cells: ``SequentialRNNCell`` (layers one above the other) and
``BidirectionalCell`` (one cell forward in time, one backward)."""

from __future__ import annotations

from .. import symbol
from .._runtime.base import MXNetError
from ._sequence import normalize_sequence
from .base_cell import BaseRNNCell, StepError

__all__ = ["SequentialRNNCell", "BidirectionalCell"]


def _adopt(container, cells, override, who):
    """Merge the cells' variables into ``container``'s ``RNNParams``; with ``override`` (the
    container was given ``params``), first hand the container's variables to the cells."""
    for cell in cells:
        if override:
            if not cell._own_params:
                raise MXNetError(f"{who}: give params either to {who} or to the cells in it, "
                                 f"not both ({type(cell).__name__} {cell._prefix!r} has params "
                                 f"of its own or shared)")
            cell.params._params.update(container._params._params)
        container._params._params.update(cell.params._params)


def _split_states(cells, states):
    """``states`` cut into one list per cell, by the cells' state counts."""
    parts, p = [], 0
    for cell in cells:
        n = len(cell.state_info)
        parts.append(states[p:p + n])
        p += n
    return parts


class _CellsOfCells(BaseRNNCell):
    """The weights of a cell made of ``self._cells`` are theirs, unpacked and packed in turn."""

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_CellsOfCells):
    """A stack of cells: each step (or unroll) feeds a cell's output to the next one."""

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Put ``cell`` on top of the stack."""
        _adopt(self, [cell], self._override_cell_params, "SequentialRNNCell")
        self._cells.append(cell)

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return [s for cell in self._cells for s in cell.begin_state(**kwargs)]

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in zip(self._cells, _split_states(self._cells, states)):
            if isinstance(cell, BidirectionalCell):
                raise StepError("SequentialRNNCell: a stack holding a BidirectionalCell cannot "
                                "be stepped; use unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        last = len(self._cells) - 1
        next_states = []
        for i, (cell, states) in enumerate(zip(self._cells,
                                               _split_states(self._cells, begin_state))):
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None)
            next_states.extend(states)
        return inputs, next_states


class BidirectionalCell(_CellsOfCells):
    """``l_cell`` unrolled forward and ``r_cell`` backward in time, their outputs concatenated
    on the feature axis (named ``<output_prefix>t<i>``, or ``<output_prefix>out`` merged).
    The final states are ``[l_cell's, r_cell's]``."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        _adopt(self, [l_cell, r_cell], self._override_cell_params, "BidirectionalCell")
        self._cells = [l_cell, r_cell]

    def __call__(self, inputs, states):
        raise StepError("BidirectionalCell cannot be stepped (its backward half needs the "
                        "whole sequence); use unroll")

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        self._check_not_modified()
        return [s for cell in self._cells for s in cell.begin_state(**kwargs)]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        l_begin, r_begin = _split_states(self._cells, begin_state)
        l_out, l_states = l_cell.unroll(length, inputs=inputs, begin_state=l_begin,
                                        layout=layout, merge_outputs=merge_outputs)
        r_out, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                        begin_state=r_begin, layout=layout,
                                        merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                l_out, r_out = (_steps(o, axis, length) for o in (l_out, r_out))
        if merge_outputs:
            # the backward half's sequence runs from the last step to the first
            r_out = symbol.reverse(r_out, axis=axis)
            outputs = symbol.Concat(l_out, r_out, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [symbol.Concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_o, r_o) in enumerate(zip(l_out, reversed(r_out)))]
        return outputs, [l_states, r_states]


def _steps(outputs, axis, length):
    if isinstance(outputs, symbol.Symbol):
        return list(symbol.SliceChannel(outputs, axis=axis, num_outputs=length, squeeze_axis=1))
    return outputs
