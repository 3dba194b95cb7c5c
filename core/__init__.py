"""mxnext: MXNet's architecture as a Python plugin ecosystem (``import mxnext as mx``)."""

__version__ = "0.1.0"

from . import base, context, engine
from .base import MXNetError
from .context import Context, cpu, current_context, gpu, cpu_pinned, num_gpus
