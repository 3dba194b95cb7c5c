"""L2Normalization: the three modes against per-slice norms, gradient, norm output, errors."""

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import check_numeric_gradient, op_def, parse, run_op

X = np.random.default_rng(0).standard_normal((2, 3, 4, 2))


@pytest.mark.parametrize("mode, slices, norm_shape", [
    ("instance", lambda x: [(n,) for n in range(2)], (2,)),
    ("channel", lambda x: [(n, slice(None), i, j) for n, i, j in np.ndindex(2, 4, 2)],
     (2, 1, 4, 2)),
    ("spatial", lambda x: [(n, c) for n, c in np.ndindex(2, 3)], (2, 3)),
])
def test_each_slice_has_unit_norm(mode, slices, norm_shape):
    out, norm = run_op("L2Normalization", [X], {"mode": mode, "eps": 1e-8})
    assert norm.shape == norm_shape
    for sl in slices(X):
        np.testing.assert_allclose(out[sl], X[sl] / np.sqrt((X[sl] ** 2).sum() + 1e-8))
    check_numeric_gradient("L2Normalization", [X], {"mode": mode}, rtol=1e-6, atol=1e-9)


def test_spatial_and_channel_need_three_dims():
    opdef = op_def("L2Normalization")
    with pytest.raises(ShapeError, match="Operator 'L2Normalization': mode='channel' needs"):
        opdef.get_attr("FInferShape")(parse(opdef, {"mode": "channel"}), [(2, 3)], [None, None])
    assert opdef.num_visible_outputs(parse(opdef, {})) == 1
