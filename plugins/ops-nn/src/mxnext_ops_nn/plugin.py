"""Entry point of the ``ops-nn`` plugin: each op module registers its ops when it is
imported, at the first use of one of them."""

from opsdk import hookimpl, register_op_modules

# One module per op family; importing it registers its ops with the process registry.
_MODULES = ("softmax", "softmax_output", "regression_output", "make_loss", "smooth_l1",
            "sequence", "optimizer", "sparse_updates", "adamw", "multi_sum_sq", "ctc", "rnn", "convolution",
            "deconvolution", "fully_connected", "pooling", "activation", "leaky_relu", "dropout", "batch_norm",
            "batch_norm_relu",
            "layer_norms", "l2_normalization", "lrn", "embedding", "upsampling", "transformer",
            "spatial_transformer", "roi", "svm_output", "correlation", "resize", "im2col",
            "detection", "box_nms", "multibox", "deformable_convolution", "proposal",
            "psroi_pooling")


@hookimpl
def mxnext_register_ops(registry):
    register_op_modules(f"{__package__}.{name}" for name in _MODULES)
