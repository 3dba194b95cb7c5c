"""Shape and dtype inference: the pass (mxnext._runtime.graph.infer) over an IndexedGraph, and
Symbol.infer_shape / infer_type on top of it."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, ShapeError, TypeInferError
from mxnext._runtime.graph import infer as _infer
from mxnext.graph import IndexedGraph


def _graph(sym):
    return IndexedGraph(sym._outputs)


def _by_name(sym, values):
    return dict(zip(sym.get_internals().list_outputs(), values))


# -- the pass -------------------------------------------------------------------------------
def test_shapes_flow_forwards_and_backwards():
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    s = mx.sym.elemwise_mul(mx.sym.elemwise_add(a, b, name="add"), c, name="mul")
    g = _graph(s)
    known = _infer.match_names(g, {"c": (2, 3)})
    shapes = _infer.infer_shapes(g, known)          # mul fills add's output; then add its inputs
    assert shapes == [(2, 3)] * g.num_entries
    assert _infer.infer_shapes(g, {g.outputs[0]: (4,)}) == [(4,)] * g.num_entries


def test_operators_fill_their_inputs():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(mx.sym.FullyConnected(data, num_hidden=8, name="fc1"),
                                num_hidden=2, name="fc2")
    g = _graph(net)
    shapes = _infer.infer_shapes(g, [(5, 3)] + [None] * (g.num_entries - 1))   # a list works
    assert _infer.split(g, shapes) == ([(5, 3), (8, 3), (8,), (2, 8), (2,)], [(5, 2)], [])


def test_known_values_win_over_variable_attributes():
    v = mx.sym.var("v", shape=(3, 4), dtype="float16")
    g = _graph(v * 2)
    assert _infer.infer_shapes(g)[-1] == (3, 4)
    assert _infer.infer_shapes(g, {0: (5,)})[-1] == (5,)
    assert _infer.infer_types(g)[-1] == np.float16
    assert _infer.infer_types(g, {0: "int32"})[-1] == np.int32


def test_complete_mode_names_what_stays_unknown():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    g = _graph(fc)
    assert _infer.infer_shapes(g)[0] is None                       # partial: no error
    with pytest.raises(ShapeError, match="shapes of these inputs; give them: data, fc_weight"):
        _infer.infer_shapes(g, partial=False)
    with pytest.raises(TypeInferError, match="dtypes of these inputs; give them: data"):
        _infer.infer_types(g, partial=False)
    assert _infer.infer_types(g, {0: np.float32}, partial=False) == [np.dtype("float32")] * 4
    from opsdk import register_op
    (register_op("_test_infer_blind").describe("Infers nothing.").set_num_inputs(1)
     .set_attr("FInferShape", lambda p, i, o: (i, o))
     .set_attr("FInferType", lambda p, i, o: (i, o))
     .add_argument("data", "NDArray-or-Symbol"))
    blind = mx.sym._internal._test_infer_blind(data, name="blind")
    with pytest.raises(ShapeError, match="outputs \\(no operator infers them\\): 'blind_output'"):
        _infer.infer_shapes(_graph(blind), {0: (2,)}, partial=False)


def test_conflicts_name_the_node_the_input_and_both_shapes():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=10, name="fc1")
    with pytest.raises(ShapeError) as exc:
        fc.infer_shape(data=(4, 3), fc1_weight=(10, 4))
    msg = str(exc.value)
    assert msg.startswith("Error in operator 'fc1' (FullyConnected): ")
    assert "'weight'" in msg and "(10, 4)" in msg and "(10, 3)" in msg
    assert "inputs: data = 'data' (4, 3), weight = 'fc1_weight' (10, 4)" in msg
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with pytest.raises(TypeInferError, match="Error in operator '_plus0' .*float16.*float32"):
        with mx.name.NameManager():
            (x + y).infer_type(x="float32", y="float16")


def test_a_rule_contradicting_a_known_value_is_caught_by_the_pass():
    from opsdk import register_op
    (register_op("_test_infer_liar").describe("Claims its input is (7,).").set_num_inputs(1)
     .set_attr("FInferShape", lambda p, i, o: ([(7,)], [(7,)]))
     .set_attr("FInferType", lambda p, i, o: ([np.float64], [np.float64]))
     .add_argument("data", "NDArray-or-Symbol"))
    s = mx.sym._internal._test_infer_liar(mx.sym.var("x"), name="liar")
    with pytest.raises(ShapeError, match="operator 'liar' \\(_test_infer_liar\\): input 'data' "
                                         "\\('x'\\) has shape \\(2,\\), but the operator infers"
                                         " \\(7,\\)"):
        s.infer_shape(x=(2,))
    with pytest.raises(TypeInferError, match="input 'data' \\('x'\\) has dtype float32, but the "
                                             "operator infers float64"):
        s.infer_type(x="float32")


def test_rules_returning_lists_still_reach_a_fixpoint():
    from opsdk import register_op
    (register_op("_test_infer_lists").describe("Lists, not tuples.").set_num_inputs(1)
     .set_attr("FInferShape", lambda p, i, o: ([list(i[0])] if i[0] else i, [None]))
     .set_attr("FInferType", lambda p, i, o: (i, o))
     .add_argument("data", "NDArray-or-Symbol"))
    s = mx.sym._internal._test_infer_lists(mx.sym.var("x"))
    assert s.infer_shape_partial(x=(2, 3)) == ([(2, 3)], [()], [])


def test_partial_shapes_merge_dimension_by_dimension():
    d = mx.sym.var("d", shape=(0, 20))
    fc = mx.sym.FullyConnected(d, num_hidden=3, name="f")
    assert fc.infer_shape_partial() == ([(0, 20), (3, 20), (3,)], [(0, 3)], [])
    rules = _infer._ShapeRules(0)
    assert rules.merge((0, 20), (5, 0)) == (5, 20) and rules.merge((4, 20), (5, 20)) is None
    assert rules.merge((1, 2), (1, 2, 3)) is None


def test_np_shape_semantics():
    x = mx.sym.var("x")
    s = x * 2
    with mx.np_shape(True):
        assert s.infer_shape(x=()) == ([()], [()], [])                  # () is a scalar
        assert s.infer_shape_partial() == ([None], [None], [])
        assert not _infer.shape_known((-1, 2)) and _infer.shape_known((0, 2))
    assert s.infer_shape_partial(x=()) == ([()], [()], [])               # () is unknown
    assert not _infer.shape_known((0, 2)) and _infer.shape_known((1, 2))


def test_attribute_parsing():
    assert _infer.parse_shape("(2, 3)") == (2, 3) and _infer.parse_shape("[4,5]") == (4, 5)
    assert _infer.parse_shape("(2,)") == (2,) and _infer.parse_shape("7") == (7,)
    assert _infer.parse_shape("None") is None
    with pytest.raises(ShapeError, match="__shape__='2x3'"):
        _infer.infer_shapes(_graph(mx.sym.var("v", __shape__="2x3")))
    with pytest.raises(TypeInferError, match="__dtype__='99'"):
        _infer.infer_types(_graph(mx.sym.var("v", __dtype__="99")))


def test_matching_by_name_and_position():
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    g = _graph(bn)
    assert _infer.match_names(g, {"bn_moving_var": (3,)}) == {g.entry_id(4): (3,)}
    assert _infer.match_positional(g, [(1, 3), None, (3,)]) == {0: (1, 3), 2: (3,)}
    with pytest.raises(MXNetError, match="(?s)name 'nope' not found.*\\[3\\]bn_moving_mean"):
        _infer.match_names(g, {"nope": (1,)})
    with pytest.raises(MXNetError, match="4 values given but the symbol has 3 arguments"):
        _infer.match_positional(g, [None] * 4)


# -- Symbol.infer_shape / infer_type --------------------------------------------------------
def test_infer_shape_results_and_incomplete_warning():
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    assert bn.infer_shape(data=(2, 3, 4, 4)) == ([(2, 3, 4, 4), (3,), (3,)], [(2, 3, 4, 4)],
                                                  [(3,), (3,)])
    assert bn.infer_shape((2, 3, 4, 4)) == bn.infer_shape(data=(2, 3, 4, 4))
    with pytest.warns(UserWarning, match="(?s)Cannot decide the shape.*data: \\(\\)"):
        assert bn.infer_shape(bn_moving_mean=(3,)) == (None, None, None)
    assert bn.infer_shape_partial(bn_moving_mean=(3,)) == ([(), (), ()], [()], [(3,), ()])
    with pytest.raises(TypeError, match="must be tuples.*'data'"):
        bn.infer_shape(data=[2, 3, 4, 4])
    with pytest.raises(ValueError, match="not both"):
        bn.infer_shape((1,), data=(1,))


def test_infer_type_results():
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    args, outs, aux = bn.infer_type(data="float64")
    assert args == [np.float64] * 3 and outs == [np.float64] and aux == [np.float64] * 2
    assert bn.infer_type(np.float32)[1] == [np.float32]
    assert bn.infer_type_partial() == ([None] * 3, [None], [None] * 2)
    with pytest.warns(UserWarning, match="Cannot decide the type"):
        assert bn.infer_type() == (None, None, None)
    with pytest.raises(TypeError, match="expected one of"):
        bn.infer_type(data="complex64")
    assert mx.sym.var("t", dtype="int64").infer_type() == ([np.int64], [np.int64], [])
