"""Entry point of the ``ops-onednn`` plugin: its kernel modules attach to ops-nn's ops at the
first use of one of them; libdnnl itself loads at the first kernel call.

Where no library file is found (``onednn-cpu-gomp`` missing, or ``MXNEXT_ONEDNN_LIBRARY``
naming no file) the plugin fails to load with the reason, so ``mxnext plugins`` reports it as
not usable and ops-nn's kernels run."""

from opsdk import PluginError, hookimpl, register_op_modules

from . import _dnnl

_MODULES = ("convolution", "pooling", "fully_connected", "activation", "batch_norm", "lrn",
            "deconvolution", "optimizer")
COVERED = ["Convolution", "_backward_Convolution", "Pooling", "_backward_Pooling",
           "FullyConnected", "_backward_FullyConnected", "Activation", "_backward_Activation",
           "BatchNorm", "_backward_BatchNorm", "LRN", "_backward_LRN", "Deconvolution",
           "_backward_Deconvolution", "sgd_update", "multi_sgd_update"]
"""The ops whose ``FCompute<cpu>`` this plugin outranks."""


@hookimpl
def mxnext_register_ops(registry):
    if _dnnl.locate() is None:
        raise PluginError(f"ops-onednn is not usable: {_dnnl.missing_reason()}; ops-nn's "
                          f"kernels run instead")
    register_op_modules(f"{__package__}.{name}" for name in _MODULES)
