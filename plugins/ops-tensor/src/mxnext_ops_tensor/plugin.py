"""Entry point of the ``ops-tensor`` plugin: each op module registers its ops when it is
imported, at the first use of one of them."""

from opsdk import hookimpl, register_op_modules

# One module per op family; importing it registers its ops with the process registry.
_MODULES = ("unary", "binary", "scalar", "reduce", "ordering",
            "shape", "slicing", "join", "expand", "broadcasting", "indexing", "linalg",
            "init", "random", "random_pdf", "scan", "histogram", "la", "la_diag", "la_factor",
            "amp", "moments", "space_depth", "index_contrib", "contrib_math", "quantization",
            "quantized_copy", "quantized_conv_fc", "quantized_pool_act", "quantized_elemwise",
            "quantized_concat", "quantized_batch_norm", "quantized_rnn", "sg_onednn_conv", "sg_onednn_fc",
            "calibrate", "image", "image_geometry", "ste", "krprod",
            "hawkes", "sparse", "sparse_ops",
            "sparse_index", "scatter", "dgl_sample", "dgl_graph")


@hookimpl
def mxnext_register_ops(registry):
    register_op_modules(f"{__package__}.{name}" for name in _MODULES)
