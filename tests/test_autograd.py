"""autograd: scopes, variables, backward/grad over FGradient rules, second order, Function."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd as ag
from mxnext.base import MXNetError


def _square_op():
    """A test op x**2 whose gradient is built from differentiable forward ops."""
    from opsdk import ElemwiseShape, ElemwiseType, NodeEntry, assign, make_node, register_op
    name = "_test_autograd_square"
    if name in {d.name for d in mx.ops.list_ops()}:
        return name

    def grad(node, ogs):
        two_x = make_node("_mul_scalar", [node.inputs[0]], {"scalar": 2.0})
        return [NodeEntry(make_node("elemwise_mul", [ogs[0], NodeEntry(two_x, 0, 0)]), 0, 0)]
    (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
     .set_attr("FInferType", ElemwiseType(1, 1))
     .set_attr("FCompute<cpu>", lambda c, i, r, o, p: assign(o[0], r[0], i[0] * i[0]))
     .set_attr("FGradient", grad).add_argument("data", "NDArray-or-Symbol", "x"))
    return name


def test_scopes():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
        with ag.predict_mode():
            assert not ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
    with ag.train_mode():
        assert ag.is_training() and not ag.is_recording()
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(True) is False
    ag.set_training(False)


def test_backward_polynomial():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = (x * x + 2 * x - x / 2).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.array([1, 2, 3]) + 1.5)


def test_broadcast_and_reduce_gradients():
    w = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.nd.array([[10.0, 20.0]])
    w.attach_grad()
    b.attach_grad()
    with ag.record():
        y = mx.nd.dot(w, w) + b
        loss = y.mean()
    loss.backward()
    W = w.asnumpy()
    g = np.full((2, 2), 0.25)
    np.testing.assert_allclose(w.grad.asnumpy(), g @ W.T + W.T @ g, rtol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), [[0.5, 0.5]])


def test_head_grads_and_multiple_heads():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y1 = x * 3
        y2 = x * x
    ag.backward([y1, y2], [mx.nd.array([1.0, 1.0]), mx.nd.array([0.5, 2.0])])
    np.testing.assert_allclose(x.grad.asnumpy(), [3 + 1, 3 + 8])
    with ag.record():
        y = x * 2
    y.backward(mx.nd.array([10.0, 100.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [20, 200])


def test_grad_req_add_and_null():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with ag.record():
            y = x * 2
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 6])
    z = mx.nd.array([1.0])
    z.attach_grad(grad_req="null")
    w = mx.nd.array([2.0])
    w.attach_grad()
    with ag.record():
        y = z * w
    y.backward(retain_graph=True)
    assert z.grad.asnumpy().tolist() == [0] and w.grad.asnumpy().tolist() == [1]
    with ag.record():
        y = z * 5
    with pytest.raises(MXNetError, match="no inputs in computation graph that require grad"):
        y.backward()                  # as MXNet: nothing to differentiate is an error
    with pytest.raises(MXNetError, match="no inputs"):
        ag.backward([])


def test_grad_errors_name_the_bad_argument():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    u = mx.nd.array([1.0])
    u.attach_grad()
    with ag.record():
        y = x * x
    with pytest.raises(MXNetError, match=r"head_grads\[0\] is \(2,\).*heads\[0\] is \(3,\)"):
        y.backward(mx.nd.array([1.0, 1.0]))
    with pytest.raises(MXNetError, match=r"variables\[1\] because it is unreachable"):
        ag.grad(y, [x, u])
    assert isinstance(ag.grad(y, x), list)      # a list even for one variable, as MXNet


def test_grad_write_overwrites():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for _ in range(2):
        with ag.record():
            y = x * 2
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 2])


def test_mark_variables():
    x = mx.nd.array([3.0])
    g = mx.nd.zeros((1,))
    ag.mark_variables([x], [g])
    with ag.record():
        y = x * x
    y.backward()
    assert g.asscalar() == 6 and x.grad is g


def test_retain_graph():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4])
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()


def test_not_recorded_raises():
    x = mx.nd.array([1.0])
    x.attach_grad()
    y = x * 2
    with pytest.raises(MXNetError, match="computational graph"):
        y.backward()


def test_op_without_gradient_names_the_op():
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    name = "_test_autograd_nograd"
    if name not in {d.name for d in mx.ops.list_ops()}:
        (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
         .set_attr("FInferType", ElemwiseType(1, 1))
         .set_attr("FCompute<cpu>", lambda c, i, r, o, p: assign(o[0], r[0], i[0]))
         .add_argument("data", "NDArray-or-Symbol", "x"))
    x = mx.nd.array([1.0])
    x.attach_grad()
    with ag.record():
        y = mx.nd._internal._test_autograd_nograd(x) * 2
    with pytest.raises(MXNetError, match=name):
        y.backward()


def test_grad_function_and_second_order():
    op = getattr(mx.nd._internal, _square_op())
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = op(x)
        (dx,) = ag.grad(y, x, create_graph=True)     # a list, as in MXNet
    np.testing.assert_allclose(dx.asnumpy(), [2, 4, 6])
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 2, 2])
    assert x.grad is not None


def test_second_order_of_a_constant_derivative_is_zero_not_missing():
    """x is reachable from its first derivative (sign(x) reads it) but every path's
    gradient is zero: grad gives zeros, as MXNet; an unrelated variable is an error."""
    x, z = mx.nd.array([-1.0, 2.0]), mx.nd.array([3.0, 4.0])
    x.attach_grad()
    z.attach_grad()
    with ag.record():
        (dx,) = ag.grad(mx.nd.abs(x), x, create_graph=True, retain_graph=True)
        (ddx,) = ag.grad(dx, x, head_grads=mx.nd.ones(2), create_graph=True)
        w = z * 3
    assert dx.asnumpy().tolist() == [-1, 1] and ddx.asnumpy().tolist() == [0, 0]
    with pytest.raises(MXNetError, match="unreachable"):
        ag.grad(w, [x])


def test_grad_returns_without_touching_buffers():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x * 3
    (gx,) = ag.grad([y], [x])
    np.testing.assert_allclose(gx.asnumpy(), [6, 12])
    assert x.grad.asnumpy().tolist() == [0, 0]
    with pytest.raises(MXNetError, match="variable"):
        ag.grad(y, mx.nd.ones((1,)))


def test_indexing_and_reshape_are_recorded():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with ag.record():
        y = x[1] * 3 + x[:, 0] + x[0:1].sum() + x.reshape((4,))[0:2]
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[4, 3], [4, 3]])


@pytest.mark.parametrize("key", [
    (slice(None), slice(None, None, 2)), slice(None, None, -1), (slice(3, 0, -1), slice(1, None, 3)),
    (1, slice(None, None, -2)), (Ellipsis, slice(None, None, -3)), (slice(0, 3, -1),),
    (None, slice(1, 4, 2))], ids=str)
def test_slices_with_any_step_are_recorded(key):
    x0 = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = mx.nd.array(x0)
    x.attach_grad()
    want = x0[key]
    w = np.random.default_rng(0).random(want.shape).astype(np.float32)
    with ag.record():
        y = x[key]
        z = (y * mx.nd.array(w)).sum() if w.size else y.sum()
    z.backward()
    np.testing.assert_array_equal(y.asnumpy(), want)
    expect = np.zeros_like(x0)
    expect[key] += w                        # the keys select each element at most once
    np.testing.assert_allclose(x.grad.asnumpy(), expect)


def test_training_flag_reaches_ops():
    seen = []
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    name = "_test_autograd_mode"
    if name not in {d.name for d in mx.ops.list_ops()}:
        def compute(ctx, i, r, o, p):
            seen.append(ctx.is_train)
            assign(o[0], r[0], i[0])
        (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
         .set_attr("FInferType", ElemwiseType(1, 1)).set_attr("FCompute<cpu>", compute)
         .add_argument("data", "NDArray-or-Symbol", "x"))
    f = getattr(mx.nd._internal, name)
    a = mx.nd.ones((1,))
    f(a).wait_to_read()
    with ag.record():
        f(a).wait_to_read()
    with ag.record(train_mode=False):
        f(a).wait_to_read()
    assert seen == [False, True, False]


def test_custom_function():
    class Sigmoid(ag.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            (y,) = self.saved_tensors
            return dy * y * (1 - y)

    x = mx.nd.array([0.0, 1.0, -2.0])
    x.attach_grad()
    with ag.record():
        z = Sigmoid()(x) * 2
    z.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0, -2.0])))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s * (1 - s), rtol=1e-6)


def test_custom_function_wrong_gradient_count():
    class Bad(ag.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, dy):
            return dy

    a, b = mx.nd.ones((1,)), mx.nd.ones((1,))
    a.attach_grad()
    b.attach_grad()
    with ag.record():
        y = Bad()(a, b)
    with pytest.raises(MXNetError, match="Bad.backward"):
        y.backward()


def test_detach_stops_gradients():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with ag.record():
        y = x * x.detach()
    y.backward()
    assert x.grad.asscalar() == 2


def test_unused_branch_and_constants():
    x = mx.nd.array([1.0, 2.0])
    c = mx.nd.array([5.0, 6.0])
    x.attach_grad()
    with ag.record():
        unused = x * 100
        y = (x * c).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [5, 6])
    del unused


def test_copy_and_astype_are_recorded():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x.copy() * 2 + x.astype("float64").astype("float32")
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 3])


def test_gradient_buffers_stay_distinct_and_identical_objects():
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    ga, gb = a.grad, b.grad
    with ag.record():
        y = mx.nd.elemwise_add(a, b) * 2     # the same gradient flows to a and b
    y.backward()
    assert a.grad is ga and b.grad is gb
    ga[:] = 0
    assert gb.asnumpy().tolist() == [2, 2] and a.grad.asnumpy().tolist() == [0, 0]
    with ag.record():
        z = (a * b).sum()
    z.backward()
    assert ga.asnumpy().tolist() == [3, 4] and gb.asnumpy().tolist() == [1, 2]


def test_inplace_on_recorded_arrays_is_refused():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 2
        with pytest.raises(MXNetError, match="computational graph"):
            y += 1
        with pytest.raises(MXNetError, match="computational graph"):
            x[0] = 5
        free = mx.nd.ones((2,))
        free += 1                      # arrays outside the graph may still be updated
    y.backward()
    y += 1                             # graph freed by backward: allowed again
    assert y.asnumpy().tolist() == [3, 5] and free.asnumpy().tolist() == [2, 2]


def test_recording_keeps_only_what_gradient_rules_read():
    """As MXNet's save_inputs/save_outputs: an activation no gradient rule reads is freed
    once the program drops it; one a rule reads lives until backward has used it."""
    import gc
    import weakref
    x = mx.nd.ones((64, 64))
    x.attach_grad()
    with ag.record():
        z = x * 2                      # _mul_scalar's gradient reads no value
        y = mx.nd.relu(z)              # relu's gradient reads its output, not its input
        z_chunk, y_chunk = weakref.ref(z._chunk), weakref.ref(y._chunk)
        del z
        gc.collect()
        assert z_chunk() is None
        out = (y * 3).sum()
        del y
    gc.collect()
    assert y_chunk() is not None       # saved for relu's backward
    out.backward()
    gc.collect()
    assert y_chunk() is None           # freed once backward used it
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((64, 64), 6.0))


def test_backward_twice_without_retain_graph_is_an_error():
    x = mx.nd.ones((3,))
    x.attach_grad()
    with ag.record():
        y = (x * x).sum()
    y.backward()
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()


def test_fresh_grad_tracks_backward_writes():
    x, y = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    dx, dy = mx.nd.zeros_like(x), mx.nd.zeros_like(y)
    mx.autograd.mark_variables([x, y], [dx, dy])
    assert not x._fresh_grad and not y._fresh_grad
    with mx.autograd.record():
        (x + 2 + y).backward()
    assert x._fresh_grad and y._fresh_grad and (dx.asnumpy() == 1).all()
    x._fresh_grad = y._fresh_grad = False
    with mx.autograd.record():
        ((x + 2).detach() + y).backward()
    assert y._fresh_grad and not x._fresh_grad
    with pytest.raises(MXNetError, match="not a marked variable"):
        mx.nd.ones((1,))._fresh_grad = True


def test_writing_an_input_of_a_recorded_op_is_refused():
    a, v = mx.nd.zeros((3,)), mx.nd.ones((3,))
    v.attach_grad()
    for write in (lambda: a.__setitem__(slice(1, None), v[1:]), lambda: a.__iadd__(v)):
        with mx.autograd.record(), pytest.raises(MXNetError, match="Inplace operations"):
            write()
    with mx.autograd.record():
        a[...] = v                      # a plain copy, as in MXNet: not recorded
        a += 1                          # no input has history
    assert a.asnumpy().tolist() == [2.0, 2.0, 2.0]


def test_a_consumed_graph_leaves_its_arrays_without_history():
    """As MXNet: after backward without retain_graph, results of that graph are constants,
    so a new graph built on them does not reach the old variables."""
    b = mx.nd.ones((3,))
    b.attach_grad()
    with ag.record():
        c = b + 1
        (c * 2).backward()
    w = mx.nd.ones((3,))
    w.attach_grad()
    with ag.record():
        d = (c + 1) * w                     # c is a constant now
    d.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), np.full(3, 3.0))
    np.testing.assert_allclose(b.grad.asnumpy(), np.full(3, 2.0))     # untouched
    with ag.record():
        e = c + 1
    with pytest.raises(MXNetError, match="not in a computational graph"):
        e.backward()


@pytest.mark.parametrize("inline_limit, ops", [
    (3, ["FullyConnected", "Activation", "FullyConnected", "_mul_scalar"]),
    (2, ["_CachedOp", "_mul_scalar"])])
def test_get_symbol_shows_a_hybridized_call_as_mxnet_does(inline_limit, ops):
    """A hybridized call is one CachedOp node on the tape; get_symbol spells out its graph
    where MXNet inlines it (at most inline_limit ops), else shows one _CachedOp node that
    carries the graph; either way the symbol computes what the call did."""
    import json
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.Activation("relu"), mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize(inline_limit=inline_limit)
    x = mx.nd.ones((1, 4))
    with mx.autograd.record():
        y = net(x) * 2
    sym = mx.autograd.get_symbol(y)
    assert [n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"] == ops
    assert len(sym.list_arguments()) == 5          # the data, 2 weights, 2 biases
    args = dict(zip(sym.list_arguments(), [x] + [p.data() for p in net.collect_params().values()]))
    np.testing.assert_allclose(sym.eval(**args)[0].asnumpy(), y.asnumpy(), rtol=1e-6)
    net.hybridize(inline_limit=3, static_alloc=True)      # never inlined with static_alloc
    with mx.autograd.record():
        y = net(x)
    assert "_CachedOp" in mx.autograd.get_symbol(y).tojson()


def test_get_symbol_refuses_arrays_without_history_and_python_functions():
    with pytest.raises(mx.base.MXNetError, match="no recorded history"):
        mx.autograd.get_symbol(mx.nd.ones((2,)))

    class Double(mx.autograd.Function):
        def forward(self, a):
            return a * 2

        def backward(self, g):
            return g * 2
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = Double()(x)
    with pytest.raises(mx.base.MXNetError, match="Python function 'Double'"):
        mx.autograd.get_symbol(y)
