"""gluon-tests: ``import mxnet`` gives mxnext in the test processes.

Active only when the runner sets GLUONTESTS_MODULE=mxnext; with ``mxnet`` the real
MXNet is imported. mxnext itself is imported on the first ``import mxnet``, not at
interpreter start, and the mapping is mxnext's own alias (``mxnext.mxnet_alias``:
``mxnet.X`` is the module object ``mxnext.X``). Living on PYTHONPATH, this reaches
worker processes too (DataLoader, multiprocessing 'spawn').

Stubs: a whole ``mxnet.X`` module that mxnext does not provide (``import mxnet.numpy``,
``from mxnet import image``) becomes a stub whose every attribute raises
NotImplementedError when called, so that only the tests using it fail, not the import of
the whole file. Only ``mxnet.*`` names are stubbed, which only the tests import (mxnext's
own code imports ``mxnext.*``); a name imported *from* a module mxnext has is never
stubbed. Each stub is logged to $GLUONTESTS_STUB_LOG; GLUONTESTS_NO_STUBS=1 turns them off.
"""
import importlib.util
import os
import sys
import types


class _Missing:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(self._name + "." + attr)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("gluon-tests stub: mxnext does not provide " + self._name)


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(self.__name__ + "." + attr)


class _StubLoader:
    def create_module(self, spec):
        log = os.environ.get("GLUONTESTS_STUB_LOG")
        if log:
            with open(log, "a") as f:
                f.write(spec.name + "\n")
        return _StubModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


class _StubWhatIsMissing:
    """Before the alias: asks it, and stubs an ``mxnet.X`` it cannot give."""

    def __init__(self, alias):
        self.alias = alias

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("mxnet."):
            return None
        try:
            return self.alias.find_spec(fullname, path, target)
        except ImportError:
            return importlib.util.spec_from_loader(fullname, _StubLoader(), is_package=True)


class _InstallOnFirstImport:
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mxnet":
            return None
        sys.meta_path.remove(self)
        from mxnext import mxnet_alias
        mxnet_alias.install()
        alias = sys.meta_path[0]
        if os.environ.get("GLUONTESTS_NO_STUBS") != "1":
            sys.meta_path.insert(0, _StubWhatIsMissing(alias))
        return alias.find_spec(fullname, path, target)


if os.environ.get("GLUONTESTS_MODULE") == "mxnext":
    sys.meta_path.insert(0, _InstallOnFirstImport())
