"""What a newcomer meets first, run as real subprocesses: ``mxnext run``, ``python -m mxnext
--help``, ``mxnext info`` on an unusable device, ``mxnext plugins`` on a fresh install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MXNEXT = str(Path(sys.executable).with_name("mxnext"))

BROKEN_DEVICE = '''
from opsdk import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from mxnext.base import MXNetError
    from mxnext.device.cpu import CpuDevice

    class SurfaceDevice(CpuDevice):
        type = "surface_dev"

        def count(self):
            raise MXNetError("no surface board attached")

    registry.register(SurfaceDevice())
'''


def run(*cmd, cwd=None, env=None):
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=240, cwd=cwd,
                          env=env)


def test_mxnext_run_is_a_command_of_the_console_script(tmp_path):
    (tmp_path / "job.py").write_text("import mxnet, sys\nprint(mxnet.__version__, sys.argv[1:])\n")
    r = run(MXNEXT, "run", "job.py", "--help", "-n", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1.9.1 ['--help', '-n', '2']\n"
    (tmp_path / "fails.py").write_text("raise SystemExit(3)\n")
    assert run(MXNEXT, "run", "fails.py", cwd=tmp_path).returncode == 3
    (tmp_path / "raises.py").write_text("raise ValueError('from the script')\n")
    r = run(MXNEXT, "run", "raises.py", cwd=tmp_path)
    assert r.returncode == 1 and "ValueError: from the script" in r.stderr
    assert 'raises.py", line 1' in r.stderr


def test_a_missing_script_is_named_not_a_traceback(tmp_path):
    for cmd in ([MXNEXT, "run"], [sys.executable, "-m", "mxnext", "run"]):
        r = run(*cmd, "nope.py", cwd=tmp_path)
        assert r.returncode == 2
        assert r.stderr == f"mxnext run: no such script 'nope.py' (from {tmp_path})\n"


def test_help_exits_zero_and_lists_run():
    for cmd in ([sys.executable, "-m", "mxnext", "--help"], [MXNEXT, "run", "--help"]):
        r = run(*cmd)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("usage: python -m mxnext run SCRIPT.py")
    r = run(MXNEXT, "--help")
    assert r.returncode == 0 and "  run " in r.stdout


def test_info_says_why_a_device_is_unavailable(tmp_path):
    (tmp_path / "surface_dev.py").write_text(BROKEN_DEVICE)
    meta = tmp_path / "surface_dev-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: surface_dev\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[mxnext]\nsurface-dev = surface_dev\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(tmp_path), os.environ.get("PYTHONPATH")]))}
    r = run(MXNEXT, "info", env=env)
    assert r.returncode == 0, r.stderr
    assert "surface_dev (unavailable: MXNetError: no surface board attached)" in r.stdout
    assert "(None)" not in r.stdout
    r = run(MXNEXT, "info", "--json", env=env)
    assert '"surface_dev": "MXNetError: no surface board attached"' in r.stdout


def test_a_fresh_install_reports_no_registry_gaps():
    r = run(MXNEXT, "plugins")
    assert r.returncode == 0, r.stderr
    assert "lack FInferShape" not in r.stdout + r.stderr
