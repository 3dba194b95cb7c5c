"""``gluon.contrib.data``: the WikiText language-model datasets (``text``) and
``IntervalSampler``."""

from ...data.sampler import IntervalSampler  # noqa: F401
from . import text  # noqa: F401
