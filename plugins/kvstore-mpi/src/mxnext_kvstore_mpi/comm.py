"""The process's MPI world for the dist KVStores: one thread runs every collective, in the
order the program issued them, and no rank waits for another longer than the timeout.

mpi4py is imported when the first dist store is created (``world()``), never before.

Every collective gets a sequence number. Before running one, a rank tells every other rank
it has arrived (a small control message carrying a signature of the call) and waits, at
most ``MXNEXT_KVSTORE_TIMEOUT`` seconds (default 60), until all have; only then does the
MPI call run, non-blocking, its wait listening to the other ranks too. A rank that left (its
process ended: it says so at exit, or as soon as an uncaught exception ends its program,
with that exception's text), whose process is gone (checked for ranks on this host), or
that does not arrive in time makes the collective fail with ``RankFault`` naming it (and
the error it ended with); so does one that leaves or dies during the transfer, before its
part of it was done. The failing rank tells the others, which fail naming the same rank,
and every later collective fails at once (the buffers of a transfer a fault cut off are
kept alive; what they hold is not to be used). A process that saw a fault, at exit, gives the other
healthy ranks the timeout to see it too, then ends the whole job (``MPI_Abort``), so nothing
is left behind; a watchdog ends it too if a collective stalls after every rank arrived (a
rank on another host died mid-transfer).
"""

from __future__ import annotations

import atexit
import os
import queue
import socket
import sys
import threading
import time
import zlib

import numpy as np

from opsdk import MXNetError

__all__ = ["RankFault", "world", "timeout"]

TIMEOUT_ENV = "MXNEXT_KVSTORE_TIMEOUT"
_TAG = 0x6D78              # control messages on our own communicator
_TEXT_TAG = _TAG + 1       # the text after a FAULT message
_HELLO_TAG = 0x6D786E      # the one message ever sent on COMM_WORLD: at start-up
_ARRIVE, _LEAVE, _FAULT = 1, 2, 3
_MSG = 8                   # int64 words in a control message

_world = None
_lock = threading.Lock()


class RankFault(MXNetError):
    """A rank died, left, or did not reach a collective within the timeout; ``ranks`` are
    the ranks at fault, ``cause`` says what happened to them."""

    def __init__(self, message, ranks=(), cause=None):
        super().__init__(message)
        self.cause = cause or message
        self.ranks = tuple(ranks)


def _failed(what, cause, ranks=()) -> RankFault:
    return RankFault(f"KVStore {what} failed: {cause}", ranks, cause)


# why ranks are at fault: what a FAULT message carries, and how it reads
_LATE, _DIED, _ENDED, _ENDED_ERROR, _FAILED = range(5)
_DURING = 8                # added to _DIED, _ENDED, _ENDED_ERROR: in the transfer itself
_PHRASES = {_LATE: "did not reach collective #{seq} within {timeout:g} s",
            _DIED: "died {when} collective #{seq}",
            _ENDED: "ended (its program finished) {when} collective #{seq}",
            _ENDED_ERROR: "ended with an error {when} collective #{seq}",
            _FAILED: "failed at collective #{seq}"}


def _cause(reason, ranks, seq, timeout_s, seen_by=None, waiting=None) -> str:
    who = f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}"
    phrase = _PHRASES[reason % _DURING].format(
        seq=seq, timeout=timeout_s, when="during" if reason >= _DURING else "before")
    notes = [f"seen by rank {seen_by}"] if seen_by is not None else []
    if waiting is not None:
        notes.append(f"rank {waiting} waited")
    if reason == _LATE:
        notes.append(f"set {TIMEOUT_ENV} to wait longer")
    return f"{who} {phrase} ({'; '.join(notes)})" if notes else f"{who} {phrase}"


def timeout() -> float:
    """Seconds a rank waits for the others (``MXNEXT_KVSTORE_TIMEOUT``, default 60)."""
    raw = os.environ.get(TIMEOUT_ENV, "60")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise MXNetError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def world() -> "World":
    """The process's ``World`` (created, with MPI, on first call)."""
    global _world
    with _lock:
        if _world is None:
            _world = World()
        return _world


class _Ticket:
    """One collective: ``work(world, *data)`` once the engine has handed this rank's data
    over (``give``); ``finish`` completes it, whichever of the two comes last."""

    __slots__ = ("what", "work", "sig", "ready", "data", "done", "error", "result", "lock")

    def __init__(self, what, work, sig):
        self.what, self.work, self.sig = what, work, sig
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.data, self.done, self.error, self.result = (), None, None, None

    def give(self, data, done, error=None):
        """The engine's side: the data is ready (``error``: an input holds one)."""
        with self.lock:
            failed = self.result
            if failed is None:
                self.data, self.done, self.error = data, done, error
                self.ready.set()
        if failed is not None:             # the collective failed before the data came
            done(failed)

    def finish(self, exc):
        with self.lock:
            done = self.done
            if done is None:
                self.result = exc
        if done is not None:
            done(exc)


class World:
    """MPI's COMM_WORLD seen by the stores: rank, size, and the collective thread."""

    def __init__(self):
        from mpi4py import MPI
        self.MPI = MPI
        self.timeout = timeout()
        base = MPI.COMM_WORLD
        self.rank, self.size = base.Get_rank(), base.Get_size()
        self._pids = {}
        self._seq = 0
        self._arrived = [0] * self.size
        self._sigs = [{} for _ in range(self.size)]
        self._done = 0                 # the last collective whose transfer finished here
        self._left: dict = {}          # rank -> (reason, its last finished collective, text)
        self._fault = None
        self._sends: list = []
        self._unfinished: list = []    # transfers a fault cut off: their buffers stay alive
        self._busy_since = None
        self._current = None
        self._uncaught = None          # "Type: message" of the error that ends the program
        self._gone = False
        self._stopping = threading.Event()
        self._send_lock = threading.Lock()
        self.comm = self._start(base)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="mxnext-kvstore-mpi",
                                        daemon=True)
        self._thread.start()
        threading.Thread(target=self._watchdog, name="mxnext-kvstore-mpi-watchdog",
                         daemon=True).start()
        hook = sys.excepthook

        def excepthook(kind, exc, tb):
            self._uncaught = f"{kind.__name__}: {exc}"
            if not (sys.flags.interactive or hasattr(sys, "ps1")):
                self._leave()              # the program ends: tell the others now
            hook(kind, exc, tb)
        sys.excepthook = excepthook
        atexit.register(self._at_exit)

    # -- start-up: every rank says hello, then the communicator is duplicated -------------
    def _start(self, base):
        host = zlib.crc32(socket.gethostname().encode())
        mine = np.array([os.getpid(), host], np.int64)
        peers = [r for r in range(self.size) if r != self.rank]
        got = {r: np.zeros(2, np.int64) for r in peers}
        reqs = [base.Isend(mine, dest=r, tag=_HELLO_TAG) for r in peers]
        recvs = {r: base.Irecv(got[r], source=r, tag=_HELLO_TAG) for r in peers}
        comm, dup = base.Idup()
        deadline = time.monotonic() + self.timeout
        pending = dict(recvs)
        while pending or not dup.Test():
            for r, req in list(pending.items()):
                if req.Test():
                    del pending[r]
            if time.monotonic() > deadline:
                missing = sorted(pending) or peers
                atexit.register(self._abort, "KVStore: the dist KVStore did not start; rank "
                                f"{self.rank} ends the job")
                raise _failed("start-up", f"rank{_s(missing)} {_ranks(missing)} did not "
                                f"create a dist KVStore within {self.timeout:g} s (rank "
                                f"{self.rank} waited; set {TIMEOUT_ENV} to wait longer)",
                                missing)
            time.sleep(0.001)
        self.MPI.Request.Waitall(reqs)
        self._pids = {r: (int(v[0]), int(v[1]) == host) for r, v in got.items()}
        return comm

    # -- what the stores call -------------------------------------------------------------
    def submit(self, what, work, sig, reads=(), writes=(), priority=0):
        """Queue ``work(world, *data)`` now (so every rank runs its collectives in issue
        order) and push to the engine the call that hands it the data of ``reads`` and
        ``writes``; ``writes`` are ready once it ran."""
        from opsdk.kvstore import engine_call
        t = _Ticket(what, work, sig)
        self._queue.put(t)
        engine_call(lambda *data: t.give(data[:-1], data[-1]), reads, writes,
                    name=f"dist {what}", priority=priority, asynchronous=True,
                    on_error=lambda exc, *data: t.give(data[:-1], data[-1], exc))

    def run(self, what, work, sig):
        """Queue ``work(world)`` and wait for it (barriers, start-up broadcasts)."""
        t = _Ticket(what, work, sig)
        finished = threading.Event()
        result = []

        def done(exc=None):
            result.append(exc)
            finished.set()

        t.give((), done)
        self._queue.put(t)
        finished.wait()
        if result[0] is not None:
            raise result[0]

    # -- the collective thread ------------------------------------------------------------
    def _loop(self):
        while True:
            t = self._queue.get()
            if t is None:
                return
            try:
                if self._fault is None and not self._wait_ready(t):
                    return                 # the program ends before this rank's data came
                if self._fault is not None:
                    raise _failed(t.what, self._fault.cause, self._fault.ranks)
                self._seq += 1
                if t.error is not None:    # this rank's data is an error: tell the others
                    self._fail(_FAILED, [self.rank], f"an array of {t.what} holds an error "
                                                     f"({type(t.error).__name__}: {t.error})")
                    t.finish(t.error)
                    continue
                self._arrive(t)
                self._busy_since, self._current = time.monotonic(), t
                try:
                    t.work(self, *t.data)
                finally:
                    self._busy_since = self._current = None
                self._done = self._seq
            except RankFault as exc:
                t.finish(exc)
            except Exception as exc:        # an MPI error or ranks out of step: no way on
                self._fail(_FAILED, [self.rank], f"{type(exc).__name__}: {exc}")
                t.finish(_failed(t.what, self._fault.cause, self._fault.ranks))
            else:
                t.finish(None)

    def _fail(self, reason, ranks, detail=None):
        """Record a fault seen here and tell the other ranks."""
        cause = _cause(reason, ranks, self._seq, self.timeout,
                       waiting=None if list(ranks) == [self.rank] else self.rank)
        self._fault = _failed("", f"{cause}: {detail}" if detail else cause, ranks)
        text = (detail or "").encode()
        self._tell(_FAULT, self._seq, reason, len(text), *ranks[:_MSG - 4], text=text)

    def _wait_ready(self, t) -> bool:
        """Wait for this rank's own data, listening for faults of the others meanwhile;
        False when the program ends first."""
        while not t.ready.wait(0.05):
            if self._stopping.is_set():
                return False
            self._drain()
            if self._fault is not None:
                break
        return True

    def _arrive(self, t):
        """Tell every rank we are at collective ``self._seq``; wait until all are, and check
        that they are at the same call."""
        seq = self._seq
        self._tell(_ARRIVE, seq, t.sig)
        self._wait_arrivals(t, seq)
        self._check_same_call(t, seq)

    def _wait_arrivals(self, t, seq):
        """Listen until every other rank arrived at ``seq``; a rank that left, died or is
        late past the timeout is a fault (``RankFault`` for ``t``)."""
        start = time.monotonic()
        deadline, next_check = start + self.timeout, start + 0.2
        spins = 0
        while True:
            self._drain()
            if self._fault is None:
                missing = self._not_arrived(seq)
                if not missing:
                    return
                now = time.monotonic()
                if not self._fail_if_left(seq) and now >= next_check:
                    self._fail_if_dead(missing)
                    next_check = now + 0.2
                if self._fault is None and now > deadline:
                    self._fail(_LATE, missing)
            self._raise_if_over(t)
            spins += 1
            _pause(spins)

    def _not_arrived(self, seq) -> list:
        """The other ranks not yet at collective ``seq``."""
        return [r for r in range(self.size) if r != self.rank and self._arrived[r] < seq]

    def _fail_if_dead(self, ranks) -> None:
        """Record a fault if a process of ``ranks`` (on this host) is gone."""
        dead = [r for r in ranks if not self._alive(r)]
        if dead:
            self._fail(_DIED, dead)

    def _check_same_call(self, t, seq):
        """Fail ``t`` when another rank arrived at ``seq`` with another call (its signature:
        the call, keys, shapes and dtypes)."""
        for r in range(self.size):
            if r != self.rank and self._sigs[r].pop(seq, t.sig) != t.sig:
                self._fail(_FAILED, [r], f"rank {self.rank} is at {t.what}, rank {r} at "
                                         f"another call (key, shape or dtype); every rank "
                                         f"must make the same KVStore calls in the same order")
                raise _failed(t.what, self._fault.cause, self._fault.ranks)

    def wait(self, req):
        """Wait for ``req``, a non-blocking MPI collective of the running work, listening
        meanwhile: a rank that leaves or dies before its part of this collective was done,
        or a fault another rank tells, fails it with ``RankFault`` at once."""
        t, seq = self._current, self._seq
        next_check = time.monotonic() + 0.2
        spins = 0
        while not req.Test():
            self._drain()
            # what a rank sent before it left or died may have come only now: Test again
            if self._fault is None and not req.Test():
                if not self._fail_if_left(seq) and time.monotonic() >= next_check:
                    dead = [r for r in range(self.size) if r != self.rank
                            and r not in self._left and not self._alive(r)]
                    if dead and not req.Test():
                        self._fail(_DIED + _DURING, dead)
                    next_check = time.monotonic() + 0.2
            if self._fault is not None or self._stopping.is_set():
                self._unfinished.append(req)
                self._raise_if_over(t)
            spins += 1
            _pause(spins)

    def _fail_if_left(self, seq) -> bool:
        """Record a fault if a rank left before it finished collective ``seq`` (after it
        arrived: during it); whether one did."""
        left = [r for r, (_, done, _) in self._left.items() if done < seq]
        if left:
            reason, _, text = self._left[left[0]]
            during = all(self._arrived[r] >= seq for r in left)
            self._fail(reason + _DURING * during, left, text)
        return bool(left)

    def _raise_if_over(self, t):
        """Raise ``RankFault`` for ``t`` if this program ends or a fault was seen."""
        if self._stopping.is_set():
            end = (f"ended with an error ({self._uncaught})" if self._uncaught
                   else "ended first")
            raise _failed(t.what, f"the program of rank {self.rank} {end}")
        if self._fault is not None:
            raise _failed(t.what, self._fault.cause, self._fault.ranks)

    # -- control messages -------------------------------------------------------------------
    def _tell(self, kind, *words, text=b""):
        """Send a control message (and ``text`` after it) to every rank still there."""
        msg = np.full(_MSG, -1, np.int64)
        msg[0] = kind
        msg[1:1 + len(words)] = words
        with self._send_lock:
            self._sends = [r for r in self._sends if not r.Test()]
            for r in range(self.size):
                if r != self.rank and r not in self._left:
                    self._sends.append(self.comm.Isend(msg, dest=r, tag=_TAG))
                    if text:
                        self._sends.append(self.comm.Isend(text, dest=r, tag=_TEXT_TAG))

    def _drain(self):
        """Read every control message that has come in."""
        MPI = self.MPI
        status = MPI.Status()
        buf = np.empty(_MSG, np.int64)
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG, status=status):
            src = status.Get_source()
            self.comm.Recv(buf, source=src, tag=_TAG)
            kind = int(buf[0])
            if kind == _ARRIVE:
                self._arrived[src] = int(buf[1])
                self._sigs[src][int(buf[1])] = int(buf[2])
            elif kind == _LEAVE:
                self._left[src] = (int(buf[1]), int(buf[2]), self._text(src, int(buf[3])))
            elif kind == _FAULT:
                seq, reason = int(buf[1]), int(buf[2])
                ranks = [int(r) for r in buf[4:] if r >= 0]
                detail = self._text(src, int(buf[3]))
                if self._fault is None:
                    cause = _cause(reason, ranks, seq, self.timeout,
                                   seen_by=None if ranks == [src] else src)
                    self._fault = _failed("", f"{cause}: {detail}" if detail else cause, ranks)

    def _text(self, src, size) -> str:
        """The text that follows a control message of ``src`` (``size`` bytes)."""
        text = bytearray(size)
        if size:
            self.comm.Recv(text, source=src, tag=_TEXT_TAG)
        return text.decode(errors="replace")

    def _alive(self, r) -> bool:
        """Whether rank ``r``'s process still runs (known only for ranks on this host)."""
        pid, local = self._pids.get(r, (0, False))
        if not local:
            return True
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            return state not in (b"Z", b"X")
        except FileNotFoundError:
            return False
        except OSError:
            return True

    # -- the end: say goodbye; after a fault, end the job -----------------------------------
    def _watchdog(self):
        while True:
            time.sleep(min(1.0, self.timeout / 4))
            since = self._busy_since
            if since is not None and time.monotonic() - since > self.timeout:
                dead = [r for r in range(self.size) if r != self.rank and not self._alive(r)]
                who = f"rank{_s(dead)} {_ranks(dead)} died" if dead else "a rank stalled"
                self._abort(f"KVStore: a collective did not finish within {self.timeout:g} s "
                            f"after every rank arrived ({who}); rank {self.rank} ends the job")

    def _leave(self):
        """Stop the collective thread and tell the other ranks this program ends: how (with
        the error it ends with, if any) and the last collective it finished."""
        with _lock:
            if self._gone:
                return
            self._gone = True
        self._stopping.set()
        error = self._uncaught or (self._fault is not None and self._fault.cause)
        text = (error or "").encode()
        self._tell(_LEAVE, _ENDED_ERROR if error else _ENDED, self._done, len(text), text=text)

    def _at_exit(self):
        if not self._uncaught and self._fault is None:
            # the engine hands the collectives their data: work kept for the main thread
            # runs only when it waits, and the engine's own exit hook comes after this one
            from opsdk.kvstore import wait_all
            try:
                wait_all()
            except MXNetError:
                pass                       # a fault: the collective thread saw it too
        self._queue.put(None)              # what was issued still runs, unless this ends
        if not self._uncaught:             # in an error
            self._thread.join(timeout=self.timeout)
        self._stopping.set()
        self._thread.join(timeout=2.0)
        fault = self._fault
        self._leave()
        deadline = time.monotonic() + 1.0
        while self._sends and time.monotonic() < deadline:
            with self._send_lock:
                self._sends = [r for r in self._sends if not r.Test()]
            time.sleep(0.001)
        if fault is None:
            return
        # let the other ranks see the fault and end on their own, then end the job (mpiexec
        # -disable-auto-cleanup would wait for the ranks at fault, alive or not)
        deadline = time.monotonic() + self.timeout
        others = [r for r in range(self.size) if r != self.rank and r not in fault.ranks]
        while time.monotonic() < deadline and any(
                r not in self._left and self._alive(r) for r in others):
            self._drain()
            time.sleep(0.01)
        self._abort(f"KVStore: rank {self.rank} ends the job: {fault.cause}")

    def _abort(self, message):
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        sys.stdout.flush()
        time.sleep(0.3)                    # let mpiexec forward what was written
        self.MPI.COMM_WORLD.Abort(1)


def _pause(spins):
    """Between two polls: none at first, then short sleeps (the GIL is free meanwhile)."""
    if spins > 200:
        time.sleep(0.0002 if spins < 5000 else 0.002)


def _s(ranks):
    return "s" if len(ranks) > 1 else ""


def _ranks(ranks):
    return ", ".join(str(r) for r in ranks)
