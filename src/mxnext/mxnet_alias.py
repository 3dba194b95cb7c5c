"""The opt-in import alias ``mxnet`` -> ``mxnext``, so code written for MXNet runs
unmodified: ``python -m mxnext run script.py [args]`` installs it before running the
script, or a program calls ``mxnext.mxnet_alias.install()`` before ``import mxnet``.

``mxnet.X`` *is* ``mxnext.X`` (one module object under both names). The top-level
``mxnet`` is a thin module of its own whose ``__version__`` is the MXNet release whose API
mxnext follows (``mxnext.__mxnet_version__``), because that is what MXNet code compares
``mx.__version__`` with; every other name is mxnext's.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

__all__ = ["install"]


class _TopLevel(types.ModuleType):
    """``mxnet``: mxnext's public names, with MXNet's version."""

    def __getattr__(self, name):
        return getattr(sys.modules["mxnext"], name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(sys.modules["mxnext"])))


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "mxnet":
            return importlib.util.spec_from_loader("mxnet", self, is_package=True)
        if not fullname.startswith("mxnet."):
            return None
        real = importlib.import_module("mxnext" + fullname[len("mxnet"):])
        return importlib.util.spec_from_loader(fullname, self, origin=real.__spec__.origin,
                                               is_package=hasattr(real, "__path__"))

    def create_module(self, spec):
        import mxnext
        if spec.name == "mxnet":
            top = _TopLevel("mxnet", mxnext.__doc__)
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


def install() -> None:
    """Make ``import mxnet`` give mxnext; an error if MXNet itself is already imported."""
    loaded = sys.modules.get("mxnet")
    if loaded is not None and not isinstance(loaded, _TopLevel):
        from ._runtime.base import MXNetError
        raise MXNetError(f"mxnet_alias.install: the real MXNet is already imported (from "
                         f"{getattr(loaded, '__file__', '?')}); install the alias before "
                         f"anything imports mxnet")
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
