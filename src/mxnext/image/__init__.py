"""``mx.image`` (alias ``mx.img``): read, resize and crop HWC images held in NDArrays, and
the augmenter classes built on those functions (MXNet 1.9's names and semantics)."""

from .image import *  # noqa: F401,F403
from .. import _missing


def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
