"""``mxnext new plugin NAME --kind op|device|kvstore``: each kind is scaffolded into a
temporary directory, installed there with pip (a real build, into a folder of its own put
on ``PYTHONPATH``) and its generated tests, the kind's conformance kit, pass as generated."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mxnext_cli.main import main

_PLUGIN_VARS = ("MXNEXT_PLUGINS", "MXNEXT_DISABLE_PLUGINS", "MXNEXT_DISABLE_PLUGIN_AUTOLOAD")


def _mxnext_imports(src) -> list[str]:
    """The modules of mxnext (not opsdk) the generated package imports."""
    found = []
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.append(node.module)
    return [m for m in found if m == "mxnext" or m.startswith("mxnext.")]


@pytest.mark.parametrize("kind", ["op", "device", "kvstore"])
def test_scaffolded_kind_installs_and_passes_its_generated_tests(kind, tmp_path):
    name = f"scaf-{kind}"
    root = tmp_path / name
    r = CliRunner().invoke(main, ["new", "plugin", name, "--kind", kind, "--dir", str(root)])
    assert r.exit_code == 0, r.output
    assert f"Creating {kind} plugin {name!r}" in r.output
    src = root / "src" / f"mxnext_scaf_{kind}"
    assert _mxnext_imports(src) == []

    site = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--no-build-isolation", "--target", str(site), str(root)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert (site / f"mxnext_scaf_{kind}" / "plugin.py").is_file()

    env = {k: v for k, v in os.environ.items() if k not in _PLUGIN_VARS}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")])),
               MXNEXT_CACHE_DIR=str(tmp_path / "cache"))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            str(root / "tests")], cwd=root, capture_output=True, text=True,
                           env=env, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert re.search(r"\d+ passed", tests.stdout) and not re.search(r"\d+ skipped", tests.stdout)


def test_op_options_are_refused_for_other_kinds(tmp_path):
    r = CliRunner().invoke(main, ["new", "plugin", "scaf-dev", "--kind", "device", "--op",
                                  "scaf_op", "--dir", str(tmp_path / "p")])
    assert r.exit_code == 2
    assert "--op applies to --kind op only, got --kind device" in r.output
    assert not (tmp_path / "p").exists()
