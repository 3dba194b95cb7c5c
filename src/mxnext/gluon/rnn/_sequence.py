"""A sequence in its two forms (one array with a time axis, or a list of one array per
step) for NDArrays and Symbols alike, and the valid-length masking and reversal the cells
share."""

from __future__ import annotations

from ... import ndarray, symbol
from ..._runtime.base import MXNetError, ParamError

TENSOR_TYPES = (symbol.Symbol, ndarray.NDArray)


def time_axis(layout, what="unroll"):
    if not isinstance(layout, str) or "T" not in layout or "N" not in layout:
        raise ParamError(f"{what}: layout must name the time and batch axes, such as 'NTC' "
                         f"or 'TNC', got {layout!r}")
    return layout.find("T")


def format_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs, time axis, F, batch size)``: ``inputs`` as one array with a time axis when
    ``merge`` is True, as a list of ``length`` steps when False, unchanged when None."""
    if inputs is None:
        raise MXNetError("unroll: inputs is None; create the input variables (one symbol or "
                         "array with a time axis, or a list of one per step) and pass them")
    axis = time_axis(layout)
    in_axis = axis if in_layout is None else time_axis(in_layout)
    batch_size = 0
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError("unroll: inputs is a grouped symbol; pass one symbol with a "
                                 "time axis, or list(inputs) for one symbol per step")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[layout.find("N")]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise ParamError(f"unroll: length is {length} but inputs has {steps} steps "
                                 f"on its time axis {in_axis} (shape {inputs.shape})")
            inputs = as_steps(ndarray.split(inputs, axis=in_axis, num_outputs=steps,
                                           squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ParamError(f"unroll: length is {length} but {len(inputs)} step inputs were "
                             f"given")
        if isinstance(inputs[0], symbol.Symbol):
            F = symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, TENSOR_TYPES) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def as_steps(split):
    """A split's steps as a list (an NDArray split into one part comes back unlisted)."""
    return [split] if isinstance(split, ndarray.NDArray) else list(split)


def mask_invalid(F, data, length, valid_length, axis, merge):
    """Steps at or past each example's ``valid_length`` set to zero."""
    if not isinstance(data, TENSOR_TYPES):
        data = F.stack(*data, axis=axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=axis)
    if merge:
        return out
    return as_steps(F.split(out, num_outputs=length, axis=axis, squeeze_axis=True))


def reverse_steps(steps, length, valid_length=None):
    """The list ``steps`` in reverse time order; with ``valid_length``, each example's valid
    prefix is reversed in place and its padding stays behind it."""
    if valid_length is None:
        return list(reversed(steps))
    F = symbol if isinstance(steps[0], symbol.Symbol) else ndarray
    rev = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return as_steps(F.split(rev, axis=0, num_outputs=length, squeeze_axis=True))


def last_valid_states(F, all_states, valid_length):
    """Per state, each example's value at its last valid step (from one list per step)."""
    return [F.SequenceLast(F.stack(*per_step, axis=0), sequence_length=valid_length,
                           use_sequence_length=True, axis=0)
            for per_step in zip(*all_states)]
