"""Entry point of the ``ops-nn`` plugin: importing each op module registers its ops."""

import importlib

from opsdk import hookimpl

# One module per op family; importing it registers its ops with the process registry.
_MODULES = ("softmax", "softmax_output", "regression_output", "make_loss", "smooth_l1",
            "sequence", "optimizer", "ctc", "rnn", "convolution", "deconvolution",
            "fully_connected", "pooling", "activation", "leaky_relu", "dropout", "batch_norm",
            "layer_norms", "l2_normalization", "lrn", "embedding", "upsampling", "transformer",
            "spatial_transformer", "roi", "svm_output", "correlation", "resize", "im2col",
            "detection", "box_nms", "multibox")


@hookimpl
def mxnext_register_ops(registry):
    for name in _MODULES:
        importlib.import_module(f"{__package__}.{name}")
