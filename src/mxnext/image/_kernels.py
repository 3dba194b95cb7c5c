"""The numpy image kernels under the name gluon's vision transforms import them by (they
live in ``mxnext._image_kernels`` so that ``mx.io``'s record iterators, which ``mx.image``
builds on, can use them too)."""

from .._image_kernels import adjust, crop, resize, rotate  # noqa: F401
