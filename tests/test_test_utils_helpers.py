"""MXNet 1.9's smaller public helpers of mx.test_utils: the model catalogue and data fetchers
(no network: file:// sources the tests fill, or files already in place), the TVM probes,
im2rec's path, check_speed, same_symbol_structure, check_gluon_hybridize_consistency."""

import bz2

import numpy as np
import pytest

import mxnext as mx
from mxnext import test_utils as tu
from mxnext.gluon import nn
from mxnext.test_utils import _data, _models


def _no_download(*args, **kwargs):
    raise AssertionError(f"unexpected download {args}")


def test_download_model_fetches_symbol_and_params(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "s.json").write_text('{"nodes": []}')
    (src / "p.params").write_bytes(b"\x01\x02")
    meta = {"tiny": {"symbol": (src / "s.json").as_uri(), "params": (src / "p.params").as_uri()}}
    prefix, epoch = tu.download_model("tiny", dst_dir=str(tmp_path / "models"), meta_info=meta)
    assert (prefix, epoch) == (str(tmp_path / "models" / "tiny"), 0)
    assert (tmp_path / "models" / "tiny-symbol.json").read_text() == '{"nodes": []}'
    assert (tmp_path / "models" / "tiny-0000.params").read_bytes() == b"\x01\x02"
    assert tu.download_model("other", dst_dir=str(tmp_path), meta_info=meta) == (None, 0)
    with pytest.raises(ValueError, match="missing \\['params'\\]"):
        tu.download_model("tiny", str(tmp_path), {"tiny": {"symbol": "x"}})


def test_download_model_catalogue_keeps_files_in_place(tmp_path, monkeypatch):
    assert _models.MODELS["imagenet1k-resnet-18"]["params"] == \
        "http://data.mxnet.io/models/imagenet/resnet/18-layers/resnet-18-0000.params"
    assert len(_models.MODELS) == 12
    for suffix in ("-symbol.json", "-0000.params"):
        (tmp_path / f"imagenet1k-resnet-18{suffix}").write_text("here")
    monkeypatch.setattr(_data.urllib.request, "urlopen", _no_download)
    prefix, _ = tu.download_model("imagenet1k-resnet-18", dst_dir=str(tmp_path))
    assert prefix == str(tmp_path / "imagenet1k-resnet-18")
    assert tu.download_model("resnet-18") == (None, 0)


def test_get_bz2_data_decompresses_and_removes_the_archive(tmp_path):
    archive = tmp_path / "kdda.t.bz2"
    archive.write_bytes(bz2.compress(b"1 1:0.5\n0 2:1.5\n"))
    out = tmp_path / "out"
    tu.get_bz2_data(str(out), "kdda.t", archive.as_uri(), "kdda.t.bz2")
    assert (out / "kdda.t").read_bytes() == b"1 1:0.5\n0 2:1.5\n"
    assert sorted(p.name for p in out.iterdir()) == ["kdda.t"]
    archive.unlink()                              # present: no second fetch
    tu.get_bz2_data(str(out), "kdda.t", archive.as_uri(), "kdda.t.bz2")


def test_get_mnist_pkl_keeps_a_file_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mnist.pkl.gz").write_bytes(b"x")
    monkeypatch.setattr(_data, "download", _no_download)
    assert tu.get_mnist_pkl() is None


def test_tvm_probes_and_im2rec_path(tmp_path, monkeypatch):
    assert tu.has_tvm_ops() is False
    assert tu.is_op_runnable() is True
    tool = tmp_path / "tools" / "im2rec.py"
    tool.parent.mkdir()
    tool.write_text("")
    monkeypatch.setenv("MY_MXNET", str(tmp_path))
    assert tu.get_im2rec_path("MY_MXNET") == str(tool)
    monkeypatch.setenv("MY_MXNET", str(tmp_path / "tools"))
    with pytest.raises(OSError, match="no tools/im2rec.py"):
        tu.get_im2rec_path("MY_MXNET")


def _fc(prefix=""):
    x = mx.sym.Variable("data")
    return mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=4, name=prefix + "fc"),
                             act_type="relu", name=prefix + "relu")


def test_check_speed_times_executor_runs():
    net = _fc()
    for typ in ("whole", "forward"):
        seconds = tu.check_speed(net, N=2, typ=typ, data=(3, 5))
        assert isinstance(seconds, float) and seconds > 0
    loc = {"data": np.ones((3, 5)), "fc_weight": np.ones((4, 5)), "fc_bias": np.zeros(4)}
    assert tu.check_speed(net, location=loc, N=1, grad_req="null", typ="forward") > 0
    with pytest.raises(ValueError, match="'typ' expected"):
        tu.check_speed(net, N=1, typ="backward", data=(3, 5))
    with pytest.raises(ValueError, match="'location' expected a dict"):
        tu.check_speed(net, location=[np.ones((3, 5))], N=1)


def test_same_symbol_structure_compares_ops_node_by_node():
    assert tu.same_symbol_structure(_fc(), _fc("other_"))
    sig = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4),
                            act_type="sigmoid")
    assert tu.same_symbol_structure(_fc(), sig)            # attributes are not compared
    tanh = mx.sym.tanh(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4))
    assert not tu.same_symbol_structure(_fc(), tanh)
    assert tu.same_symbol_structure(_fc(), mx.sym.Variable("x"))   # zip: the first node only


class _Affine(nn.HybridBlock):
    """y = x * w + 1; with ``drift`` the hybridized graph adds 1 more."""

    def __init__(self, drift=False, **kwargs):
        super().__init__(**kwargs)
        self.drift = drift
        with self.name_scope():
            self.w = self.params.get("w", shape=(3,))

    def hybrid_forward(self, F, x, w):
        y = F.broadcast_mul(x, w.reshape((1, 3))) + 1
        return y + 1 if self.drift and F is mx.sym else y


def test_check_gluon_hybridize_consistency():
    data = [mx.nd.array(np.arange(6.0).reshape(2, 3))]

    def dense(prefix):
        net = nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
        return net

    tu.check_gluon_hybridize_consistency(dense, data)
    seen = []

    def affine(prefix):
        assert mx.util.is_np_shape()              # run under use_np, as MXNet's
        seen.append(_Affine(prefix=prefix))
        return seen[-1]

    def want(x):                                  # the first build's weights, reused by all
        return x * seen[0].w.data().asnumpy() + 1

    tu.check_gluon_hybridize_consistency(affine, data, numpy_func=want, test_grad=False)
    assert len(seen) == 2
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(affine, data, numpy_func=lambda x: x)
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(lambda prefix: _Affine(True, prefix=prefix), data)
