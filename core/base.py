"""Exception family and small shared helpers (MXNet's ``mxnet.base``)."""

from __future__ import annotations

import difflib

__all__ = ["MXNetError", "EngineError", "ParamError", "OpNotFound", "PluginError",
           "ShapeError", "TypeInferError", "did_you_mean"]


class MXNetError(RuntimeError):
    """Root of every error mxnext raises on purpose."""


class EngineError(MXNetError):
    """An engine misuse (e.g. a blocking wait from inside a worker) or a failed pushed function."""


class ParamError(MXNetError, ValueError):
    """A bad operator parameter: names the op, the field, the value and what is allowed."""


class OpNotFound(MXNetError, KeyError):
    """An operator name that no plugin registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class PluginError(MXNetError):
    """A plugin failed to load or register, or two plugins conflict."""


class ShapeError(MXNetError, ValueError):
    """Shape inference failed or shapes disagree."""


class TypeInferError(MXNetError, TypeError):
    """Type inference failed or dtypes disagree."""


def did_you_mean(name: str, choices, n: int = 3) -> str:
    """`` (did you mean 'a', 'b'?)`` or an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
