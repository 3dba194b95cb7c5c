"""mxnext.base: the error family and the helpers MXNet's Python code imports from mxnet.base."""

import numpy as np
import pytest

from mxnext import base
from mxnext.base import (MXNetError, NotImplementedForSymbol, NotSupportedForSparseNDArray,
                         OpNotFound, ParamError, ShapeError, TypeInferError, _as_list,
                         _MXClassPropertyMetaClass, classproperty, data_dir, data_dir_default,
                         did_you_mean, integer_types, mx_real_t, numeric_types, py_str,
                         string_types, with_metaclass)


def test_type_groups_classify_like_mxnets():
    assert all(isinstance(v, integer_types) for v in (3, np.int32(3), np.int64(3)))
    assert not isinstance(3.0, integer_types)
    assert all(isinstance(v, numeric_types) for v in (3, 2.5, np.float16(1), np.uint8(1)))
    assert not isinstance("3", numeric_types)
    assert isinstance("s", string_types) and not isinstance(b"s", string_types)
    assert mx_real_t is np.float32


def test_py_str_and_as_list():
    assert py_str(b"caf\xc3\xa9") == "café" and py_str(bytearray(b"x")) == "x"
    assert py_str("y") == "y"
    items = [1, 2]
    assert _as_list(items) is items and _as_list((1,)) == (1,)
    assert _as_list(3) == [3] and _as_list(None) == [None] and _as_list("ab") == ["ab"]


def test_error_family():
    assert issubclass(ParamError, ValueError) and issubclass(ShapeError, ValueError)
    assert issubclass(OpNotFound, KeyError) and issubclass(TypeInferError, TypeError)
    assert str(OpNotFound("no op 'x'")) == "no op 'x'"
    for cls in (ParamError, OpNotFound, NotImplementedForSymbol, NotSupportedForSparseNDArray):
        assert issubclass(cls, MXNetError)
    assert did_you_mean("relu", ["Relu", "relu6", "tanh"]).startswith(" (did you mean")
    assert did_you_mean("zzz", ["relu"]) == ""


def test_unavailable_for_messages():
    def norm():
        pass
    assert str(NotImplementedForSymbol(norm, "abs", 1, "a")) == (
        'Function norm (namely operator "abs") with arguments (<class \'int\'>, <class \'str\'>) '
        "is not implemented for Symbol and only available in NDArray.")
    assert str(NotSupportedForSparseNDArray(norm, None)) == (
        "Function norm is not supported for SparseNDArray and only available in NDArray.")


def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert data_dir() == data_dir_default()
    assert data_dir_default().endswith("mxnet")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert data_dir() == str(tmp_path)


def test_classproperty_and_with_metaclass():
    class Base:
        pass

    class Config(with_metaclass(_MXClassPropertyMetaClass, Base)):
        _level = 1

        @classproperty
        def level(cls):
            return cls._level

        @level.setter
        def level(cls, value):
            cls._level = value

        @classproperty
        def fixed(cls):
            return "fixed"

    assert type(Config) is _MXClassPropertyMetaClass
    assert Config.__mro__ == (Config, Base, object)
    assert Config.level == 1 and Config().level == 1
    Config.level = 4
    assert Config.level == 4 and Config._level == 4
    with pytest.raises(MXNetError, match="no setter"):
        Config.fixed = "changed"
    Config.other = 5                      # ordinary class attributes still set
    assert Config.other == 5
    assert type(with_metaclass(type)).__name__ == "_StandIn"


def test_all_names_exist():
    assert all(hasattr(base, n) for n in base.__all__)
