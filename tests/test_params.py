"""Param models accept MXNet's string kwargs and print them back MXNet-style."""

from __future__ import annotations

import enum
from typing import Literal, Optional

import numpy as np
import pytest

from mxnext.base import MXNetError, ParamError
from mxnext.params import DType, Field, Param, format_value


class ConvParam(Param):
    kernel: tuple[int, ...] = Field(description="Kernel size.")
    stride: tuple[int, ...] = ()
    num_filter: int = Field(1, ge=1, le=100000)
    no_bias: bool = False
    eps: float = 1e-3
    axis: Optional[int] = None
    begin: tuple[Optional[int], ...] = ()
    act_type: Literal["relu", "sigmoid", "tanh"] = "relu"
    dtype: Optional[DType] = None


@pytest.mark.parametrize("text, value", [
    ("(3,3)", (3, 3)), ("[3,3]", (3, 3)), ("3", (3,)), ("(3,)", (3,)), ("()", ()),
    (" ( 2 , 4 ) ", (2, 4))])
def test_tuple_fields_accept_mxnet_spellings(text, value):
    assert ConvParam.parse({"kernel": text}).kernel == value


def test_python_values_are_accepted_too():
    p = ConvParam.parse({"kernel": [2, 2], "stride": 1, "no_bias": True, "eps": 0.5})
    assert (p.kernel, p.stride, p.no_bias, p.eps) == ((2, 2), (1,), True, 0.5)


@pytest.mark.parametrize("text, value", [("True", True), ("False", False), ("1", True),
                                         ("0", False), ("true", True), ("false", False)])
def test_bool_strings(text, value):
    assert ConvParam.parse({"kernel": "1", "no_bias": text}).no_bias is value


def test_float_int_none_enum_and_optional_tuple_items():
    p = ConvParam.parse({"kernel": "(1,1)", "eps": "1e-5", "num_filter": "64", "axis": "None",
                         "act_type": "tanh", "begin": "(None, 2)"})
    assert (p.eps, p.num_filter, p.axis, p.act_type, p.begin) == (1e-5, 64, None, "tanh",
                                                                   (None, 2))
    assert ConvParam.parse({"kernel": "1", "axis": "-1"}).axis == -1


@pytest.mark.parametrize("given, name", [("float32", "float32"), ("float16", "float16"),
                                         (np.float64, "float64"), ("None", None),
                                         (np.dtype("int32"), "int32"), ("uint8", "uint8")])
def test_dtype_field_normalizes_to_numpy_names(given, name):
    assert ConvParam.parse({"kernel": "1", "dtype": given}).dtype == name


def test_models_are_frozen_and_hashable():
    a = ConvParam.parse({"kernel": "(3,3)", "no_bias": "True"})
    b = ConvParam.parse({"kernel": [3, 3], "no_bias": True})
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    with pytest.raises(Exception):
        a.kernel = (1, 1)


def test_to_mxnet_dict_prints_what_was_set_mxnet_style():
    p = ConvParam.parse({"kernel": "(3,3)", "no_bias": "1", "axis": "None", "eps": "0.001",
                         "stride": "2"})
    assert p.to_mxnet_dict() == {"kernel": "(3, 3)", "stride": "(2,)", "no_bias": "True",
                                 "eps": "0.001", "axis": "None"}
    full = p.to_mxnet_dict(include_defaults=True)
    assert full["act_type"] == "relu" and full["num_filter"] == "1" and full["dtype"] == "None"
    assert ConvParam.parse({k: v for k, v in full.items()}) == p
    assert format_value(()) == "()" and format_value(False) == "False"


@pytest.mark.parametrize("kwargs, parts", [
    ({"kernel": "1", "num_filter": "0"}, ["'Conv'", "'num_filter'", "'0'", ">= 1"]),
    ({"kernel": "1", "act_type": "softrelu"}, ["'act_type'", "'softrelu'",
                                                "one of 'relu', 'sigmoid', 'tanh'"]),
    ({"kernel": "1", "no_bias": "maybe"}, ["'no_bias'", "'maybe'", "bool"]),
    ({"kernel": "(a,b)"}, ["'kernel'", "'(a,b)'", "tuple"]),
    ({"kernel": "1", "dtype": "float33"}, ["'dtype'", "float33", "float32"]),
    ({}, ["'kernel'", "missing"]),
])
def test_bad_values_name_op_field_value_and_what_is_allowed(kwargs, parts):
    with pytest.raises(ParamError) as info:
        ConvParam.parse(kwargs, op="Conv")
    assert isinstance(info.value, MXNetError) and isinstance(info.value, ValueError)
    for part in parts:
        assert part in str(info.value)


class Pool(str, enum.Enum):
    MAX = "max"
    AVG = "avg"


class PoolParam(Param):
    pool_type: Pool = Pool.MAX


def test_enum_fields_accept_their_strings_and_list_choices():
    assert PoolParam.parse({"pool_type": "avg"}).pool_type is Pool.AVG
    with pytest.raises(ParamError, match="'Pooling'.*'sum'.*'pool_type'.*one of 'max', 'avg'"):
        PoolParam.parse({"pool_type": "sum"}, op="Pooling")


def test_unknown_field_suggests_the_right_name():
    with pytest.raises(ParamError, match=r"'Conv'.*'kernal'.*did you mean 'kernel'"):
        ConvParam.parse({"kernal": "(3,3)"}, op="Conv")
