"""Storage types through a bound graph (MXNet's ``InferStorageType`` pass of the graph
executor): from the bound arrays' storage types, each forward node's output storage types
by the rule imperative dispatch uses (``output_stypes``: the op's sparse kernel, else the
storage fallback's dense outputs). Executors bound only to dense arrays never run it."""

from __future__ import annotations

from .._runtime.base import MXNetError
from ..ndarray._sparse_dispatch import output_stypes

__all__ = ["infer_stypes"]


def infer_stypes(program, stypes: dict) -> list[str]:
    """The storage type of every forward entry of ``program`` given the variables'
    (``stypes``: name -> 'default' | 'csr' | 'row_sparse'); an op refusing its inputs'
    storage types is an ``MXNetError`` naming the node, the op and the sparse inputs."""
    g = program.graph
    values = ["default"] * g.num_entries
    for name, eid in program.inputs.items():
        values[eid] = stypes.get(name, "default")
    for nid in range(program.num_forward):
        node = g.nodes[nid]
        in_eids = g.input_entries(nid)
        ins = [values[e] for e in in_eids]
        if node.op is None or all(s == "default" for s in ins):
            continue
        try:
            outs = output_stypes(node.op, node.params, ins,
                                 [program.shapes[e] for e in in_eids],
                                 [program.dtypes[e] for e in in_eids], program.ctx)
        except MXNetError as exc:
            sparse = ", ".join(f"{node.inputs[k].node.name!r} ({s})"
                               for k, s in enumerate(ins) if s != "default")
            msg = str(exc).removeprefix(f"Operator {node.op.name!r}: ")
            raise MXNetError(f"Error in operator {node.name!r} ({node.op.name}) inferring "
                             f"storage types from sparse inputs {sparse}: {msg}") from exc
        for k, s in enumerate(outs or ()):
            values[g.entry_id(nid, k)] = s
    return values

