"""The order plugins load in, which decides who holds an op name two plugins define (the
first definition wins; ``registry.define``).

1. A plugin whose distribution requires another plugin's distribution loads after it.
2. Otherwise the project's own distributions (``STANDARD_DISTRIBUTIONS``, in that order)
   load before every other one, so no plugin can take a core op's name by loading first.
3. Ties are broken by entry-point name. A dependency cycle is broken by the same order.
"""

from __future__ import annotations

import re

__all__ = ["STANDARD_DISTRIBUTIONS", "load_order"]

STANDARD_DISTRIBUTIONS = ("mxnext-ops-tensor", "mxnext-ops-nn", "mxnext-ops-onednn",
                          "mxnext-device-cupy", "mxnext-kvstore-mpi", "mxnext-device-testdev")
"""The distributions shipped with mxnext (its plugins/ folder), first to last."""

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    """A distribution name as packaging compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(dist) -> set[str]:
    """The normalised names of what ``dist`` requires always (extras' requirements left out)."""
    out = set()
    for req in getattr(dist, "requires", None) or ():
        m = _REQUIREMENT_NAME.match(req)
        if m and "extra" not in req.partition(";")[2]:
            out.add(_normal(m.group(1)))
    return out


def load_order(eps: dict) -> list[str]:
    """The names of entry points ``eps`` (name -> entry point) in the order to load them."""
    dist = {n: _normal(ep.dist.name) if ep.dist else None for n, ep in eps.items()}
    needs = {n: {m for m in eps if m != n and dist[m] is not None and dist[m] != dist[n]
                 and dist[m] in _requires(ep.dist)} for n, ep in eps.items()}
    rank = {d: i for i, d in enumerate(STANDARD_DISTRIBUTIONS)}
    pending = sorted(eps, key=lambda n: (rank.get(dist[n], len(rank)), n))
    order: list[str] = []
    while pending:
        ready = next((n for n in pending if needs[n] <= set(order)), pending[0])
        pending.remove(ready)
        order.append(ready)
    return order
