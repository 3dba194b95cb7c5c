"""mxnext: MXNet's architecture as a Python plugin ecosystem (``import mxnext as mx``).

Importing it loads no plugin: the op registry and the device table load them at their
first lookup (``mxnext._firstuse``).
"""

__version__ = "0.1.0"

from . import base, context, engine, device, storage, resource, random
from . import graph, registry, params, opctx, hookspecs, plugins
from . import autograd, model, ndarray, operator, runtime, util
from . import ndarray as nd
from . import symbol, name, attribute, visualization, contrib
from . import symbol as sym, visualization as viz
from .attribute import AttrScope
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .util import is_np_shape, np_shape, set_np_shape, use_np, use_np_shape


def __getattr__(name):
    # mx.test_utils loads on first use: it imports numpy.testing (30 ms), which MXNet's
    # star import exports and few programs need; mx.rnn, which few programs use, too;
    # mx.initializer (alias mx.init) when a program first builds or initializes parameters
    # mx.kvstore (alias mx.kv) when a program first shares values between devices
    # mx.optimizer (alias mx.opt) and mx.lr_scheduler when a program first trains
    # mx.io and mx.recordio when a program first reads data; mx.module (alias mx.mod)
    if name in ("test_utils", "rnn", "initializer", "init", "kvstore", "kv", "metric",
                "optimizer", "opt", "lr_scheduler", "io", "recordio", "profiler",
                "module", "mod"):
        import importlib
        alias = {"init": "initializer", "kv": "kvstore", "opt": "optimizer", "mod": "module"}
        return importlib.import_module(f".{alias.get(name, name)}", __name__)
    raise AttributeError(f"module 'mxnext' has no attribute {name!r}")
