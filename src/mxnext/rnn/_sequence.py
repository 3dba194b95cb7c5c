"""Moving a sequence between its two forms: one symbol with a time axis, or a list of one
symbol per step."""

from __future__ import annotations

from .. import symbol
from .._runtime.base import MXNetError, ParamError


def time_axis(layout):
    """Where ``T`` is in ``layout`` (``"NTC"``: 1, ``"TNC"``: 0)."""
    if not isinstance(layout, str) or "T" not in layout:
        raise ParamError(f"unroll: layout must name the time axis with 'T' (such as 'NTC' or "
                         f"'TNC'), got {layout!r}")
    return layout.find("T")


def normalize_sequence(length, inputs, layout, merge):
    """``(inputs, time axis)``, with ``inputs`` as one symbol when ``merge`` is True, as a list
    of ``length`` step symbols when False, and as given when None."""
    if inputs is None:
        raise MXNetError(f"unroll: inputs is None; create the input variables (one symbol with "
                         f"a time axis, or a list of one symbol per step) and pass them")
    axis = time_axis(layout)
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError(f"unroll: inputs is a grouped symbol with "
                                 f"{len(inputs.list_outputs())} outputs; pass one symbol with a "
                                 f"time axis, or list(inputs) for one symbol per step")
            inputs = list(symbol.split(inputs, axis=axis, num_outputs=length, squeeze_axis=1))
        return inputs, axis
    inputs = list(inputs)
    if length is not None and len(inputs) != length:
        raise ParamError(f"unroll: length is {length} but {len(inputs)} step inputs were given")
    if merge is True:
        inputs = symbol.Concat(*[symbol.expand_dims(x, axis=axis) for x in inputs], dim=axis)
    return inputs, axis
