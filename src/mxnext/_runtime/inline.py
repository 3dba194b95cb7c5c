"""Which kernels may run on the thread that pushes them: a device's inline policy.

Under Python's GIL a worker gains nothing on a short kernel: handing it over costs more
than running it (docs/engine.md). So the engine's fast paths run a function pushed
``cheap`` at once on the pushing thread when its vars are free; what is pushed cheap is
the device's choice, through its ``inline_policy``:

- ``TimedInline`` (``TIMED_INLINE``, the cpu device's): a kernel starts cheap when it
  writes at most ``CHEAP_BYTES``; its first ``TIMED_RUNS`` runs are timed, and from then on
  it is cheap when the fastest took under ``INLINE_SECONDS``. A kernel that requests
  resources or completes asynchronously is never cheap (nor timed).
- ``StreamInline`` (``STREAM_INLINE``, the gpu's): every kernel only enqueues work on the
  running thread's stream (``_runtime.streams``), so every kernel is cheap: the pushing
  thread enqueues it at once when its vars are free and never waits for the device. A copy
  into or out of the device (``COPY_TO_GPU``/``COPY_FROM_GPU``) of more than
  ``CHEAP_BYTES`` is not: it goes to the engine's copy lane, whose workers have streams of
  their own, so it overlaps the compute stream (the marks order the two).
- ``NeverInline`` (``NEVER_INLINE``): nothing is cheap, and the threaded engines run none
  of such a device's work on a user thread (``inline`` is False: its pools are its own, and
  no fast path takes their work): for a device whose functions block.

A kernel keeps its own state in four attributes, ``cheap``, ``timing``, ``timed`` and
``fastest`` (the imperative path's plans and the executor's node runs): ``start`` sets
them, each timed run while ``timing`` goes to ``observe``, and a push reads ``cheap``.
"""

from __future__ import annotations

from .engine._types import FnProperty

__all__ = ["TimedInline", "StreamInline", "NeverInline", "TIMED_INLINE", "STREAM_INLINE",
           "NEVER_INLINE", "CHEAP_BYTES",
           "TIMED_RUNS", "INLINE_SECONDS"]

CHEAP_BYTES = 1 << 16      # untimed work writing at most this much may run inline
TIMED_RUNS = 3            # kernel runs timed before ``cheap`` is settled
INLINE_SECONDS = 1e-3     # kernels faster than this run inline on the pushing thread


COPIES = (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU)   # lanes of host<->device copies


class TimedInline:
    """Time a kernel's first runs; the fast ones run inline from then on."""

    inline = True             # the engine may run this device's work on a user thread

    def __init__(self, cheap_bytes=CHEAP_BYTES, timed_runs=TIMED_RUNS,
                 inline_seconds=INLINE_SECONDS):
        self.cheap_bytes, self.timed_runs = cheap_bytes, timed_runs
        self.inline_seconds = inline_seconds

    def cheap(self, nbytes, prop=None) -> bool:
        """Whether work that is never timed (a copy, a fill) writing ``nbytes`` is cheap
        (``prop``: its engine lane, ``FnProperty``)."""
        return nbytes <= self.cheap_bytes

    def start(self, k, nbytes, requested, is_async) -> None:
        """Kernel ``k``'s state before its first run; it writes ``nbytes``, ``requested``
        its resources."""
        k.cheap = nbytes <= self.cheap_bytes and not requested and not is_async
        k.timing = self.timed_runs > 0 and not requested and not is_async
        k.timed, k.fastest = 0, float("inf")

    def observe(self, k, seconds) -> None:
        """One timed run of ``k``; after ``timed_runs`` of them ``k.cheap`` follows the
        fastest and ``k.timing`` ends."""
        if seconds < k.fastest:
            k.fastest = seconds
        k.timed += 1
        if k.timed >= self.timed_runs:
            k.timing = False
            k.cheap = k.fastest < self.inline_seconds

    def __repr__(self):
        return (f"TimedInline(cheap_bytes={self.cheap_bytes}, timed_runs={self.timed_runs}, "
                f"inline_seconds={self.inline_seconds})")


class StreamInline(TimedInline):
    """Every synchronous kernel is cheap and none is timed: it only enqueues device work.
    Large copies across the device boundary run on the copy lane's workers only."""

    copy_lanes = True

    def __init__(self):
        super().__init__(timed_runs=0)

    def cheap(self, nbytes, prop=None) -> bool:
        return prop not in COPIES or nbytes <= self.cheap_bytes

    def start(self, k, nbytes, requested, is_async) -> None:
        k.cheap = not is_async
        k.timing = False
        k.timed, k.fastest = 0, float("inf")

    def __repr__(self):
        return "StreamInline()"


class NeverInline(TimedInline):
    """Nothing runs on the pushing thread: every kernel goes to the device's workers."""

    inline = False

    def __init__(self):
        super().__init__(cheap_bytes=-1, timed_runs=0)

    def __repr__(self):
        return "NeverInline()"


TIMED_INLINE = TimedInline()
STREAM_INLINE = StreamInline()
NEVER_INLINE = NeverInline()
