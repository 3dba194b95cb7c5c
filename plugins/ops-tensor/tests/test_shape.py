"""Shape, slicing, joining and broadcasting ops: MXNet semantics on concrete values."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import ops as registry
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, run_op

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def out_shape(op, shapes, **params):
    d = registry.get(op)
    p = d.parse_params(params)
    return infer(d, p, shapes, [np.dtype("float32")] * len(shapes))[1]


@pytest.mark.parametrize("codes, reverse, want", [
    ((0, -1), False, (2, 12)), ((-1, 0), True, (6, 4)), ((-3, -2), False, (6, 4)),
    ((-4, 1, 2, -2), False, (1, 2, 3, 4)), ((-4, -1, 2, -2), False, (1, 2, 3, 4)),
    ((-2,), False, (2, 3, 4)), ((4, 0, -1), False, (4, 3, 2)), ((-1,), False, (24,)),
])
def test_reshape_special_codes(codes, reverse, want):
    (out,) = run_op("reshape", [X], {"shape": str(codes), "reverse": str(reverse)})
    assert out.shape == want
    np.testing.assert_array_equal(out.reshape(-1), X.reshape(-1))


def test_reshape_reverse_matches_mxnet():
    assert out_shape("Reshape", [(10, 5, 4)], shape=(-1, 0)) == [(40, 5)]
    assert out_shape("Reshape", [(10, 5, 4)], shape=(-1, 0), reverse=True) == [(50, 4)]


@pytest.mark.parametrize("codes, src, want", [
    ((-1, 0), (0, 3), (0, 3)), ((-3, 0), (0, 3, 4), (0, 4)), ((-3, 0), (2, 0, 4), (0, 4)),
    ((-4, 2, -1, 0), (0, 3), (2, 0, 3)), ((0, 5), (0, 3), (0, 5)),
])
def test_reshape_of_a_partial_shape_leaves_dependent_dims_unknown(codes, src, want):
    """As MXNet's InferReshapeShape (0 = unknown outside np_shape)."""
    d = registry.get("Reshape")
    ins, outs, _, _ = infer(d, d.parse_params({"shape": codes}), [src], ["float32"])
    assert outs == [want]


def test_reshape_fills_one_unknown_input_dim_from_a_known_output():
    x = mx.sym.var("x")
    for src in [(0, 3, 5, 5), (2, 0, 5, 5), (2, 3, 5, 0)]:
        net = mx.sym.elemwise_add(x.reshape((0, -1)), mx.sym.ones((2, 75)))
        ins, outs, _ = net.infer_shape(x=src)
        assert ins == [(2, 3, 5, 5)] and outs == [(2, 75)]
    ins, outs, _ = mx.sym.elemwise_add(x.reshape((-1,)), mx.sym.ones((12,))).infer_shape_partial(
        x=(0, 0, 4))
    assert ins == [(0, 0, 4)]                           # two unknown dims: left unknown


def test_rnn_param_concat_halves_the_rest_between_two_unknown_inputs():
    # a bidirectional RNN layer's flattened first i2h weights: both lengths from the output's
    a, b, c = mx.sym.var("a"), mx.sym.var("b", shape=(3,)), mx.sym.var("c")
    packed = mx.sym._internal._rnn_param_concat(a, b, c, dim=0)
    tied = packed + mx.sym.var("out", shape=(11,))
    assert tied.infer_shape()[0] == [(4,), (3,), (4,), (11,)]
    plain = mx.sym.Concat(a, b, c, dim=0) + mx.sym.var("out", shape=(11,))
    assert plain.infer_shape_partial()[0] == [(0,), (3,), (0,), (11,)]  # Concat cannot
    x, y = np.arange(4, dtype=np.float32), np.ones(2, np.float32)
    check_forward("_rnn_param_concat", [x, y], [np.concatenate([x, y])],
                  {"num_args": 2, "dim": 0})
    check_backward("_rnn_param_concat", [x, y], [np.arange(6, dtype=np.float32)],
                   [np.arange(4), np.arange(4, 6)], {"num_args": 2, "dim": 0})


def test_partial_inference_of_concat_batch_dot_and_where_as_mxnet():
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    cat = mx.sym.Concat(a, b, dim=1) + mx.sym.var("d", shape=(2, 0))
    ins, outs, _ = cat.infer_shape(a=(0, 10), b=(0, 5))
    assert ins == [(2, 10), (2, 5), (2, 15)] and outs == [(2, 15)]
    with pytest.raises(ShapeError, match="Concat.*agree on every axis but dim=1"):
        mx.sym.Concat(a, b, dim=1).infer_shape(a=(2, 3), b=(3, 4))
    bd = mx.sym.batch_dot(a, b)
    assert bd.infer_shape_partial(a=(0, 3, 4), b=(0, 4, 5))[1] == [(0, 3, 5)]
    assert bd.infer_shape_partial(a=(0, 3, 4), b=(0, 0, 5))[1] == [()]   # k unknown: nothing
    w = mx.sym.where(c, a, b)
    assert w.infer_shape_partial(c=(0, 2), a=(0, 2), b=(0, 2))[1] == [()]  # cond not known
    assert w.infer_shape_partial(c=(3,), a=(3, 2), b=(0, 2))[0] == [(3,), (3, 2), (3, 2)]


def test_identity_with_attr_like_rhs_passes_shape_back():
    w, shift = mx.sym.var("w"), mx.sym.var("shift", shape=(1,))
    wt = mx.sym._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, shift), w)
    net = mx.sym.FullyConnected(mx.sym.var("data"), weight=wt, num_hidden=11, no_bias=True)
    ins, _, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), ins))["w"] == (11, 100)
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    check_forward("_identity_with_attr_like_rhs", [x, y], x)
    check_backward("_identity_with_attr_like_rhs", [x, y], [np.full((2, 3), 2.0)],
                   [np.full((2, 3), 2.0), np.zeros((2, 3))])


def test_reshape_old_target_shape_api():
    assert out_shape("Reshape", [(2, 3, 5, 5)], target_shape=(2, 0)) == [(2, 75)]
    assert out_shape("Reshape", [(2, 3, 5, 5)], target_shape=(0, 5), keep_highest=True) == [
        (2, 5)]
    assert out_shape("Reshape", [(2, 3, 5, 5)], target_shape=(1, 0, 3),
                     keep_highest=True) == [(2, 25, 3)]


@pytest.mark.parametrize("codes", [(5, -1), (-1, -1), (-4, 3, 3, -2), (7,), (-4, -1, -1, -2)])
def test_reshape_bad_codes_raise(codes):
    with pytest.raises(ShapeError, match="Reshape"):
        out_shape("Reshape", [(2, 3, 4)], shape=codes)


def test_flatten_transpose_swapaxes_flip():
    check_forward("Flatten", [X], X.reshape(2, 12))
    check_forward("flatten", [np.ones(4, np.float32)], np.ones((4, 1), np.float32))
    check_forward("transpose", [X], X.transpose())
    check_forward("transpose", [X], X.transpose(1, 2, 0), {"axes": "(1, 2, 0)"})
    check_forward("SwapAxis", [X], X.swapaxes(0, 2), {"dim1": 0, "dim2": 2})
    check_forward("reverse", [X], X[::-1, :, ::-1], {"axis": "(0, 2)"})
    with pytest.raises(ShapeError, match="permutation"):
        out_shape("transpose", [(2, 3)], axes=(0, 0))


def test_transpose_fills_its_input_shape_from_the_output():
    d = registry.get("transpose")
    ins, outs = d.get_attr("FInferShape")(d.parse_params({"axes": (1, 2, 0)}), [None], [(3, 4, 2)])
    assert ins == [(2, 3, 4)]


def test_expand_dims_and_squeeze():
    assert out_shape("expand_dims", [(2, 3)], axis=-1) == [(2, 3, 1)]
    assert out_shape("expand_dims", [(2, 3)], axis=0) == [(1, 2, 3)]
    assert out_shape("squeeze", [(2, 1, 3, 1)]) == [(2, 3)]
    assert out_shape("squeeze", [(2, 1, 3, 1)], axis=(1,)) == [(2, 3, 1)]
    assert out_shape("squeeze", [(1, 1)]) == [(1,)]      # MXNet keeps one axis
    with pytest.raises(ShapeError, match="squeeze"):
        out_shape("squeeze", [(2, 3)], axis=(0,))


def test_slice_family():
    check_forward("slice", [X], X[0:2, 1:3], {"begin": "(0, 1)", "end": "(2, 3)"})
    check_forward("slice", [X], X[::2, -1:0:-2], {"begin": "(None, -1)", "end": "(None, 0)",
                                                   "step": "(2, -2)"})
    check_forward("slice_axis", [X], X[:, :, 1:3], {"axis": 2, "begin": 1, "end": 3})
    check_forward("slice_axis", [X], X[:, -2:], {"axis": 1, "begin": -2, "end": "None"})
    like = np.zeros((1, 2), np.float32)
    check_forward("slice_like", [X, like], X[:1, :2])
    check_forward("slice_like", [X, like], X[:, :2], {"axes": "(1,)"})
    g = np.ones((2, 2, 4), np.float32)
    want = np.zeros_like(X)
    want[:, 1:3] = 1
    check_backward("slice_axis", [X], [g], [want], {"axis": 1, "begin": 1, "end": 3})



@pytest.mark.parametrize("begin, end", [(0, 5), (-4, None), (2, 2), (2, 1)])
def test_slice_axis_range_outside_the_axis_is_an_error(begin, end):
    """As MXNet: no clamping (axis 1 of X has length 3)."""
    with pytest.raises(ShapeError, match="slice_axis.*not a non-empty range of axis 1 of "
                                         "length 3"):
        out_shape("slice_axis", [X.shape], axis=1, begin=begin, end=end)


def test_concat_stack_split():
    a, b = X[:, :1], X[:, 1:]
    check_forward("concat", [a, b], X, {"num_args": 2, "dim": 1})
    check_forward("stack", [X, X], np.stack([X, X], 1), {"num_args": 2, "axis": 1})
    parts = run_op("SliceChannel", [X], {"num_outputs": 2, "axis": 2})
    np.testing.assert_array_equal(parts[1], X[:, :, 2:])
    parts = run_op("split", [X], {"num_outputs": 2, "axis": 0, "squeeze_axis": True})
    assert parts[0].shape == (3, 4)
    with pytest.raises(ShapeError, match="equal parts"):
        out_shape("split", [(2, 3)], num_outputs=2)
    with pytest.raises(ParamError, match="num_args"):
        registry.get("Concat").parse_params({"num_args": 0})
    grads = check_backward("Concat", [a, b], [X * 2], [a * 2, b * 2], {"num_args": 2})
    assert len(grads) == 2


def test_concat_fills_one_unknown_input():
    d = registry.get("Concat")
    ins, outs = d.get_attr("FInferShape")(d.parse_params({"num_args": 2}), [(2, 1), None], [(2, 5)])
    assert ins == [(2, 1), (2, 4)]


def test_tile_repeat_pad():
    y = X[0]
    check_forward("tile", [y], np.tile(y, (2, 1, 2)), {"reps": "(2, 1, 2)"})
    check_forward("repeat", [y], np.repeat(y, 2), {"repeats": 2})
    check_forward("repeat", [y], np.repeat(y, 3, axis=0), {"repeats": 3, "axis": 0})
    x4 = X.reshape(1, 2, 3, 4)
    pw = (0, 0, 0, 0, 1, 2, 2, 1)
    pairs = [(0, 0), (0, 0), (1, 2), (2, 1)]
    check_forward("pad", [x4], np.pad(x4, pairs, constant_values=9), {"pad_width": pw, "constant_value": 9})
    check_forward("Pad", [x4], np.pad(x4, pairs, mode="edge"), {"pad_width": pw, "mode": "edge"})
    check_forward("Pad", [x4], np.pad(x4, pairs, mode="reflect"), {"pad_width": pw, "mode": "reflect"})
    with pytest.raises(ParamError, match="mode"):
        registry.get("Pad").parse_params({"pad_width": pw, "mode": "wrap"})
    g = np.ones((1, 2, 6, 7), np.float32)
    (dx,) = check_backward("Pad", [x4], [g], [None], {"pad_width": pw, "mode": "edge"})
    assert dx.sum() == g.sum() and dx[0, 0, 0, 0] == 6   # a corner collects its edge copies


def test_broadcast_family_and_diag():
    row = np.arange(3, dtype=np.float32).reshape(1, 3)
    check_forward("broadcast_to", [row], np.broadcast_to(row, (4, 3)), {"shape": "(4, 0)"})
    check_forward("broadcast_like", [row, np.zeros((2, 3), np.float32)], np.broadcast_to(row, (2, 3)))
    col = row.reshape(3, 1, 1)
    check_forward("broadcast_axes", [col], np.broadcast_to(col, (3, 2, 4)), {"axis": (1, 2), "size": (2, 4)})
    check_backward("broadcast_to", [row], [np.ones((4, 3), np.float32)], [np.full((1, 3), 4.0)],
                   {"shape": (4, 3)})
    with pytest.raises(ShapeError, match="cannot broadcast"):
        out_shape("broadcast_to", [(2, 3)], shape=(4, 3))
    m = X[0]
    check_forward("diag", [m], np.diag(m))
    check_forward("diag", [m], np.diag(m, 1), {"k": 1})
    check_forward("diag", [np.arange(3, dtype=np.float32)], np.diag(np.arange(3.0), -1).astype(np.float32), {"k": -1})
    check_forward("diag", [X], np.diagonal(X, -1, 2, 0), {"k": -1, "axis1": 2, "axis2": 0})


def test_broadcast_like_axes_as_mxnet():
    assert out_shape("broadcast_like", [(1, 2, 1, 3), (5, 6, 7, 8)], lhs_axes=(0, 2),
                     rhs_axes=(1, 3)) == [(6, 2, 8, 3)]
    assert out_shape("broadcast_like", [(2, 1), (1, 7, 9, 1, 1)], lhs_axes=(1,),
                     rhs_axes=(-3,)) == [(2, 9)]
    with pytest.raises(ShapeError, match="empty"):
        out_shape("broadcast_like", [(1, 3), (5, 3)], lhs_axes=(), rhs_axes=())
    with pytest.raises(ShapeError, match="size 3, expected 1"):     # MXNet: a size-1 axis only
        out_shape("broadcast_like", [(1, 3), (5, 3)], lhs_axes=(1,), rhs_axes=(1,))
    with pytest.raises(ShapeError, match="cannot broadcast"):      # one list alone is ignored
        out_shape("broadcast_like", [(1, 3), (5, 4)], lhs_axes=(0,))


def test_crop_is_slice():
    assert registry.get("crop") is registry.get("slice")
    check_forward("crop", [X], X[:, 0:1, 0:3], {"begin": (0, 0, 0), "end": (2, 1, 3)})


@pytest.mark.parametrize("name", ["_slice_assign", "_crop_assign"])
def test_slice_assign(name):
    rhs = np.full((2, 1, 2), -1, np.float32)
    want = X.copy()
    want[:, 1:2, ::2] = rhs
    params = {"begin": (None, 1, None), "end": (None, 2, None), "step": (None, None, 2)}
    check_forward(name, [X, rhs], want, params)
    data = X.copy()
    (out,) = run_op(name, [data, rhs], params, req="inplace", outputs=[data])
    np.testing.assert_array_equal(data, want)
    assert out_shape(name, [(2, 3, 4), None], **params) == [(2, 3, 4)]
    with pytest.raises(ShapeError, match="rhs has shape"):
        out_shape(name, [(2, 3, 4), (2, 2, 2)], **params)


def test_slice_assign_scalar():
    assert registry.get("_crop_assign_scalar") is registry.get("_slice_assign_scalar")
    want = X.copy()
    want[0:2, 0:1, 0:3] = 5
    check_forward("_crop_assign_scalar", [X], want,
                  {"scalar": 5, "begin": (0, 0, 0), "end": (2, 1, 3)})
    want = X.astype(np.int32)
    want[0:2, 0:1, 0:3] = 2                         # the scalar cast to the dtype, as MXNet
    check_forward("_slice_assign_scalar", [X.astype(np.int32)], want,
                  {"scalar": 2.7, "begin": (0, 0, 0), "end": (2, 1, 3)})
    assert registry.get("_slice_assign_scalar").get_attr("FGradient") is None


def test_zero_reps_and_missing_diagonals_as_mxnet():
    """MXNet 1.9: tile with a 0 in reps fails outside np_shape (0 means an unknown dim there)
    and works under it; a diagonal past the matrix edge does not exist (k = width is empty)."""
    m = np.ones((4, 6), np.float32)
    with pytest.raises(ShapeError, match="zero-size"):
        run_op("tile", [m], {"reps": (1, 0, 3)})
    with mx.np_shape():
        assert out_shape("tile", [(4, 4)], reps=(1, 0, 3)) == [(1, 0, 12)]
    for k in (7, -5):
        with pytest.raises(ShapeError, match="does not exist"):
            run_op("diag", [m], {"k": k})
    assert out_shape("diag", [(4, 6)], k=6) == [(0,)]
    assert out_shape("diag", [(4, 6)], k=-4) == [(0,)]


def test_unknown_dims_stay_unknown():
    """slice keeps an unknown (np_shape: -1) dim; creation ops with an unknown dim in shape
    are filled in from their consumer (MXNet: ones(shape=(-1, -1)) + transpose + add)."""
    with mx.np_shape():
        assert out_shape("slice", [(-1, 20)], begin=(None, 3), end=(None, 10)) == [(-1, 7)]
    o = mx.sym.ones(shape=(3, -1))
    exe = (mx.sym.ones(shape=(2, -1)) + mx.sym.transpose(o)).bind(mx.cpu(), args={})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.full((2, 3), 2, np.float32))
