"""MXNet's ``mx.contrib``: ``mx.contrib.ndarray`` (``nd``) and ``mx.contrib.symbol`` (``sym``)
are ``mx.nd.contrib`` and ``mx.sym.contrib``: the ``_contrib_*`` ops under short names;
``mx.contrib.amp`` is automatic mixed precision (float16, bfloat16); ``mx.contrib.onnx``
imports ONNX models; ``mx.contrib.autograd`` is MXNet's early autograd API and
``mx.contrib.text`` its vocabularies and token embeddings (``svrg_optimization``, imported
by name as in MXNet, trains Modules by SVRG); ``mx.contrib.quantization`` (``quant``) quantizes
models to INT8 (docs/quantization.md). See docs/contrib.md."""

from . import amp, autograd, ndarray, onnx, quantization, symbol, text
from . import ndarray as nd, quantization as quant, symbol as sym  # noqa: F401  (MXNet's names)
from .. import _missing


def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
