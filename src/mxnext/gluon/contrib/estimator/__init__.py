"""The Gluon Estimator (MXNet 1.9's ``gluon.contrib.estimator``): ``Estimator.fit`` /
``evaluate`` driven by event handlers, and ``BatchProcessor`` for the per-batch step."""

from . import batch_processor, estimator, event_handler
from .batch_processor import *  # noqa: F401,F403
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403

__all__ = estimator.__all__ + event_handler.__all__ + batch_processor.__all__
