"""Results read late equal results read at once (issue 31's race).

Every path that returns arrays to a user is called several times in a row without waiting,
under each engine, and every output is compared with the same call computed alone on the
NaiveEngine. A dropped CachedOp instance used to give its arena back to the pool before its
queued operators ran, so the next call's operators wrote over them: the first output came
back wrong for AlexNet and VGG (``tools/race_check.py`` runs the whole model zoo).
"""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd
from mxnext.engine import use_engine
from mxnext.gluon import nn
from mxnext.gluon.model_zoo import vision

ENGINES = ["NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice"]
CALLS = 3


def _inputs(shape, n=CALLS):
    rng = np.random.RandomState(0)
    return [mx.nd.array(rng.uniform(-1, 1, shape)) for _ in range(n)]


def _alone(call, xs):
    """Each call's result computed by itself, synchronously."""
    with use_engine("NaiveEngine"):
        return [call(x).asnumpy() for x in xs]


def _late(engine, call, xs):
    """Every call pushed before any result is read."""
    with use_engine(engine):
        outs = [call(x) for x in xs]
        return [o.asnumpy() for o in outs]


def _assert_same(got, want):
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"call {k}")


@pytest.fixture(scope="module")
def zoo():
    nets = {}
    for name in ("alexnet", "vgg11", "resnet18_v1", "mobilenet0.25", "squeezenet1.1"):
        net = vision.get_model(name)
        net.initialize(mx.init.Xavier())
        nets[name] = net
    return nets


@pytest.mark.parametrize("name,static", [
    ("alexnet", False), ("alexnet", True), ("vgg11", False), ("resnet18_v1", False),
    ("resnet18_v1", True), ("mobilenet0.25", False), ("squeezenet1.1", True)])
def test_hybridized_zoo_outputs_read_late(zoo, name, static):
    net = zoo[name]
    net.hybridize(static_alloc=static, static_shape=static)
    xs = _inputs((1, 3, 224, 224), 2 if name == "vgg11" else CALLS)
    want = _alone(net, xs)
    for engine in ENGINES[1:]:        # the NaiveEngine's late read is the one alone
        _assert_same(_late(engine, net, xs), want)


def test_output_read_after_a_recorded_call_and_its_backward(zoo):
    net = zoo["alexnet"]
    net.hybridize()
    xs = _inputs((1, 3, 224, 224), 2)
    want = _alone(net, xs[:1])
    for engine in ENGINES[1:]:
        with use_engine(engine):
            y = net(xs[0])
            with autograd.record(train_mode=False):
                z = net(xs[1])
            z.backward()
            _assert_same([y.asnumpy()], want)


def test_imperative_block_outputs_read_late():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, activation="relu"), nn.MaxPool2D(), nn.Flatten(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    xs = _inputs((2, 3, 16, 16), 4)
    want = _alone(net, xs)
    for engine in ENGINES:
        _assert_same(_late(engine, net, xs), want)


def _mlp():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    return mx.sym.FullyConnected(net, num_hidden=10, name="fc2")


def test_bound_executor_outputs_copied_without_waiting():
    sym = _mlp()
    xs = _inputs((4, 20), 4)
    rng = np.random.RandomState(1)
    params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in
              zip(sym.list_arguments(), sym.infer_shape(data=(4, 20))[0]) if n != "data"}

    def run(engine):
        with use_engine(engine):
            ex = sym.bind(mx.cpu(), dict(params, data=mx.nd.zeros((4, 20))))
            outs = []
            for x in xs:
                ex.forward(data=x)
                outs.append(ex.outputs[0].copy())
            return [o.asnumpy() for o in outs]

    want = run("NaiveEngine")
    for engine in ENGINES[1:]:
        _assert_same(run(engine), want)
    for x, w in zip(xs, want):      # and each one is that input's own result
        ex = sym.bind(mx.cpu(), dict(params, data=x))
        _assert_same([ex.forward()[0].asnumpy()], [w])


def test_module_predict_and_kvstore_pulls_read_late():
    x = _inputs((8, 20), 1)[0]
    sym = mx.sym.SoftmaxOutput(_mlp(), name="softmax")
    rng = np.random.RandomState(2)
    params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in
              zip(sym.list_arguments(), sym.infer_shape(data=(4, 20))[0])
              if n not in ("data", "softmax_label")}

    def run(engine):
        with use_engine(engine):
            mod = mx.mod.Module(sym)
            mod.bind(data_shapes=[("data", (4, 20))], label_shapes=[("softmax_label", (4,))],
                     for_training=False)
            mod.set_params(params, {})
            pred = mod.predict(mx.io.NDArrayIter(x, batch_size=4))
            kv = mx.kv.create("local")
            kv.init(3, mx.nd.zeros((5,)))
            pulled = []
            for k in range(4):
                kv.push(3, [mx.nd.ones((5,)) * k, mx.nd.ones((5,))])
                out = mx.nd.zeros((5,))
                kv.pull(3, out=out)
                pulled.append(out)
            return pred.asnumpy(), [p.asnumpy() for p in pulled]

    want, _ = run("NaiveEngine")
    for engine in ENGINES:
        pred, pulled = run(engine)
        _assert_same([pred], [want])
        _assert_same(pulled, [np.full(5, k + 1.0) for k in range(4)])


def test_an_arena_shared_by_reshape_after_reshape_keeps_a_bounded_guard_list():
    # each Executor.reshape into the same arena adds its groups' vars; those of executors
    # gone whose work ran are dropped, and results stay right throughout
    sym = _mlp()
    rng = np.random.RandomState(2)
    params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in
              zip(sym.list_arguments(), sym.infer_shape(data=(8, 20))[0]) if n != "data"}
    big = sym.bind(mx.cpu(), dict(params, data=mx.nd.zeros((8, 20))))
    arena = big._instance.arena
    sizes = []
    for k in range(40):
        batch = 1 + k % 8
        x = mx.nd.array(rng.standard_normal((batch, 20)))
        ex = big.reshape(data=(batch, 20))
        out = ex.forward(data=x)[0].asnumpy()
        ref = sym.bind(mx.cpu(), dict(params, data=x)).forward()[0].asnumpy()
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
        sizes.append(len(arena.guards))
    del ex
    assert max(sizes) <= 3, sizes
