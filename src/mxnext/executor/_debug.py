"""``Executor.debug_str``: the graph as MXNet prints it, with each output's storage."""

from __future__ import annotations

__all__ = ["describe"]


def describe(program) -> str:
    g, plan = program.graph, program.plan
    lines = ["Symbol Outputs:"]
    for k, eid in enumerate(g.outputs[:program.num_outputs]):
        lines.append(f"\toutput[{k}]={_entry_name(g, eid)}")
    for nid, node in enumerate(g.nodes):
        if node.op is None:
            lines.append(f"Variable:{node.name}")
            continue
        lines += ["-" * 20, f"Op:{node.op.name}, Name={node.name}", "Inputs:"]
        for k, e in enumerate(node.inputs):
            lines.append(f"\targ[{k}]={e.node.name}({e.index})" +
                         (" version=0" if e.node.op is None else ""))
        attrs = node.params.to_mxnet_dict() if node.params is not None else {}
        if attrs:
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in attrs.items()]
        lines.append("Outputs:")
        for o in range(node.num_outputs()):
            lines.append(f"\tout[{o}]: {_storage(program, nid, o)}")
    total, naive = plan.total, plan.naive
    share = f" ({total / naive:.2f}x)" if naive else ""
    lines += [f"Total {total >> 20} MB allocated",
              f"Planned {total} bytes in one arena for {len(plan.size)} storage groups; naive "
              f"{naive} bytes (every output its own buffer){share}"]
    return "\n".join(lines) + "\n"


def _storage(program, nid, o):
    g, plan = program.graph, program.plan
    eid = g.entry_id(nid, o)
    shape, dtype = program.shapes[eid], program.dtypes[eid]
    what = f"{shape} {dtype}"
    if eid in plan.unused:
        return f"{what}, not used: not written, no memory"
    for name, (geid, _req, direct) in program.grads.items():
        if geid == eid and direct:
            return f"{what}, written straight into the gradient of {name}"
    src = plan.alias.get(eid)
    gid = plan.group[eid]
    if gid is None:
        return f"{what}, a view of {_entry_name(g, src)}"
    where = f"storage {gid} at offset {plan.offset[gid]} ({plan.size[gid]} bytes)"
    if src is not None:
        return f"{what}, {where}, the data of {_entry_name(g, src)} (identity)"
    if (nid, o) in plan.inplace:
        return f"{what}, {where}, in place over an input"
    return f"{what}, {where}"


def _entry_name(g, eid):
    nid = g.entry_node(eid)
    return f"{g.nodes[nid].name}({eid - g.entry_start[nid]})"
