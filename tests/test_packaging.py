"""Packaging: the build backend finds the packages under src/ (no hand-kept list), and the
distributions install the documented way into a fresh environment: ``mxnext`` gives the
whole API; without ``mxnext-ops-nn`` the core still works and its ops name the package."""

import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib

import mxnext
import mxnext_cli
import opsdk

ROOT = pathlib.Path(__file__).resolve().parents[1]
OWN = ("mxnext", "opsdk", "__editable__")   # this checkout's installs, left out of the fresh env


def test_the_build_backend_finds_the_packages_under_src():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "package-dir" not in cfg
    assert cfg["packages"] == {"find": {"where": ["src"]}}
    for pkg in (mxnext, opsdk, mxnext_cli):
        assert pathlib.Path(pkg.__file__).parent == ROOT / "src" / pkg.__name__


def test_the_distributions_depend_on_the_core_without_a_cycle():
    def deps(project):
        cfg = tomllib.loads((ROOT / project / "pyproject.toml").read_text())["project"]
        return cfg["name"], {d.split("=")[0].split(">")[0] for d in cfg["dependencies"]}
    graph = dict(deps(p) for p in (".", "packaging/mxnext", *(
        str(d.relative_to(ROOT)) for d in (ROOT / "plugins").iterdir())))
    assert graph["mxnext"] >= {"mxnext-core", "mxnext-ops-tensor", "mxnext-ops-nn"}
    assert not any(n.startswith("mxnext") for n in graph["mxnext-core"])
    for name, needs in graph.items():
        if name not in ("mxnext", "mxnext-core"):
            assert "mxnext-core" in needs and "mxnext" not in needs, name


def _fresh_env(tmp_path):
    """A venv whose third-party packages are this one's (no index needed), without mxnext."""
    deps = tmp_path / "deps"
    deps.mkdir()
    for entry in pathlib.Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(OWN) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", env], check=True, timeout=120)
    python = env / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True)
    (pathlib.Path(purelib.stdout.strip()) / "deps.pth").write_text(f"{deps}\n")
    return python


def _clone(tmp_path):
    """The projects' sources, as a clone has them (copied: builds write into the tree)."""
    clone = tmp_path / "clone"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests")
    for part in ("src", "packaging", "plugins/ops-tensor", "plugins/ops-nn", "plugins/ops-onednn"):
        shutil.copytree(ROOT / part, clone / part, ignore=skip)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, clone / part)
    return clone


def _pip(python, *args):
    return subprocess.run([sys.executable, "-m", "pip", "--python", python, *args,
                           "--disable-pip-version-check", "-q"],
                          capture_output=True, text=True, timeout=300)


CHECK = textwrap.dedent("""
    import mxnext as mx
    assert "clone" not in mx.__file__ and "env" in mx.__file__, mx.__file__
    print((mx.nd.ones((2,)) + 1).asnumpy().tolist())
    try:
        print(mx.sym.Convolution.__name__)
    except Exception as err:
        print(type(err).__name__, err)
""")


def test_install_the_documented_way_then_uninstall_ops_nn(tmp_path):
    python, clone = _fresh_env(tmp_path), _clone(tmp_path)
    # README "Install": from a clone, the core, the standard op plugins and `mxnext`
    done = _pip(python, "install", "--no-index", "--no-build-isolation", "--no-cache-dir",
                clone, clone / "plugins/ops-tensor", clone / "plugins/ops-nn",
                clone / "plugins/ops-onednn", clone / "packaging/mxnext")
    assert done.returncode == 0, done.stderr
    run = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[2.0, 2.0]", "Convolution"]

    done = _pip(python, "uninstall", "-y", "mxnext-ops-nn")
    assert done.returncode == 0, done.stderr
    run = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    core, conv = run.stdout.splitlines()
    assert core == "[2.0, 2.0]"
    assert "Convolution" in conv and "mxnext-ops-nn" in conv, conv
    assert "mxnext install mxnext-ops-nn" in conv, conv


def test_the_package_is_marked_typed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in cfg["package-data"]["mxnext"]
    assert (ROOT / "src" / "mxnext" / "py.typed").is_file()
