"""``simple_bind``'s ``shared_buffer`` and ``shared_arg_names`` as MXNet's bucketing uses
them: buffers reused as views when large enough, grown and added otherwise; named
arguments taken from ``shared_exec`` or refused when they do not fit."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

NET = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")


def test_shared_buffer_gets_every_argument_and_gradient_and_is_reused_as_views():
    buf = {}
    big = NET.simple_bind(mx.cpu(), data=(4, 5), shared_buffer=buf)
    assert sorted(buf) == ["data", "fc_bias", "fc_weight", "grad of data", "grad of fc_bias",
                           "grad of fc_weight"]
    assert buf["data"] is big.arg_dict["data"] and buf["grad of fc_weight"] is \
        big.grad_dict["fc_weight"]
    small = NET.simple_bind(mx.cpu(), data=(2, 5), shared_buffer=buf)
    assert small.arg_dict["data"].shape == (2, 5)
    small.arg_dict["data"][:] = 3                     # a view of the first 10 elements
    assert big.arg_dict["data"].asnumpy().ravel().tolist() == [3] * 10 + [0] * 10
    larger = NET.simple_bind(mx.cpu(), data=(8, 5), shared_buffer=buf)
    assert buf["data"] is larger.arg_dict["data"] and buf["data"].shape == (8, 5)


def test_shared_arg_names_take_the_shared_executors_arrays():
    first = NET.simple_bind(mx.cpu(), data=(4, 5))
    second = NET.simple_bind(mx.cpu(), data=(2, 5), shared_arg_names=["fc_weight", "fc_bias"],
                             shared_exec=first, shared_buffer={})
    for name in ("fc_weight", "fc_bias"):
        assert second.arg_dict[name] is first.arg_dict[name]
        assert second.grad_dict[name] is first.grad_dict[name]
    first.arg_dict["fc_weight"][:] = 1
    second.arg_dict["data"][:] = 2
    assert np.array_equal(second.forward()[0].asnumpy(), np.full((2, 3), 10.0))


def test_shared_arg_names_that_do_not_fit_are_refused():
    first = NET.simple_bind(mx.cpu(), data=(4, 5))
    with pytest.raises(MXNetError, match=r"^simple_bind: shared_arg_names names 'fc_weight', "
                                         r"whose argument in shared_exec is \(3, 5\) float32, "
                                         r"but this executor needs \(3, 6\) float32$"):
        NET.simple_bind(mx.cpu(), data=(2, 6), shared_arg_names=["fc_weight"], shared_exec=first)


def test_a_shared_buffer_of_another_dtype_or_kind_is_refused():
    with pytest.raises(MXNetError, match=r"shared_buffer\['data'\] is float64, but this "
                                         r"executor needs float32"):
        NET.simple_bind(mx.cpu(), data=(2, 5),
                        shared_buffer={"data": mx.nd.zeros((4, 5), dtype="float64")})
    with pytest.raises(MXNetError, match="shared_buffer must be a dict of name -> NDArray, "
                                         "got list"):
        NET.simple_bind(mx.cpu(), data=(2, 5), shared_buffer=[])
