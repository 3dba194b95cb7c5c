"""The opt-in ``mxnet`` import alias and ``python -m mxnext run``: unmodified MXNet code runs
on mxnext (in a child interpreter, so this process keeps no alias)."""

import subprocess
import sys
import textwrap
import types

import pytest

import mxnext as mx
from mxnext import mxnet_alias
from mxnext.base import MXNetError

SCRIPT = """
    import sys
    import mxnet as mx
    import mxnet.ndarray
    from mxnet import nd
    from mxnet.io import NDArrayIter
    import mxnext
    assert mx.nd is mxnet.ndarray is nd is mxnext.nd
    assert NDArrayIter is mxnext.io.NDArrayIter and mx.mod.Module is mxnext.mod.Module
    assert sys.modules["mxnet.io"] is mxnext.io
    import mxnet.gluon
    from mxnet.gluon import nn
    assert mxnet.gluon is mxnext.gluon and nn is mxnext.gluon.nn
    print(mx.__version__, mx.__mxnext_version__, sys.argv[1:], __name__)
    print((nd.ones(2) * 3).asnumpy().tolist())
    try:
        from mxnet import rtc
    except ImportError as e:
        print(type(e).__name__, e)
"""


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mxnext", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_run_gives_mxnet_code_mxnext_with_mxnets_version(tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    out = _run("run", str(tmp_path / "train.py"), "--epochs", "2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"{mx.__mxnet_version__} {mx.__version__} ['--epochs', '2'] __main__"
    assert mx.__mxnet_version__ == "1.9.1"
    assert lines[1] == "[3.0, 3.0]"
    assert lines[2].startswith("NotProvidedImport") and "mxnet.rtc is an MXNet 1.x name" \
        in lines[2]


def test_run_a_module_and_the_usage(tmp_path):
    (tmp_path / "job.py").write_text("import mxnet, sys\nprint(mxnet.__version__, sys.argv)\n")
    out = _run("run", "-m", "job", "x", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("1.9.1 [") and out.stdout.strip().endswith("'x']")
    bad = _run("train.py")
    assert bad.returncode == 2 and "usage: python -m mxnext run SCRIPT.py" in bad.stderr


def test_run_restores_numpy_1x_builtin_aliases_for_mxnet_era_code(tmp_path):
    (tmp_path / "old.py").write_text(
        "import numpy as np\n"
        "print(np.array([1.5], dtype=np.float).dtype, np.int is int, np.object is object)\n")
    out = _run("run", str(tmp_path / "old.py"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["float64", "True", "True"]
    plain = subprocess.run([sys.executable, "-c", "import numpy as np, mxnext; "
                            "print('float' in vars(np))"], capture_output=True, text=True)
    assert plain.stdout.split() == ["False"]     # a plain import mxnext leaves numpy alone


def test_run_restores_numpy_1x_fromstring_binary_mode(tmp_path):
    """MXNet's example MNIST readers decode idx bytes with ``np.fromstring(raw, dtype)``."""
    (tmp_path / "old.py").write_text(
        "import numpy as np, struct\n"
        "a = np.fromstring(struct.pack('>3B', 7, 8, 9), dtype=np.uint8)\n"
        "a[0] = 1\n"
        "print(a.tolist(), np.fromstring('1 2', dtype=int, sep=' ').tolist())\n")
    out = _run("run", str(tmp_path / "old.py"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 8, 9] [1, 2]"


def test_install_refuses_when_mxnet_itself_is_imported(monkeypatch):
    fake = types.ModuleType("mxnet")
    fake.__file__ = "/site-packages/mxnet/__init__.py"
    monkeypatch.setitem(sys.modules, "mxnet", fake)
    with pytest.raises(MXNetError, match="the real MXNet is already imported \\(from "
                                         "/site-packages/mxnet/__init__.py\\)"):
        mxnet_alias.install()
