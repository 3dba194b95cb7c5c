"""Checkpoints of networks built from RNN cells: on disk the weights are unpacked (one array
per layer, direction and gate), in memory they are packed as the cells' symbols use them,
so a checkpoint written from a ``FusedRNNCell`` loads into its ``unfuse()`` and back."""

from __future__ import annotations

from .._checkpoint import load_checkpoint, save_checkpoint
from .base_cell import BaseRNNCell

__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``mx.model.save_checkpoint`` with ``arg_params`` unpacked by each of ``cells`` (one
    cell or a list)."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``(symbol, arg_params, aux_params)`` of ``mx.model.load_checkpoint``, with
    ``arg_params`` packed by each of ``cells``."""
    sym, arg_params, aux_params = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg_params = cell.pack_weights(arg_params)
    return sym, arg_params, aux_params


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback ``(epoch, symbol, arg_params, aux_params)`` that saves an RNN
    checkpoint every ``period`` epochs, numbered from 1."""
    period = max(1, int(period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
