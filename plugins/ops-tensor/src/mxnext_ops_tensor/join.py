"""Joining and splitting: Concat, stack, split (SliceChannel)."""

from __future__ import annotations

from opsdk import Field, NodeEntry, Param, ShapeError, assign, make_node, register_op
from opsdk.shape import dim_known, dim_op, merge_shape, unknown_dim

from ._layout import fail, merge, norm_axis, same_type


def _names(p):
    return [f"arg{i}" for i in range(p.num_args)]


# -- Concat ----------------------------------------------------------------------------
class ConcatParam(Param):
    num_args: int = Field(ge=1, description="How many arrays are joined")
    dim: int = Field(1, description="Axis whose lengths add up")


def _concat_infer(p, ins, outs):
    """MXNet's ConcatShape on partial shapes: every input and the output agree on all axes
    but ``dim``; the output's ``dim`` is the sum once every input's is known. One input
    left unknown along ``dim`` takes what a known output leaves for it."""
    ins, outs = list(ins), list(outs)
    given = [s for s in ins + outs if s is not None]
    if not given:
        return ins, outs
    a = norm_axis("Concat", p.dim, len(given[0]), "dim")
    u = unknown_dim()
    common = None
    for s in given:
        other = tuple(u if j == a else d for j, d in enumerate(s))
        try:
            common = merge_shape("Concat", common, other)
        except ShapeError:
            fail("Concat", f"inputs must agree on every axis but dim={p.dim}: "
                           f"{tuple(s)} vs {common}")
    sizes = [u if s is None else s[a] for s in ins]
    out_size = u if outs[0] is None else outs[0][a]
    unknown = [k for k, d in enumerate(sizes) if not dim_known(d)]
    if len(unknown) == 1 and dim_known(out_size):
        rest = out_size - sum(d for k, d in enumerate(sizes) if k != unknown[0])
        if not dim_known(rest):
            fail("Concat", f"output {tuple(outs[0])} too small for inputs {ins}")
        sizes[unknown[0]] = rest
        unknown = []
    ins = [common[:a] + (d,) + common[a + 1:] for d in sizes]
    total = u if unknown else sum(sizes)
    return ins, merge("Concat", outs, [common[:a] + (total,) + common[a + 1:]])


def _concat_compute(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], ctx.xp.concatenate(inputs, axis=params.dim))


def _concat_backward(ctx, inputs, req, outputs, params):
    og, a, start = inputs[0], params.dim % inputs[0].ndim, 0
    for k, x in enumerate(inputs[1:]):
        n = x.shape[a]
        assign(outputs[k], req[k], og[(slice(None),) * a + (slice(start, start + n),)])
        start += n


def _concat_gradient(node, og):
    back = make_node("_backward_Concat", [og[0]] + node.inputs, node.params)
    return [NodeEntry(back, k) for k in range(len(node.inputs))]


def _concat_op(name, infer, description):
    """An op joining its inputs as Concat does, with ``infer`` for its shapes."""
    return (register_op(name)
            .describe(description)
            .set_attr_parser(ConcatParam)
            .set_num_inputs(lambda p: p.num_args).set_num_outputs(1)
            .set_attr("FListInputNames", _names).set_attr("key_var_num_args", "num_args")
            # as MXNet's: the quantize pass names the quantize node after it by this name
            .set_attr("FListOutputNames", lambda p: ["output"])
            .set_attr("FInferShape", infer)
            .set_attr("FInferType", same_type(name))
            .set_attr("FCompute<cpu>", _concat_compute)
            .set_attr("FGradient", _concat_gradient)
            .add_argument("data", "NDArray-or-Symbol[]", "The arrays to join"))


(_concat_op("Concat", _concat_infer,
            "Places the inputs one after another along dim; other axes must agree.")
    .add_alias("concat")
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 2)], "params": {"num_args": 2}},
                            {"inputs": [(1, 3), (2, 3), (3, 3)],
                             "params": {"num_args": "3", "dim": "0"}}]))


def _rnn_param_concat_infer(p, ins, outs):
    """Concat's, except that two inputs unknown along ``dim`` (a bidirectional RNN layer's
    first input weights, flattened) share what a known output leaves evenly (MXNet's
    RNNParamConcatShape)."""
    ins = list(ins)
    if outs[0] is not None:
        a = norm_axis("_rnn_param_concat", p.dim, len(outs[0]), "dim")
        unknown = [k for k, s in enumerate(ins) if s is None or not dim_known(s[a])]
        if len(unknown) == 2 and dim_known(outs[0][a]):
            rest = outs[0][a] - sum(s[a] for k, s in enumerate(ins) if k not in unknown)
            for k in unknown:
                ins[k] = tuple(rest // 2 if j == a else d for j, d in enumerate(outs[0]))
    return _concat_infer(p, ins, outs)


(_concat_op("_rnn_param_concat", _rnn_param_concat_infer,
            "Concat for an RNN layer's packed parameter vector: as Concat, and two inputs of "
            "unknown length (the two directions' first input weights) are given equal halves "
            "of what a known output leaves.")
    .set_attr("TExamples", [{"inputs": [(6,), (4,), (2,)], "params": {"num_args": 3,
                                                                      "dim": 0}}]))


def _concat_backward_infer(p, ins, outs):
    if any(s is None for s in ins[1:]):
        return list(ins), list(outs)
    return list(ins), merge("_backward_Concat", outs, ins[1:])


(register_op("_backward_Concat")
    .describe("Gradient of Concat: splits the head gradient back into the inputs' extents.")
    .set_attr_parser(ConcatParam)
    .set_num_inputs(lambda p: p.num_args + 1).set_num_outputs(lambda p: p.num_args)
    .set_attr("FInferShape", _concat_backward_infer)
    .set_attr("FInferType", same_type("_backward_Concat"))
    .set_attr("FCompute<cpu>", _concat_backward)
    .set_attr("TExamples", [{"inputs": [(2, 5), (2, 3), (2, 2)], "params": {"num_args": 2}}]))


# -- stack -----------------------------------------------------------------------------
class StackParam(Param):
    axis: int = Field(0, description="Where the new axis goes in the output")
    num_args: int = Field(ge=1, description="How many arrays are stacked")


def _stack_infer(p, ins, outs):
    ins = list(ins)
    known = [s for s in ins if s is not None]
    if not known and outs[0] is not None:
        a = norm_axis("stack", p.axis, len(outs[0]))
        known = [outs[0][:a] + outs[0][a + 1:]]
    if not known:
        return ins, list(outs)
    ref = tuple(known[0])
    for s in known:
        if tuple(s) != ref:
            fail("stack", f"all inputs need the same shape, got {tuple(s)} and {ref}")
    a = norm_axis("stack", p.axis, len(ref) + 1)
    out = ref[:a] + (p.num_args,) + ref[a:]
    if outs[0] is not None and tuple(outs[0]) != out:
        fail("stack", f"output has shape {tuple(outs[0])}, expected {out}")
    return [ref] * len(ins), [out]


(register_op("stack")
    .describe("Combines equally shaped inputs into one array with an extra axis that indexes "
              "them.")
    .set_attr_parser(StackParam)
    .set_num_inputs(lambda p: p.num_args).set_num_outputs(1)
    .set_attr("FListInputNames", _names).set_attr("key_var_num_args", "num_args")
    .set_attr("FInferShape", _stack_infer)
    .set_attr("FInferType", same_type("stack"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(o[0], r[0], ctx.xp.stack(i, p.axis)))
    .set_attr("FGradient", lambda node, og: [
        NodeEntry(n, k) for n in [make_node("split", [og[0]], {
            "num_outputs": node.params.num_args, "axis": node.params.axis,
            "squeeze_axis": True})] for k in range(len(node.inputs))])
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 3)], "params": {"num_args": 2}},
                            {"inputs": [(2, 3)] * 3, "params": {"num_args": 3, "axis": -1}}])
    .add_argument("data", "NDArray-or-Symbol[]", "The equally shaped arrays"))


# -- split -----------------------------------------------------------------------------
class SplitParam(Param):
    num_outputs: int = Field(ge=1, description="How many equal parts to produce")
    axis: int = Field(1, description="Axis that is cut")
    squeeze_axis: bool = Field(False, description="Drop the split axis (its parts must have size 1)")


def _split_shape(p, shape):
    a = norm_axis("split", p.axis, len(shape))
    if dim_known(shape[a]) and shape[a] % p.num_outputs:
        fail("split", f"axis {p.axis} of size {shape[a]} does not split into "
                      f"num_outputs={p.num_outputs} equal parts")
    n = dim_op(lambda d: d // p.num_outputs, shape[a])
    if p.squeeze_axis and dim_known(n) and n != 1:
        fail("split", f"squeeze_axis=True needs parts of size 1, got {n}")
    part = shape[:a] + (() if p.squeeze_axis else (n,)) + shape[a + 1:]
    return a, n, part


def _split_infer(p, ins, outs):
    """Both ways on partial shapes: the parts from the input, the input from any part."""
    shape = ins[0]
    for known in outs:
        if known is not None:
            known = tuple(known)
            a = norm_axis("split", p.axis, len(known) + (1 if p.squeeze_axis else 0))
            whole = (known[:a] + (p.num_outputs,) + known[a:] if p.squeeze_axis else
                     known[:a] + (dim_op(lambda d: d * p.num_outputs, known[a]),) + known[a + 1:])
            shape = merge_shape("split", shape, whole, "input")
    if shape is None:
        return list(ins), list(outs)
    _, _, part = _split_shape(p, tuple(shape))
    return [tuple(shape)], merge("split", outs, [part] * p.num_outputs)


def _split_compute(ctx, inputs, req, outputs, params):
    x = inputs[0]
    a, n, part = _split_shape(params, x.shape)
    for k in range(params.num_outputs):
        assign(outputs[k], req[k], x[(slice(None),) * a + (slice(k * n, (k + 1) * n),)].reshape(part))


def _split_grad(node, out_grads):
    p = node.params
    if p.squeeze_axis:
        n = make_node("stack", list(out_grads), {"axis": p.axis, "num_args": p.num_outputs})
    else:
        n = make_node("Concat", list(out_grads), {"dim": p.axis, "num_args": p.num_outputs})
    return [NodeEntry(n, 0)]


(register_op("split").add_alias("SliceChannel")
    .describe("Cuts the input into num_outputs equal pieces along axis.")
    .set_attr_parser(SplitParam).set_num_inputs(1)
    .set_num_outputs(lambda p: p.num_outputs)
    .set_attr("FListOutputNames", lambda p: [f"output{i}" for i in range(p.num_outputs)])
    .set_attr("FInferShape", _split_infer)
    .set_attr("FInferType", same_type("split"))
    .set_attr("FCompute<cpu>", _split_compute)
    .set_attr("FGradient", _split_grad)
    .set_attr("TExamples", [{"inputs": [(2, 6)], "params": {"num_outputs": 3}},
                            {"inputs": [(3, 2)], "params": {"num_outputs": 3, "axis": 0,
                                                            "squeeze_axis": True}}])
    .add_argument("data", "NDArray-or-Symbol", "The input"))
