"""mxnext: MXNet's architecture as a Python plugin ecosystem (``import mxnext as mx``)."""

__version__ = "0.1.0"

import gc as _gc
import os as _os

from . import base, context, engine, device, storage, resource, random
from . import graph, registry, params, opctx, hookspecs, plugins
from . import autograd, ndarray, operator, util, test_utils
from . import ndarray as nd
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus

plugins.load()  # last: plugins import opsdk, which needs the modules above
if _os.environ.get("MXNEXT_GC_FREEZE", "1") != "0":
    # What imports made (modules, the op registry, plugin tables) lives as long as the process:
    # keep it out of the cyclic collector's full passes (20 ms each over ~45k objects otherwise).
    _gc.freeze()
