"""What plugins fill (the op registry, the device table) is filled at its first lookup.

``import mxnext`` loads no plugin: ``mxnext.plugins`` registers its loader here, and
``registry``/``device`` call ``fill()`` before a lookup. So importing ``opsdk`` (which
imports mxnext) never starts a plugin load half way, and start-up pays for plugins only
when an op or device is first needed.
"""

from __future__ import annotations

import threading

__all__ = ["defer", "fill", "lock"]

_pending: list = []
_running: list = []           # what is being run: lookups on other threads wait for it
lock = threading.RLock()      # re-entrant: plugins register ops while they load


def defer(fn) -> None:
    """Run ``fn()`` once, before the next lookup."""
    _pending.append(fn)


def fill() -> None:
    """Run what was deferred (once; another thread's lookup waits for it to finish)."""
    if _pending or _running:
        with lock:
            while _pending:
                fn = _pending.pop(0)
                _running.append(fn)
                try:
                    fn()
                finally:
                    _running.pop()
