"""``mx.contrib.text``: token counting and the ``Vocabulary`` that indexes tokens (what
``gluon.contrib.data.text``'s datasets build)."""

from . import utils, vocab  # noqa: F401
from .vocab import Vocabulary  # noqa: F401
