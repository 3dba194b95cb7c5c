"""MXNet's ``mx.sym.image``: the ``_image_*`` ops under their short names
(``mx.sym.image.normalize`` is ``_image_normalize``), from whichever plugin defines them."""

import sys

from ._create import op_attribute


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name, "_image_")
