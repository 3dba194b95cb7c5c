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
    end = len(ig.nodes)
    last = _last_use(ig, keep, end)
    p = Plan()
    p.group, p.inplace, p.alias, p.unused = [None] * ig.num_entries, set(), {}, set()
    members, start, stop = [], [], []          # per group: entries, first node, last node
    for nid, node in enumerate(ig.nodes):
        if node.op is None:
            continue
        ins = ig.input_entries(nid)
        taken = set()
        claims = inplace_options(nid) if inplace else ()
        for i, o, identity in claims:
            ein, eout = ins[i], ig.entry_id(nid, o)
            if i in taken or p.group[eout] is not None or eout in p.alias or eout in external:
                continue
            if nbytes[ein] != nbytes[eout] or last[eout] < 0:
                continue
            root = p.alias.get(ein, ein)
            g = p.group[ein]
            if g is None:                     # an external array, or a view of one
                if identity and root in external:
                    p.alias[eout] = root
                    taken.add(i)
                continue
            if not (identity or stop[g] == nid):
                continue
            taken.add(i)
            p.group[eout] = g
            members[g].append(eout)
            stop[g] = max(stop[g], last[eout])
            if identity:
                p.alias[eout] = root
            else:
                p.inplace.add((nid, o))
        for o in range(node.num_outputs()):
            eid = ig.entry_id(nid, o)
            if p.group[eid] is not None or eid in p.alias or eid in external:
                continue
            if last[eid] < 0:
                p.unused.add(eid)
                continue
            p.group[eid] = len(members)
            members.append([eid])
            start.append(nid)
            stop.append(last[eid])
    p.size = [_aligned(max(nbytes[e] for e in m)) for m in members]
    p.naive = sum(_aligned(nbytes[e]) for m in members for e in m if e not in p.alias)
    p.offset = _pack(p.size, start, stop) if share else _stack(p.size)
    p.total = max((o + s for o, s in zip(p.offset, p.size)), default=0)
    p.overlaps = _overlaps(p.offset, p.size)
    return p


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
