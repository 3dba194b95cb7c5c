"""mx.nd.zeros / ones / full / empty / arange refuse a shape they cannot create with an
MXNetError naming the function and the shape, before numpy or the allocator sees it; an
allocation that fails names them too."""

import re

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, ParamError

CREATORS = {"zeros": lambda s: mx.nd.zeros(s), "ones": lambda s: mx.nd.ones(s),
            "full": lambda s: mx.nd.full(s, 2.5), "empty": lambda s: mx.nd.empty(s)}


@pytest.mark.parametrize("what", CREATORS)
@pytest.mark.parametrize("shape, dim", [((-1, 3), -1), ((2, -3), -3), (-4, -4)])
def test_a_negative_dimension_is_refused(what, shape, dim):
    dims = shape if isinstance(shape, tuple) else (shape,)
    with pytest.raises(ParamError, match=rf"^{what}: shape {re.escape(str(dims))} has "
                                         rf"dimension {dim}; a new array's dimensions must "
                                         rf"be known and >= 0$"):
        CREATORS[what](shape)


@pytest.mark.parametrize("what", CREATORS)
@pytest.mark.parametrize("shape", [(2.5, 3), "x", None, (2, "3")])
def test_a_shape_that_is_not_integers_is_refused(what, shape):
    with pytest.raises(ParamError, match=rf"^{what}: shape must be an int or a tuple of ints, "
                                         rf"got {re.escape(repr(shape))}$"):
        CREATORS[what](shape)


@pytest.mark.parametrize("what", CREATORS)
def test_a_shape_beyond_what_an_array_can_address_is_refused(what):
    with pytest.raises(ParamError, match=rf"^{what}: shape \(1000000000000, 1000000000000\) "
                                         rf"of float32 would take 4{'0' * 24} bytes, more "
                                         rf"than the \d+ one array can address$"):
        CREATORS[what]((10 ** 12, 10 ** 12))


def test_a_failed_allocation_names_the_function_the_shape_and_the_bytes():
    shape = (2 ** 60,)                    # 4 EiB of int32: addressable, never available
    with pytest.raises(MXNetError, match=rf"^empty: cannot allocate shape \({2 ** 60},\) of "
                                         rf"int32 \({2 ** 62} bytes\): storage\.alloc: out of "
                                         rf"memory: failed to allocate {2 ** 62} bytes"):
        mx.nd.empty(shape, dtype="int32")
    assert mx.nd.empty((2, 3), dtype="int32").shape == (2, 3)     # the pool is still fine


@pytest.mark.parametrize("args, message", [
    ((0, 10, 0), "arange: step must not be 0 (start 0, stop 10)"),
    ((0, float("inf")), "arange: start, stop and step must be finite, got start 0, stop inf, "
                        "step 1.0"),
    ((float("nan"),), "arange: start, stop and step must be finite, got start nan, stop None, "
                      "step 1.0"),
    ((0, 4e18), "arange: shape (4000000000000000000,) of float32 would take "
                "16000000000000000000 bytes"),
])
def test_arange_refuses_what_it_cannot_make(args, message):
    with pytest.raises(ParamError, match=f"^{re.escape(message)}"):
        mx.nd.arange(*args)


def test_valid_creations_are_unchanged():
    assert mx.nd.zeros(3).asnumpy().tolist() == [0, 0, 0]
    assert mx.nd.full((2, 1), 7, dtype="int32").asnumpy().tolist() == [[7], [7]]
    assert mx.nd.empty(np.int64(4)).shape == (4,)
    assert mx.nd.arange(0, 10, 4, repeat=2).asnumpy().tolist() == [0, 0, 4, 4, 8, 8]
    assert mx.nd.arange(3, 0, -1).asnumpy().tolist() == [3, 2, 1]
