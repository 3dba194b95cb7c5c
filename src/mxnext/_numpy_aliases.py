"""The builtin-type aliases of numpy 1.x (``np.float``, ``np.int``, ...) that numpy 1.24
removed. MXNet 1.9.1 ran on numpy < 1.24, and code written for it (GluonCV 0.10's RPN
anchors, for one) still spells them; ``mxnext run`` puts them back for such programs."""

import builtins

import numpy as np

_REMOVED = ("float", "int", "complex", "object", "str")


def restore() -> None:
    """Set each removed alias numpy lacks to the builtin type it named."""
    for name in _REMOVED:
        if name not in vars(np):
            setattr(np, name, getattr(builtins, name))
