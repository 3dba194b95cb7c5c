"""``Block.save(prefix)`` / ``Block.load(prefix)``: MXNet 1.9's model structure file
``<prefix>-model.json`` (per block, by class name and visiting order: its name, its
children's names, and a hybridized block's graph and input/output formats) beside
``<prefix>-model.params`` (``save_parameters``). Loading renames the blocks, their
children and parameter keys back to the saved names and restores the graphs."""

import json

from .. import symbol
from .._atomic_write import write_atomic


def _hybrid(blk):
    return hasattr(blk, "_cached_graph")      # a HybridBlock (this module stays below block)


def save(block, prefix):
    model, index = {}, [0]

    def visit(blk, structure):
        entry = {"orig_name": blk.name}
        structure[type(blk).__name__.lower() + str(index[0])] = entry
        if _hybrid(blk):
            entry["hybridized"] = bool(blk._cached_graph)
            if blk._cached_graph:
                syms, out = blk._cached_graph
                entry.update(in_format=blk._in_format, out_format=blk._out_format,
                             inputs=[s.tojson() for s in syms], symbol=out.tojson())
        entry["children"] = {}
        for key, child in blk._children.items():
            index[0] += 1
            entry["children"][child.name] = key
            visit(child, entry)
    visit(block, model)
    write_atomic(prefix + "-model.json", json.dumps(model))
    block.save_parameters(prefix + "-model.params")


def load(block, prefix):
    with open(prefix + "-model.json") as f:
        model = json.load(f)
    index = [0]

    def visit(blk, structure):
        entry = structure[type(blk).__name__.lower() + str(index[0])]
        blk._name = entry["orig_name"]
        if _hybrid(blk) and entry.get("hybridized"):
            blk._in_format, blk._out_format = entry["in_format"], entry["out_format"]
            blk._cached_graph = ([symbol.load_json(s) for s in entry["inputs"]],
                                 symbol.load_json(entry["symbol"]))
            blk._active = True
        params = blk.params._params
        for key in list(params):
            params[blk.name + "_" + key[len(blk.params.prefix):]] = params.pop(key)
        for child in blk._children.values():
            index[0] += 1
            visit(child, entry)
        children = list(blk._children.items())
        blk._children.clear()
        for _, child in children:
            blk._children[entry["children"][child.name]] = child
    visit(block, model)
    block.load_parameters(prefix + "-model.params")
