"""``check_gluon_hybridize_consistency``: a HybridBlock gives the same outputs and input
gradients imperatively and hybridized."""

from __future__ import annotations

from ..util import use_np
from ._compare import assert_almost_equal

__all__ = ["check_gluon_hybridize_consistency"]


def _numpy_param_init(values: dict):
    """An initializer that fills every parameter it is asked for from ``values`` (by name)."""
    from ..initializer import Initializer

    class _NumpyParamDictInit(Initializer):
        def _init_weight(self, name, arr):
            arr[()] = values[name]

    return _NumpyParamDictInit()


def _run(net, data_l, use_autograd):
    """(output, input gradients or None) of one call of ``net`` on copies of ``data_l``;
    with autograd the output is its own head gradient."""
    from .. import autograd
    inputs = [x.copy() for x in data_l]
    if not use_autograd:
        return net(*inputs), None
    for x in inputs:
        x.attach_grad()
    with autograd.record():
        out = net(*inputs)
    out.backward(out)
    return out, [x.grad.asnumpy() for x in inputs]


@use_np
def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Build ``net_builder(prefix='net_')`` afresh for each of: imperative, imperative under
    autograd (with ``test_grad``), hybridized, hybridized under autograd; the first build's
    initial parameters are reused by the others. Every output (and input gradient) must
    match the first one's, and the output ``numpy_func(*inputs as numpy)`` when given.
    The network must not draw random numbers. As in MXNet it runs under ``use_np`` (NumPy
    shape semantics)."""
    first_out, first_grads, init = None, None, None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize(init)
            if hybridize:
                net.hybridize()
            out, grads = _run(net, data_l, use_autograd)
            if init is None:
                init = _numpy_param_init({k: v.data().asnumpy()
                                          for k, v in net.collect_params().items()})
            out = out.asnumpy()
            if first_out is None:
                first_out = out
            else:
                assert_almost_equal(out, first_out, rtol=rtol, atol=atol)
            if grads is None:
                continue
            if first_grads is None:
                first_grads = grads
            else:
                for got, want in zip(grads, first_grads):
                    assert_almost_equal(got, want, rtol=rtol, atol=atol)
    if numpy_func is not None:
        want = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(first_out, want, rtol=rtol, atol=atol)
