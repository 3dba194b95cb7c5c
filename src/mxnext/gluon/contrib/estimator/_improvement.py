"""How CheckpointHandler (save_best) and EarlyStoppingHandler decide that a monitored
metric improved: ``mode`` 'min' compares with ``numpy.less``, 'max' with
``numpy.greater``."""

from __future__ import annotations

import warnings

import numpy as np


def comparison(mode, monitor, handler_name):
    """``numpy.less`` or ``numpy.greater`` for ``mode``. An unknown mode warns and falls
    back to 'auto'. As in MXNet 1.9, 'auto' always picks ``greater`` (its test of the
    metric's name for 'acc' or 'f1' is always true), with the warning MXNet gives."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{handler_name} mode {mode} is unknown, fallback to auto mode. "
                      "CheckpointHandler will use max mode for f1 and accuracy metric "
                      "comparison and use min mode other wise", RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "auto":
        name = monitor.get()[0]
        warnings.warn(f"`greater` operator will be used to determine if {name} has improved. "
                      "Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max' to disable this warning.`", stacklevel=3)
    return np.greater


def worst(op):
    """The starting best value for comparison ``op``: anything beats it."""
    return np.inf if op is np.less else -np.inf
