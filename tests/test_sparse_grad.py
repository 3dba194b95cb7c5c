"""Sparse gradients: autograd into row_sparse buffers, the local KVStore's sparse paths and
Gluon's row_sparse Parameters (docs/sparse.md, "Sparse gradients")."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon


def test_attach_grad_row_sparse_keeps_the_touched_rows():
    x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(4, 2))
    x.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.take(x, mx.nd.array([3, 1, 3])) * 2
    y.backward()
    assert x.grad.stype == "row_sparse"
    assert x.grad.indices.asnumpy().tolist() == [1, 3]
    expected = np.zeros((4, 2), np.float32)
    expected[1], expected[3] = 2, 4
    assert (x.grad.asnumpy() == expected).all()


def test_ops_on_a_sparse_variable_are_recorded():
    w = mx.nd.array([[1, 2], [0, 0], [3, 4]]).tostype("row_sparse")
    w.attach_grad()
    assert w.grad.stype == "row_sparse"
    with mx.autograd.record():
        z = w * 3                       # the sparse kernel: the result stays row_sparse
        loss = mx.nd.sum(z * z)         # and is differentiated through
    assert z.stype == "row_sparse"
    loss.backward()
    assert np.allclose(w.grad.asnumpy(), 18 * w.asnumpy())


def test_embedding_sparse_grad():
    layer = gluon.nn.Embedding(6, 3, sparse_grad=True)
    layer.initialize()
    with mx.autograd.record():
        y = layer(mx.nd.array([4, 1, 4]))
    y.backward()
    g = layer.weight.grad()
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == [1, 4]
    assert g.asnumpy()[:, 0].tolist() == [0, 1, 0, 0, 2, 0]


def test_kvstore_row_sparse_init_push_pull():
    kv = mx.kv.create("local")
    value = mx.nd.array([[1, 1], [2, 2], [0, 0], [4, 4]]).tostype("row_sparse")
    kv.init(3, value)
    out = mx.nd.sparse.zeros("row_sparse", (4, 2))
    kv.row_sparse_pull(3, out=out, row_ids=mx.nd.array([3, 0, 3]))
    assert out.indices.asnumpy().tolist() == [0, 3]
    assert out.asnumpy()[:, 0].tolist() == [1, 0, 0, 4]
    grads = [mx.nd.array([[1, 1], [0, 0], [0, 0], [0, 0]]).tostype("row_sparse")] * 2
    kv.push(3, grads)                    # no updater: the sum replaces the value
    dense = mx.nd.zeros((4, 2))
    kv.pull(3, out=dense)
    assert dense.asnumpy()[:, 0].tolist() == [2, 0, 0, 0]
    skipped = mx.nd.sparse.zeros("row_sparse", (4, 2))
    kv.pull(3, out=skipped)              # ignore_sparse: a sparse output is left alone
    assert skipped.asnumpy().sum() == 0
    with pytest.raises(mx.MXNetError, match="row_sparse"):
        kv.row_sparse_pull(3, out=mx.nd.zeros((4, 2)), row_ids=mx.nd.array([0]))


def test_row_sparse_parameter_through_the_trainer():
    p = gluon.Parameter("w", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init="ones", ctx=[mx.cpu(0), mx.cpu(1)])
    assert p._data[0].stype == "row_sparse" and p.list_grad()[0].stype == "row_sparse"
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(mx.nd.array([0]))
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    rows = mx.nd.array([2], ctx=mx.cpu(1))
    w = p.row_sparse_data(rows)
    assert w.context == mx.cpu(1) and w.indices.asnumpy().tolist() == [2]
    for w in p.list_row_sparse_data(mx.nd.array([1, 2])):
        with mx.autograd.record():
            y = w * 2
        y.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore          # a sparse weight is updated on the store
    full = p.row_sparse_data(mx.nd.arange(0, 4)).asnumpy()[:, 0]
    assert full.tolist() == [-1] * 4     # d(2w)/dw is 2 on every row (as MXNet): 1 - 0.5 * 4


def test_dense_weight_sparse_grad_updates_locally():
    p = gluon.Parameter("v", shape=(3,), grad_stype="row_sparse")
    p.initialize(init="zeros", ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    for w in p.list_data():
        with mx.autograd.record():
            y = w + 1
        y.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert (p.data(mx.cpu(1)).asnumpy() == -2).all()


def test_hybridized_block_with_a_csr_input():
    net = gluon.nn.Dense(2, in_units=3, use_bias=False)
    net.initialize(init="ones")
    net.hybridize()
    x = mx.nd.array([[1, 0, 2], [0, 0, 0]]).tostype("csr")
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.stype == "default" and y.asnumpy()[:, 0].tolist() == [3, 0]
    assert net.weight.grad().asnumpy()[0].tolist() == [1, 0, 2]


def test_clip_global_norm_of_row_sparse_arrays():
    a = mx.nd.ones((3, 4)).tostype("row_sparse")
    norm = gluon.utils.clip_global_norm([a], 1.0)
    assert np.isclose(norm, np.sqrt(12))
    assert np.allclose(a.asnumpy(), 1 / np.sqrt(12), rtol=1e-5)


def _rsp(rows, shape=(4, 2)):
    dense = np.zeros(shape, np.float32)
    for r, v in rows.items():
        dense[r] = v
    return mx.nd.array(dense).tostype("row_sparse")


def test_lazy_sgd_mom_touches_only_the_gradient_rows():
    grad = _rsp({1: 1.0, 3: 2.0})
    weight, mom = mx.nd.ones((4, 2)), mx.nd.zeros((4, 2))
    mx.nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.5, momentum=0.9, wd=0.1)
    # rows 1 and 3: mom = -lr*wd*w - lr*g; rows 0 and 2 (no gradient): unchanged, no decay
    assert np.allclose(mom.asnumpy()[:, 0], [0, -0.55, 0, -1.05])
    assert np.allclose(weight.asnumpy()[:, 0], [1, 0.45, 1, -0.05])
    dense_w, dense_mom = mx.nd.ones((4, 2)), mx.nd.zeros((4, 2))
    mx.nd.sgd_mom_update(dense_w, grad, dense_mom, out=dense_w, lr=0.5, momentum=0.9, wd=0.1,
                         lazy_update=False)
    assert np.allclose(dense_w.asnumpy()[:, 0], [0.95, 0.45, 0.95, -0.05])


def test_lazy_updates_of_row_sparse_weights_and_states():
    weight = mx.nd.ones((4, 2)).tostype("row_sparse")
    opt = mx.optimizer.Adam(learning_rate=0.1, wd=0.1)
    state = opt.create_state(0, weight)
    assert [s.stype for s in state] == ["row_sparse", "row_sparse"]
    opt.update(0, weight, _rsp({2: 1.0}), state)
    assert weight.stype == "row_sparse"
    w = weight.asnumpy()[:, 0]
    assert (w[[0, 1, 3]] == 1).all() and w[2] < 1
    assert state[0].indices.asnumpy().tolist() == [2]


def test_adagrad_and_group_adagrad_on_row_sparse_gradients():
    grad = _rsp({0: 1.0, 3: 2.0})
    for opt, history_shape in ((mx.optimizer.AdaGrad(learning_rate=0.1), (4, 2)),
                               (mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1), (4, 1))):
        weight = mx.nd.ones((4, 2))
        history = opt.create_state(0, weight)
        assert history.shape == history_shape
        opt.update(0, weight, grad, history)
        assert np.allclose(history.asnumpy()[:, 0], [1, 0, 0, 4])
        assert np.allclose(weight.asnumpy()[:, 0], [1 - 0.1 / np.sqrt(1 + opt.float_stable_eps),
                                                    1, 1, 1 - 0.2 / np.sqrt(4 + opt.float_stable_eps)])
    with pytest.raises(mx.MXNetError, match="weight decay is not supported"):
        mx.nd.sparse.adagrad_update(mx.nd.ones((4, 2)), grad, mx.nd.zeros((4, 2)), lr=0.1, wd=0.1)


def test_sparse_embedding_op_and_bound_gradient():
    data = mx.sym.var("data")
    embed = mx.sym.contrib.SparseEmbedding(data, mx.sym.var("w"), input_dim=5, output_dim=2)
    exe = embed.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(3,))
    exe.arg_dict["data"][:] = np.array([4, 0, 4])
    exe.arg_dict["w"][:] = np.arange(10).reshape(5, 2)
    out = exe.forward(is_train=True)[0]
    assert out.asnumpy()[:, 0].tolist() == [8, 0, 8]
    exe.backward([mx.nd.ones((3, 2))])
    grad = exe.grad_dict["w"]
    assert grad.stype == "row_sparse" and grad.asnumpy()[:, 0].tolist() == [1, 0, 0, 0, 2]


def test_teststore_pushpull_of_row_sparse_values():
    kv = mx.kv.create("teststore")
    grads = [_rsp({1: 1.0}), _rsp({1: 2.0, 2: 1.0})]
    out = mx.nd.zeros((4, 2))
    kv.pushpull(0, grads, out=out)
    assert out.asnumpy()[:, 0].tolist() == [0, 3, 1, 0]


def test_fallback_writes_back_sparse_states():
    # csr arrays have no sparse update kernel: the dense fallback runs, and the csr momentum
    # it mutated takes its new value
    w, g = mx.nd.ones((2, 3)).tostype("csr"), mx.nd.ones((2, 3)).tostype("csr")
    mom = mx.nd.zeros((2, 3)).tostype("csr")
    for _ in range(2):
        mx.nd.sgd_mom_update(w, g, mom, out=w, lr=0.1, momentum=0.9)
    assert mom.stype == "csr" and np.allclose(mom.asnumpy(), -0.19)
    assert np.allclose(w.asnumpy(), 0.71)


def test_dot_of_a_csr_input_gives_the_weight_the_rows_of_its_columns():
    x = mx.nd.array([[0, 2, 0, 0], [1, 0, 0, 0]]).tostype("csr")
    w = mx.nd.ones((4, 3))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    assert y.stype == "default"
    assert w.grad.indices.asnumpy().tolist() == [0, 1]        # as MXNet 1.9.1
    assert w.grad.asnumpy()[:, 0].tolist() == [1, 2, 0, 0]


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
def test_dot_of_a_csr_input_differentiates_on_the_sparse_kernels(transpose_a, w_stype):
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((6, 5)).astype(np.float32) * (rng.random((6, 5)) < 0.4)
    x = mx.nd.array(dense).tostype("csr")
    w0 = rng.standard_normal((6 if transpose_a else 5, 3)).astype(np.float32)
    w = mx.nd.array(w0).tostype(w_stype)
    w.attach_grad()
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sparse.dot(x, w, transpose_a=transpose_a)
        loss = (y * y).sum()
    loss.backward()
    a = dense.T if transpose_a else dense
    gy = 2 * (a @ w0)
    np.testing.assert_allclose(w.grad.asnumpy(), a.T @ gy, rtol=1e-5, atol=1e-5)
    # the CSR's gradient on its own pattern: the product's value where it stores one
    full = w0 @ gy.T if transpose_a else gy @ w0.T
    assert x.grad.stype == "csr"
    np.testing.assert_allclose(x.grad.asnumpy(), full * (dense != 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("hybridize", [False, True])
def test_dense_layer_on_csr_data_runs_the_sparse_kernels(hybridize):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((5, 7)).astype(np.float32) * (rng.random((5, 7)) < 0.4)
    net = gluon.nn.Dense(3, in_units=7)
    net.initialize(mx.init.Normal(1.0))
    if hybridize:
        net.hybridize()
    with mx.autograd.record():
        y = net(mx.nd.array(dense).tostype("csr"))
        loss = (y * y).sum()
    loss.backward()
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    g = 2 * (dense @ w.T + b)
    assert y.stype == "default"
    np.testing.assert_allclose(y.asnumpy(), dense @ w.T + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), g.T @ dense, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.bias.grad().asnumpy(), g.sum(0), rtol=1e-5, atol=1e-5)


def test_wide_csr_data_through_a_dense_layer_is_never_densified():
    import tracemalloc
    rows, features = 32, 1 << 22          # 512 MiB dense, a few KB stored
    rng = np.random.default_rng(0)
    cols = np.sort(rng.choice(features, (rows, 4)), axis=1).ravel()
    x = mx.nd.sparse.csr_matrix((np.ones(cols.size, np.float32), cols,
                                 np.arange(0, cols.size + 1, 4)), shape=(rows, features))
    net = gluon.nn.Dense(1, in_units=features)
    net.initialize(mx.init.Zero())
    tracemalloc.start()
    try:
        with mx.autograd.record():
            loss = net(x).sum()
        loss.backward()
        grad = net.weight.grad().asnumpy()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert set(np.flatnonzero(grad[0]).tolist()) == set(cols.tolist())
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB traced"
