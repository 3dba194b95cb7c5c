"""NDArray: creation, properties, copies, contexts, memory, async errors, interop, invoke."""

import gc
import inspect
import pickle

import numpy as np
import pytest

import mxnext as mx
from mxnext import storage
from mxnext.base import MXNetError, ParamError, ShapeError


def test_creation_functions():
    assert mx.nd.zeros((2, 3)).asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    assert mx.nd.ones(3).shape == (3,)
    assert mx.nd.full((2,), 7).asnumpy().tolist() == [7, 7]
    assert mx.nd.empty((4, 1)).shape == (4, 1)
    np.testing.assert_array_equal(mx.nd.arange(5).asnumpy(), np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(mx.nd.arange(1, 7, 2, repeat=2).asnumpy(), [1, 1, 3, 3, 5, 5])
    np.testing.assert_array_equal(mx.nd.eye(3, k=1).asnumpy(), np.eye(3, k=1))
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    assert mx.nd.zeros((2,), dtype="int32").dtype == np.int32


def test_array_dtypes_follow_mxnet():
    assert mx.nd.array([1, 2]).dtype == np.float32
    assert mx.nd.array(np.arange(3)).dtype == np.float32      # MXNet: float32 unless given
    assert mx.nd.array(np.arange(3), dtype="int64").dtype == np.int64
    src = mx.nd.array([1, 2], dtype="float64")
    assert mx.nd.array(src).dtype == np.float64
    assert mx.nd.array(5).shape == ()                         # MXNet 1.9 keeps 0-d


def test_properties():
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    assert a.shape == (2, 3) and a.size == 6 and a.ndim == 2
    assert a.context == mx.cpu(0) and a.ctx == mx.cpu(0)
    copy = a.tostype("default")           # a copy, as MXNet's cast_storage makes
    assert a.stype == "default" and copy is not a and (copy.asnumpy() == a.asnumpy()).all()
    assert a.dtype is np.float32
    assert a.T.shape == (3, 2)
    np.testing.assert_array_equal(a.T.asnumpy(), np.arange(6).reshape(2, 3).T)
    assert len(a) == 2
    assert [r.asnumpy().tolist() for r in a] == [[0, 1, 2], [3, 4, 5]]


def test_repr_like_mxnet():
    assert repr(mx.nd.array([[1, 2]])) == "\n[[1. 2.]]\n<NDArray 1x2 @cpu(0)>"
    assert repr(mx.nd.array([5])) == "\n[5.]\n<NDArray 1 @cpu(0)>"


def test_scalars_and_bool():
    a = mx.nd.array([3.5])
    assert a.asscalar() == np.float32(3.5) and a.item() == 3.5
    assert bool(a) and not bool(mx.nd.array([0])) and not bool(mx.nd.array([]))
    with pytest.raises(ValueError, match="not a scalar"):
        mx.nd.array([1, 2]).asscalar()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.array([1, 2]))


def test_copies_and_astype():
    a = mx.nd.array([1.5, 2.5])
    b = a.copy()
    b += 1
    assert a.asnumpy().tolist() == [1.5, 2.5] and b.asnumpy().tolist() == [2.5, 3.5]
    c = mx.nd.zeros((2,))
    assert a.copyto(c) is c and c.asnumpy().tolist() == [1.5, 2.5]
    assert a.astype("int32").asnumpy().tolist() == [1, 2]
    assert a.astype("float32", copy=False) is a
    assert a.as_in_context(mx.cpu(0)) is a
    with pytest.raises(MXNetError, match="shape"):
        a.copyto(mx.nd.zeros((3,)))


def test_contexts_are_distinct_devices():
    a = mx.nd.array([1, 2], ctx=mx.cpu(0))
    b = a.copyto(mx.cpu(1))
    assert b.context == mx.cpu(1)
    b += 1
    assert a.asnumpy().tolist() == [1, 2] and b.asnumpy().tolist() == [2, 3]
    with pytest.raises(MXNetError, match="broadcast_add.*cpu\\(0\\).*cpu\\(1\\)"):
        a + b
    assert (a + b.as_in_context(mx.cpu(0))).asnumpy().tolist() == [3, 5]
    with mx.cpu(3):
        assert mx.nd.zeros((1,)).context == mx.cpu(3)


def test_memory_returns_to_pool():
    ctx = mx.cpu(7)
    mx.nd.waitall()
    before = storage.stats(ctx)["in_use"] if True else 0
    a = mx.nd.ones((1000,), ctx=ctx)
    v = a[2:5]                       # a view keeps the chunk alive
    del a
    gc.collect()
    mx.nd.waitall()
    assert storage.stats(ctx)["in_use"] > before
    assert v.asnumpy().tolist() == [1, 1, 1]
    del v
    gc.collect()
    mx.nd.waitall()
    assert storage.stats(ctx)["in_use"] == before


def test_async_error_surfaces_at_read():
    a = mx.nd.ones((2, 3))
    out = mx.nd.take(a, mx.nd.array([5]), mode="raise")     # fails inside the engine
    with pytest.raises(MXNetError, match="take"):
        out.asnumpy()
    mx.nd.waitall()                  # the error was raised once
    assert (a + 1).asnumpy().sum() == 12   # the engine stays usable


def test_waitall_raises_stored_error():
    a = mx.nd.ones((2, 3))
    mx.nd.take(a, mx.nd.array([9]), mode="raise")
    with pytest.raises(MXNetError):
        mx.nd.waitall()


def test_numpy_and_dlpack_interop():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert np.asarray(a).tolist() == [[1, 2], [3, 4]]
    host = np.arange(4, dtype=np.float32)
    c = mx.nd.from_numpy(host, zero_copy=False)
    z = mx.nd.from_numpy(host, zero_copy=True)
    z[0] = 42                                 # shared memory, written through the NDArray
    assert host[0] == 42 and c.asnumpy()[0] == 0
    back = np.from_dlpack(a)
    assert back.tolist() == [[1, 2], [3, 4]]
    d = mx.nd.from_dlpack(np.arange(3.0))
    assert d.dtype == np.float64 and d.asnumpy().tolist() == [0, 1, 2]


def test_generated_functions_have_signature_and_doc():
    sig = inspect.signature(mx.nd.clip)
    assert list(sig.parameters)[:3] == ["data", "a_min", "a_max"]
    field = mx.ops.get("clip").param_model.model_fields["a_min"]
    assert "a_min" in mx.nd.clip.__doc__ and field.description in mx.nd.clip.__doc__
    sig = inspect.signature(mx.nd.add_n)
    assert next(iter(sig.parameters.values())).kind is inspect.Parameter.VAR_POSITIONAL
    assert mx.nd.clip(mx.nd.array([-1, 5]), 0, 2).asnumpy().tolist() == [0, 2]
    assert mx.nd.add_n(mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2)).asnumpy().tolist() == [3, 3]
    assert mx.nd._internal._plus_scalar(mx.nd.ones(1), scalar=2).asscalar() == 3
    assert mx.nd.op.broadcast_add is mx.nd.op.broadcast_add
    assert mx.nd.reshape(mx.nd.ones((2, 2)), shape=(4,)).shape == (4,)   # alias


def test_generated_function_errors():
    with pytest.raises(ParamError, match="clip.*a_mni"):
        mx.nd.clip(mx.nd.ones(2), a_mni=0, a_max=1)
    with pytest.raises(ShapeError):
        mx.nd.elemwise_add(mx.nd.ones(2), mx.nd.ones(3))
    with pytest.raises(MXNetError, match="elemwise_add.*input"):
        mx.nd.elemwise_add(mx.nd.ones(2))
    with pytest.raises(AttributeError):
        mx.nd.no_such_operator_anywhere


def test_out_argument():
    a = mx.nd.array([1, 2])
    out = mx.nd.zeros((2,))
    r = mx.nd.elemwise_add(a, a, out=out)
    assert r is out and out.asnumpy().tolist() == [2, 4]
    with pytest.raises(ShapeError, match="out"):
        mx.nd.elemwise_add(a, a, out=mx.nd.zeros((3,)))


def test_ops_registered_later_appear():
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    name = "_test_ndarray_late_twice"
    (register_op(name).describe("Doubles.").set_num_inputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", ElemwiseType(1, 1))
     .set_attr("FCompute<cpu>", lambda ctx, i, req, o, p: assign(o[0], req[0], i[0] * 2))
     .add_argument("data", "NDArray-or-Symbol", "input"))
    assert mx.nd._internal._test_ndarray_late_twice(mx.nd.ones(2)).asnumpy().tolist() == [2, 2]
    assert name in dir(mx.nd)


def test_random_samplers():
    mx.random.seed(3)
    a = mx.nd.random.uniform(2, 3, shape=(100,))
    mx.random.seed(3)
    b = mx.nd.random.uniform(2, 3, shape=(100,))
    assert a.shape == (100,) and (a.asnumpy() == b.asnumpy()).all()
    assert 2 <= a.asnumpy().min() and a.asnumpy().max() < 3
    n = mx.nd.random.normal(0, 1, shape=(2, 3))
    assert n.shape == (2, 3) and n.dtype == np.float32
    r = mx.nd.random.randint(0, 5, shape=(50,))
    assert set(np.unique(r.asnumpy())) <= set(range(5))
    assert mx.random.uniform(shape=(3,)).shape == (3,)


def test_random_samplers_without_a_shape_draw_one_or_fill_out():
    """MXNet's front end: scalar parameters and no shape draw one sample, shape (1,) (as
    GluonNLP's word language model script draws its BPTT lengths), or fill ``out``."""
    for draw in (mx.nd.random.uniform(), mx.nd.random.normal(12, 5), mx.nd.random.randint(0, 5),
                 mx.nd.random.poisson(2), mx.nd.random.gamma()):
        assert draw.shape == (1,)
    out = mx.nd.zeros((2, 3))
    mx.nd.random.uniform(1, 2, out=out)
    assert out.shape == (2, 3) and (out.asnumpy() >= 1).all()
    assert mx.nd.random.normal(mx.nd.array([0, 1]), mx.nd.array([1, 2])).shape == (2,)


def test_concatenate():
    r = mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.zeros((2, 2))])
    assert r.asnumpy().tolist() == [[1, 1], [0, 0], [0, 0]]


def test_methods_delegate_to_ops():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.sum().asscalar() == 10
    assert a.sum(axis=1).asnumpy().tolist() == [3, 7]
    assert a.mean().asscalar() == 2.5
    assert a.max(axis=0).asnumpy().tolist() == [3, 4]
    assert a.argmax(axis=1).asnumpy().tolist() == [1, 1]
    assert a.flatten().shape == (2, 2)
    assert a.expand_dims(0).shape == (1, 2, 2)
    assert a[0:1].broadcast_to((3, 2)).asnumpy().tolist() == [[1, 2]] * 3
    assert a.reshape((4,)).shape == (4,) and a.reshape(-1, 1).shape == (4, 1)
    assert a.reshape((0, -1)).shape == (2, 2)
    assert a.reshape((-3,)).shape == (4,)
    assert a.transpose().asnumpy().tolist() == [[1, 3], [2, 4]]
    with pytest.raises(MXNetError):
        a.reshape((3,))


def test_reshape_is_a_view():
    a = mx.nd.zeros((2, 3))
    r = a.reshape((6,))
    r[:] = 5
    assert a.asnumpy().sum() == 30


def test_engine_orders_writes_and_reads():
    a = mx.nd.zeros((64, 64))
    for _ in range(50):
        a += 1
    b = a * 2
    a += 1000
    assert b.asnumpy()[0, 0] == 100 and a.asnumpy()[0, 0] == 1050


@pytest.mark.timeout(60)
def test_long_kernels_overlap_and_short_ones_run_on_the_pushing_thread(monkeypatch):
    """An op's first runs are timed: one with a long kernel is then handed to workers, so
    two independent applications run at once (a 2-party barrier inside passes); a short
    one runs where it is pushed, whatever its output size. Kernel time comes from a clock
    the kernels themselves advance, so nothing here depends on real timing."""
    import threading

    from mxnext.ndarray import _imperative
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    clock = [0.0]
    monkeypatch.setattr(_imperative, "perf_counter", lambda: clock[0])
    barrier = threading.Barrier(2, timeout=20)
    mode, ran_on = ["timed"], []

    def slow(ctx, i, req, o, p):
        if mode[0] == "timed":
            clock[0] += 0.01              # 10x the inline threshold
        else:
            barrier.wait()                # needs another application running at once
        assign(o[0], req[0], i[0] + 1)

    def fast(ctx, i, req, o, p):
        ran_on.append(threading.current_thread())
        assign(o[0], req[0], i[0] + 1)
    for name, fn in (("_test_ndarray_slow", slow), ("_test_ndarray_fast", fast)):
        (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
         .set_attr("FInferType", ElemwiseType(1, 1)).set_attr("FCompute<cpu>", fn)
         .add_argument("data", "NDArray-or-Symbol", "x"))
    e = mx.engine.ThreadedEnginePerDevice()
    try:
        with mx.engine.use_engine(e):
            x = mx.nd.zeros((2,))
            for _ in range(3):
                mx.nd._internal._test_ndarray_slow(x).wait_to_read()
            mode[0] = "barrier"
            a = mx.nd._internal._test_ndarray_slow(x)
            b = mx.nd._internal._test_ndarray_slow(x)
            assert (a + b).asnumpy().tolist() == [2, 2]
            big = mx.nd.zeros((512, 512))               # 1 MB output, no time at all
            for _ in range(5):
                mx.nd._internal._test_ndarray_fast(big).wait_to_read()
            assert set(ran_on) == {threading.current_thread()}
    finally:
        e.shutdown()


@pytest.mark.timeout(60)
def test_a_second_thread_waits_for_the_first_threads_unbooked_kernel(monkeypatch):
    """While one thread has the engine to itself its short kernels run with no var
    bookkeeping; a second thread arriving meanwhile must still see a write to an input of
    the running kernel wait for it. The kernel ends only once the second thread is about to
    block on it (or has wrongly written already)."""
    import threading

    from mxnext._runtime.engine import _fastpath
    from opsdk import ElemwiseShape, ElemwiseType, assign, register_op
    started, waiting, log = threading.Event(), threading.Event(), []

    class SeenWaiting(threading.Event):
        def wait(self, timeout=None):
            waiting.set()
            return super().wait(timeout)
    monkeypatch.setattr(_fastpath, "Event", SeenWaiting)

    def kernel(ctx, i, req, o, p):
        started.set()
        waiting.wait(20)
        log.append("kernel end")
        assign(o[0], req[0], i[0] + 1)
    (register_op("_test_ndarray_hold").set_num_inputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", ElemwiseType(1, 1))
     .set_attr("FCompute<cpu>", kernel).add_argument("data", "NDArray-or-Symbol", "x"))
    e = mx.engine.ThreadedEnginePerDevice()
    try:
        with mx.engine.use_engine(e):
            x = mx.nd.zeros((2,))
            x.wait_to_read()

            def other():
                started.wait(20)
                e.push_sync(lambda r: log.append("write"), mx.cpu(), (), (x._chunk.var,),
                            cheap=True)
            t = threading.Thread(target=other)
            t.start()
            y = mx.nd._internal._test_ndarray_hold(x)
            t.join()
            e.wait_for_all()
            assert log == ["kernel end", "write"] and y.asnumpy().tolist() == [1, 1]
    finally:
        e.shutdown()


def test_outputs_declared_identical_to_an_input_share_its_memory():
    """``FInplaceIdentity``: the lhs gradient of an add is the output gradient itself when
    the shapes match, so the frontend hands back that data instead of a copy."""
    og, a, b = mx.nd.ones((2, 3)) * 5, mx.nd.zeros((2, 3)), mx.nd.zeros((1, 3))
    ga, gb = mx.nd._internal._backward_broadcast_add(og, a, b)
    assert ga._chunk is og._chunk and ga is not og
    assert gb._chunk is not og._chunk
    assert ga.asnumpy().tolist() == [[5] * 3] * 2 and gb.asnumpy().tolist() == [[10] * 3]
    gx, gy = mx.nd._internal._backward_broadcast_add(og, mx.nd.zeros((1, 3)), b)
    assert gx._chunk is not og._chunk and gx.asnumpy().tolist() == [[10] * 3]
    given = [mx.nd.zeros((2, 3)), mx.nd.zeros((1, 3))]          # out= is written, not aliased
    mx.nd._internal._backward_broadcast_add(og, a, b, out=given)
    assert given[0].asnumpy().tolist() == [[5] * 3] * 2 and given[1].asnumpy().tolist() == [[10] * 3]


def test_req_passed_to_kernels():
    from opsdk import ElemwiseShape, ElemwiseType, OpReqType, assign, register_op
    seen = []
    name = "_test_ndarray_req"

    def compute(ctx, i, req, o, p):
        seen.append(req[0])
        assign(o[0], req[0], i[0] + 1)
    (register_op(name).set_num_inputs(1).set_attr("FInferShape", ElemwiseShape(1, 1))
     .set_attr("FInferType", ElemwiseType(1, 1)).set_attr("FInplaceOption", lambda p: [(0, 0)])
     .set_attr("FCompute<cpu>", compute).add_argument("data", "NDArray-or-Symbol", "x"))
    f = getattr(mx.nd._internal, name)
    a = mx.nd.zeros((2,))
    f(a)
    f(a, out=a)
    f(a, out=mx.nd.zeros((2,)))
    mx.nd.waitall()
    assert seen == [OpReqType.WRITE_TO, OpReqType.WRITE_INPLACE, OpReqType.WRITE_TO]
    assert a.asnumpy().tolist() == [1, 1]


def test_ops_without_inputs_follow_the_current_context():
    z = mx.nd._internal._zeros(shape=(2,))
    with mx.cpu(4):
        w = mx.nd._internal._zeros(shape=(2,))
    assert z.context == mx.cpu(0) and w.context == mx.cpu(4)
    assert mx.nd._internal._ones(shape=(1,), ctx="cpu(5)").context == mx.cpu(5)


def test_one_context_entered_inside_itself_restores_the_outer_one():
    ctx = mx.nd.ones(1, ctx=mx.cpu(3)).context       # arrays share their Context object
    with ctx:
        with ctx:
            assert mx.current_context() == mx.cpu(3)
        assert mx.current_context() == mx.cpu(3)
    assert mx.current_context() == mx.cpu(0)


def test_zero_dim_arrays_keep_their_shape_as_in_mxnet(tmp_path):
    a = mx.nd.array(3.0)
    assert a.shape == () and a.asscalar() == 3.0
    a.attach_grad()
    with mx.autograd.record():
        y = a * a
    y.backward()
    assert a.grad.shape == () and float(a.grad.asnumpy()) == 6.0
    mx.nd.save(str(tmp_path / "z.params"), {"z": a})
    z = mx.nd.load(str(tmp_path / "z.params"))["z"]
    assert z.shape == () and z.asscalar() == 3.0


def test_a_loop_of_independent_large_ops_keeps_memory_bounded():
    """Pushing far ahead of the workers would keep every pending op's output alive: the
    pushing thread runs queued work itself first (1 MB outputs, 300 ops, no waits)."""
    ctx = mx.cpu(5)
    g = mx.nd.ones((512, 512), ctx=ctx)
    pool = storage.pool(ctx)
    mx.nd.waitall()
    base = pool.in_use
    for _ in range(300):
        r = g * 0.5
    mx.nd.waitall()
    assert pool.peak - base < 64 * 2**20, (pool.peak - base) >> 20
    assert r.asnumpy()[0, 0] == 0.5


def test_method_forms_as_in_mxnet():
    a = mx.nd.array([1.0, 2.0])
    assert a.broadcast_to((3, 2)).asnumpy().tolist() == [[1, 2]] * 3   # leading axes added
    with pytest.raises(mx.base.ShapeError, match="fewer axes"):
        mx.nd.ones((2, 3)).broadcast_to((3,))
    z = mx.nd.zeros((2, 3, 4))
    assert z.transpose(axes=(2, 0, 1)).shape == z.transpose(2, 0, 1).shape == (4, 2, 3)
    assert z.transpose((1, 0, 2)).shape == (3, 2, 4) and z.transpose().shape == (4, 3, 2)
    for name in ("sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arctanh", "degrees",
                 "radians", "cbrt"):
        np.testing.assert_allclose(getattr(a * 0.2, name)().asnumpy(),
                                   getattr(np, name)(np.array([0.2, 0.4], np.float32)), rtol=1e-6)
    e = np.exp(-np.array([1.0, 2.0]))
    np.testing.assert_allclose(a.softmin().asnumpy(), e / e.sum(), rtol=1e-6)


@pytest.mark.parametrize("src, dst", [(0, -1), (1, 0), ([0, 1], [-1, -2]), ((0, 2), (2, 0)),
                                      ([3, 0, 1], [0, 1, 2])])
def test_moveaxis_matches_numpy(src, dst):
    x0 = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(mx.nd.moveaxis(mx.nd.array(x0), src, dst).asnumpy(),
                                  np.moveaxis(x0, src, dst))


def test_moveaxis_errors_and_shape_size_arrays():
    x = mx.nd.zeros((2, 3, 4))
    with pytest.raises(mx.base.MXNetError, match="axis 3 is out of range"):
        mx.nd.moveaxis(x, 3, 0)
    with pytest.raises(mx.base.MXNetError, match="repeated axis"):
        mx.nd.moveaxis(x, [0, 0], [1, 2])
    assert x.shape_array().asnumpy().tolist() == [2, 3, 4]
    assert mx.nd.size_array(x).asnumpy().tolist() == [24]
    assert x.shape_array().dtype == np.int64


@pytest.mark.parametrize("arg, axis", [(2, 0), ((1, 3), 1), ((0, 2), 1), ((-1,), 0),
                                       ((0, 2), -1), (3, -1)])
def test_split_v2_matches_numpy_split(arg, axis):
    x0 = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = mx.nd.split_v2(mx.nd.array(x0), arg, axis=axis)
    want = np.split(x0, arg if isinstance(arg, int) else list(arg), axis=axis)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w)


def test_split_v2_squeeze_gradient_and_errors():
    x = mx.nd.arange(6).reshape((2, 3))
    assert [p.shape for p in x.split_v2(3, axis=1, squeeze_axis=True)] == [(2,)] * 3
    x.attach_grad()
    with mx.autograd.record():
        a, b = x.split_v2((1,), axis=1)
        y = (a * 2).sum() + (b * 3).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [[2, 3, 3], [2, 3, 3]]
    with pytest.raises(mx.base.MXNetError, match="does not split into 4 equal"):
        mx.nd.split_v2(x, 4, axis=1)
    with pytest.raises(TypeError, match="int or a tuple"):
        mx.nd.split_v2(x, [1], axis=1)


def test_onehot_encode_writes_out():
    out = mx.nd.zeros((3, 4))
    res = mx.nd.onehot_encode(mx.nd.array([0, 3, 1]), out)
    assert res is out or res.asnumpy().tolist() == out.asnumpy().tolist()
    assert out.asnumpy().tolist() == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]]


def test_creation_functions_reject_misspelt_keywords_like_every_op():
    for make, bad, good in ((mx.nd.ones, "ctxx", "ctx"), (mx.nd.zeros, "dtyp", "dtype"),
                            (mx.nd.empty, "ctxx", "ctx"), (mx.nd.eye, "dtpe", "dtype")):
        with pytest.raises(ParamError, match=f"'{make.__name__}'.*unknown parameter '{bad}'"
                                             f".*did you mean '{good}'"):
            make((2, 2) if make is not mx.nd.eye else 2, **{bad: None})
    with pytest.raises(ParamError, match="'full'.*unknown parameter 'vall'"):
        mx.nd.full((2,), 1.0, vall=2)
    with pytest.raises(ParamError, match="'arange'.*unknown parameter 'stpe'"):
        mx.nd.arange(0, 4, stpe=2)
    with pytest.raises(ParamError, match="stype 'row_sparse' is not supported"):
        mx.nd.ones((2,), stype="row_sparse")          # only zeros and empty make sparse arrays
    out = mx.nd.ones((2,))
    assert mx.nd.zeros((2,), out=out, name="z") is out and out.asnumpy().tolist() == [0, 0]


def test_mxnet_names_mxnext_lacks_say_where_they_come_from():
    with pytest.raises(AttributeError, match="'Pooling_v1' is an MXNet 1.x operator provided "
                                             "by mxnext-ops-nn") as info:
        mx.nd.Pooling_v1
    assert "did you mean" not in str(info.value)


def test_mxnet_module_surface_of_ndarray_ndarray():
    from mxnext.ndarray import ndarray as module
    assert module.py_slice is slice and module.NDArray is mx.nd.NDArray
    assert module._STORAGE_TYPE_STR_TO_ID == {"_undefined": -1, "default": 0, "row_sparse": 1,
                                              "csr": 2}
    for name in ("array", "zeros", "ones", "full", "empty", "arange", "moveaxis", "concatenate",
                 "from_numpy", "from_dlpack", "to_dlpack_for_read", "add", "maximum"):
        assert getattr(module, name) is getattr(mx.nd, name)
    assert mx.nd.NDArray.__module__ == "mxnext.ndarray.ndarray"


def test_pickle_round_trips_through_mxnets_state():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4) / 7)
    b = pickle.loads(pickle.dumps(a))
    assert b.shape == a.shape and b.dtype == a.dtype and (b.asnumpy() == a.asnumpy()).all()
    state = a.__getstate__()
    assert set(state) == {"handle"} and isinstance(state["handle"], bytearray)
    # MXNet 1.9's state of mx.nd.arange(1, ctx=mx.gpu()): lands on cpu here
    gpu_state = {"handle": bytearray(
        b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
        b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}
    c = mx.nd.arange(3)
    c.__setstate__(gpu_state)
    assert c.shape == (1,) and c.context == mx.cpu() and c.asnumpy().tolist() == [0.0]


def test_from_numpy_shares_memory_read_only_and_needs_contiguity():
    host = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    nd = mx.nd.from_numpy(host)
    with pytest.raises(ValueError):
        host[2, 1] = 0                           # only the NDArray writes it now
    nd[2, 1] = 100
    assert host[2, 1] == 100
    again = mx.nd.from_numpy(host)               # read-only now, shared again and writable
    again[0, 0] = -1
    assert host[0, 0] == -1 and not host.flags.writeable
    with pytest.raises(ValueError, match="not its own"):
        mx.nd.from_numpy(np.frombuffer(b"\0" * 8, dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        mx.nd.from_numpy(np.ones((3, 2)).T)
    copy = mx.nd.from_numpy(np.ones((3, 2)).T, zero_copy=False)
    assert copy.shape == (2, 3)
    for edge in (np.array(1.0).reshape(()), np.zeros((1, 0, 2))):
        assert mx.nd.from_numpy(edge).shape == edge.shape


def test_basic_indexing_slice_contiguity_agrees_with_numpy():
    import itertools
    host = np.zeros((3, 4, 5))
    slices = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
              slice(None, None, -1), slice(4, 4)]
    for key in itertools.product(slices, repeat=3):
        assert (mx.nd.NDArray._basic_indexing_slice_is_contiguous(key, host.shape)
                == host[key].flags.c_contiguous), key


def test_dlpack_for_read_and_write():
    a = mx.nd.arange(6).reshape((2, 3))
    b = mx.nd.from_dlpack(a.to_dlpack_for_read())
    c = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(a))
    c[0, 0] = 9                                  # shares a's memory
    assert a.asnumpy()[0, 0] == 9 and b.asnumpy()[0, 0] == 9


def test_inplace_shape_methods_return_views():
    t = (mx.nd.arange(30) + 1).reshape((2, 3, 5))
    for view, copy, shape in ((t.flatten(inplace=True), t.flatten(), (2, 15)),
                              (t.expand_dims(1, inplace=True), t.expand_dims(1), (2, 1, 3, 5)),
                              (t.reshape((2, 1, 15)).squeeze(inplace=True),
                               t.reshape((2, 1, 15)).squeeze(), (2, 15))):
        assert view.shape == copy.shape == shape
    ref, copy = t.flatten(inplace=True), t.flatten()
    t[:] = 0
    assert (ref.asnumpy() == 0).all() and (copy.asnumpy() != 0).all()
    with pytest.raises(ShapeError, match="axis 1 has size 3"):
        t.squeeze(axis=1, inplace=True)


def test_moveaxis_bad_axis_is_a_value_error():
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        mx.nd.moveaxis(mx.nd.zeros((1, 2, 3)), 3, 0)


def test_contrib_functions_and_short_op_names():
    d = mx.nd.array([[np.inf, -np.inf, 1.0], [np.nan, 5.0, 0.0]])
    host = d.asnumpy()
    for fn, ref in ((mx.nd.contrib.isfinite, np.isfinite), (mx.nd.contrib.isnan, np.isnan),
                    (mx.nd.contrib.isinf, np.isinf)):
        np.testing.assert_array_equal(fn(d).asnumpy(), ref(host).astype(np.float32))
    mx.random.seed(3)
    true = mx.nd.array([0, 5, 50], dtype="int32")
    sampled, count_true, count_sampled = mx.nd.contrib.rand_zipfian(true, 1000, 100)
    assert sampled.dtype == np.int64 and sampled.shape == (1000,)
    expected = 1000 * np.log((np.arange(100) + 2.0) / (np.arange(100) + 1.0)) / np.log(101)
    np.testing.assert_allclose(count_true.asnumpy(), expected[[0, 5, 50]])
    np.testing.assert_allclose(count_sampled.asnumpy(), expected[sampled.asnumpy()])
    counts = np.bincount(sampled.asnumpy(), minlength=100)
    assert counts[0] > counts[50]                # class 0 is the most likely
    assert mx.nd.contrib.ctc_loss.opdef is mx.ops.get("_contrib_ctc_loss")


def test_host_memory_device_types():
    for kind in ("cpu_shared", "cpu_pinned"):
        ctx = mx.Context(kind, 0)
        a = mx.nd.zeros((1, 2, 3), ctx=ctx) + 1
        assert a.context == ctx and a.asnumpy().sum() == 6


def test_zeros_and_ones_need_a_known_shape_outside_np_shape():
    """As MXNet's ops: () and 0 dimensions are unknown in legacy shape semantics."""
    for fn in (mx.nd.zeros, mx.nd.ones):
        for shape in ((), (0, 1, 3, 0)):
            with pytest.raises(mx.base.MXNetError, match="unknown in MXNet's legacy"):
                fn(shape=shape)
    assert mx.nd.empty((2, 0)).shape == (2, 0) and mx.nd.full((2, 0), 3).shape == (2, 0)
    with mx.np_shape():
        assert mx.nd.ones(shape=()).asnumpy() == 1 and mx.nd.zeros((0, 4)).shape == (0, 4)


def test_mx_contrib_is_the_contrib_ops_under_mxnets_older_name():
    assert mx.contrib.ndarray.isinf is mx.nd.contrib.isinf and mx.contrib.nd is mx.contrib.ndarray
    x = mx.nd.array([1.0, np.inf])
    assert mx.contrib.nd.isinf(x).asnumpy().tolist() == [0, 1]
    s = mx.contrib.sym.CTCLoss(mx.sym.var("data"), mx.sym.var("label"))
    assert s.attr("op_name") == "CTCLoss" and s.list_arguments() == ["data", "label"]


def test_host_memory_contexts_mix_in_one_op_as_in_mxnet():
    shared, plain = mx.nd.ones(2, ctx=mx.Context("cpu_shared", 0)), mx.nd.ones(2)
    assert (shared + plain).context == mx.cpu() and (plain + shared).context == mx.cpu()
    out = mx.nd.empty((2, 2), ctx=mx.Context("cpu_shared", 0))
    assert mx.nd.stack(plain, plain * 2, out=out) is out
    assert out.context.device_type == "cpu_shared" and out.asnumpy().tolist() == [[1, 1],
                                                                                  [2, 2]]
    pinned = mx.nd.empty((2,), ctx=mx.cpu_pinned())
    mx.nd.elemwise_add(plain, plain, out=pinned)
    assert pinned.asnumpy().tolist() == [2, 2]
    with pytest.raises(mx.base.MXNetError, match="out\\[0\\] is \\(3,\\)"):
        mx.nd.elemwise_add(plain, plain, out=mx.nd.empty((3,), ctx=mx.cpu_pinned()))
