"""``mx.image`` (alias ``mx.img``): read, resize, crop and rotate images held in NDArrays,
the augmenters built on those functions, ``ImageIter``, and (in ``mx.image.detection``)
the object-detection augmenters and ``ImageDetIter`` (MXNet 1.9's names and semantics)."""

from .image import *  # noqa: F401,F403
from .augmenters import *  # noqa: F401,F403
from .image_iter import ImageIter  # noqa: F401
from . import detection  # noqa: F401
from . import detection as det  # noqa: F401
from .detection import *  # noqa: F401,F403
from .. import _missing


def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
