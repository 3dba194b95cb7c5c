"""The six moments of a training loop a handler can join. A handler subclasses the ones it
wants and overrides their methods; ``batch_end`` and ``epoch_end`` return True to stop
training (MXNet 1.9's event-handler base classes)."""

from __future__ import annotations


class EventHandler:
    """Base of every event handler."""


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


EVENTS = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)


def _check_event_handlers(handlers):
    """``handlers`` as a list: one handler, a list of them, or None (empty)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = handlers or []
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         f"got: {handlers}")
    return list(handlers)


def categorize(handlers):
    """The handlers of each event, in ``EVENTS`` order, each list keeping the given order."""
    return tuple([h for h in handlers if isinstance(h, event)] for event in EVENTS)
