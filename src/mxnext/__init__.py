"""mxnext: MXNet's architecture as a Python plugin ecosystem (``import mxnext as mx``).

Importing it loads no plugin: the op registry and the device table load them at their
first lookup (``mxnext._runtime.firstuse``).
"""

import os as _os

from . import _builtins, _hooks, _missing
from ._runtime import __version__
# the MXNet release whose Python API mxnext follows; what the ``mxnet`` import alias
# (mxnext.mxnet_alias) reports as its __version__
__mxnet_version__ = "1.9.1"
from . import base, context, engine, device, storage, resource
from . import graph, ops, params, opctx, hookspecs, plugins, registry
from . import random
from . import random as rnd
from . import autograd, model, ndarray, operator, runtime, util
from . import ndarray as nd
from . import executor, symbol, name, attribute, visualization, contrib
from . import symbol as sym, visualization as viz
from .attribute import AttrScope
from ._runtime.base import MXNetError
from ._runtime.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .util import is_np_shape, np_shape, set_np_shape, use_np, use_np_shape
from .util import is_np_array, np_array, use_np_array

_hooks.install_missing()
plugins.add_builtin(_builtins)
nd.CachedOp = executor.cached_op.CachedOp      # MXNet's mx.nd.CachedOp; the executor sits above mx.nd
if _os.environ.get("MXNET_PROFILER_AUTOSTART", "0") not in ("", "0"):
    from . import profiler      # MXNet starts its profiler with the library
    profiler._autostart()


def __getattr__(name):
    # mx.test_utils loads on first use: it imports numpy.testing (30 ms), which MXNet's
    # star import exports and few programs need; mx.rnn, which few programs use, too;
    # mx.initializer (alias mx.init) when a program first builds or initializes parameters
    # mx.kvstore (alias mx.kv) when a program first shares values between devices
    # mx.optimizer (alias mx.opt) and mx.lr_scheduler when a program first trains
    # mx.io and mx.recordio when a program first reads data; mx.module (alias mx.mod)
    # and mx.callback when a program first trains with Module.fit; mx.gluon when first used;
    # mx.onnx when a program first exports; mx.monitor (alias mx.mon) when first used
    if name in ("test_utils", "rnn", "gluon", "initializer", "init", "kvstore", "kv", "metric",
                "optimizer", "opt", "lr_scheduler", "io", "recordio", "profiler",
                "module", "mod", "callback", "image", "img", "onnx", "monitor", "mon"):
        import importlib
        alias = {"init": "initializer", "kv": "kvstore", "opt": "optimizer", "mod": "module",
                 "img": "image", "mon": "monitor"}
        return importlib.import_module(f".{alias.get(name, name)}", __name__)
    _missing.check(__name__, name)
    raise AttributeError(f"module 'mxnext' has no attribute {name!r}")
