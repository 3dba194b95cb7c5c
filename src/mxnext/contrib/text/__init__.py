"""``mx.contrib.text``: token counting, the ``Vocabulary`` that indexes tokens (what
``gluon.contrib.data.text``'s datasets build) and token embeddings."""

from . import embedding, utils, vocab  # noqa: F401
from .vocab import Vocabulary  # noqa: F401
