"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``, run imperatively as MXNet runs
them, under autograd too."""

import numpy as np
import pytest

import mxnext as mx

nd = mx.nd


def test_foreach_stacks_outputs_and_carries_states_in_bodys_structure():
    x = nd.arange(6).reshape((3, 2))
    outs, states = nd.contrib.foreach(lambda d, s: ([d * 2, d + s[0]], [s[0] + d]), x,
                                      [nd.zeros(2)])
    assert outs[0].asnumpy().tolist() == [[0, 2], [4, 6], [8, 10]]
    assert outs[1].asnumpy().tolist() == [[0, 1], [2, 4], [6, 9]]
    assert states[0].asnumpy().tolist() == [6, 9]
    pairs, _ = nd.contrib.foreach(lambda d, s: (d[0] * d[1], s), [x, x + 1], nd.zeros(1))
    assert pairs.asnumpy().tolist() == [[0, 2], [6, 12], [20, 30]]


def test_foreach_records_for_autograd():
    x = nd.array([[0, 1], [2, 3], [4, 5]])
    x.attach_grad()
    with mx.autograd.record():
        outs, _ = nd.contrib.foreach(lambda d, s: (d * s, s + d), x, nd.ones(2))
        outs.sum().backward()
    # sum = d0 + d1 (1 + d0) + d2 (1 + d0 + d1)
    assert x.grad.asnumpy().tolist() == [[7, 9], [5, 7], [3, 5]]


def test_foreach_refuses_data_that_is_no_ndarray():
    with pytest.raises(TypeError, match="foreach: data: expected an NDArray .* got int"):
        nd.contrib.foreach(lambda d, s: (d, s), 3, nd.zeros(1))


def test_while_loop_pads_outputs_to_max_iterations_and_returns_the_last_vars():
    outs, (i, total) = nd.contrib.while_loop(
        lambda i, s: i < 3, lambda i, s: ([i * 2], (i + 1, s + i)),
        [nd.array([0]), nd.array([0])], max_iterations=5)
    assert outs[0].asnumpy().tolist() == [[0], [2], [4], [0], [0]]
    assert i.asscalar() == 3 and total.asscalar() == 3
    outs, last = nd.contrib.while_loop(lambda v: v < 100, lambda v: (v, v * 2), nd.array([1]),
                                       max_iterations=3)
    assert outs.asnumpy().ravel().tolist() == [1, 2, 4] and last.asscalar() == 8
    with pytest.raises(ValueError, match="while_loop: max_iterations must be given"):
        nd.contrib.while_loop(lambda v: v < 1, lambda v: (v, v), nd.array([0]))


def test_cond_runs_one_branch():
    ran = []
    out = nd.contrib.cond(nd.array([2]) > 1, lambda: ran.append("then") or nd.ones(1),
                          lambda: ran.append("else") or nd.zeros(1))
    assert ran == ["then"] and out.asscalar() == 1
    assert np.array_equal(nd.contrib.cond(0, lambda: nd.ones(1), lambda: nd.zeros(2)).asnumpy(),
                          [0, 0])
    with pytest.raises(ValueError, match="cond: pred: expected one element"):
        nd.contrib.cond(nd.ones(2), lambda: 1, lambda: 0)
