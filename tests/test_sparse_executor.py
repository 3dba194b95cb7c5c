"""Storage types through a bound graph (docs/sparse.md, "Executors"): outputs take the
storage type MXNet's storage-type inference gives, gradients keep their buffers' type, an
op refusing its inputs' storage types fails at bind, and sparse arrays are never densified
where an op has a sparse kernel (a linear model on CSR data)."""

import tracemalloc

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

# row 1 is stored but zero (a sparse kernel keeps it), row 3 is not stored
ROWS = np.array([[1.0, 4.0], [0.0, 0.0], [9.0, 16.0]], np.float32)
INDICES = [0, 1, 2]
SHAPE = (4, 2)


def _rsp():
    return mx.nd.sparse.row_sparse_array((ROWS, INDICES), shape=SHAPE)


def test_outputs_take_the_inferred_storage_types():
    x = mx.sym.Variable("x")
    group = mx.sym.Group([mx.sym.sqrt(x), mx.sym.exp(x), mx.sym.sqrt(x) * 2, x + 1,
                          mx.sym.sparse.elemwise_add(x, x)])
    exe = group.bind(mx.cpu(), {"x": _rsp()})
    outs = exe.forward()
    assert [o.stype for o in outs] == ["row_sparse", "default", "row_sparse", "default",
                                       "row_sparse"]
    dense = _rsp().asnumpy()
    for out, want in zip(outs, (np.sqrt(dense), np.exp(dense), np.sqrt(dense) * 2, dense + 1,
                                dense * 2)):
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    assert outs[0].indices.asnumpy().tolist() == INDICES      # the sparse kernel's rows
    assert exe.output_dict[group.list_outputs()[0]] is outs[0]


def test_csr_outputs_and_a_sparse_times_dense_product():
    csr = mx.nd.array([[0, 2, 0], [3, 0, 0]]).tostype("csr")
    y = mx.sym.sparse.elemwise_mul(mx.sym.Variable("x"), mx.sym.Variable("w"))
    exe = y.bind(mx.cpu(), {"x": csr, "w": mx.nd.ones((2, 3)) * 3})
    (out,) = exe.forward()
    assert out.stype == "csr" and out.asnumpy().tolist() == [[0, 6, 0], [9, 0, 0]]
    csr[:] = mx.nd.array([[1, 0, 0], [0, 0, 1]])           # read again at each forward
    assert exe.forward()[0].asnumpy().tolist() == [[3, 0, 0], [0, 0, 3]]


def test_backward_writes_row_sparse_gradients_in_their_type():
    x = mx.sym.Variable("x")
    grad = mx.nd.zeros(SHAPE, stype="row_sparse")
    exe = mx.sym.square(x).bind(mx.cpu(), {"x": _rsp()}, args_grad={"x": grad})
    assert exe.forward(is_train=True)[0].stype == "row_sparse"
    head = mx.nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), [0, 2]), shape=SHAPE)
    exe.backward(head)
    assert grad.stype == "row_sparse"
    np.testing.assert_array_equal(grad.asnumpy(), 2 * _rsp().asnumpy() * head.asnumpy())


def test_dense_bindings_skip_the_inference(monkeypatch):
    import mxnext.executor.executor as executor

    def refuse(*args):
        raise AssertionError("storage-type inference ran for dense arrays")
    monkeypatch.setattr(executor, "infer_stypes", refuse)
    exe = mx.sym.sqrt(mx.sym.Variable("x")).bind(mx.cpu(), {"x": mx.nd.ones(SHAPE) * 4})
    assert exe.forward()[0].stype == "default" and exe.outputs[0].asnumpy()[0, 0] == 2


def _batch_norm(fix_gamma):
    data = mx.sym.Variable("data")
    sym = mx.sym.BatchNorm(data, fix_gamma=fix_gamma, name="bn")
    args = {"data": _rsp(), "bn_gamma": mx.nd.ones(2), "bn_beta": mx.nd.zeros(2)}
    aux = {"bn_moving_mean": mx.nd.zeros(2), "bn_moving_var": mx.nd.ones(2)}
    return sym.bind(mx.cpu(), args, aux_states=aux)


def test_batchnorm_refuses_sparse_inputs_with_fix_gamma_at_bind():
    with pytest.raises(MXNetError, match=r"'bn' \(BatchNorm\).*'data' \(row_sparse\).*"
                                         r"fix_gamma=True is not supported"):
        _batch_norm(fix_gamma=True)
    (out,) = _batch_norm(fix_gamma=False).forward()       # the storage fallback
    assert out.stype == "default" and out.shape == SHAPE
    with pytest.raises(MXNetError, match="fix_gamma=True is not supported"):
        mx.nd.BatchNorm(_rsp(), mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2), mx.nd.ones(2))


def _linear_model():
    """MXNet's example/sparse/linear_classification model, on a squared loss."""
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse")
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), mx.sym.Variable("bias"))
    return mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(pred)))


def test_csr_data_trains_through_sparse_kernels_in_mxnet_storage_types():
    # row 1 stores an explicit zero in column 2: MXNet's gradient still holds row 2
    x = mx.nd.sparse.csr_matrix((np.array([2, 1, 0, 3], np.float32), [1, 0, 2, 3],
                                 [0, 1, 3, 4]), shape=(3, 5))
    exe = _linear_model().simple_bind(mx.cpu(), data=(3, 5), weight=(5, 2), bias=(2,),
                                      grad_req={"data": "null", "weight": "write",
                                                "bias": "write"})
    assert exe.arg_dict["data"].stype == "csr" and exe.grad_dict["weight"].stype == "row_sparse"
    w = np.arange(10, dtype=np.float32).reshape(5, 2)
    exe.arg_dict["data"][:] = x
    exe.arg_dict["weight"][:] = mx.nd.array(w).tostype("row_sparse")
    exe.arg_dict["bias"][:] = np.array([1, -1], np.float32)
    pred = x.asnumpy() @ w + [1, -1]
    (loss,) = exe.forward(is_train=True)
    np.testing.assert_allclose(loss.asnumpy(), [(pred ** 2).sum()], rtol=1e-6)
    exe.backward()
    grad = exe.grad_dict["weight"]
    assert grad.stype == "row_sparse" and grad.indices.asnumpy().tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(grad.asnumpy(), x.asnumpy().T @ (2 * pred), rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["bias"].asnumpy(), (2 * pred).sum(0), rtol=1e-6)


def test_wide_csr_data_is_never_densified():
    # 64 rows x 4M features: 1 GiB dense, a few KB stored
    rows, features = 64, 1 << 22
    rng = np.random.default_rng(0)
    cols = np.sort(rng.choice(features, (rows, 8)), axis=1).ravel()
    x = mx.nd.sparse.csr_matrix((np.ones(cols.size, np.float32), cols,
                                 np.arange(0, cols.size + 1, 8)), shape=(rows, features))
    tracemalloc.start()
    try:
        exe = _linear_model().simple_bind(mx.cpu(), data=(rows, features),
                                          weight=(features, 1), bias=(1,),
                                          grad_req={"data": "null", "weight": "write",
                                                    "bias": "write"})
        exe.arg_dict["data"][:] = x
        exe.forward(is_train=True)
        exe.backward()
        grad = exe.grad_dict["weight"]
        assert set(grad.indices.asnumpy().tolist()) == set(cols.tolist())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB traced"


def test_simple_bind_of_a_graph_with_an_op_without_inputs():
    y = mx.sym.Variable("x") + mx.sym.zeros((2, 3))
    exe = y.simple_bind(mx.cpu(), x=(2, 3))
    assert exe.grad_dict["x"].stype == "default"
    assert exe.forward(is_train=True, x=mx.nd.ones((2, 3)))[0].asnumpy().sum() == 6


def test_reshape_gives_sparse_arguments_new_arrays_of_their_type():
    exe = _linear_model().simple_bind(mx.cpu(), data=(3, 5), weight=(5, 2), bias=(2,),
                                      grad_req={"data": "null", "weight": "write",
                                                "bias": "write"})
    small = exe.reshape(data=(2, 5), weight=(5, 2), bias=(2,))
    assert small.arg_dict["data"].stype == "csr" and small.arg_dict["data"].shape == (2, 5)
    assert small.grad_dict["weight"].stype == "row_sparse"
    small.arg_dict["data"][:] = mx.nd.array([[1, 0, 0, 2, 0], [0, 3, 0, 0, 0]]).tostype("csr")
    small.arg_dict["weight"][:] = mx.nd.ones((5, 2)).tostype("row_sparse")
    (loss,) = small.forward(is_train=True)
    assert loss.asnumpy().tolist() == [2 * 3 ** 2 + 2 * 3 ** 2]
    small.backward()
    assert small.grad_dict["weight"].indices.asnumpy().tolist() == [0, 1, 3]
