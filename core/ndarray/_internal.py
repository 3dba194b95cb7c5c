"""MXNet's ``mx.nd._internal``: the underscore ops (``_plus_scalar``, ``_zeros`` ...)."""

from ._imperative import op_function


def __getattr__(name):
    if not name.startswith("_") or name.startswith("__"):
        raise AttributeError(f"module 'mxnext.ndarray._internal' holds only '_' ops, not {name!r}")
    try:
        fn = op_function(name)
    except KeyError as exc:
        raise AttributeError(f"module 'mxnext.ndarray._internal' has no attribute {name!r}: "
                             f"{exc}") from None
    globals()[name] = fn
    return fn
