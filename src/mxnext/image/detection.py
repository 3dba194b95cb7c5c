"""``mx.image.detection`` (alias ``mx.image.det``): the object-detection augmenters,
``CreateDetAugmenter`` and ``ImageDetIter``."""

from .det_augmenters import *  # noqa: F401,F403
from .det_augmenters import __all__ as _augmenters
from .det_iter import ImageDetIter

__all__ = [*_augmenters, "ImageDetIter"]
