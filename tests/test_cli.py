"""The ``mxnext`` command: real console-script subprocesses, click's runner where enough.

Throwaway plugin distributions are made visible to subprocesses by a
``.dist-info`` directory (with ``entry_points.txt``) on PYTHONPATH. What pip
installs and uninstalls goes to a throwaway virtual environment layered over
this one (``venv``): the environment the tests run in never changes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace

import pytest
from click import style as click_style
from click.testing import CliRunner

from mxnext_cli.main import main

MXNEXT = str(Path(sys.executable).with_name("mxnext"))

GOOD_PLUGIN = '''
import os
from pathlib import Path

from opsdk import hookimpl

if os.environ.get("CLITEST_MARKER"):
    Path(os.environ["CLITEST_MARKER"]).write_text("imported")


@hookimpl
def mxnext_register_ops(registry):
    from typing import Literal

    from opsdk import (ElemwiseShape, ElemwiseType, Field, NodeEntry, Param, assign, make_node,
                       register_op)

    class ScaleParam(Param):
        factor: float = Field(2.0, ge=-10, le=10, description="Multiplier.")
        mode: Literal["exact", "fast"] = Field("exact", description="Rounding mode.")

    def scale(ctx, inputs, req, outputs, params):
        assign(outputs[0], req[0], params.factor * inputs[0])

    def elemwise(name):
        return (register_op(name)
                .set_attr_parser(ScaleParam)
                .set_num_inputs(1).set_num_outputs(1)
                .set_attr("FInferShape", ElemwiseShape(1, 1))
                .set_attr("FInferType", ElemwiseType(1, 1))
                .set_attr("FInplaceOption", lambda p: [(0, 0)])
                .set_attr("FCompute<cpu>", scale))

    (elemwise("clitest_scale").add_alias("clitest_mul")
        .describe("Multiplies by a factor.")
        .set_attr("FGradient", lambda node, ograds: [
            NodeEntry(make_node("_backward_clitest_scale", [ograds[0]], node.params), 0)])
        .add_argument("data", "NDArray-or-Symbol", "Input array."))
    elemwise("_backward_clitest_scale").describe("Backward of clitest_scale.")

    class SumParam(Param):
        num_args: int = Field(ge=1, description="Number of inputs.")

    def add(ctx, inputs, req, outputs, params):
        assign(outputs[0], req[0], sum(inputs[1:], inputs[0]))

    (register_op("clitest_sum")
        .describe("Adds its inputs.")
        .set_attr_parser(SumParam)
        .set_num_inputs(lambda p: p.num_args).set_num_outputs(1)
        .set_attr("key_var_num_args", "num_args")
        .set_attr("FInferShape", ElemwiseShape(-1, 1))
        .set_attr("FInferType", ElemwiseType(-1, 1))
        .set_attr("FCompute<cpu>", add)
        .add_argument("args", "NDArray-or-Symbol[]", "Arrays to add."))
'''

CLASH_PLUGIN = '''
from opsdk import hookimpl


@hookimpl
def mxnext_register_ops(registry):
    from opsdk import extend_op
    extend_op("clitest_scale").set_attr("FCompute<cpu>", lambda *a: None)
'''

DUP_PLUGIN = '''
from opsdk import hookimpl, register_op


@hookimpl
def mxnext_register_ops(registry):
    register_op("relu")   # ops-tensor defined it first: refused
'''

BROKEN_PLUGIN = 'raise RuntimeError("clitest broken on purpose")\n'

DEVICE_PLUGIN = '''
from opsdk import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from opsdk.device import HostDevice

    class ClitestDevice(HostDevice):
        type = "clitest_dev"

    registry.register(ClitestDevice())
'''


def make_plugin(site: Path, name: str, source: str) -> None:
    """A plugin distribution ``clitest-<name>`` with entry point ``name`` visible from ``site``."""
    module = "clitest_" + name.replace("-", "_")
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[mxnext]\n{name} = {module}\n")


def write_package(root: Path, dist: str, plugin: str, source: str, version="0.1") -> Path:
    """A buildable distribution ``dist`` whose one module (``source``) is plugin ``plugin``."""
    module = dist.replace("-", "_")
    (root / "src" / module).mkdir(parents=True)
    (root / "src" / module / "__init__.py").write_text(source)
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "{version}"

        [project.entry-points.mxnext]
        {plugin} = "{module}"

        [tool.setuptools.packages.find]
        where = ["src"]
        """))
    return root


def run(*args, env=None, cwd=None, timeout=240, exe=MXNEXT):
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


_PLUGIN_VARS = ("MXNEXT_PLUGINS", "MXNEXT_DISABLE_PLUGINS", "MXNEXT_DISABLE_PLUGIN_AUTOLOAD")


def env_with(site: Path | None, **extra) -> dict:
    """This environment without plugin selection, ``site`` on PYTHONPATH, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _PLUGIN_VARS}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def venv(tmp_path_factory):
    """A throwaway virtual environment layered over this one: it sees every package
    installed here, while pip installs into it, and uninstalls from it, alone (pip never
    removes what lies outside the environment it runs in)."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=240)
    own_site = sysconfig.get_path("purelib", vars={"base": str(root), "platbase": str(root)})
    Path(own_site, "_layered.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    python = root / "bin" / "python"
    mxnext = root / "bin" / "mxnext"  # the console script as pip writes it, on that interpreter
    (entry,) = entry_points(group="console_scripts", name="mxnext")
    module, function = entry.value.split(":")
    mxnext.write_text(f"#!{python}\nimport sys\nfrom {module} import {function}\n"
                      f"sys.exit({function}())\n")
    mxnext.chmod(0o755)
    env = {**env_with(None), "MXNEXT_CACHE_DIR": str(root / "cache")}  # plugins of tmp dirs
    return SimpleNamespace(python=str(python), env=env,
                           run=lambda *args, **kw: run(*args, exe=str(mxnext), env=env, **kw))


@pytest.fixture
def site(tmp_path):
    s = tmp_path / "site"
    s.mkdir()
    make_plugin(s, "clitest", GOOD_PLUGIN)
    return s


@pytest.fixture
def only_clitest(site):
    """Only the builtin plugin and ``clitest`` load (others installed show as disabled)."""
    return env_with(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS="clitest")


# -- --version and info -----------------------------------------------------------------
def test_version_is_one_line_and_loads_no_plugin(site, tmp_path):
    marker = tmp_path / "marker"
    env = env_with(site, CLITEST_MARKER=str(marker))
    r = run("--version", env=env)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"mxnext 0\.1\.0 at \S+ \(Python [\d.]+\)\n", r.stdout)
    assert not marker.exists()
    assert run("plugins", env=env).returncode == 0
    assert marker.read_text() == "imported"  # the control: a real command does load it


def test_info_json_reports_versions_engine_devices_plugins(only_clitest):
    import importlib.metadata as md
    r = run("info", "--json", env=only_clitest)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    for pkg in ("mxnext", "numpy", "pydantic", "pluggy", "click"):
        assert d["versions"][pkg] == md.version(pkg)
    assert d["python"] == ".".join(map(str, sys.version_info[:3]))
    assert d["mxnet_api"] == "1.9.1"
    assert d["engine"] in ("NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice")
    assert "cpu" in d["devices"]
    assert d["plugins"]["loaded"] == 2 and d["plugins"]["failed"] == 0
    text = run("info", env={**os.environ, "MXNEXT_ENGINE_TYPE": "NaiveEngine"})
    assert text.returncode == 0
    assert re.search(r"^engine:\s+NaiveEngine$", text.stdout, re.M)
    assert re.search(r"^MXNet API:\s+1\.9\.1$", text.stdout, re.M)
    assert re.search(r"^MXNEXT_ENGINE_TYPE:\s+NaiveEngine$", text.stdout, re.M)


def test_info_prints_the_thread_policy_and_the_limits_it_applied():
    from mxnext._runtime.threads import decide
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
                        "MXNET_OMP_MAX_THREADS", "MXNET_CPU_WORKER_NTHREADS")}
    text = run("info", env={**env, "MXNEXT_KERNEL_THREADS": "1",
                            "MXNEXT_CPU_WORKER_NTHREADS": "1"})
    assert text.returncode == 0, text.stderr
    cores = len(os.sched_getaffinity(0))
    line = re.search(r"^threads:\s+(.*)$", text.stdout, re.M).group(1)
    assert line.startswith(f"{cores} cores shared by the kernels of 1 engine workers: each up "
                           f"to 1 kernel threads x {cores} BLAS or {cores} OpenMP threads (set "
                           f"by MXNEXT_CPU_WORKER_NTHREADS, MXNEXT_KERNEL_THREADS); loaded: ")
    assert f"(blas) x{cores}" in line         # numpy's BLAS runs with the policy's count
    d = json.loads(run("info", "--json", env=env).stdout)["threads"]
    assert d["summary"] == decide(cores, {}).describe()


def test_required_plugin_failing_is_an_error_not_a_traceback(site):
    env = env_with(site, MXNEXT_PLUGINS="clitest-missing")
    r = run("ops", "list", env=env)
    assert r.returncode == 1
    assert r.stderr.startswith("Error: loading mxnext failed: PluginError: plugin 'clitest-missing'")
    assert "Traceback" not in r.stderr


# -- ops ----------------------------------------------------------------------------------
def test_ops_list_json_and_filters(only_clitest):
    r = run("ops", "list", "--json", "--plugin", "clitest", env=only_clitest)
    assert r.returncode == 0, r.stderr
    rows = {o["name"]: o for o in json.loads(r.stdout)}
    assert set(rows) == {"clitest_scale", "clitest_sum"}
    assert rows["clitest_scale"] == {"name": "clitest_scale", "plugin": "clitest",
                                     "aliases": ["clitest_mul"], "num_inputs": 1,
                                     "num_outputs": 1, "devices": ["cpu"]}
    assert rows["clitest_sum"]["num_inputs"] is None  # variadic: depends on num_args

    grep = json.loads(run("ops", "list", "--json", "--grep", "^CLITEST_M", env=only_clitest).stdout)
    assert [o["name"] for o in grep] == ["clitest_scale"]  # matched through its alias
    every = json.loads(run("ops", "list", "--json", "--all", "--grep", "clitest",
                           env=only_clitest).stdout)
    assert [o["name"] for o in every] == ["_backward_clitest_scale", "clitest_scale",
                                          "clitest_sum"]


def test_ops_list_table_is_aligned_and_plain_when_piped(only_clitest):
    r = run("ops", "list", "--grep", "clitest", env=only_clitest)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "\x1b[" not in r.stdout
    assert lines[0].split() == ["NAME", "PLUGIN", "ALIASES", "IN", "OUT", "DEVICES"]
    col = lines[0].index("PLUGIN")
    assert lines[1].startswith("clitest_scale") and lines[1][col:].startswith("clitest ")
    assert lines[2].startswith("clitest_sum") and lines[2][col:].startswith("clitest ")
    assert lines[2][lines[0].index(" IN ") + 1:].startswith("var  1")
    assert lines[-1] == "2 ops (1 internal not shown: --all lists them)"


@pytest.mark.parametrize("args, message", [
    # the test device null is no choice offered
    (["--device", "tpu"], "unknown device type 'tpu' (did you mean 'cpu'?); known: cpu, "
                          "cpu_pinned, cpu_shared\n"),
    (["--device", "gpu"], "unknown device type 'gpu'; 'gpu' is an MXNet 1.x device type "
                          "provided by mxnext-device-cupy, which is installed but does not "
                          "provide it here"),
    (["--grep", "(unclosed"], "not a regular expression"),
    (["--plugin", "clitset"], "did you mean 'clitest'"),
], ids=["tpu", "gpu", "grep", "plugin-typo"])
def test_ops_list_bad_options_are_usage_errors(only_clitest, args, message):
    r = run("ops", "list", *args, env=only_clitest)
    assert r.returncode == 2
    assert message in r.stderr


def test_ops_show_resolves_alias_and_reports_everything(only_clitest):
    r = run("ops", "show", "clitest_mul", "--json", env=only_clitest)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["name"] == "clitest_scale" and d["plugin"] == "clitest"
    assert d["description"] == "Multiplies by a factor."
    assert d["inputs"] == [{"name": "data", "type": "NDArray-or-Symbol",
                            "description": "Input array."}]
    assert d["output_names"] == ["output"]
    params = {p["name"]: p for p in d["params"]}
    assert params["factor"] == {"name": "factor", "type": "float", "required": False,
                                "default": 2.0, "enum": None, "bounds": {"ge": -10, "le": 10},
                                "description": "Multiplier."}
    assert params["mode"]["enum"] == ["exact", "fast"]
    attrs = {a["key"]: a for a in d["attrs"]}
    assert attrs["FCompute<cpu>"] == {"key": "FCompute<cpu>", "plevel": 10, "provider": "clitest"}
    assert d["gradient"] is True and d["devices"] == ["cpu"]
    assert d["inplace"] == [[0, 0]] and d["resources"] == []
    assert list(d["signature"]) == ["nd", "sym"]
    assert d["signature"]["nd"].startswith("mx.nd.clitest_scale(data")
    assert "factor=" in d["signature"]["nd"]
    assert d["signature"]["sym"].startswith("mx.sym.clitest_scale(data=None, factor=")
    assert d["signature"]["sym"].endswith("name=None, attr=None, out=None)")

    text = run("ops", "show", "clitest_mul", env=only_clitest).stdout
    for needle in ("clitest_scale (alias 'clitest_mul')  from plugin clitest", "Parameters",
                   "Attributes", "gradient:   yes", "in-place:   input 0 -> output 0",
                   ">= -10, <= 10", "mx.nd.clitest_scale(", "mx.sym.clitest_scale("):
        assert needle in text


def test_ops_show_variadic_op(only_clitest):
    d = json.loads(run("ops", "show", "clitest_sum", "--json", env=only_clitest).stdout)
    assert d["variadic_inputs"] == "num_args"
    assert d["params"][0]["required"] is True and d["params"][0]["bounds"] == {"ge": 1}
    assert d["gradient"] is False and d["num_inputs"] is None


def test_ops_show_unknown_name_suggests_closest(only_clitest):
    r = run("ops", "show", "clitest_scal", env=only_clitest)
    assert r.returncode == 2
    assert "unknown operator 'clitest_scal'" in r.stderr
    assert "did you mean 'clitest_scale'" in r.stderr


def test_ops_show_mxnet_name_says_where_it_comes_from():
    r = run("ops", "show", "Pooling_v1", env=env_with(None))
    assert r.returncode == 2
    assert ("Error: unknown operator 'Pooling_v1'; 'Pooling_v1' is an MXNet 1.x operator "
            "provided by mxnext-ops-nn, which is installed but does not provide it") in r.stderr
    assert "did you mean" not in r.stderr


# -- plugins and devices ---------------------------------------------------------------
def test_plugins_report_and_check_pass_when_healthy(only_clitest):
    r = run("plugins", "--json", env=only_clitest)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    by_name = {p["name"]: p for p in d["plugins"]}
    p = by_name["clitest"]
    assert (p["distribution"], p["version"], p["status"], p["error"]) == (
        "clitest_clitest", "0.1", "loaded", None)
    assert p["location"].endswith("clitest_clitest.py") and p["load_time"] >= 0
    assert p["contributions"]["ops"] == ["_backward_clitest_scale", "clitest_scale",
                                         "clitest_sum"]
    assert by_name["builtin"]["contributions"]["devices"] == ["cpu", "cpu_pinned", "cpu_shared",
                                                              "null"]
    assert d["conflicts"] == []
    check = run("plugins", "check", env=only_clitest)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.split("\n", 1)[0].split() == [
        "NAME", "DISTRIBUTION", "VERSION", "STATUS", "LOAD", "ms", "OPS", "ATTRS", "DEVICES",
        "LOCATION"]
    assert "plugins ok" in check.stdout


def test_broken_plugin_is_reported_and_fails_check(site):
    make_plugin(site, "clitest-broken", BROKEN_PLUGIN)
    env = env_with(site)
    d = json.loads(run("plugins", "--json", env=env).stdout)
    broken = next(p for p in d["plugins"] if p["name"] == "clitest-broken")
    assert broken["status"] == "failed"
    assert "clitest broken on purpose" in broken["error"]
    ops = json.loads(run("ops", "list", "--json", "--plugin", "clitest", env=env).stdout)
    assert [o["name"] for o in ops] == ["clitest_scale", "clitest_sum"]  # the rest still work
    table = run("plugins", env=env)
    assert table.returncode == 0
    assert re.search(r"clitest-broken \(failed\): RuntimeError: clitest broken on purpose",
                     table.stdout)
    check = run("plugins", "check", env=env)
    assert check.returncode == 1
    assert "plugin check failed" in check.stdout


def test_conflicting_plugins_fail_check(site):
    make_plugin(site, "clitest-clash", CLASH_PLUGIN)
    env = env_with(site)  # both autoloaded, neither named: a failure only warns
    r = run("plugins", "check", "--json", env=env)
    assert r.returncode == 1
    d = json.loads(r.stdout)
    (c,) = [c for c in d["conflicts"] if c["op"].startswith("clitest")]
    assert (c["op"], c["key"], c["plevel"]) == ("clitest_scale", "FCompute<cpu>", 10)
    assert {c["first"], c["second"]} == {"clitest", "clitest-clash"}


def test_plugin_exiting_at_import_is_reported_and_refused_definitions_fail_check(site):
    make_plugin(site, "clitest-exit", "import sys\nsys.exit(0)\n")
    make_plugin(site, "clitest-dup", DUP_PLUGIN)
    env = env_with(site)
    table = run("plugins", env=env)
    assert table.returncode == 0, table.stderr
    assert "clitest-exit (failed): SystemExit: the plugin called sys.exit(0)" in table.stdout
    assert "relu: kept from ops-tensor, refused from clitest-dup" in table.stdout
    check = run("plugins", "check", "--json", env=env)
    assert check.returncode == 1
    assert json.loads(check.stdout)["refused"] == [
        {"name": "relu", "owner": "ops-tensor", "refused": "clitest-dup"}]


def test_uninstall_asks_first_and_a_no_removes_nothing(site):
    r = subprocess.run([MXNEXT, "uninstall", "clitest"], input="n\n", capture_output=True,
                       text=True, env=env_with(site), timeout=240)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "Uninstall clitest_clitest (plugin clitest): this removes 3 ops and 0 devices" \
        in r.stderr
    assert "uninstall cancelled; nothing was removed" in r.stderr
    assert "$ " not in r.stdout and (site / "clitest_clitest-0.1.dist-info").is_dir()


def test_kernels_added_to_other_plugins_ops_and_orphans(site):
    make_plugin(site, "clitest-gpu", '''
from opsdk import hookimpl


@hookimpl
def mxnext_register_ops(registry):
    from opsdk import extend_op
    extend_op("clitest_mul").set_attr("FCompute<gpu>", lambda *a: None)  # by alias
    extend_op("clitest_nobody").set_attr("FCompute<gpu>", lambda *a: None)
''')
    env = env_with(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS="clitest,clitest-gpu")
    d = json.loads(run("plugins", "--json", env=env).stdout)
    gpu = next(p for p in d["plugins"] if p["name"] == "clitest-gpu")
    assert gpu["status"] == "loaded"
    assert gpu["contributions"]["ops"] == []
    assert gpu["contributions"]["attrs"] == ["clitest_nobody.FCompute<gpu>",
                                             "clitest_scale.FCompute<gpu>"]
    assert d["orphans"] == [{"op": "clitest_nobody", "keys": ["FCompute<gpu>"],
                             "providers": ["clitest-gpu"]}]
    listed = json.loads(run("ops", "list", "--json", "--plugin", "clitest-gpu", env=env).stdout)
    assert [(o["name"], o["plugin"], o["devices"]) for o in listed] == [
        ("clitest_scale", "clitest", ["cpu", "gpu"])]
    on_gpu = json.loads(run("ops", "list", "--json", "--device", "gpu", env=env).stdout)
    assert [o["name"] for o in on_gpu] == ["clitest_scale"]
    show = json.loads(run("ops", "show", "clitest_scale", "--json", env=env).stdout)
    assert {"key": "FCompute<gpu>", "plevel": 10, "provider": "clitest-gpu"} in show["attrs"]
    check = run("plugins", "check", env=env)
    assert check.returncode == 0  # orphans are reported, not failures
    assert "clitest_nobody: FCompute<gpu> from clitest-gpu" in check.stdout


def test_plugins_check_runs_conformance_suite(only_clitest):
    r = run("plugins", "check", "--conformance", "clitest", env=only_clitest)
    assert r.returncode == 0, r.stdout + r.stderr
    # clitest_scale: all 6 checks; its backward op: no grad or dtypes check; clitest_sum has
    # no example
    assert re.search(r"\b10 passed, 1 skipped\b", r.stdout)
    bad = run("plugins", "check", "--conformance", "clitset", env=only_clitest)
    assert bad.returncode == 2 and "did you mean 'clitest'" in bad.stderr


def test_devices(only_clitest):
    devs = {d["type"]: d for d in json.loads(run("devices", "--json", env=only_clitest).stdout)}
    assert devs["cpu"]["plugin"] == "builtin" and devs["cpu"]["available"] is True
    assert devs["cpu"]["array_lib"] == "numpy"


def test_kvstores_lists_types_with_their_plugin(site):
    make_plugin(site, "kv", '''
from opsdk import hookimpl
from opsdk.kvstore import LocalKVStore


class EchoStore(LocalKVStore):
    pass


@hookimpl
def mxnext_register_kvstores(registry):
    registry.register("echo_kv", EchoStore)
''')
    env = env_with(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS="kv")
    rows = json.loads(run("kvstores", "--json", env=env).stdout)
    assert [r for r in rows if r["plugin"] != "builtin"] == [
        {"type": "echo_kv", "plugin": "kv", "implementation": "clitest_kv.EchoStore"}]
    assert {"type": "device", "plugin": "builtin",
            "implementation": "mxnext.kvstore.device.DeviceKVStore"} in rows
    table = [ln.split() for ln in run("kvstores", env=env).stdout.splitlines()]
    assert table[0] == ["TYPE", "PLUGIN", "IMPLEMENTATION"]
    assert ["echo_kv", "kv", "clitest_kv.EchoStore"] in table


def test_plugin_adds_subcommand_through_hook(site):
    make_plugin(site, "clitest-cmd", '''
import click
from opsdk import hookimpl


@hookimpl
def mxnext_cli_commands(group):
    @group.command("hello-clitest")
    @click.argument("who")
    def hello(who):
        """Greets."""
        click.echo(f"hello {who}")
''')
    env = env_with(site)
    r = run("hello-clitest", "world", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hello world\n"
    assert "hello-clitest" in run("--help", env=env).stdout
    assert run("no-such-command", env=env).returncode == 2


# -- scaffolding: bad input (click's runner) ---------------------------------------------
@pytest.fixture
def runner():
    return CliRunner()


def test_colour_only_on_a_terminal(runner):
    assert "\x1b[" not in runner.invoke(main, ["plugins"]).output
    coloured = runner.invoke(main, ["plugins"], color=True)  # as if stdout were a TTY
    assert coloured.exit_code == 0
    assert "\x1b[1mNAME" in coloured.output  # bold header
    assert click_style("loaded", fg="green") in coloured.output


@pytest.mark.parametrize("name", ["1abc", "class", "my op", "x-y"])
def test_new_op_rejects_non_identifiers(runner, tmp_path, name):
    r = runner.invoke(main, ["new", "plugin", "clitest-names", "--dir", str(tmp_path / "p"),
                             "--op", name])
    assert r.exit_code == 2
    assert "not a Python identifier" in r.output
    assert not (tmp_path / "p").exists()


def test_new_op_rejects_private_and_existing_names(runner, tmp_path):
    from opsdk import register_op
    register_op("clitest_taken").describe("registered by this test")
    r = runner.invoke(main, ["new", "plugin", "clitest-names", "--dir", str(tmp_path / "p"),
                             "--op", "_hidden"])
    assert r.exit_code == 2 and "internal ops" in r.output
    r = runner.invoke(main, ["new", "plugin", "clitest-names", "--dir", str(tmp_path / "p"),
                             "--op", "clitest_taken"])
    assert r.exit_code == 2
    assert "op 'clitest_taken' already exists (defined by plugin '__main__')" in r.output
    assert not (tmp_path / "p").exists()
    r = runner.invoke(main, ["new", "plugin", "clitest-names", "--dir", str(tmp_path / "p"),
                             "--op", "clitest_taken", "--force"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p" / "src" / "mxnext_clitest_names" / "ops" / "clitest_taken.py").exists()


@pytest.mark.parametrize("name", ["My-Plugin", "x-", "1x", "a--b", "class", "my.ops"])
def test_new_plugin_rejects_bad_plugin_names(runner, tmp_path, name):
    r = runner.invoke(main, ["new", "plugin", name, "--dir", str(tmp_path / "p")])
    assert r.exit_code == 2
    assert "not a valid plugin name" in r.output


def test_new_refuses_to_overwrite_anything(runner, tmp_path):
    root = tmp_path / "p"
    args = ["new", "plugin", "clitest-over", "--dir", str(root), "--op", "clitest_over_a"]
    assert runner.invoke(main, args).exit_code == 0
    readme = root / "README.md"
    readme.write_text("mine")
    r = runner.invoke(main, args)
    assert r.exit_code == 1
    assert "refusing to overwrite" in r.output and str(readme) in r.output
    assert readme.read_text() == "mine"

    new_op = ["new", "op", "clitest_over_b", "--style", "simple", "--plugin", str(root)]
    assert runner.invoke(main, new_op).exit_code == 0
    test_file = root / "tests" / "test_clitest_over_b.py"
    module = root / "src" / "mxnext_clitest_over" / "ops" / "clitest_over_b.py"
    module.write_text("# edited")
    test_file.unlink()
    r = runner.invoke(main, new_op)
    assert r.exit_code == 1 and str(module) in r.output
    assert module.read_text() == "# edited" and not test_file.exists()  # nothing written


def test_new_plugin_onto_a_file_is_a_one_line_error(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # the default place: ./mxnext-NAME
    Path("mxnext-clitest-file").write_text("mine")
    r = runner.invoke(main, ["new", "plugin", "clitest-file"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit)
    assert r.output == ("Error: mxnext-clitest-file exists and is not a directory; "
                        "nothing was written\n")
    assert Path("mxnext-clitest-file").read_text() == "mine"


def test_new_op_in_a_plugin_without_ops_package(runner, tmp_path):
    (tmp_path / "src" / "clitest_pkg").mkdir(parents=True)
    (tmp_path / "src" / "clitest_pkg" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.entry-points.mxnext]\nclitest-x = "clitest_pkg.plugin"\n')
    r = runner.invoke(main, ["new", "op", "clitest_lone", "--style", "property",
                             "--plugin", str(tmp_path)])
    assert r.exit_code == 0, r.output
    module = tmp_path / "src" / "clitest_pkg" / "clitest_lone.py"
    assert "@register_property(\"clitest_lone\")" in module.read_text()
    assert (tmp_path / "tests" / "test_clitest_lone.py").exists()
    assert "from . import clitest_lone" in r.output
    compile(module.read_text(), str(module), "exec")


def test_new_op_style_defaults_to_nnvm_as_for_new_plugin(runner, tmp_path):
    root = tmp_path / "p"
    r = runner.invoke(main, ["new", "plugin", "clitest-dflt", "--dir", str(root)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["new", "op", "clitest_dflt_b", "--plugin", str(root)])
    assert r.exit_code == 0, r.output
    assert "(nnvm style)" in r.output
    for op in ("clitest_dflt_square", "clitest_dflt_b"):
        assert '(register_op("' in (root / "src" / "mxnext_clitest_dflt" / "ops" / f"{op}.py"
                                    ).read_text()


def test_new_op_needs_a_plugin_package(runner, tmp_path):
    r = runner.invoke(main, ["new", "op", "clitest_lonely", "--style", "nnvm",
                             "--plugin", str(tmp_path)])
    assert r.exit_code == 2 and "no pyproject.toml" in r.output
    r = runner.invoke(main, ["new", "op", "clitest_lonely", "--style", "fancy",
                             "--plugin", str(tmp_path)])
    assert r.exit_code == 2 and "fancy" in r.output


# -- scaffolding, install and uninstall end to end (in the throwaway venv) ---------------
def test_scaffolded_plugin_installs_passes_its_tests_runs_and_uninstalls(venv, runner, tmp_path):
    root = tmp_path / "mxnext-clitest-gen"
    r = runner.invoke(main, ["new", "plugin", "clitest-gen", "--dir", str(root),
                             "--op", "clitest_gen_nnvm"])
    assert r.exit_code == 0, r.output
    for op, style in (("clitest_gen_simple", "simple"), ("clitest_gen_prop", "property")):
        r = runner.invoke(main, ["new", "op", op, "--style", style, "--plugin", str(root)])
        assert r.exit_code == 0, r.output
    ops = ["clitest_gen_nnvm", "clitest_gen_prop", "clitest_gen_simple"]
    all_ops = sorted(ops + [f"_backward_{op}" for op in ops])
    dev = write_package(tmp_path / "dev", "mxnext-clitest-dev", "clitest-dev", DEVICE_PLUGIN)
    broken = write_package(tmp_path / "broken", "clitest-broken-inst", "clitest-broken-inst",
                           BROKEN_PLUGIN, version="0.3")

    # one pip run installs all three; the broken plugin's failure makes the exit code 1
    r = venv.run("install", "--json", "--no-build-isolation", "-e", str(root), str(dev),
                 str(broken))
    assert r.returncode == 1, r.stdout + r.stderr
    added = json.loads(r.stdout)
    assert [(p["name"], p["distribution"], p["status"]) for p in added["plugins"]] == [
        ("clitest-broken-inst", "clitest-broken-inst", "failed"),
        ("clitest-dev", "mxnext-clitest-dev", "loaded"),
        ("clitest-gen", "mxnext-clitest-gen", "loaded")]
    (failed,) = added["failed"]
    assert failed["name"] == "clitest-broken-inst"
    assert failed["error"] == "RuntimeError: clitest broken on purpose"
    assert "Traceback" in failed["traceback"]
    assert added["ops"] == [{"name": op, "plugin": "clitest-gen"} for op in all_ops]
    assert added["devices"] == [{"type": "clitest_dev", "plugin": "clitest-dev"}]
    assert added["removed_plugins"] == added["removed_ops"] == added["removed_devices"] == []

    tests = subprocess.run([venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            str(root / "tests")], cwd=root, capture_output=True, text=True,
                           env=venv.env, timeout=240)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert re.search(r"\d+ passed", tests.stdout) and not re.search(r"\d+ skipped", tests.stdout)

    call = subprocess.run([venv.python, "-c", textwrap.dedent(f"""
        import mxnext as mx
        x = mx.nd.array([[1.0, -2.0], [3.0, 0.5]])
        for name in {ops!r}:
            print(getattr(mx.nd, name)(x, scale=2).asnumpy().tolist())
        """)], capture_output=True, text=True, env=venv.env, timeout=240)
    assert call.returncode == 0, call.stderr
    assert call.stdout.splitlines() == ["[[2.0, 8.0], [18.0, 0.5]]"] * 3

    # by plugin name and by distribution name (in another spelling pip accepts)
    r = venv.run("uninstall", "--yes", "clitest-gen", "mxnext_clitest_dev",
                 "clitest-broken-inst")
    assert r.returncode == 0, r.stdout + r.stderr
    report = r.stdout.split("\n\n", 1)[1]  # after pip's output
    assert report.splitlines() == [
        "plugin clitest-broken-inst (clitest-broken-inst 0.3): removed",
        "plugin clitest-dev (mxnext-clitest-dev 0.1): removed",
        "plugin clitest-gen (mxnext-clitest-gen 0.1.0): removed",
        "6 ops removed",
        *(f"  {op}  (plugin clitest-gen)" for op in all_ops),
        "1 device removed",
        "  clitest_dev  (plugin clitest-dev)"]


def test_failing_pip_and_names_that_are_not_plugins(venv, tmp_path):
    bad = venv.run("install", "--no-build-isolation", str(tmp_path / "no-such-dir"))
    assert bad.returncode == 1 and "pip install failed" in bad.stderr
    r = venv.run("uninstall", "numpy")  # not a plugin: left to pip, never run here
    assert r.returncode == 2
    assert "no installed plugin or plugin distribution named 'numpy'" in r.stderr
