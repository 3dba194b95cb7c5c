"""mxnext: MXNet's architecture as a Python plugin ecosystem (``import mxnext as mx``)."""

__version__ = "0.1.0"

from . import base, context, engine, device, storage, resource, random
from . import graph, registry, params, opctx, hookspecs, plugins
from . import autograd, ndarray, operator, util, test_utils
from . import ndarray as nd
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus

plugins.load()  # last: plugins import opsdk, which needs the modules above
