"""Plain data the engines share: vars, operator handles, run contexts, properties."""

from __future__ import annotations

import enum

__all__ = ["FnProperty", "RunContext", "Var", "OprHandle"]


class FnProperty(enum.IntEnum):
    """Which lane a function runs in (MXNet's ``FnProperty``)."""
    NORMAL = 0
    COPY_FROM_GPU = 1
    COPY_TO_GPU = 2
    CPU_PRIORITIZED = 3
    ASYNC = 4
    DELETE_VAR = 5
    GPU_PRIORITIZED = 6


RUN_CONTEXTS: dict = {}    # device type -> its RunContext class (``device.register`` fills it)


class RunContext:
    """What a function learns only when it runs: its device context and stream. ``runner``,
    when a device sets it (a GPU: ``runner(fn, const, mutate)`` enqueues ``fn(self)`` on this
    thread's stream, ``_runtime.streams``), runs every function on the context."""

    __slots__ = ("ctx", "stream", "runner")

    def __init__(self, ctx, stream=None):
        self.ctx = ctx
        self.stream = stream
        self.runner = None

    def __repr__(self):
        return f"RunContext({self.ctx}, stream={self.stream!r})"


class _ErrorBox:
    """One failure, shared by every var it reached; clearing it once clears it everywhere."""

    __slots__ = ("exc", "opname")

    def __init__(self, exc, opname):
        self.exc = exc
        self.opname = opname


class Var:
    """An engine token standing for a resource that functions read or mutate.

    The dependency state is MXNet's ThreadedVar: granted readers, a granted
    writer, and a FIFO of requests waiting for this var.
    """

    __slots__ = ("readers", "writer", "queue", "error", "name", "dev", "__weakref__")

    def __init__(self, name=None):
        self.readers = 0          # granted (running or ready) reads
        self.writer = False       # a granted write
        self.queue = None         # pending (block, is_write) in push order: a deque once needed
        self.error = None         # _ErrorBox of a failed writer, until waited on
        self.name = name
        self.dev = None           # a stream device's work still on it (``_runtime.streams``)

    def idle(self) -> bool:
        """Nothing pushed on it is waiting, running, or still on a device's stream (stable
        once nothing can push on it any more)."""
        return not (self.readers or self.writer or self.queue or self.dev is not None)

    def __repr__(self):
        return f"<Var {self.name or hex(id(self))}>"


class OprHandle:
    """A pre-built operator: function and dependency lists, pushed many times."""

    __slots__ = ("fn", "is_async", "const_vars", "mutate_vars", "prop", "name",
                 "skip_on_error", "cheap", "leaf", "deleted")

    def __init__(self, fn, is_async, const_vars, mutate_vars, prop, name,
                 skip_on_error=True, cheap=False, _lists=None, leaf=False):
        const, mutate = _lists or var_lists(const_vars, mutate_vars)
        self.fn = fn
        self.is_async = is_async
        self.const_vars = const
        self.mutate_vars = mutate
        self.prop = prop if type(prop) is FnProperty else FnProperty(prop)
        self.name = name or getattr(fn, "__name__", "<fn>")
        self.skip_on_error = skip_on_error
        self.cheap = cheap        # may run at once on the pushing thread (a fast path)
        self.leaf = leaf          # pushes and waits for nothing (a kernel)
        self.deleted = False

    def __repr__(self):
        return f"<OprHandle {self.name}>"


def var_lists(const_vars, mutate_vars):
    """(const, mutate) as tuples without repeats; a var both read and written is written."""
    mutate = _dedup(mutate_vars)
    const = _dedup(const_vars)
    if const and mutate:
        const = tuple(v for v in const if v not in mutate)
    return const, mutate


def _dedup(vars_):
    """``vars_`` as a tuple without repeats (Vars compare by identity)."""
    out = tuple(vars_) if len(vars_) < 2 else tuple(dict.fromkeys(vars_))
    for v in out:
        if not isinstance(v, Var):
            raise TypeError(f"engine: expected a Var, got {type(v).__name__}")
    return out
