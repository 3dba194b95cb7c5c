"""opsdk.testing: the harness, the gradient evaluator, the checkers and the
conformance suite must pass good ops and catch broken ones."""

import numpy as np
import pytest

from mxnext import ops as registry
from mxnext.base import MXNetError, ParamError, TypeInferError
from opsdk import (ElemwiseShape, ElemwiseType, Field, FloatOnly, NodeEntry, Param, assign,
                   make_node, register_op)
from opsdk.testing import (TRUNCATES_KEY, check_backward, check_forward, check_numeric_gradient,
                           conformance_tests, eval_gradients, examples_for, make_inputs,
                           run_check, run_op)
from opsdk.testing._conformance import inapplicable
from opsdk.testing._examples import integer_inputs, parse_example

pytest_plugins = ["pytester"]

PROVIDER = "opsdk-testing-tests"


class ScaleParam(Param):
    factor: float = Field(2.0, ge=0, description="Multiplier")


def _scale(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0] * params.factor)


def _define(name, compute, grad=None, shape=None, inplace=None, **attrs):
    b = (register_op(name).set_attr_parser(ScaleParam).set_num_inputs(1).set_num_outputs(1)
         .set_attr("FInferShape", shape or ElemwiseShape(1, 1))
         .set_attr("FInferType", ElemwiseType(1, 1))
         .set_attr("FCompute<cpu>", compute))
    if grad is not None:
        b.set_attr("FGradient", grad)
    if inplace is not None:
        b.set_attr("FInplaceOption", inplace)
    for k, v in attrs.items():
        b.set_attr(k, v)


def _scale_grad(node, og):
    return [NodeEntry(make_node("_t_scale", [og[0]], node.params), 0)]


def _ignores_req(ctx, inputs, req, outputs, params):
    outputs[0][...] = inputs[0] * params.factor


def _unsafe_inplace(ctx, inputs, req, outputs, params):
    outputs[0][...] = 0
    outputs[0] += inputs[0] * params.factor


def _sum_rows(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0].sum(axis=0))


def _rows_shape(params, in_shapes, out_shapes):
    return in_shapes, [in_shapes[0][1:] if in_shapes[0] is not None else None]


def _zeros_for_integers(ctx, inputs, req, outputs, params):
    x = inputs[0]
    assign(outputs[0], req[0], x * params.factor if x.dtype.kind == "f" else 0 * x)


def _softsign(ctx, inputs, req, outputs, params):   # on integers: float math truncated to 0
    assign(outputs[0], req[0], inputs[0] / (1 + np.abs(inputs[0])))


def _floats_only_in_compute(ctx, inputs, req, outputs, params):
    if inputs[0].dtype.kind != "f":
        raise MXNetError("this kernel takes floating point data only")
    _scale(ctx, inputs, req, outputs, params)


def _vague_type(params, ins, outs):
    if any(t is not None and np.dtype(t).kind != "f" for t in ins):
        raise TypeInferError("unsupported input")
    return ElemwiseType(1, 1)(params, ins, outs)


with registry.providing(PROVIDER):
    _define("_t_scale", _scale, _scale_grad, inplace=lambda p: [(0, 0)])
    _define("_t_wrong_grad", _scale, lambda node, og: [og[0]])
    _define("_t_ignores_req", _ignores_req)
    _define("_t_unsafe_inplace", _unsafe_inplace, inplace=lambda p: [(0, 0)])
    _define("_t_bad_shape", _sum_rows)   # claims elementwise shape, computes a row sum
    _define("_t_lax_shape", _scale, shape=lambda p, i, o: (i, [i[0]]))
    _define("_t_needs_example", _scale, key_var_num_args="factor")
    # an in-place claim that never applies: the output is smaller than the input
    _define("_t_rows_claim", _sum_rows, shape=_rows_shape, inplace=lambda p: [(0, 0)])
    _define("_t_grad_unchecked", _scale, _scale_grad, TExamples=[{"grad": False}])
    _define("_backward_t_scale", _scale, _scale_grad)
    _define("_t_int_zeros", _zeros_for_integers)
    _define("_t_softsign", _softsign)
    _define("_t_softsign_declared", _softsign, **{TRUNCATES_KEY: True})
    _define("_t_float_only", _floats_only_in_compute, FInferType=FloatOnly(ElemwiseType(1, 1)))
    _define("_t_fails_late", _floats_only_in_compute)
    _define("_t_vague_reject", _floats_only_in_compute, FInferType=_vague_type)
    _define("_t_int_ref", _scale, TExamples=[
        {"params": {"factor": 2.5}, "domain": (-9, 9),
         "int_ref": lambda x, factor: np.trunc(x * factor)},
        {"params": {"factor": 2.5}, "domain": (-9, 9), "int_ref": lambda x, factor: x * 2}])
    _define("_t_no_integers", _scale, TExamples=[
        {"domain": (0.2, 0.8)}, {"inputs": [np.array([0.5, 1.0], np.float32)]},
        {"inputs": [(3,)], "dtype": "int32"}])


def test_run_op_honours_every_req():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = run_op("_t_scale", [x], {"factor": "3"})
    np.testing.assert_array_equal(out, x * 3)
    base = np.ones_like(x)
    run_op("_t_scale", [x], {"factor": 3}, "add", [base])
    np.testing.assert_array_equal(base, x * 3 + 1)
    keep = np.full_like(x, 7)
    run_op("_t_scale", [x], None, "null", [keep])
    assert (keep == 7).all()
    with pytest.raises(MXNetError, match="expected 1 inputs"):
        run_op("_t_scale", [x, x])


def test_gradient_graph_is_evaluated_and_checked():
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3)).astype(np.float32)
    g = np.ones_like(x)
    (dx,) = eval_gradients("_t_scale", [x], [g], {"factor": 1.5})
    np.testing.assert_allclose(dx, g * 1.5)
    check_backward("_t_scale", [x], [g], [g * 1.5], {"factor": 1.5})
    check_forward("_t_scale", [x], x * 2)
    check_numeric_gradient("_t_scale", [x], {"factor": 0.5})
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_numeric_gradient("_t_wrong_grad", [x], {"factor": 4})
    with pytest.raises(AssertionError, match="output 0"):
        check_forward("_t_scale", [x], x * 3)


def test_examples_parse_and_defaults():
    (ex,), _ = examples_for(registry.get("_t_scale"))
    assert ex.inputs == ((2, 3),) and ex.dtype == (np.dtype("float32"),)
    examples, why = examples_for(registry.get("_t_needs_example"))
    assert examples == [] and "variadic" in why
    ex = parse_example({"inputs": [(4,), (3,)], "dtype": ["float32", "int32"],
                        "domain": [(-1, 1), (0, 3)], "grad": [0, 1]})
    a, i = make_inputs(ex)
    assert i.dtype == np.int32 and i.min() >= 0 and i.max() < 3
    assert ex.grad_inputs() == [0]
    with pytest.raises(ValueError, match="unknown keys"):
        parse_example({"input": [(2,)]})


def _check(op, check):
    (ex,), _ = examples_for(registry.get(op))
    run_check(op, ex, check)


@pytest.mark.parametrize("check", ["infer", "req", "inplace", "grad", "params", "dtypes"])
def test_good_op_passes_every_check(check):
    _check("_t_scale", check)


@pytest.mark.parametrize("op, check, error", [
    ("_t_wrong_grad", "grad", "gradient of input 0"),
    ("_t_ignores_req", "req", "req=null"),
    ("_t_unsafe_inplace", "inplace", "in-place input 0"),
    ("_t_bad_shape", "infer", "compute produced shape"),
    ("_t_int_zeros", "dtypes", "output 0 on int32 inputs vs float64 cast to int32"),
    ("_t_softsign", "dtypes", "every output is 0, float64 gives fractions"),
    ("_t_fails_late", "dtypes", "FInferType accepts int32 inputs, then the compute fails"),
    ("_t_vague_reject", "dtypes", "must name the op and dtype: unsupported input"),
])
def test_broken_ops_are_caught(op, check, error):
    with pytest.raises(AssertionError, match=error):
        _check(op, check)


def _examples_of(op):
    return examples_for(registry.get(op))[0]


@pytest.mark.parametrize("op", ["_t_float_only", "_t_softsign_declared"])
def test_integer_inputs_rejected_in_type_inference_or_declared_truncating_pass(op):
    _check(op, "dtypes")


def test_int_ref_replaces_the_float64_reference():
    good, bad = _examples_of("_t_int_ref")
    run_check("_t_int_ref", good, "dtypes")
    with pytest.raises(AssertionError, match="output 0 on int32 inputs vs int_ref"):
        run_check("_t_int_ref", bad, "dtypes")


def test_integer_inputs_come_from_the_floating_domains():
    ex = parse_example({"inputs": [(50,), (4,), np.array([2.0, -1.0], np.float32)],
                        "dtype": ["float32", "int64", "float32"],
                        "domain": [(-1.5, 2), (0, 4), (-1, 1)]})
    x, i, fixed = integer_inputs(ex)
    assert x.dtype == np.int32 and set(x.tolist()) == {-1, 0, 1, 2}
    np.testing.assert_array_equal(i, make_inputs(ex)[1])      # integer inputs stay as drawn
    assert fixed.dtype == np.int32 and fixed.tolist() == [2, -1]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_dtypes_check_needs_a_floating_input_that_can_hold_integers(k):
    ex = _examples_of("_t_no_integers")[k]
    assert integer_inputs(ex) is None
    assert "no floating input here can hold integers" in inapplicable(
        "dtypes", registry.get("_t_no_integers"), ex)


def test_missing_conflict_error_is_caught():
    with pytest.raises(pytest.fail.Exception, match="ShapeError"):
        _check("_t_lax_shape", "infer")


def test_params_check_rejects_lax_models():
    class Lax(ScaleParam):
        @classmethod
        def parse(cls, kwargs, op="?"):     # accepts anything, validates nothing
            return cls.model_construct(**kwargs)
    registry.get("_t_lax_shape").set_param_model(Lax)
    with pytest.raises(pytest.fail.Exception, match="ParamError"):
        _check("_t_lax_shape", "params")
    registry.get("_t_lax_shape").set_param_model(ScaleParam)
    with pytest.raises(ParamError, match="factor"):
        run_op("_t_scale", [np.ones(2)], {"factor": -1})


def _case_ids(**kwargs):
    fn = conformance_tests(PROVIDER, **kwargs)
    (mark,) = [m for m in fn.pytestmark if m.name == "parametrize"]
    return {p.id: p for p in mark.args[1]}


def test_conformance_cases_are_generated_only_where_the_check_applies():
    cases = _case_ids(ops=["_t_scale", "_t_ignores_req", "_t_wrong_grad", "_t_rows_claim",
                           "_t_grad_unchecked", "_backward_t_scale"])
    checks = {}
    for case_id in cases:
        op, _, check = case_id.rpartition("-")
        checks.setdefault(op, set()).add(check)
    assert checks == {
        "_t_scale-0": {"infer", "req", "inplace", "grad", "params", "dtypes"},
        "_t_ignores_req-0": {"infer", "req", "params", "dtypes"},   # no claims, no FGradient
        "_t_wrong_grad-0": {"infer", "req", "grad", "params", "dtypes"},
        "_t_rows_claim-0": {"infer", "req", "params", "dtypes"},    # claim never fits (2,3)->(3,)
        "_t_grad_unchecked-0": {"infer", "req", "params", "dtypes"},  # example checks no grad
        "_backward_t_scale-0": {"infer", "req", "params"},          # dtypes follow the forward
    }
    assert not any(m.name == "skip" for p in cases.values() for m in p.marks)
    assert set(_case_ids(ops=["_t_scale"], skip_checks=["grad", "req", "dtypes"])) == {
        "_t_scale-0-infer", "_t_scale-0-inplace", "_t_scale-0-params"}
    with pytest.raises(LookupError, match="defines no ops"):
        conformance_tests("no-such-plugin")


@pytest.mark.parametrize("op, check, reason", [
    ("_t_ignores_req", "inplace", "no FInplaceOption claims"),
    ("_t_rows_claim", "inplace", "never apply here"),
    ("_t_ignores_req", "grad", "no FGradient"),
    ("_t_grad_unchecked", "grad", "example checks no gradient"),
    ("_backward_t_scale", "grad", "backward op"),
    ("_backward_t_scale", "dtypes", "backward op"),
])
def test_an_inapplicable_check_says_why_and_run_check_skips_it(op, check, reason):
    (ex,), _ = examples_for(registry.get(op))
    assert reason in inapplicable(check, registry.get(op), ex)
    with pytest.raises(pytest.skip.Exception, match=reason):
        run_check(op, ex, check)


def test_ops_without_example_get_one_skipped_record():
    cases = _case_ids(ops=["_t_scale", "_t_needs_example"])
    assert not any(case_id.startswith("_t_needs_example") for case_id in cases)
    (mark,) = [m for m in cases["ops-without-example"].marks if m.name == "skip"]
    assert mark.kwargs["reason"] == ("1 op(s) have no example, so no check runs for them: "
                                     "_t_needs_example (variadic inputs and no TExamples)")
    assert "ops-without-example" not in _case_ids(ops=["_t_scale"])


def test_pytest_plugin_runs_a_suite(pytester):
    pytester.makepyfile(test_suite="""
        from mxnext import ops as registry
        from opsdk import ElemwiseShape, ElemwiseType, Field, Param, assign, register_op
        from opsdk.testing import conformance_tests


        class NumArgs(Param):
            num_args: int = Field(ge=1, description="Number of inputs.")


        with registry.providing("demo"):
            (register_op("_demo_twice").set_num_inputs(1).set_num_outputs(1)
                .set_attr("FInferShape", ElemwiseShape(1, 1))
                .set_attr("FInferType", ElemwiseType(1, 1))
                .set_attr("FCompute<cpu>",
                          lambda ctx, i, r, o, p: assign(o[0], r[0], i[0] * 2)))
            (register_op("_demo_sum").set_attr_parser(NumArgs)
                .set_num_inputs(lambda p: p.num_args).set_num_outputs(1)
                .set_attr("key_var_num_args", "num_args")
                .set_attr("FInferShape", ElemwiseShape(-1, 1))
                .set_attr("FInferType", ElemwiseType(-1, 1))
                .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(o[0], r[0], sum(i))))
        test_demo = conformance_tests("demo")
    """)
    result = pytester.runpytest_subprocess("-q", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, skipped=1)  # no in-place claim, no FGradient: no case
    result.stdout.fnmatch_lines(["SKIPPED*1 op(s) have no example*_demo_sum (variadic inputs*"])
