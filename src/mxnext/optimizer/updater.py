"""``Updater``: the callable a KVStore (or Module) runs to apply an optimizer to weights."""

import pickle

from .. import ndarray as nd
from ._states_file import loads

__all__ = ["Updater", "get_updater"]


class Updater:
    """``updater(index, grad, weight)`` updates ``weight`` in place, creating each index's
    state on first sight. Indices may be lists (with lists of arrays): an optimizer whose
    ``aggregate_num`` is positive then gets them in batches of that size, grouped by dtype.

    ``get_states`` / ``set_states`` round-trip the states (and optionally the optimizer)
    through pickle bytes, MXNet's format for ``.states`` files; ``set_states`` admits only
    the types such states hold, so loading never runs code from the bytes.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if not self.aggregate_updates:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
            return
        by_dtype = {}
        for item in zip(indices, weights, grads):
            by_dtype.setdefault(item[1].dtype, []).append(item)
        size = self.optimizer.aggregate_num
        for items in by_dtype.values():
            for start in range(0, len(items), size):
                idx, ws, gs = zip(*items[start:start + size])
                self.optimizer.update_multi_precision(list(idx), list(ws), list(gs),
                                                      [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray or nested tuples/lists of them) moved to ``context``."""
        if isinstance(state, nd.NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            return type(state)(self.sync_state_context(s, context) for s in state)
        return state

    def set_states(self, states):
        """Loads ``get_states`` bytes: the states, or (states, optimizer)."""
        states = loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer=False):
        """The states as pickle bytes; with ``dump_optimizer``, (states, optimizer)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)
