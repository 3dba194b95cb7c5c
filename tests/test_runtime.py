"""mx.runtime: MXNet's feature list, answered for this installation."""

import numpy as np
import pytest

import mxnext as mx


def test_features_cover_mxnets_names_and_report_what_is_here():
    features = mx.runtime.Features()
    assert list(features)[:2] == ["CUDA", "CUDNN"] and "INT64_TENSOR_SIZE" in features
    assert features.is_enabled("int64_tensor_size") and features.is_enabled("LAPACK")
    assert not features.is_enabled("CUDA")            # no usable CUDA device here
    assert not features.is_enabled("MKLDNN")
    blas = str(np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]).lower()
    assert features.is_enabled("BLAS_OPEN") == ("openblas" in blas)
    assert [f.name for f in mx.runtime.feature_list()] == list(features)
    assert mx.runtime.Features() is features                     # one object, as MXNet
    with pytest.raises(RuntimeError, match="Feature 'WARP_DRIVE' is unknown"):
        features.is_enabled("WARP_DRIVE")
