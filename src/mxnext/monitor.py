"""``mx.monitor`` (alias ``mx.mon``): MXNet's ``Monitor``, statistics of every array an
executor computes, gathered between ``tic()`` and ``toc()``.

``Module.install_monitor(mon)`` (or ``mon.install(executor)``) has each executor call
``stat_helper(name, array)`` with every node's outputs, forward and backward, named as
MXNet names them (``fc1_output``, ``fc1_backward_output0``; with ``monitor_all`` the
inputs too); ``toc()`` adds the arguments under their own names."""

from __future__ import annotations

import logging
import math
import re
from functools import reduce

from . import ndarray as nd

__all__ = ["Monitor"]


def _norm_per_element(x):
    """MXNet's default statistic: ``norm(x) / sqrt(x.size)``."""
    return nd.norm(x) / math.sqrt(reduce(lambda a, b: a * b, x.shape, 1))


class Monitor:
    """Every ``interval`` batches, ``stat_func(array)`` of each array whose name matches
    ``pattern`` (a regular expression, matched at the start), in the order computed or
    sorted by name (``sort``)."""

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.interval = interval
        self.stat_func = stat_func or _norm_per_element
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name, array):
        """The executor's callback: queue ``stat_func(array)`` while activated."""
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        """Watch executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start gathering if this batch is one of every ``interval``."""
        if self.step % self.interval == 0:
            self._wait()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Stop gathering; ``[(step, name, text)]`` with the statistics as text (a one-element
        statistic as its number, others as their numpy print, each followed by a tab)."""
        if not self.activated:
            return []
        self._wait()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda entry: entry[1])
        res = [(step, name, "".join(_text(v) + "\t" for v in
                                     (values if isinstance(values, list) else [values])))
               for step, name, values in self.queue]
        self.queue = []
        return res

    def toc_print(self):
        """``toc()``, logged one line per statistic."""
        for step, name, text in self.toc():
            logging.info("Batch: %7d %30s %s", step, name, text)

    def _wait(self):
        for exe in self.exes:
            for array in list(exe.arg_arrays) + list(exe.aux_arrays):
                array.wait_to_read()


def _text(value):
    if not isinstance(value, nd.NDArray):
        raise TypeError(f"Monitor: stat_func must return an NDArray or a list of them, got "
                        f"{type(value).__name__}")
    return str(value.asscalar()) if value.shape == (1,) else str(value.asnumpy())
