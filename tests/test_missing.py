"""MXNet 1.x names mxnext does not provide say so, read or imported."""

import importlib

import pytest

import mxnext as mx
from mxnext import _missing
from mxnext.base import MXNetError


@pytest.mark.parametrize("expr, mxnet_name", [
    ("mx.rtc", "mxnet.rtc"), ("mx.np", "mxnet.np"),
    ("mx.io.ImageRecordUInt8Iter", "mxnet.io.ImageRecordUInt8Iter"),
    ("mx.io.ImageRecordIter_v1", "mxnet.io.ImageRecordIter_v1"),
])
def test_reading_a_missing_mxnet_name_says_mxnext_does_not_provide_it(expr, mxnet_name):
    with pytest.raises(AttributeError) as err:
        eval(expr)
    assert isinstance(err.value, MXNetError)
    assert str(err.value).endswith(f"{mxnet_name} is an MXNet 1.x name that mxnext does "
                                   f"not provide")


def test_hasattr_stays_false_and_other_names_keep_their_errors():
    assert not hasattr(mx, "rtc") and not hasattr(mx.io, "ImageRecordUInt8Iter")
    with pytest.raises(AttributeError, match="^module 'mxnext' has no attribute 'nothing'$"):
        mx.nothing
    with pytest.raises(AttributeError, match="did you mean 'relu'"):
        mx.nd.relux


@pytest.mark.parametrize("statement", ["import mxnext.rtc", "from mxnext import rtc",
                                       "from mxnext.rtc import CudaModule",
                                       "import mxnext.npx"])
def test_importing_a_missing_mxnet_module_says_so(statement):
    with pytest.raises(ModuleNotFoundError, match="MXNet 1.x name that mxnext does not "
                                                   "provide"):
        exec(statement)


def test_a_name_meant_for_a_distribution_names_it(monkeypatch):
    monkeypatch.setitem(_missing.NAMES, "mxnext.io", {"mxnext-io-image": "ImageRecordUInt8Iter"})
    with pytest.raises(AttributeError, match="mxnet.io.ImageRecordUInt8Iter is provided by "
                                             "mxnext-io-image, which is not installed: "
                                             "`mxnext install mxnext-io-image`"):
        mx.io.ImageRecordUInt8Iter
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mxnext.io.ImageRecordUInt8Iter")


def test_a_missing_name_says_what_to_use_instead(monkeypatch):
    monkeypatch.setitem(_missing.NAMES, "mxnext.gluon.contrib", {None: "bagging"})
    monkeypatch.setitem(_missing.INSTEAD, "mxnext.gluon.contrib.bagging",
                        "write the loop with autograd.record()")
    says = ("mxnet.gluon.contrib.bagging is an MXNet 1.x name that mxnext does not provide; "
            "write the loop with autograd.record()")
    with pytest.raises(_missing.NotProvided, match="has no attribute") as err:
        mx.gluon.contrib.bagging
    assert says in str(err.value)
    with pytest.raises(_missing.NotProvidedImport, match="No module named") as err:
        exec("from mxnext.gluon.contrib.bagging import Bagger")
    assert says in str(err.value)
    mx.image.ResizeAug, mx.contrib.nd.foreach     # the modules' other names still resolve
