"""The frame of ``mx.metric``: ``EvalMetric``, the name registry and ``create``, the
composite and custom metrics, ``np`` and ``check_label_shapes``. The concrete metrics live
in ``mxnext.metric``.

Counters keep MXNet's arithmetic: plain Python/numpy scalars added one batch at a time in
the order MXNet adds them, so values come out as MXNet computes them. A metric's inputs may
be NDArrays or numpy arrays (MXNet takes NDArrays only).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy

from .._class_registry import class_registry
from .._runtime.base import ParamError, ShapeError, numeric_types

__all__ = ["EvalMetric", "CompositeEvalMetric", "CustomMetric", "np", "register", "alias",
           "create", "check_label_shapes"]


def _is_array(x):
    return isinstance(x, numpy.ndarray) or hasattr(x, "asnumpy")


def host(x, metric="metric"):
    """``x`` (an NDArray or numpy array) as a numpy array."""
    if isinstance(x, numpy.ndarray):
        return x
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    raise ParamError(f"{metric}: expected an NDArray or numpy array, got "
                     f"{type(x).__name__}")


def scalar(x):
    """A numpy scalar or one-element array as the Python number of the same value: counters
    add in Python floats (doubles), as MXNet's did under the numpy it shipped with, whatever
    numpy's promotion rules now make of ``0.0 + numpy.float32(x)``; and a feval's
    ``array([x])`` stays printable with ``%f`` (numpy 1.23 allowed it, numpy 2 raises)."""
    if isinstance(x, numpy.generic) or (isinstance(x, numpy.ndarray) and x.size == 1):
        return x.item()
    return x


def check_label_shapes(labels, preds, wrap=False, shape=False, metric="metric"):
    """Raise ``ShapeError`` (a ``ValueError``) unless ``labels`` and ``preds`` have the same
    length (``shape=True``: the same shape). ``wrap=True`` turns a lone array into a
    one-element list; the (possibly wrapped) pair is returned."""
    if shape:
        got_l, got_p = tuple(labels.shape), tuple(preds.shape)
    else:
        got_l, got_p = len(labels), len(preds)
    if got_l != got_p:
        what = "shape" if shape else "number"
        raise ShapeError(f"{metric}: {what} of labels {got_l} does not match {what} of "
                         f"predictions {got_p}")
    if wrap:
        if _is_array(labels):
            labels = [labels]
        if _is_array(preds):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """Base of all metrics: ``update`` adds a batch to the local (``num_inst``,
    ``sum_metric``) and global (``global_num_inst``, ``global_sum_metric``) counters;
    ``reset_local`` clears only the local ones, ``reset`` both. ``get`` reports the local
    value, ``get_global`` the global one (the local one for a metric without global
    counters, as MXNet for user subclasses)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The arguments that rebuild this metric through ``create`` (JSON-friendly)."""
        config = dict(self._kwargs)
        config.update(metric=type(self).__name__, name=self.name,
                      output_names=self.output_names, label_names=self.label_names)
        return config

    def update_dict(self, label, pred):
        """``update`` from dicts of named arrays, picked by ``label_names`` /
        ``output_names`` (all values, in order, when those are None)."""
        pred = (list(pred.values()) if self.output_names is None
                else [pred[name] for name in self.output_names])
        label = (list(label.values()) if self.label_names is None
                 else [label[name] for name in self.label_names])
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError(f"{type(self).__name__}.update")

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_global(self):
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, self.global_sum_metric / self.global_num_inst

    def get_name_value(self):
        return _pairs(*self.get())

    def get_global_name_value(self):
        return _pairs(*self.get_global()) if self._has_global_stats else self.get_name_value()


def _pairs(name, value):
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


class _Counted(EvalMetric):
    """A metric with global counters whose batches each add ``value`` over ``count``."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True, **kwargs)

    def _add(self, value, count):
        value, count = scalar(value), scalar(count)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def _pairs(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True, metric=self.name)
        return [(host(l, self.name), host(p, self.name)) for l, p in zip(labels, preds)]


# -- registry: lower-cased name -> class ------------------------------------------------------
_REGISTRY: dict[str, type] = {}


register, alias, _from_string = class_registry("metric", EvalMetric, _REGISTRY, "mx.metric")


def create(metric, *args, **kwargs):
    """A metric from a spec: an instance (returned as is), a callable ``feval(label, pred)``
    (a ``CustomMetric``), a list of specs (a ``CompositeEvalMetric``), a registered name or
    an ``EvalMetric`` subclass (built with the remaining arguments), a ``get_config()`` dict,
    or its JSON."""
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ParamError(f"metric.create: {type(metric).__name__} is already an instance; "
                             f"extra arguments are invalid")
        return metric
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, dict):
        spec = dict(metric)
        if "metric" not in spec:
            raise ParamError(f"metric.create: a config dict needs a 'metric' key, got "
                             f"{sorted(spec)}")
        return create(spec.pop("metric"), *args, **spec, **kwargs)
    if not isinstance(metric, str):
        raise ParamError(f"metric.create: expected a metric, its name, class, config or a "
                         f"callable, got {type(metric).__name__} {metric!r}")
    return _from_string(metric, args, kwargs, create, lambda d: create(d))


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns their names and values as lists."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in metrics or []]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            raise ParamError(f"CompositeEvalMetric.get_metric: index {index} is out of range "
                             f"for {len(self.metrics)} metrics") from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        return _concat(m.get() for m in self.metrics)

    def get_global(self):
        return _concat(m.get_global() for m in self.metrics)

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


def _concat(results):
    names, values = [], []
    for name, value in results:
        names.extend([name] if isinstance(name, str) else name)
        values.extend([value] if isinstance(value, numeric_types) else value)
    return names, values


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, called per (label, pred) pair;
    it returns a value (counted once) or a ``(sum_metric, num_inst)`` pair. Not
    serializable: ``get_config`` raises."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if self._allow_extra_outputs:
            labels = [labels] if _is_array(labels) else labels
            preds = [preds] if _is_array(preds) else preds
        else:
            labels, preds = check_label_shapes(labels, preds, True, metric=self.name)
        for pred, label in zip(preds, labels):
            reval = self._feval(host(label, self.name), host(pred, self.name))
            value, count = reval if isinstance(reval, tuple) else (reval, 1)
            value, count = scalar(value), scalar(count)
            self.sum_metric += value
            self.global_sum_metric += value
            self.num_inst += count
            self.global_num_inst += count

    def get_config(self):
        raise NotImplementedError(f"CustomMetric {self.name!r} cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A ``CustomMetric`` from ``numpy_feval(label, pred)`` on numpy arrays (usable as a
    decorator); the metric is named after the function unless ``name`` is given."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
