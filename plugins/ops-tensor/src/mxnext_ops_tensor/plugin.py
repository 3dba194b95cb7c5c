"""Entry point of the ``ops-tensor`` plugin: importing each op module registers its ops."""

import importlib

from opsdk import hookimpl

# One module per op family; importing it registers its ops with the process registry.
_MODULES = ("unary", "binary", "scalar", "reduce", "ordering",
            "shape", "slicing", "join", "expand", "broadcasting", "indexing", "linalg",
            "init", "random", "random_pdf", "scan", "histogram", "la", "la_diag", "la_factor",
            "amp", "moments", "space_depth", "index_contrib", "contrib_math", "image")


@hookimpl
def mxnext_register_ops(registry):
    for name in _MODULES:
        importlib.import_module(f"{__package__}.{name}")
