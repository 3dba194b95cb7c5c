"""Memory planning over a whole graph (forward and backward): which bytes of one arena each
node output lives in.

1. Each output is live from the node that writes it to its last reader (graph outputs to
   the end). Outputs nobody reads get no memory (their op is told ``NULL``).
2. In place: where an op's ``FInplaceOption`` allows it, an output takes its input's
   memory when the input dies at that op (no later reader of anything sharing it) and both
   have the same size; an ``FInplaceIdentity`` output (a reshape) *is* its input's data,
   whether or not the input dies, and its op is not run. Entries sharing memory form a
   group whose life is the union of theirs.
3. Sharing: groups are packed into the arena greedily, largest first, each at the lowest
   offset where no group whose life overlaps its own lies (the offline packing of
   intervals), so memory freed by one group is reused by later ones.

``MXNET_EXEC_ENABLE_INPLACE=false`` turns step 2 off and ``MXNEXT_EXEC_SHARE_MEMORY=0``
(or MXNet's ``NNVM_EXEC_MATCH_RANGE=0``) step 3: every group gets its own bytes. Results
never depend on the plan.
"""

from __future__ import annotations

import os

__all__ = ["Plan", "plan_memory", "options_from_env"]

_ALIGN = 64


class Plan:
    """Where each entry's bytes are: ``group[eid]`` (None: external, unused or an alias of an
    external array), groups' ``offset``/``size``, the arena ``total`` against the ``naive``
    total (every planned output its own buffer), in-place outputs ``inplace`` ((node id,
    output index) written over an input), ``alias`` (eid -> the entry whose data it is, for
    identity outputs), ``unused`` entries, and for each group the groups whose bytes it
    overlaps (their lives do not: they are the engine's order of reuse)."""

    __slots__ = ("group", "offset", "size", "total", "naive", "inplace", "alias", "unused",
                 "overlaps")


def options_from_env() -> tuple[bool, bool]:
    """(in place, sharing), from the environment."""
    inplace = os.environ.get("MXNET_EXEC_ENABLE_INPLACE", "true").lower() not in ("0", "false")
    share = (os.environ.get("MXNEXT_EXEC_SHARE_MEMORY", "1") != "0"
             and os.environ.get("NNVM_EXEC_MATCH_RANGE", "16") != "0")
    return inplace, share


def plan_memory(ig, nbytes, external, keep, inplace_options, inplace=True, share=True) -> Plan:
    """Plan the entries of IndexedGraph ``ig``. ``nbytes[eid]``: each entry's size;
    ``external``: entries backed by arrays of their own (variables, gradients written
    straight into gradient arrays); ``keep``: entries alive to the end (graph outputs);
    ``inplace_options(node_id)``: the node's (input index, output index, identity) claims."""
    planner = _Planner(ig, nbytes, external, _last_use(ig, keep, len(ig.nodes)))
    for nid, node in enumerate(ig.nodes):
        if node.op is None:
            continue
        if inplace:
            planner.claim_inplace(nid, inplace_options(nid))
        planner.open_groups(nid, node.num_outputs())
    p, members, start, stop = planner.plan, planner.members, planner.start, planner.stop
    p.size = [_aligned(max(nbytes[e] for e in m)) for m in members]
    p.naive = sum(_aligned(nbytes[e]) for m in members for e in m if e not in p.alias)
    p.offset = _pack(p.size, start, stop) if share else _stack(p.size)
    p.total = max((o + s for o, s in zip(p.offset, p.size)), default=0)
    p.overlaps = _overlaps(p.offset, p.size)
    return p


class _Planner:
    """Step 2 and the groups' lives, node by node: ``plan``'s ``group``, ``inplace``,
    ``alias`` and ``unused``, and per group its entries (``members``), first node
    (``start``) and last node (``stop``)."""

    def __init__(self, ig, nbytes, external, last):
        self.ig, self.nbytes, self.external, self.last = ig, nbytes, external, last
        p = self.plan = Plan()
        p.group, p.inplace, p.alias, p.unused = [None] * ig.num_entries, set(), {}, set()
        self.members, self.start, self.stop = [], [], []

    def claim_inplace(self, nid, claims):
        """Node ``nid``'s outputs take their inputs' memory where ``claims`` ((input index,
        output index, identity)) allow it; each input serves one output."""
        ins = self.ig.input_entries(nid)
        taken = set()
        for i, o, identity in claims:
            eout = self.ig.entry_id(nid, o)
            if i not in taken and self._claimable(ins[i], eout) and \
                    self._take(ins[i], eout, nid, o, identity):
                taken.add(i)

    def _claimable(self, ein, eout):
        """Whether output ``eout`` may take input ``ein``'s memory: it has none yet, is
        read, and has the same size."""
        p = self.plan
        if p.group[eout] is not None or eout in p.alias or eout in self.external:
            return False
        return self.nbytes[ein] == self.nbytes[eout] and self.last[eout] >= 0

    def _take(self, ein, eout, nid, o, identity):
        """``eout`` joins ``ein``'s group if ``ein`` dies at ``nid`` or ``eout`` is its
        identity; an identity of an external array (or of a view of one) becomes an alias
        of it. Whether it took ``ein``'s memory."""
        p = self.plan
        root = p.alias.get(ein, ein)
        g = p.group[ein]
        if g is None:                     # an external array, or a view of one
            if identity and root in self.external:
                p.alias[eout] = root
                return True
            return False
        if not (identity or self.stop[g] == nid):
            return False
        p.group[eout] = g
        self.members[g].append(eout)
        self.stop[g] = max(self.stop[g], self.last[eout])
        if identity:
            p.alias[eout] = root
        else:
            p.inplace.add((nid, o))
        return True

    def open_groups(self, nid, num_outputs):
        """A group of its own for each output of node ``nid`` not placed by a claim, not
        external and read; outputs nobody reads are ``unused``."""
        p = self.plan
        for o in range(num_outputs):
            eid = self.ig.entry_id(nid, o)
            if p.group[eid] is not None or eid in p.alias or eid in self.external:
                continue
            if self.last[eid] < 0:
                p.unused.add(eid)
                continue
            p.group[eid] = len(self.members)
            self.members.append([eid])
            self.start.append(nid)
            self.stop.append(self.last[eid])


def _last_use(ig, keep, end):
    """The last node reading each entry (``end`` for kept ones, -1 for none)."""
    last = [-1] * ig.num_entries
    for nid in range(len(ig.nodes)):
        for eid in ig.input_entries(nid):
            last[eid] = nid
    for eid in keep:
        last[eid] = end
    return last


def _aligned(n):
    return -(-n // _ALIGN) * _ALIGN


def _pack(size, start, stop):
    """Offsets placing each group, largest first, at the lowest offset free of every placed
    group whose life overlaps its own."""
    offset = [0] * len(size)
    placed = []                                   # (offset, end offset, start, stop)
    for g in sorted(range(len(size)), key=lambda g: (-size[g], start[g])):
        busy = sorted((a, b) for a, b, s, t in placed if s <= stop[g] and start[g] <= t)
        at = 0
        for a, b in busy:
            if at + size[g] <= a:
                break
            at = max(at, b)
        offset[g] = at
        placed.append((at, at + size[g], start[g], stop[g]))
    return offset


def _stack(size):
    offset, at = [], 0
    for s in size:
        offset.append(at)
        at += s
    return offset


def _overlaps(offset, size):
    order = sorted(range(len(size)), key=offset.__getitem__)
    over = [[] for _ in size]
    for k, g in enumerate(order):
        g_end = offset[g] + size[g]
        for h in order[k + 1:]:
            if offset[h] >= g_end:
                break
            if size[h] and size[g]:
                over[g].append(h)
                over[h].append(g)
    return over
