"""mxnext's two import hooks, and the only ones: the opt-in ``mxnet`` alias
(``mxnext.mxnet_alias``) and the finder that makes ``import mxnext.<name>`` of an MXNet
1.x module mxnext lacks say so (``mxnext._missing``). Every ``mxnext.*`` module itself is
a file.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

from ._missing import NotProvidedImport, _why


class TopLevel(types.ModuleType):
    """``mxnet``: mxnext's public names, with MXNet's version."""

    def __getattr__(self, name):
        return getattr(sys.modules["mxnext"], name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(sys.modules["mxnext"])))


class _MxnetAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``mxnet.X`` *is* ``mxnext.X``; the top-level ``mxnet`` is a ``TopLevel``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "mxnet":
            return importlib.util.spec_from_loader("mxnet", self, is_package=True)
        if not fullname.startswith("mxnet."):
            return None
        real = importlib.import_module("mxnext" + fullname[len("mxnet"):])
        return importlib.util.spec_from_loader(fullname, self, origin=real.__spec__.origin,
                                               is_package=hasattr(real, "__path__"))

    def create_module(self, spec):
        mxnext = importlib.import_module("mxnext")
        if spec.name == "mxnet":
            top = TopLevel("mxnet", mxnext.__doc__)
            vars(top).update({k: v for k, v in vars(mxnext).items() if not k.startswith("_")})
            top.__version__ = mxnext.__mxnet_version__
            top.__mxnext_version__ = mxnext.__version__
            top.__file__ = mxnext.__file__
            return top
        real = sys.modules["mxnext" + spec.name[len("mxnet"):]]
        spec.loader_state = real.__spec__
        return real

    def exec_module(self, module):
        if module.__spec__.loader_state is not None:
            # the import system stamped the alias's spec on mxnext's module: give it back
            module.__spec__ = module.__spec__.loader_state


class _Missing(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: serves nothing, raises ``NotProvidedImport`` for an MXNet
    1.x module name that mxnext lacks."""

    def find_spec(self, fullname, path=None, target=None):
        module, _, name = fullname.rpartition(".")
        why = _why(module, name)
        if why is not None:
            raise NotProvidedImport(f"No module named {fullname!r}: {why}")
        return None


def install_mxnet_alias() -> None:
    if not any(isinstance(f, _MxnetAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, _MxnetAlias())


def install_missing() -> None:
    if not any(isinstance(f, _Missing) for f in sys.meta_path):
        sys.meta_path.append(_Missing())
