"""gluon.utils: batch splitting over devices, global-norm clipping, SHA-1 checks and the
local-file-first download."""

import hashlib

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import utils


def test_split_data_even_and_uneven():
    x = mx.nd.arange(14).reshape((7, 2))
    parts = utils.split_data(x, 3, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2), (2, 2)]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    cols = utils.split_data(mx.nd.ones((2, 6)), 3, batch_axis=1)
    assert [c.shape for c in cols] == [(2, 2)] * 3
    with pytest.raises(ValueError, match="cannot be evenly split into 3 slices"):
        utils.split_data(x, 3)
    with pytest.raises(ValueError, match="Too many slices"):
        utils.split_data(x, 8, even_split=False)


def test_split_and_load_puts_one_piece_per_context():
    parts = utils.split_and_load(np.arange(8).reshape(4, 2), [mx.cpu(0), mx.cpu(1)])
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1)]
    assert parts[1].asnumpy().tolist() == [[4, 5], [6, 7]]


def test_clip_global_norm_scales_to_the_max_norm():
    a, b = mx.nd.array([3.0, 0.0]), mx.nd.array([[4.0]])
    norm = utils.clip_global_norm([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-5)
    np.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-5)
    untouched = mx.nd.array([0.1])
    assert utils.clip_global_norm([untouched], 1.0) == pytest.approx(0.1)
    assert untouched.asnumpy()[0] == pytest.approx(0.1)
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)


def test_repo_urls_follow_mxnet_gluon_repo(monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror.example/mx")
    assert utils._get_repo_file_url("mnist", "t10k.gz") == \
        "http://mirror.example/mx/gluon/dataset/mnist/t10k.gz"


def test_check_sha1_and_download_uses_the_local_file(tmp_path):
    f = tmp_path / "weights.params"
    f.write_bytes(b"abc")
    digest = hashlib.sha1(b"abc").hexdigest()
    assert utils.check_sha1(str(f), digest) and utils.check_sha1(str(f), digest[:8])
    assert not utils.check_sha1(str(f), "0" * 40)
    url = "http://127.0.0.1:9/models/weights.params"
    assert utils.download(url, path=str(tmp_path), sha1_hash=digest) == str(f)
    with pytest.raises(RuntimeError, match="without network, put the file at .*other.params"):
        utils.download("http://127.0.0.1:9/models/other.params", path=str(tmp_path),
                       retries=0)
