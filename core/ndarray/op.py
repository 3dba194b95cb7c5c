"""MXNet's ``mx.nd.op``: every registered op by its public name (generated on first access)."""

from ._imperative import op_function


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        fn = op_function(name)
    except KeyError as exc:
        raise AttributeError(f"module 'mxnext.ndarray.op' has no attribute {name!r}: {exc}") from None
    globals()[name] = fn
    return fn
