"""mxnext.util: the mxnet.util helpers ported code imports."""

import os

import pytest

import mxnext as mx
from mxnext import util


def test_use_np_leaves_code_in_legacy_mode():
    seen = []

    @util.use_np
    def run(x):
        seen.append((util.is_np_array(), util.is_np_shape()))
        return mx.nd.array(x).asnumpy().sum()

    assert run([1.0, 2.0]) == 3.0 and seen == [(False, False)]

    class Block:
        def forward(self):
            return util.is_np_array()

    for deco in (util.use_np, util.use_np_array, util.use_np_shape):
        assert deco(Block) is Block and deco(run) is run
    assert Block().forward() is False
    with pytest.raises(TypeError, match="use_np can only decorate classes and callable objects"):
        util.use_np(3)
    with pytest.raises(TypeError, match="use_np_shape"):
        util.use_np_shape("f")


def test_env_helpers(monkeypatch):
    monkeypatch.delenv("MXNEXT_UTIL_T", raising=False)
    assert util.getenv("MXNEXT_UTIL_T") is None
    util.setenv("MXNEXT_UTIL_T", 5)
    assert os.environ["MXNEXT_UTIL_T"] == "5" and util.getenv("MXNEXT_UTIL_T") == "5"
    util.setenv("MXNEXT_UTIL_T", None)
    assert "MXNEXT_UTIL_T" not in os.environ


def test_makedirs_and_gpu_count(tmp_path):
    target = tmp_path / "a" / "b"
    util.makedirs(str(target))
    util.makedirs(str(target))
    assert target.is_dir()
    assert util.get_gpu_count() == mx.num_gpus()
