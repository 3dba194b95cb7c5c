"""SequenceMask, SequenceLast, SequenceReverse with and without lengths, both layouts."""

import numpy as np
import pytest

from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(8)
X = RNG.normal(size=(5, 3, 2)).astype(np.float32)      # (seq, batch, feature)
LENGTHS = np.array([2, 5, 0], np.float32)


def per_example(x, axis):
    """(sequence, batch index) pairs of a (seq, batch, ...) or (batch, seq, ...) array."""
    batch = x.shape[1 - axis]
    return [(x[:, b] if axis == 0 else x[b], b) for b in range(batch)]


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_mask(axis):
    x = X if axis == 0 else X.transpose(1, 0, 2).copy()
    params = {"use_sequence_length": True, "value": -7.0, "axis": axis}
    want = x.copy()
    for seq, b in per_example(want, axis):
        seq[int(LENGTHS[b]):] = -7.0
    check_forward("SequenceMask", [x, LENGTHS], want, params)
    head = RNG.normal(size=x.shape).astype(np.float32)
    grad = head.copy()
    for seq, b in per_example(grad, axis):
        seq[int(LENGTHS[b]):] = 0
    check_backward("SequenceMask", [x, LENGTHS], [head], [grad, np.zeros(3)], params)
    check_forward("SequenceMask", [x], x, {"axis": axis, "value": 3.0})     # no lengths: identity


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_last(axis):
    x = X if axis == 0 else X.transpose(1, 0, 2).copy()
    lengths = np.array([2, 5, 1], np.int32)
    params = {"use_sequence_length": True, "axis": axis}
    want = np.stack([seq[lengths[b] - 1] for seq, b in per_example(x, axis)])
    check_forward("SequenceLast", [x, lengths], want, params)
    head = RNG.normal(size=want.shape).astype(np.float32)
    grad = np.zeros_like(x)
    for seq, b in per_example(grad, axis):
        seq[lengths[b] - 1] = head[b]
    check_backward("SequenceLast", [x, lengths], [head], [grad, None], params)
    check_forward("SequenceLast", [x], np.stack([seq[-1] for seq, _ in per_example(x, axis)]),
                  {"axis": axis})
    check_numeric_gradient("SequenceLast", [x.astype(np.float64), lengths], params, [0])


def test_sequence_reverse():
    lengths = np.array([2, 5, 1], np.float32)
    want = X.copy()
    for b, n in enumerate(lengths.astype(int)):
        want[:n, b] = X[:n, b][::-1]
    params = {"use_sequence_length": True}
    check_forward("SequenceReverse", [X, lengths], want, params)
    head = RNG.normal(size=X.shape).astype(np.float32)
    grad = head.copy()
    for b, n in enumerate(lengths.astype(int)):
        grad[:n, b] = head[:n, b][::-1]
    check_backward("SequenceReverse", [X, lengths], [head], [grad, np.zeros(3)], params)
    check_forward("SequenceReverse", [X], X[::-1])


def test_sequence_errors():
    with pytest.raises(ShapeError, match=r"SequenceMask.*sequence_length.*\(5,\).*\(3,\)"):
        run_op("SequenceMask", [X, np.ones(5, np.float32)], {"use_sequence_length": True})
    with pytest.raises(ParamError, match="axis"):
        run_op("SequenceReverse", [X], {"axis": 1})
    with pytest.raises(ParamError, match="axis"):
        run_op("SequenceLast", [X], {"axis": 2})
    with pytest.raises(ShapeError, match="at least 2 dims"):
        run_op("SequenceLast", [np.ones(4, np.float32)])
