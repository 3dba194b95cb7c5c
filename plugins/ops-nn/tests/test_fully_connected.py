"""FullyConnected: forward/backward against numpy products, flatten, bias shapes, inference."""

import os
import threading

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, parse, run_op


def test_flatten_forward_and_gradients():
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 2, 3)), rng.standard_normal((5, 6)), rng.standard_normal(5)
    x2 = x.reshape(4, 6)
    check_forward("FullyConnected", [x, w, b], x2 @ w.T + b, {"num_hidden": 5})
    gy = rng.standard_normal((4, 5))
    check_backward("FullyConnected", [x, w, b], [gy],
                   [(gy @ w).reshape(x.shape), gy.T @ x2, gy.sum(0)], {"num_hidden": 5})


def test_no_flatten_uses_the_last_axis():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((6, 4))
    kw = {"num_hidden": 6, "flatten": False, "no_bias": True}
    check_forward("FullyConnected", [x, w], np.einsum("abk,hk->abh", x, w), kw)
    gy = rng.standard_normal((2, 3, 6))
    check_backward("FullyConnected", [x, w], [gy],
                   [np.einsum("abh,hk->abk", gy, w), np.einsum("abh,abk->hk", gy, x)], kw)


def test_bias_of_shape_num_hidden_by_one():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal((2, 1))
    check_forward("FullyConnected", [x, w, b], x @ w.T + b.T, {"num_hidden": 2})
    gy = rng.standard_normal((3, 2))
    check_backward("FullyConnected", [x, w, b], [gy], [None, None, gy.sum(0).reshape(2, 1)],
                   {"num_hidden": 2})


def test_backward_in_place_on_the_data():
    """The data gradient may overwrite the data (FInplaceOption (1, 0)): the weight gradient
    is taken first."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    gy = rng.standard_normal((3, 2))
    kw = {"num_hidden": 2, "no_bias": True}
    data = x.copy()
    outs = run_op("_backward_FullyConnected", [gy, data, w], kw, req=["inplace", "write"],
                  outputs=[data, np.zeros((2, 4))])
    np.testing.assert_allclose(outs[0], gy @ w)
    np.testing.assert_allclose(outs[1], gy.T @ x)


def test_inference_fills_weight_bias_and_names():
    opdef = op_def("FullyConnected")
    p = parse(opdef, {"num_hidden": "10"})
    ins, outs, _, _ = infer(opdef, p, [(8, 3, 4, 4), None, None], ["float32", None, None])
    assert ins == [(8, 3, 4, 4), (10, 48), (10,)] and outs == [(8, 10)]
    p = parse(opdef, {"num_hidden": 10, "flatten": False, "no_bias": True})
    ins, outs, _, _ = infer(opdef, p, [(8, 3, 4), None], ["float64", None])
    assert ins == [(8, 3, 4), (10, 4)] and outs == [(8, 3, 10)]
    assert opdef.list_input_names(p) == ["data", "weight"]


@pytest.mark.parametrize("shapes, match", [
    ([(8, 4), (10, 5), None], "input 'weight' has shape \\(10, 5\\), expected \\(10, 4\\)"),
    ([(8, 4), None, (10, 2)], "input 'bias' has shape \\(10, 2\\), expected \\(10,\\)"),
])
def test_shape_conflicts(shapes, match):
    opdef = op_def("FullyConnected")
    with pytest.raises(ShapeError, match="Operator 'FullyConnected': " + match):
        opdef.get_attr("FInferShape")(parse(opdef, {"num_hidden": 10}), shapes, [None])


def test_float16_runs_and_keeps_its_dtype():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4)).astype(np.float16)
    w = rng.standard_normal((2, 4)).astype(np.float16)
    out = run_op("FullyConnected", [x, w], {"num_hidden": 2, "no_bias": True})[0]
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, x.astype(np.float32) @ w.astype(np.float32).T, rtol=1e-2,
                               atol=1e-2)


def test_data_filled_back_without_flatten():
    opdef = op_def("FullyConnected")
    p = parse(opdef, {"num_hidden": 6, "flatten": False})
    ins, _ = opdef.get_attr("FInferShape")(p, [None, (6, 4), None], [(2, 3, 6)])
    assert ins == [(2, 3, 4), (6, 4), (6,)]


@pytest.mark.parametrize("flatten", [True, False])
def test_in_place_over_the_data_in_blocks_of_rows(flatten, monkeypatch):
    """Written over its own data (WRITE_INPLACE, as the executor plans it where the data
    dies), the product goes through a few rows at a time and gives the values it gives
    apart."""
    from mxnext_ops_nn import fully_connected
    monkeypatch.setattr(fully_connected, "_BLOCK_BYTES", 3 * 6 * 8)      # 3 rows at a time
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 2, 3) if flatten else (7, 6))
    w, b = rng.standard_normal((6, 6)), rng.standard_normal(6)
    kw = {"num_hidden": 6, "flatten": flatten}
    want = run_op("FullyConnected", [x, w, b], kw)[0]
    data = x.copy()
    out = data.reshape(want.shape)
    got = run_op("FullyConnected", [data, w, b], kw, req="inplace", outputs=[out])[0]
    assert np.shares_memory(got, data)
    np.testing.assert_allclose(data.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("req_data", ["write", "null"])
def test_large_products_on_kernel_threads_give_the_bits_of_one_thread(req_data, monkeypatch):
    # (256, 800) x (800, 600): cut into row blocks run at once (mxnext_ops_nn._threads)
    from mxnext_ops_nn._threads import row_parts
    assert row_parts(256, 800, 600) > 1
    rng = np.random.default_rng(7)
    x = rng.standard_normal((256, 800)).astype(np.float32)
    w = rng.standard_normal((600, 800)).astype(np.float32)
    b = rng.standard_normal(600).astype(np.float32)
    gy = rng.standard_normal((256, 600)).astype(np.float32)
    p = {"num_hidden": 600}
    req = [req_data, "write", "write"]
    got = {}
    for n in ("1", "3"):
        monkeypatch.setenv("MXNEXT_KERNEL_THREADS", n)
        (y,) = run_op("FullyConnected", [x, w, b], p)
        grads = run_op("_backward_FullyConnected", [gy, x, w, b], p, req=req)
        got[n] = [y] + [g for g, r in zip(grads, req) if r != "null"]
    for one, three in zip(got["1"], got["3"]):
        np.testing.assert_array_equal(one, three)
    np.testing.assert_allclose(got["3"][0], x @ w.T + b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got["3"][-2], gy.T @ x, rtol=1e-4, atol=1e-2)


def test_kernel_threads_run_every_part_and_raise_the_first_error(monkeypatch):
    from mxnext_ops_nn._threads import parallel
    monkeypatch.setenv("MXNEXT_KERNEL_THREADS", "2")
    done = []
    parallel(*[lambda i=i: done.append(i) for i in range(7)])
    assert sorted(done) == list(range(7))

    def fail():
        raise ValueError("part 3 failed")
    with pytest.raises(ValueError, match="part 3 failed"):
        parallel(lambda: None, fail, lambda: None)
    monkeypatch.setenv("MXNEXT_KERNEL_THREADS", "two")
    with pytest.raises(ValueError, match="MXNEXT_KERNEL_THREADS must be a whole number"):
        parallel(lambda: None, lambda: None)


def test_kernel_threads_after_their_pool_shut_down_run_the_parts_here(monkeypatch):
    # at interpreter exit concurrent.futures shuts its pools down before the engine's exit
    # hook runs the work still pending
    from concurrent.futures import ThreadPoolExecutor

    from mxnext_ops_nn import _threads
    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    monkeypatch.setattr(_threads, "_pool", pool)
    monkeypatch.setattr(_threads, "_pool_pid", os.getpid())
    monkeypatch.setenv("MXNEXT_KERNEL_THREADS", "2")
    done = []
    _threads.parallel(*[lambda i=i: done.append((i, threading.current_thread())) for i in
                        range(4)])
    assert done == [(i, threading.current_thread()) for i in range(4)]


@pytest.mark.parametrize("kw,shapes", [
    ({"num_hidden": 3}, [(4, 3), (4, 2, 2), (3, 4), (3,)]),
    ({"num_hidden": 2, "flatten": False, "no_bias": True}, [(2, 3, 2), (2, 3, 5), (2, 5)]),
    ({"num_hidden": 2}, [(3, 2), (3, 4), (2, 4), (2, 1)])])
def test_backward_has_a_gradient(kw, shapes):
    """Second order (Dense layers differentiated twice): the backward op's FGradient against
    central differences, for every input (the bias only gives a shape: zero gradient)."""
    from opsdk.testing import check_numeric_gradient
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s) for s in shapes]
    check_numeric_gradient("_backward_FullyConnected", inputs, kw, rtol=1e-4, atol=1e-6)
