"""Example-by-example sources grouped into batches, as MXNet's C++ ``BatchLoader``."""

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.params import Field, Param


class BatchParam(Param):
    """Batching parameters of MXNet's C++ iterators."""

    batch_size: int = Field(..., ge=1, description="Batch size.")
    round_batch: bool = Field(True, description="Whether to use round robin to handle overflow "
                                                "batch or not.")


class BatchLoader:
    """Copies examples ``0..n-1`` of ``columns`` (arrays whose first axis is the example)
    into per-batch buffers.

    With ``round_batch`` an incomplete last batch is completed from the start of the data
    and ``pad`` counts those examples; the next epoch (after ``before_first``) then
    continues behind them instead of at the start. Without it the batch keeps the previous
    batch's examples in its free slots and ``pad`` counts them. The buffers are reused, so
    callers copy what they hand out.
    """

    def __init__(self, columns, param, iter_name):
        self.columns = columns
        self.num = columns[0].shape[0]
        self.batch_size = param.batch_size
        self.round_batch = param.round_batch
        self.iter_name = iter_name
        self.buffers = [np.zeros((self.batch_size,) + c.shape[1:], c.dtype) for c in columns]
        self.index = np.zeros(self.batch_size, np.uint64)
        self.pad = 0
        self._pos = 0              # next example to read
        self._overflow = 0         # examples borrowed from the next epoch by round_batch

    def before_first(self):
        if not self.round_batch or self._overflow == 0:
            self._pos = 0
        else:
            self._overflow = 0

    def _take(self, top, count):
        rows = slice(self._pos, self._pos + count)
        for buf, col in zip(self.buffers, self.columns):
            buf[top:top + count] = col[rows]
        self.index[top:top + count] = np.arange(rows.start, rows.stop, dtype=np.uint64)
        self._pos += count

    def next(self):
        self.pad = 0
        if self._overflow:
            return False
        top = min(self.batch_size, self.num - self._pos)
        if top <= 0:
            return False
        self._take(0, top)
        if top < self.batch_size:
            missing = self.batch_size - top
            if self.round_batch:
                if missing > self.num:
                    raise MXNetError(f"{self.iter_name}: round_batch needs at least {missing} "
                                     f"examples to fill the last batch, the data has {self.num}")
                self._pos = 0
                self._take(top, missing)
                self._overflow = self.pad = missing
            else:
                self.pad = missing
        return True
