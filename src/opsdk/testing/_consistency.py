"""Layers through the executor on a device against cpu, with ``mx.test_utils.check_consistency``
(MXNet's way of checking a GPU): outputs in predict mode, then outputs and every argument's
gradient after a training forward and backward.

In a device plugin's tests::

    from opsdk.testing import device_consistency_tests
    test_layers = device_consistency_tests("gpu")
"""

from __future__ import annotations

__all__ = ["LAYERS", "device_consistency_tests"]


_IMG = {"data": (2, 3, 10, 10)}

# name -> (symbol of ``mx.sym`` and the data variable, input shapes): the layers networks are
# made of, with those a device plugin is likely to give kernels of its own (convolution,
# pooling, normalization, softmax)
_CASES = {
    "Convolution": (lambda s, d: s.Convolution(d, num_filter=4, kernel=(3, 3), pad=(1, 1)),
                    _IMG),
    "Convolution_strided_grouped": (lambda s, d: s.Convolution(
        d, num_filter=6, kernel=(3, 3), stride=(2, 2), num_group=3), _IMG),
    "Deconvolution": (lambda s, d: s.Deconvolution(d, num_filter=2, kernel=(3, 3),
                                                   stride=(2, 2)), _IMG),
    "FullyConnected": (lambda s, d: s.FullyConnected(d, num_hidden=5), {"data": (4, 12)}),
    "BatchNorm": (lambda s, d: s.BatchNorm(d, fix_gamma=False), _IMG),
    "Pooling_max": (lambda s, d: s.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                           pool_type="max"), _IMG),
    "Pooling_avg": (lambda s, d: s.Pooling(d, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
                    _IMG),
    "Activation_relu": (lambda s, d: s.Activation(d, act_type="relu"), _IMG),
    "LeakyReLU_elu": (lambda s, d: s.LeakyReLU(d, act_type="elu"), _IMG),
    "softmax": (lambda s, d: s.softmax(d), {"data": (4, 7)}),
    "log_softmax": (lambda s, d: s.log_softmax(d, axis=1), {"data": (3, 5, 2)}),
    "LayerNorm": (lambda s, d: s.LayerNorm(d), {"data": (4, 6)}),
    "conv_bn_relu_pool": (lambda s, d: s.Pooling(s.Activation(s.BatchNorm(s.Convolution(
        d, num_filter=4, kernel=(3, 3)), fix_gamma=False), act_type="relu"),
        kernel=(2, 2), stride=(2, 2), pool_type="max"), _IMG),
}
LAYERS = tuple(_CASES)


def device_consistency_tests(device_type, device_id=0):
    """A pytest test running ``check_consistency`` over ``LAYERS`` between cpu and
    ``device_type(device_id)``; it skips with the device's reason where it cannot run."""
    import pytest

    from ._device import device_unusable

    @pytest.mark.parametrize("layer", LAYERS)
    def test_device_consistency(layer):
        reason = device_unusable(device_type)
        if reason:
            pytest.skip(reason)
        import mxnext as mx
        from mxnext.test_utils import check_consistency
        build, shapes = _CASES[layer]
        sym = build(mx.sym, mx.sym.var("data"))
        ctx_list = [{"ctx": mx.cpu(0), **shapes},
                    {"ctx": mx.Context(device_type, device_id), **shapes}]
        check_consistency(sym, ctx_list, rtol=1e-3, atol=1e-4)
    return test_device_consistency
