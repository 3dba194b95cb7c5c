"""gluon-tests: ``import mxnet`` gives mxnext in the test processes.

Active only when the runner sets GLUONTESTS_MODULE=mxnext; with ``mxnet`` the real
MXNet is imported. mxnext itself is imported on the first ``import mxnet``, not at
interpreter start, and the mapping is mxnext's own alias (``mxnext.mxnet_alias``:
``mxnet.X`` is the module object ``mxnext.X``). Living on PYTHONPATH, this reaches
worker processes too (DataLoader, multiprocessing 'spawn').
"""
import os
import sys


class _InstallOnFirstImport:
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mxnet":
            return None
        sys.meta_path.remove(self)
        from mxnext import mxnet_alias
        mxnet_alias.install()
        return sys.meta_path[0].find_spec(fullname, path, target)


if os.environ.get("GLUONTESTS_MODULE") == "mxnext":
    sys.meta_path.insert(0, _InstallOnFirstImport())
