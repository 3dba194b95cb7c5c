"""Embedding: row lookup with truncation and clipping, dense weight gradient of repeated
indices, inference and dtypes."""

import numpy as np
from opsdk.testing import check_backward, check_forward, infer, op_def, parse

W = np.arange(20.0).reshape(4, 5)
IDX = np.array([[0, 3, 3], [1, 0, 9], [-2, 2.7, 1.2]])


def test_lookup_truncates_and_clips():
    rows = [[0, 3, 3], [1, 0, 3], [0, 2, 1]]
    check_forward("Embedding", [IDX, W], W[np.array(rows)], {"input_dim": 4, "output_dim": 5})


def test_weight_gradient_sums_rows_of_equal_indices():
    gy = np.random.default_rng(0).standard_normal((3, 3, 5))
    want = np.zeros((4, 5))
    rows = [[0, 3, 3], [1, 0, 3], [0, 2, 1]]
    for i, j in np.ndindex(3, 3):
        want[rows[i][j]] += gy[i, j]
    check_backward("Embedding", [IDX, W], [gy], [np.zeros(IDX.shape), want],
                   {"input_dim": 4, "output_dim": 5, "sparse_grad": True})


def test_inference_and_dtypes():
    opdef = op_def("Embedding")
    p = parse(opdef, {"input_dim": "10", "output_dim": "3", "dtype": "float64"})
    ins, outs, tins, touts = infer(opdef, p, [(2, 7), None], ["int32", None])
    assert ins[1] == (10, 3) and outs == [(2, 7, 3)]
    assert [t.name for t in tins] == ["int32", "float64"] and touts[0].name == "float64"
    # a given weight dtype wins over the dtype parameter, as in MXNet
    assert infer(opdef, p, [(2,), (10, 3)], ["float32", "float32"])[3][0].name == "float32"
    assert opdef.list_input_names(p) == ["data", "weight"]
