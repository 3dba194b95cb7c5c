"""The three authoring styles each produce a working OpDef: compute, shapes, gradient nodes."""

from __future__ import annotations

import numpy as np
import pytest

import opsdk
from mxnext import ops as registry
from mxnext.base import PluginError
from mxnext.context import cpu
from mxnext.engine import RunContext
from mxnext.graph import NodeEntry, make_node, variable
from opsdk import (INPLACE_OUT_IN, NO_INPLACE, CloneGradient, ElemwiseGradUseIn,
                   ElemwiseGradUseInOut, ElemwiseGradUseNone, ElemwiseGradUseOut, ElemwiseShape,
                   ElemwiseType, Field, FloatOnly, MakeZeroGradNodes, Operator, OperatorProperty,
                   OpContext, OpReqType, Param, ParamError, ShapeError, TypeInferError, assign,
                   extend_op, register_op, register_property, simple_op)

REQS = [OpReqType.WRITE_TO, OpReqType.WRITE_INPLACE, OpReqType.ADD_TO, OpReqType.NULL]


def opctx(is_train=False):
    return OpContext(is_train=is_train, run_ctx=RunContext(cpu(0)), requested=[], xp=np)


def run(opdef, inputs, params=None, req=OpReqType.WRITE_TO, start=None, out_shapes=None):
    """Call the op's FCompute<cpu> on fresh outputs; returns the outputs."""
    ins = [np.asarray(a, dtype=np.float64) for a in inputs]
    _, shapes = opdef.get_attr("FInferShape")(params, [a.shape for a in ins],
                                              out_shapes or [None] * opdef.num_outputs(params))
    outs = [np.full(s, 0.0 if start is None else start) for s in shapes]
    opdef.get_attr("FCompute<cpu>")(opctx(), ins, [req] * len(outs), outs, params)
    return outs


def var_entry(name):
    return NodeEntry(variable(name), 0, 0)


def numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)).sum() / (2 * eps)
    return g


# -- style 1: the registry builder -----------------------------------------------------
class SumParam(Param):
    num_args: int = Field(ge=1, description="Number of inputs to be summed.")


def add_n_compute(ctx, inputs, req, outputs, params):
    total = inputs[0].copy()
    for a in inputs[1:]:
        total += a
    assign(outputs[0], req[0], total)


@pytest.fixture(scope="module")
def add_n():
    with registry.providing("test-builder"):
        (register_op("_t_add_n").add_alias("_t_ElementWiseSum")
         .describe("Adds all input arguments element-wise.")
         .set_attr_parser(SumParam)
         .set_num_inputs(lambda p: p.num_args)
         .set_attr("FListInputNames", lambda p: [f"arg{i}" for i in range(p.num_args)])
         .set_attr("key_var_num_args", "num_args")
         .set_attr("FCompute<cpu>", add_n_compute)
         .set_attr("FInplaceOption", lambda p: [(0, 0)])
         .set_attr("FInferShape", ElemwiseShape(-1, 1))
         .set_attr("FInferType", ElemwiseType(-1, 1))
         .set_attr("FGradient", CloneGradient("_backward_add_n"))
         .add_argument("args", "NDArray-or-Symbol[]", "Positional input arguments"))
    return registry.get("_t_add_n")


def test_builder_defines_op_with_alias_params_and_names(add_n):
    assert registry.get("_t_ElementWiseSum") is add_n
    assert add_n.provider == "test-builder"
    assert add_n.attrs["FCompute<cpu>"].provider == "test-builder"
    p = add_n.parse_params({"num_args": "3"})
    assert p.num_args == 3 and add_n.parse_params({"num_args": 3}) is add_n.parse_params({"num_args": 3})
    assert add_n.num_inputs(p) == 3 and add_n.num_outputs(p) == 1
    assert add_n.list_input_names(p) == ["arg0", "arg1", "arg2"]
    assert add_n.list_output_names(p) == ["output"]
    assert add_n.get_attr("FInplaceOption")(p) == [(0, 0)]
    with pytest.raises(ParamError, match="_t_add_n.*num_args"):
        add_n.parse_params({"num_args": "0"})


@pytest.mark.parametrize("req", REQS)
def test_builder_compute_honours_every_req(add_n, req):
    p = add_n.parse_params({"num_args": 3})
    a, b, c = np.arange(6.0).reshape(2, 3), np.ones((2, 3)), np.full((2, 3), 2.0)
    (out,) = run(add_n, [a, b, c], p, req=req, start=10.0)
    expected = {OpReqType.NULL: 10.0, OpReqType.ADD_TO: 10.0 + a + b + c}.get(req, a + b + c)
    np.testing.assert_allclose(out, expected)


def test_builder_shape_and_type_rules_fill_and_name_the_op(add_n):
    p = add_n.parse_params({"num_args": 2})
    infer = add_n.get_attr("FInferShape")
    assert infer(p, [None, (2, 3)], [None]) == ([(2, 3), (2, 3)], [(2, 3)])
    assert infer(p, [None, None], [(4,)]) == ([(4,), (4,)], [(4,)])
    with pytest.raises(ShapeError, match=r"'_t_add_n'.*input 1.*\(2, 2\).*\(2, 3\)"):
        infer(p, [(2, 3), (2, 2)], [None])
    types = add_n.get_attr("FInferType")
    assert types(p, [np.float32, None], [None]) == ([np.dtype("float32")] * 2, [np.dtype("float32")])
    with pytest.raises(TypeInferError, match="_t_add_n"):
        types(p, [np.float32, np.float16], [None])


def test_builder_clone_gradient_returns_head_grad_per_input(add_n):
    x, y = var_entry("x"), var_entry("y")
    node = make_node(add_n, [x, y], {"num_args": 2}, name="s")
    og = var_entry("og")
    assert add_n.get_attr("FGradient")(node, [og]) == [og, og]


def test_decorator_sugar_and_extend_op_do_not_steal_definition():
    with registry.providing("test-decorator"):
        b = register_op("_t_double").set_attr("FInferShape", ElemwiseShape(1, 1))

        @b.compute("cpu")
        def double(ctx, inputs, req, outputs, params):
            assign(outputs[0], req[0], inputs[0] * 2)
    with registry.providing("test-gpu-plugin"):
        extend_op("_t_double").set_attr("FCompute<gpu>", double)
        with pytest.raises(PluginError, match="extend_op"):
            extend_op("_t_double").describe("stolen")
    op = registry.get("_t_double")
    assert op.provider == "test-decorator"
    assert op.attrs["FCompute<gpu>"].provider == "test-gpu-plugin"
    np.testing.assert_allclose(run(op, [[1.0, 2.0]])[0], [2.0, 4.0])


# -- style 2: SimpleOp (the seeds' smooth_l1) ----------------------------------------
def smooth_l1(src, env, ret, req, ctx):
    xp, s2 = ctx.xp, env.scalar ** 2
    assign(ret, req, xp.where(xp.abs(src) < 1 / s2, 0.5 * s2 * src * src, xp.abs(src) - 0.5 / s2))


def smooth_l1_grad(out_grad, src, env, in_grad, req, ctx):
    xp, s2 = ctx.xp, env.scalar ** 2
    assign(in_grad, req, out_grad * xp.where(xp.abs(src) < 1 / s2, s2 * src, xp.sign(src)))


@pytest.fixture(scope="module")
def smooth():
    with registry.providing("test-simple"):
        (simple_op("_t_smooth_l1")
         .set_function(smooth_l1, NO_INPLACE)
         .set_gradient(smooth_l1_grad, INPLACE_OUT_IN, needs="in_data")
         .set_enable_scalar(True)
         .describe("Calculate Smooth L1 Loss(lhs, scalar)"))
    return registry.get("_t_smooth_l1"), registry.get("_backward__t_smooth_l1")


def ref_smooth_l1(x, sigma):
    s2 = sigma ** 2
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)


def test_simple_op_forward_matches_reference(smooth):
    fwd, _ = smooth
    p = fwd.parse_params({"scalar": "2.0"})
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    assert fwd.list_input_names(p) == ["data"] and fwd.num_inputs(p) == 1
    np.testing.assert_allclose(run(fwd, [x], p)[0], ref_smooth_l1(x, 2.0))
    assert fwd.get_attr("FInplaceOption")(p) == []
    with pytest.raises(ParamError, match="_t_smooth_l1.*scalar"):
        fwd.parse_params({})


def test_simple_op_gradient_node_and_backward_compute(smooth):
    fwd, bwd = smooth
    p = fwd.parse_params({"scalar": 1.5})
    x_entry, og = var_entry("x"), var_entry("og")
    node = make_node(fwd, [x_entry], p, name="loss")
    (g,) = fwd.get_attr("FGradient")(node, [og])
    assert g.node.op is bwd and g.index == 0
    assert g.node.inputs == [og, x_entry] and g.node.params is p
    assert bwd.get_attr("FInplaceOption")(p) == [(0, 0)]
    assert bwd.get_attr("TIsBackward") is True
    x = np.array([[-2.0, -0.3, 0.1], [0.25, 0.9, 3.0]])
    head = np.full_like(x, 0.5)
    (grad,) = run(bwd, [head, x], p)
    np.testing.assert_allclose(grad, numeric_grad(lambda v: 0.5 * ref_smooth_l1(v, 1.5), x),
                               rtol=1e-5, atol=1e-6)


def test_simple_op_binary_default_shape_checks_operands():
    def hypot(lhs, rhs, env, ret, req, ctx):
        assign(ret, req, ctx.xp.hypot(lhs, rhs))

    def hypot_grad(og, lhs, rhs, env, lgrad, rgrad, lreq, rreq, ctx):
        h = ctx.xp.hypot(lhs, rhs)
        assign(lgrad, lreq, og * lhs / h)
        assign(rgrad, rreq, og * rhs / h)

    with registry.providing("test-simple"):
        simple_op("_t_hypot").set_function(hypot).set_gradient(hypot_grad, needs="in_data")
    op, bwd = registry.get("_t_hypot"), registry.get("_backward__t_hypot")
    assert op.list_input_names(None) == ["lhs", "rhs"]
    with pytest.raises(ShapeError, match="_t_hypot"):
        op.get_attr("FInferShape")(None, [(2, 3), (3, 2)], [None])
    np.testing.assert_allclose(run(op, [[3.0], [4.0]])[0], [5.0])
    lg, rg = run(bwd, [[1.0], [3.0], [4.0]])
    np.testing.assert_allclose([lg[0], rg[0]], [0.6, 0.8])
    a, b, og = var_entry("a"), var_entry("b"), var_entry("og")
    grads = op.get_attr("FGradient")(make_node(op, [a, b], None, name="h"), [og])
    assert [e.index for e in grads] == [0, 1] and grads[0].node.inputs == [og, a, b]


def test_simple_op_kwargs_env_and_custom_shape():
    class RepeatParam(Param):
        times: int = Field(2, ge=1)

    def rep(src, env, ret, req, ctx):
        assign(ret, req, ctx.xp.tile(src, env.kwargs.times))

    with registry.providing("test-simple"):
        (simple_op("_t_tile1d").set_enable_kwargs(RepeatParam)
         .set_shape_function(lambda s, env: (s[0] * env.kwargs.times,)).set_function(rep))
    op = registry.get("_t_tile1d")
    p = op.parse_params({"times": "3"})
    np.testing.assert_allclose(run(op, [[1.0, 2.0]], p)[0], [1, 2, 1, 2, 1, 2])
    with pytest.raises(ShapeError, match="_t_tile1d"):
        op.get_attr("FInferShape")(p, [(2,)], [(5,)])


# -- style 3: OperatorProperty / Operator --------------------------------------------
class ScaleParam(Param):
    momentum: float = Field(0.5, ge=0, le=1)


class ScaleOp(Operator):
    def __init__(self, momentum):
        self.momentum = momentum

    def forward(self, ctx, in_data, req, out_data, aux):
        data, gamma = in_data
        assign(out_data[0], req[0], data * gamma)
        if ctx.is_train:
            aux[0][...] = self.momentum * aux[0] + (1 - self.momentum) * data.mean(axis=0)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assert out_data == [None]   # not declared as a dependency
        data, gamma = in_data
        assign(in_grad[0], req[0], out_grad[0] * gamma)
        assign(in_grad[1], req[1], (out_grad[0] * data).sum(axis=0))


class ScaleProp(OperatorProperty):
    """Per-channel scale with a running mean of the input as auxiliary state."""
    param_model = ScaleParam

    def list_arguments(self):
        return ["data", "gamma"]

    def list_auxiliary_states(self):
        return ["running_mean"]

    def infer_shape(self, in_shape):
        data = in_shape[0]
        if data is None:
            return in_shape, [None], [None]
        return [data, (data[1],)], [data], [(data[1],)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]

    def create_operator(self, ctx):
        return ScaleOp(self.param.momentum)


@pytest.fixture(scope="module")
def scale():
    with registry.providing("test-legacy"):
        register_property("_t_prop_scale", ScaleProp)
    return registry.get("_t_prop_scale"), registry.get("_backward__t_prop_scale")


def test_legacy_describes_inputs_aux_and_shapes(scale):
    fwd, _ = scale
    p = fwd.parse_params({"momentum": "0.25"})
    assert fwd.num_inputs(p) == 3 and fwd.num_outputs(p) == 1
    assert fwd.list_input_names(p) == ["data", "gamma", "running_mean"]
    assert fwd.mutate_inputs(p) == [2]
    assert fwd.get_attr("FInferShape")(p, [(4, 3), None, None], [None]) == (
        [(4, 3), (3,), (3,)], [(4, 3)])
    assert [a.name for a in fwd.arguments] == ["data", "gamma"]
    assert "running mean" in fwd.description


def test_legacy_forward_updates_aux_in_training(scale):
    fwd, _ = scale
    p = fwd.parse_params({"momentum": 0.25})
    data, gamma, aux = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0]), np.zeros(3)
    out = np.empty((2, 3))
    fwd.get_attr("FCompute<cpu>")(opctx(is_train=True), [data, gamma, aux], [OpReqType.WRITE_TO],
                                  [out], p)
    np.testing.assert_allclose(out, data * gamma)
    np.testing.assert_allclose(aux, 0.75 * data.mean(axis=0))


def test_legacy_gradient_reads_only_declared_dependencies(scale):
    fwd, bwd = scale
    p = fwd.parse_params({})
    d, g, a, og = var_entry("d"), var_entry("g"), var_entry("a"), var_entry("og")
    node = make_node(fwd, [d, g, a], p, name="sc")
    grads = fwd.get_attr("FGradient")(node, [og])
    assert grads[2] is None and [e.index for e in grads[:2]] == [0, 1]
    bnode = grads[0].node
    assert bnode.op is bwd and bnode.inputs == [og, d, g, a]
    assert bwd.num_inputs(p) == 4 and bwd.num_outputs(p) == 2
    assert bwd.get_attr("FInplaceOption")(p) == [(0, 0)]
    assert bwd.get_attr("FInferShape")(p, [(2, 3), (2, 3), (3,), (3,)], [None, None])[1] == [
        (2, 3), (3,)]
    data, gamma, head = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0]), np.ones((2, 3))
    gd, gg = np.empty((2, 3)), np.full(3, 1.0)
    bwd.get_attr("FCompute<cpu>")(opctx(True), [head, data, gamma, np.zeros(3)],
                                  [OpReqType.WRITE_TO, OpReqType.ADD_TO], [gd, gg], p)
    np.testing.assert_allclose(gd, head * gamma)
    np.testing.assert_allclose(gg, 1.0 + data.sum(axis=0))


# -- gradient helpers ------------------------------------------------------------------
@pytest.fixture(scope="module")
def unary_pair():
    with registry.providing("test-grad"):
        for name in ("_t_fwd2", "_t_bwd2"):
            register_op(name).set_num_inputs(2).set_num_outputs(2)
    return registry.get("_t_fwd2")


@pytest.mark.parametrize("rule, extra", [
    (ElemwiseGradUseIn, "in"), (ElemwiseGradUseOut, "out"),
    (ElemwiseGradUseInOut, "inout"), (ElemwiseGradUseNone, "none")])
def test_elemwise_grad_rules_build_one_backward_node(unary_pair, rule, extra):
    a, b, o0, o1 = var_entry("a"), var_entry("b"), var_entry("o0"), var_entry("o1")
    node = make_node(unary_pair, [a, b], None, name="f")
    grads = rule("_t_bwd2")(node, [o0, o1])
    outs = [NodeEntry(node, 0, 0), NodeEntry(node, 1, 0)]
    expected = [o0, o1] + {"in": [a, b], "out": outs, "inout": [a, b] + outs, "none": []}[extra]
    bnode = grads[0].node
    assert bnode.op.name == "_t_bwd2" and bnode.name == "f_backward"
    assert bnode.inputs == expected and bnode.control_deps == [node]
    assert [(e.node, e.index) for e in grads] == [(bnode, 0), (bnode, 1)]


def test_make_zero_grad_nodes_builds_zeros_like_per_input(unary_pair):
    try:
        registry.get("zeros_like")
    except opsdk.MXNetError:
        with registry.providing("test-grad"):
            register_op("zeros_like").set_num_inputs(1)
    a, b = var_entry("a"), var_entry("b")
    grads = MakeZeroGradNodes(make_node(unary_pair, [a, b], None, name="f"), [var_entry("og")])
    assert [g.node.op.name for g in grads] == ["zeros_like", "zeros_like"]
    assert [g.node.inputs for g in grads] == [[a], [b]]


def test_opsdk_exports_are_complete():
    missing = [n for n in opsdk.__all__ if not hasattr(opsdk, n)]
    assert missing == []
    assert opsdk.ResourceRequest.TEMP_SPACE is not None


def test_simple_op_out_value_gradient_inplace_options_and_resources():
    def exp_fwd(src, env, ret, req, ctx):
        assign(ret, req, ctx.xp.exp(src))

    def exp_grad(out_grad, out_value, env, in_grad, req, ctx):
        assign(in_grad, req, out_grad * out_value)

    with registry.providing("test-simple"):
        (simple_op("_t_exp").set_function(exp_fwd, opsdk.INPLACE_IN_OUT)
         .set_gradient(exp_grad, INPLACE_OUT_IN, needs="out_value")
         .set_resource_request(opsdk.ResourceRequest.TEMP_SPACE))
    op, bwd = registry.get("_t_exp"), registry.get("_backward__t_exp")
    assert op.get_attr("FInplaceOption")(None) == [(0, 0)]
    assert op.get_attr("FResourceRequest")(None) == [opsdk.ResourceRequest.TEMP_SPACE]
    x, og = var_entry("x"), var_entry("og")
    node = make_node(op, [x], None, name="e")
    (g,) = op.get_attr("FGradient")(node, [og])
    assert g.node.inputs == [og, NodeEntry(node, 0, 0)]
    assert bwd.get_attr("FInferShape")(None, [(2,), (2,)], [None]) == ([(2,), (2,)], [(2,)])
    (grad,) = run(bwd, [[2.0, 3.0], np.exp([0.0, 1.0])])
    np.testing.assert_allclose(grad, [2.0, 3.0 * np.e])


def test_simple_op_rejects_scalar_with_kwargs_and_bad_needs():
    class KP(Param):
        k: int = 1

    with registry.providing("test-simple"):
        s = simple_op("_t_bad_env").set_enable_scalar(True)
        with pytest.raises(opsdk.MXNetError, match="_t_bad_env.*scalar and kwargs"):
            s.set_enable_kwargs(KP)
        with pytest.raises(opsdk.MXNetError, match="needs=.*'out_value'.*'everything'"):
            s.set_gradient(lambda *a: None, needs="everything")


def test_shape_rules_name_each_op_they_are_registered_on():
    rule = ElemwiseShape(2, 1)
    with registry.providing("test-rules"):
        register_op("_t_rule_a").set_attr("FInferShape", rule)
        register_op("_t_rule_b").set_attr("FInferShape", rule)
    for name in ("_t_rule_a", "_t_rule_b"):
        with pytest.raises(ShapeError, match=f"'{name}'"):
            registry.get(name).get_attr("FInferShape")(None, [(1,), (2,)], [None])
    with pytest.raises(ShapeError, match="expected 2 input"):
        registry.get("_t_rule_a").get_attr("FInferShape")(None, [(1,)], [None])


def test_float_only_rejects_other_dtypes_naming_op_input_and_accepted():
    with registry.providing("test-rules"):
        (register_op("_t_rule_floats").set_num_inputs(2)
         .set_attr("FListInputNames", lambda p: ["data", "index"])
         .set_attr("FInferType", FloatOnly(ElemwiseType(2, 1))))
        (register_op("_t_rule_index_int").set_num_inputs(2)
         .set_attr("FInferType", FloatOnly(lambda p, i, o: (i, [i[0]]), inputs=(0,),
                                           accepted=["float32", "float64"])))
    infer = registry.get("_t_rule_floats").get_attr("FInferType")
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    assert infer(None, [f32, None], [None]) == ([f32, f32], [f32])
    with pytest.raises(TypeInferError, match="Operator '_t_rule_floats': input 'index' has dtype "
                                             "int32, expected float16, float32 or float64"):
        infer(None, [None, i32], [None])
    with pytest.raises(TypeInferError, match="input 'data' has dtype int32"):
        infer(None, [None, None], [i32])       # an input filled from the output is checked too
    other = registry.get("_t_rule_index_int").get_attr("FInferType")
    assert other(None, [f32, i32], [None]) == ([f32, i32], [f32])   # only input 0 is checked
    with pytest.raises(TypeInferError, match="'_t_rule_index_int': input 'arg0' has dtype float16, "
                                             "expected float32 or float64$"):
        other(None, [np.dtype(np.float16), i32], [None])


class PlainProp(OperatorProperty):
    def list_outputs(self):
        return ["out", "mask"]

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], []

    def create_operator(self, ctx):
        return PlainOp()


class PlainOp(Operator):
    def forward(self, ctx, in_data, req, out_data, aux):
        assign(out_data[0], req[0], ctx.xp.maximum(in_data[0], 0))
        assign(out_data[1], req[1], in_data[0] > 0)


def test_legacy_defaults_hidden_outputs_and_decorator_form():
    with registry.providing("test-legacy"):
        register_property("_t_plain")(PlainProp)
    op = registry.get("_t_plain")
    assert op.param_model is None and [a.name for a in op.arguments] == ["data"]
    assert (op.num_outputs(None), op.num_visible_outputs(None)) == (2, 1)
    assert op.list_output_names(None) == ["out", "mask"] and op.mutate_inputs(None) == []
    assert op.get_attr("FInferType")(None, [np.dtype("float32")], [None, None])[1] == [
        np.dtype("float32")] * 2
    out, mask = run(op, [[-1.0, 2.0]])
    assert out.tolist() == [0.0, 2.0] and mask.tolist() == [0.0, 1.0]
    x, og = var_entry("x"), var_entry("og")
    (g,) = op.get_attr("FGradient")(make_node(op, [x], None, name="p"), [og])
    # default dependency: visible out_grads + in_data + every out_data
    assert g.node.inputs[:2] == [og, x] and len(g.node.inputs) == 4


def test_outranked_names_the_op_when_nothing_lies_below_the_winner():
    import opsdk
    with pytest.raises(opsdk.PluginError, match=r"'relu'.*'FCompute<cpu>'.*nothing to fall back"):
        opsdk.outranked("relu", "FCompute<cpu>")
