"""mx.io.LibSVMIter and mx.nd.sparse.CSRNDArray against MXNet 1.9.1's batches of
tests/fixtures/image_iter/data.libsvm and label.libsvm (make_image_iter_fixtures.py):
CSR data, dense or CSR labels, round_batch's carry-over between epochs, and parts."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

HERE = Path(__file__).parent / "fixtures" / "image_iter"
EXPECTED = np.load(HERE / "expected.npz")
INFO = json.loads((HERE / "expected.json").read_text())
DATA, LABEL = str(HERE / "data.libsvm"), str(HERE / "label.libsvm")


@pytest.mark.parametrize("name, kwargs", [
    ("svm_plain", dict(batch_size=3)),
    ("svm_label", dict(batch_size=4, label_libsvm=LABEL, label_shape=(3,))),
    ("svm_part0", dict(batch_size=2, num_parts=2, part_index=0)),
    ("svm_part1", dict(batch_size=2, num_parts=2, part_index=1)),
])
def test_batches_match_mxnet_over_three_epochs(name, kwargs):
    it = mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), **kwargs)
    assert it.provide_data[0].shape == (kwargs["batch_size"], 6)
    for epoch in range(3):
        count = 0
        for k, batch in enumerate(it):
            key = f"{name}_e{epoch}_b{k}"
            csr = batch.data[0]
            assert isinstance(csr, mx.nd.sparse.CSRNDArray) and csr.stype == "csr"
            np.testing.assert_array_equal(csr.asnumpy(), EXPECTED[key + "_data"])
            np.testing.assert_array_equal(csr.indptr.asnumpy(), EXPECTED[key + "_indptr"])
            label = batch.label[0]
            if "label_libsvm" in kwargs:
                assert isinstance(label, mx.nd.sparse.CSRNDArray)
            np.testing.assert_array_equal(label.asnumpy(), EXPECTED[key + "_label"])
            assert batch.pad == INFO[key + "_pad"], key
            count += 1
        assert count == INFO[f"{name}_e{epoch}_count"], (name, epoch)
        it.reset()


def test_parameter_errors_name_the_argument():
    with pytest.raises(MXNetError, match="round_batch=False is not supported"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), batch_size=2, round_batch=False)
    with pytest.raises(MXNetError, match="label_shape must be"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(6,), batch_size=2, label_libsvm=LABEL)
    with pytest.raises(MXNetError, match=r"line 3: column index 4 out of range for shape \(4,\)"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(4,), batch_size=2)
    with pytest.raises(MXNetError, match="data_shape: expected 1 dimension"):
        mx.io.LibSVMIter(data_libsvm=DATA, data_shape=(2, 3), batch_size=2)


def test_csr_ndarray_converts_and_slices():
    dense = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, 3]], np.float32)
    csr = mx.nd.sparse.csr_matrix(dense)
    assert csr.shape == (3, 3) and csr.dtype == np.float32
    assert csr.indices.asnumpy().tolist() == [1, 0, 2]
    assert csr.indptr.asnumpy().tolist() == [0, 1, 1, 3]
    np.testing.assert_array_equal(csr.tostype("default").asnumpy(), dense)
    np.testing.assert_array_equal(csr[1:3].asnumpy(), dense[1:3])
    again = mx.nd.sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=(3, 3))
    np.testing.assert_array_equal(again.asnumpy(), dense)
    assert mx.nd.sparse.zeros("csr", (2, 4)).asnumpy().tolist() == [[0] * 4] * 2
    with pytest.raises(MXNetError, match="expected indptr of length 4"):
        mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(3, 3)).check_format()
    with pytest.raises(MXNetError, match=r"indices must lie in \[0, 3\)"):
        mx.nd.sparse.csr_matrix(([1.0], [3], [0, 1]), shape=(1, 3)).check_format()


def test_sparse_namespace_operator_functions_take_dense_arrays():
    a = mx.nd.array([[1, -2], [3, 4]])
    assert mx.nd.sparse.elemwise_mul(a, a).asnumpy().tolist() == [[1, 4], [9, 16]]
    assert mx.nd.sparse.dot(a, a).asnumpy().tolist() == [[-5, -10], [15, 10]]
    assert mx.nd.sparse.abs(a).asnumpy().tolist() == [[1, 2], [3, 4]]
    assert mx.nd.sparse.ElementWiseSum(a, a).asnumpy().tolist() == [[2, -4], [6, 8]]
    with pytest.raises(AttributeError, match="has no attribute 'exp2'"):
        mx.nd.sparse.exp2
