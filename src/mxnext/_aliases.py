"""The runtime's public names: ``mx.engine``, ``mx.context``, ``mx.base`` ... are the
modules of ``mxnext._runtime`` themselves, under their MXNet-era paths.

``import mxnext.engine.threaded`` finds ``mxnext._runtime.engine.threaded`` (one module
object under both names, so patching either patches the one the runtime uses).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

PUBLIC = ("base", "context", "engine", "storage", "resource", "device", "registry",
          "params", "opctx", "graph", "plugins", "hookspecs")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        if len(parts) > 1 and parts[0] == "mxnext" and parts[1] in PUBLIC:
            real = importlib.import_module("mxnext._runtime." + ".".join(parts[1:]))
            return importlib.util.spec_from_loader(fullname, self, origin=real.__spec__.origin,
                                                   is_package=hasattr(real, "__path__"))
        return None

    def create_module(self, spec):
        real = sys.modules["mxnext._runtime." + spec.name.split(".", 1)[1]]
        spec.loader_state = real.__spec__
        return real

    def exec_module(self, module):
        # the import system stamped the alias's spec on the module: give it back its own
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
