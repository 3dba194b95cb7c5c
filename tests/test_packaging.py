"""Packaging: the build backend finds the packages under src/ (no hand-kept list)."""

import pathlib
import tomllib

import mxnext
import mxnext_cli
import opsdk

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_build_backend_finds_the_packages_under_src():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "package-dir" not in cfg
    assert cfg["packages"] == {"find": {"where": ["src"]}}
    for pkg in (mxnext, opsdk, mxnext_cli):
        assert pathlib.Path(pkg.__file__).parent == ROOT / "src" / pkg.__name__
