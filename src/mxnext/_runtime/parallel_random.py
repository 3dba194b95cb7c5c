"""MXNet's CPU random streams, number for number (its ``RandGenerator<cpu>``).

MXNet 1.x samples on the CPU from 1024 ``std::mt19937`` states, state ``j`` seeded with
``base + j``, where ``base`` is ``seed * 127`` (``mx.random.seed(seed)``; 0 before any
seed). A sampling kernel over ``n`` values cuts them into ``min(ceil(n / 64), 1024)``
blocks of ``ceil(n / blocks)`` consecutive values, and block ``j`` draws from state ``j``
(``LaunchRNG`` in ``src/operator/random/sampler.h``). Each state keeps its place across
calls. ``ParallelRandom`` replays that, so ``mx.random.seed(s)`` followed by the same
sampling calls gives the numbers MXNet 1.9.1 gives on a CPU: uniforms and integers bit for
bit, normals 99.8% bit for bit and the rest a unit or two in the last place apart
(libstdc++ takes glibc's ``logf``; here the logarithm is numpy's, in float64, rounded). An
accepted pair depends on the uniforms alone, so the streams never drift apart.

The values are libstdc++'s: ``generate_canonical`` (one 32-bit draw per float, two per
double: float16 samples through double, as MXNet's ``half_t`` is not a floating type to the
standard library), and ``normal_distribution``'s polar method, a fresh distribution per
value (the second value of each accepted pair is dropped, as MXNet's kernels do).
"""

from __future__ import annotations

import numpy as np
from numpy.random.bit_generator import ISeedSequence

__all__ = ["ParallelRandom", "base_seed"]

STATES = 1024          # RandGenerator<cpu>::kNumRandomStates
MIN_PER_STATE = 64     # RandGenerator<cpu>::kMinNumRandomPerThread
_MAGIC = 127           # ResourceManagerImpl::kRandMagic
_TWO32 = 4294967296.0
_BELOW_ONE32 = np.nextafter(np.float32(1), np.float32(0))
_BELOW_ONE64 = np.nextafter(1.0, 0.0)


def base_seed(seed: int) -> int:
    """The seed of state 0 after ``mx.random.seed(seed)`` (a C ``int``, times 127, mod 2**32)."""
    return (int(seed) * _MAGIC) & 0xFFFFFFFF


class _Unseeded(ISeedSequence):
    """Skips numpy's entropy mixing when a state is made: ``RandomState.seed`` reseeds it
    MXNet's way at once (a default ``MT19937`` costs 6x as much to create)."""

    def generate_state(self, n_words, dtype=np.uint32):
        return np.zeros(n_words, dtype)


class ParallelRandom:
    """The 1024 states of one device. A state is created at its first use and reseeded
    (``mt19937::seed(base + j)``, numpy's legacy seeding) at its first use after
    ``reseed``. Not thread-safe: the PARALLEL_RANDOM resource's var orders its users."""

    __slots__ = ("base", "_legacy", "_bits", "_ready")

    def __init__(self, base: int = 0):
        self.base = base & 0xFFFFFFFF
        self._legacy: list = []     # state j's RandomState (it seeds MXNet's way)
        self._bits: list = []       # state j's MT19937 (it draws)
        self._ready = 0             # states 0 .. _ready - 1 are seeded for ``base``

    def reseed(self, base: int) -> None:
        self.base = base & 0xFFFFFFFF
        self._ready = 0

    def _states(self, count):
        """The bit generators, the first ``count`` seeded for the current base (kernels
        draw from a prefix of the states)."""
        for j in range(self._ready, count):
            if j == len(self._bits):
                self._bits.append(np.random.MT19937(_Unseeded()))
                self._legacy.append(np.random.RandomState(self._bits[j]))
            self._legacy[j].seed((self.base + j) & 0xFFFFFFFF)
        self._ready = max(self._ready, count)
        return self._bits

    @staticmethod
    def sampling_type(dtype):
        """The type MXNet's kernels sample and compute in for an output ``dtype``: float32
        for float32, double for the others (float16 and integers included)."""
        return np.float32 if np.dtype(dtype) == np.float32 else np.float64

    @staticmethod
    def sizes(n: int) -> list:
        """How many values each state draws in a kernel over ``n`` values (state ``j``
        takes the ``j``-th run of them); the states after the last nonempty run draw none."""
        if n <= 0:
            return []
        count = min(-(-n // MIN_PER_STATE), STATES)
        step = -(-n // count)
        full, rest = divmod(n, step)
        return [step] * full + ([rest] if rest else [])

    def _raw(self, counts, states=None):
        """The raw 32-bit draws (as uint64) of ``counts[i]`` outputs of state ``states[i]``
        (state ``i`` when None), one after another."""
        bits = self._states(len(counts) if states is None else int(states[-1]) + 1)
        if states is None:
            states = range(len(counts))
        return np.concatenate([bits[j].random_raw(int(k)) for j, k in zip(states, counts)])

    @staticmethod
    def _canonical(raw, ftype):
        """``generate_canonical<ftype>`` of consecutive raw draws: [0, 1)."""
        if ftype is np.float32:
            u = raw.astype(np.float32)
            u *= np.float32(1 / _TWO32)
            return np.minimum(u, _BELOW_ONE32, out=u)
        pairs = raw.reshape(-1, 2).astype(np.float64)
        u = (pairs[:, 0] + pairs[:, 1] * _TWO32) / (_TWO32 * _TWO32)
        return np.minimum(u, _BELOW_ONE64, out=u)

    def uniform(self, n: int, dtype=np.float32) -> np.ndarray:
        """``n`` values of ``uniform()`` in [0, 1), in the sampling type of ``dtype``."""
        ftype = self.sampling_type(dtype)
        per = 1 if ftype is np.float32 else 2
        if n <= 0:
            return np.empty(0, ftype)
        return self._canonical(self._raw([k * per for k in self.sizes(n)]), ftype)

    def normal(self, n: int, dtype=np.float32) -> np.ndarray:
        """``n`` standard normal values, in the sampling type of ``dtype``: each from pairs
        of uniforms drawn until one falls inside the unit circle. Every state draws as many
        pairs as it still needs values (so none is drawn past MXNet's place); the
        arithmetic runs over all states at once."""
        ftype = self.sampling_type(dtype)
        per = 2 if ftype is np.float32 else 4          # raw draws per pair
        one, two = ftype(1), ftype(2)
        need = np.array(self.sizes(n), np.int64)
        out = np.empty(n, ftype)
        place = np.cumsum(need) - need         # where each state's next value goes in out
        todo = np.arange(len(need))
        while len(todo):
            u = self._canonical(self._raw(need[todo] * per, todo), ftype).reshape(-1, 2)
            x, y = two * u[:, 0] - one, two * u[:, 1] - one
            r2 = x * x + y * y
            keep = (r2 <= 1) & (r2 != 0)
            r2, y = r2[keep], y[keep]
            log = np.log(r2.astype(np.float64)).astype(ftype)
            owner = np.repeat(todo, need[todo])[keep]         # ascending: states in order
            got = np.bincount(owner, minlength=len(need))
            first = np.cumsum(got) - got                      # each state's first value here
            out[place[owner] + np.arange(len(owner)) - first[owner]] = \
                y * np.sqrt(ftype(-2) * log / r2)
            place += got
            need -= got
            todo = todo[need[todo] > 0]
        return out

    def int64(self, n: int) -> np.ndarray:
        """``n`` values of ``rand_int64()``: ``(first << 31) + second`` of two draws, wrapped
        to int64 as C++ does."""
        if n <= 0:
            return np.empty(0, np.int64)
        raw = self._raw([2 * k for k in self.sizes(n)]).reshape(-1, 2)
        return ((raw[:, 0] << np.uint64(31)) + raw[:, 1]).view(np.int64)
