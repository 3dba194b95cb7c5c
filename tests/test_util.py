"""mxnext.util: the mxnet.util helpers ported code imports."""

import os

import pytest

import mxnext as mx
from mxnext import util


def test_use_np_runs_code_in_np_shape_semantics_with_legacy_arrays():
    seen = []

    @util.use_np
    def run(x):
        seen.append((util.is_np_array(), util.is_np_shape()))
        return mx.nd.array(x).asnumpy().sum()

    assert run([1.0, 2.0]) == 3.0 and seen == [(False, True)] and not util.is_np_shape()

    @util.use_np_shape
    class Block:
        def forward(self):
            return util.is_np_shape()

    assert Block().forward() is True and not util.is_np_shape()
    assert util.use_np_array(run) is run
    with pytest.raises(TypeError, match="use_np_array can only decorate classes and callable"):
        util.use_np(3)
    with pytest.raises(TypeError, match="use_np_shape"):
        util.use_np_shape("f")


def test_np_shape_is_a_per_thread_scope():
    assert util.set_np_shape(True) is False
    assert util.is_np_shape() and mx.is_np_shape()
    import threading
    other = []
    t = threading.Thread(target=lambda: other.append(util.is_np_shape()))
    t.start()
    t.join()
    assert other == [False]
    with mx.np_shape(False):
        assert not util.is_np_shape()
    assert util.set_np_shape(False) is True


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


def test_np_array_is_a_per_thread_scope():
    import threading
    assert not mx.is_np_array()
    with mx.np_array(True) as scope:
        assert mx.is_np_array() and util._NumpyArrayScope._current.value is scope
        other = []
        t = threading.Thread(target=lambda: other.append(mx.is_np_array()))
        t.start()
        t.join()
        assert other == [False]
        with util.np_array(False):
            assert not mx.is_np_array()
        assert mx.is_np_array()
    assert not mx.is_np_array()
    util.set_np()
    try:
        assert util.is_np_array() and util.is_np_shape()
    finally:
        util.reset_np()
    assert not util.is_np_array() and not util.is_np_shape()
    with pytest.raises(ValueError, match="shape=True"):
        util.set_np(shape=False, array=True)


def test_default_ctx_is_the_context_of_this_thread():
    import threading
    assert mx.Context.default_ctx == mx.cpu(0)
    seen = []

    def other():
        mx.Context.default_ctx = mx.cpu(7)
        seen.append((mx.Context.default_ctx, mx.current_context()))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [(mx.cpu(7), mx.cpu(7))]
    assert mx.Context.default_ctx == mx.cpu(0) and mx.current_context() == mx.cpu(0)
    with mx.cpu(3):
        assert mx.Context.default_ctx == mx.cpu(3)
