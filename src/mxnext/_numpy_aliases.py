"""What numpy 1.x had and numpy >= 1.24 / 2 removed, that MXNet-era code still uses: the
builtin-type aliases (``np.float``, ``np.int``, ...) and ``np.fromstring``'s binary mode
(``sep=''``, how MXNet's MNIST readers decode idx files). MXNet 1.9.1 ran on numpy < 1.24,
and code written for it (GluonCV 0.10's RPN anchors, MXNet's own examples) still spells
them; ``mxnext run`` puts them back for such programs."""

import builtins
import warnings

import numpy as np

_REMOVED = ("float", "int", "complex", "object", "str")


def restore() -> None:
    """Set each removed alias numpy lacks to the builtin type it named, and give
    ``np.fromstring`` its binary mode back."""
    for name in _REMOVED:
        if name not in vars(np):
            setattr(np, name, getattr(builtins, name))
    if not getattr(np.fromstring, "_mxnext_binary", False):
        np.fromstring = _fromstring_with_binary(np.fromstring)


def _fromstring_with_binary(text_fromstring):
    def fromstring(string, dtype=float, count=-1, *, sep="", **kwargs):
        if sep != "":
            return text_fromstring(string, dtype, count, sep=sep, **kwargs)
        warnings.warn("fromstring's binary mode is deprecated (numpy 1.14) and removed in "
                      "numpy 2: use frombuffer", DeprecationWarning, stacklevel=2)
        if isinstance(string, str):
            string = string.encode("latin-1")
        return np.frombuffer(string, dtype, count).copy()   # numpy 1.x returned a copy
    fromstring.__doc__ = text_fromstring.__doc__
    fromstring._mxnext_binary = True
    return fromstring
