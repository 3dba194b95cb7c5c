"""Plugin loading with real distributions: throwaway packages whose ``.dist-info`` (with
``entry_points.txt``) sits on ``sys.path``; each scenario runs ``import mxnext`` in a fresh
interpreter, since loading happens once per process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from mxnext import ops as registry, plugins
from mxnext.base import PluginError

GOOD = '''
import numpy as np
from opsdk import ElemwiseShape, assign, hookimpl, register_op


class _Dev:
    type = "_pdev"


@hookimpl
def mxnext_register_devices(registry):
    registry.register(_Dev())


def _twice(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0] * 2)


@hookimpl
def mxnext_register_ops(registry):
    (register_op("_p_twice").describe("Doubles its input.")
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FCompute<cpu>", _twice))
'''

BROKEN = '''
import not_a_module_anyone_has  # the import error this plugin is about
'''

CONFLICT = '''
from opsdk import extend_op, hookimpl, register_op


@hookimpl
def mxnext_register_ops(registry):
    register_op("_p_conflict_own").set_attr("FInferShape", None)
    extend_op("_p_twice").set_attr("FCompute<cpu>", lambda *a: None)   # same key, same plevel
'''

GPU = '''
from opsdk import extend_op, hookimpl


@hookimpl
def mxnext_register_ops(registry):
    extend_op("_p_twice").set_attr("FCompute<gpu>", lambda *a: None)
'''

PLUGINS = {"p-good": GOOD, "p-broken": BROKEN, "p-tie": CONFLICT, "p-gpu": GPU}


def make_dist(root, name, source, version="1.2.3"):
    """Write module ``<name>_plugin.py`` and an installed-looking ``.dist-info`` for it."""
    module = name.replace("-", "_") + "_plugin"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    dist = f"mxnext-{name}"
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[mxnext]\n{name} = {module}\n")
    return module


def make_package_dist(root):
    """Plugin ``p-pkg`` as a package whose op module registers at import time (like
    ops-tensor): its hook only imports ``p_pkg.ops``."""
    pkg = root / "p_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "plugin.py").write_text(textwrap.dedent('''
        from opsdk import hookimpl

        @hookimpl
        def mxnext_register_ops(registry):
            from . import ops  # noqa: F401
    '''))
    (pkg / "ops.py").write_text('from opsdk import register_op\nregister_op("_p_pkg_op")\n')
    info = root / "mxnext_p_pkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mxnext-p-pkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mxnext]\np-pkg = p_pkg.plugin\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    for name, source in PLUGINS.items():
        make_dist(root, name, source)
    make_package_dist(root)
    return root


PROBE = '''
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import mxnext
    from mxnext import ops as registry, plugins
    report = plugins.report()               # the first lookup loads the plugins
infos = {i.name: {"status": i.status, "dist": i.distribution, "version": i.version,
                  "error": i.error, "traceback": i.traceback, "location": i.location,
                  "contrib": i.contributions} for i in report}
import numpy as np
out = None
try:
    op = registry.get("_p_twice")
    res = np.zeros(2)
    op.get_attr("FCompute<cpu>")(None, [np.array([1.0, 2.0])], [1], [res], None)
    out = res.tolist()
except mxnext.MXNetError as exc:
    out = str(exc)
print(json.dumps({"plugins": infos, "warnings": [str(w.message) for w in caught], "twice": out,
                  "conflicts": [list(c) for c in registry.validate().conflicts],
                  "devices": sorted(mxnext.device.available())}))
'''


def run_fresh(site, code, preexec_fn=None, **env):
    """Run ``code`` in a fresh interpreter with ``site`` first on PYTHONPATH, the MXNEXT_*
    settings of this process dropped and ``env`` added."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MXNEXT_")}
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join([str(site), full.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=120, preexec_fn=preexec_fn)


def named_plugin_output(site, code, plugin):
    """Stripped stdout of ``code`` run fresh with autoload off and only ``plugin`` named."""
    proc = run_fresh(site, code, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS=plugin)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def probe(site, **env):
    proc = run_fresh(site, PROBE, **env)
    if proc.returncode:
        return None, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_autoload_records_good_broken_and_conflicting_plugins(site):
    res, err = probe(site)
    assert res is not None, err
    ps = res["plugins"]
    assert list(ps)[0] == "builtin" and ps["builtin"]["status"] == "loaded"
    assert ps["builtin"]["contrib"]["devices"] == ["cpu", "cpu_pinned", "cpu_shared", "null"]
    good = ps["p-good"]
    assert (good["status"], good["dist"], good["version"]) == ("loaded", "mxnext-p-good", "1.2.3")
    assert good["location"].endswith("p_good_plugin.py")
    assert good["contrib"]["ops"] == ["_p_twice"] and good["contrib"]["devices"] == ["_pdev"]
    broken = ps["p-broken"]
    assert broken["status"] == "failed" and "not_a_module_anyone_has" in broken["error"]
    assert "Traceback" in broken["traceback"] and broken["dist"] == "mxnext-p-broken"
    assert any("p-broken" in w and "not_a_module_anyone_has" in w for w in res["warnings"])
    # the tie: p-tie loads after p-good (name order), fails naming both, leaves nothing behind
    conflict = ps["p-tie"]
    assert conflict["status"] == "failed"
    assert "p-good" in conflict["error"] and "p-tie" in conflict["error"]
    assert ["_p_twice", "FCompute<cpu>", 10, "p-good", "p-tie"] in res["conflicts"]
    assert conflict["contrib"]["ops"] == []
    assert ps["p-gpu"]["contrib"]["attrs"] == ["_p_twice.FCompute<gpu>"]
    assert res["twice"] == [2.0, 4.0]
    assert "_pdev" in res["devices"]


def test_disabled_plugins_are_not_imported(site):
    res, err = probe(site, MXNEXT_DISABLE_PLUGINS="p-broken, p-tie")
    assert res is not None, err
    assert res["plugins"]["p-broken"]["status"] == "disabled"
    assert "MXNEXT_DISABLE_PLUGINS" in res["plugins"]["p-broken"]["error"]
    assert res["plugins"]["p-tie"]["status"] == "disabled"
    assert not [w for w in res["warnings"] if "p-broken" in w] and res["conflicts"] == []


def test_autoload_off_loads_only_named_plugins(site):
    res, err = probe(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS="p-good")
    assert res is not None, err
    statuses = {n: p["status"] for n, p in res["plugins"].items()}
    assert statuses["builtin"] == statuses["p-good"] == "loaded"
    assert statuses["p-broken"] == statuses["p-tie"] == statuses["p-gpu"] == "disabled"
    assert statuses["p-pkg"] == "disabled"
    assert res["twice"] == [2.0, 4.0]


def test_explicitly_named_broken_plugin_fails_hard(site):
    res, err = probe(site, MXNEXT_PLUGINS="p-good,p-broken")
    assert res is None
    assert "PluginError" in err and "'p-broken'" in err and "not_a_module_anyone_has" in err


def test_explicitly_named_missing_plugin_fails_hard_with_suggestion(site):
    res, err = probe(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_PLUGINS="p-godo")
    assert res is None
    assert "not installed" in err and "did you mean 'p-good'" in err


def test_builtin_cannot_be_disabled(site):
    res, err = probe(site, MXNEXT_DISABLE_PLUGIN_AUTOLOAD="1", MXNEXT_DISABLE_PLUGINS="builtin")
    assert res is not None, err
    assert res["plugins"]["builtin"]["status"] == "loaded" and "cpu" in res["devices"]
    assert any("builtin" in w and "cannot be disabled" in w for w in res["warnings"])


def test_import_loads_no_plugin_until_the_first_lookup(site):
    code = ("import mxnext, opsdk, p_good_plugin, sys; from mxnext._runtime import plugins; "
            "print(plugins._manager._loader.loaded, end=' '); "
            "mxnext.nd.zeros((1,)); print(plugins._manager._loader.loaded)")
    assert named_plugin_output(site, code, "p-good") == "False True"


def test_missing_core_ops_are_named_once_with_the_plugin_to_install(site):
    code = textwrap.dedent('''
        import warnings
        import mxnext as mx
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = mx.nd.ones((2,))
        try:
            x + 1
        except mx.MXNetError as exc:
            print("error:", exc)
        print("warnings:", [str(w.message) for w in caught])
    ''')
    proc = run_fresh(site, code, MXNEXT_DISABLE_PLUGINS="ops-tensor")
    assert proc.returncode == 0, proc.stderr
    error, warned = proc.stdout.strip().splitlines()
    assert "'_plus_scalar'" in error and "NDArray operators" in error
    assert "mxnext install mxnext-ops-tensor" in error
    assert "mxnext-ops-tensor (disabled by MXNEXT_DISABLE_PLUGINS)" in warned
    assert warned.count("are not registered") == 1


def test_import_opsdk_first_still_loads_plugins(site):
    code = ("import opsdk, mxnext; "
            "print(sorted(i.name for i in mxnext.plugins.report() if i.status == 'loaded'))")
    assert named_plugin_output(site, code, "p-good") == "['builtin', 'p-good']"


def test_ops_registered_by_a_plugin_module_imported_first_belong_to_the_plugin(site):
    code = ("import p_pkg.ops, mxnext; from mxnext import ops as registry; "
            "print(registry.get('_p_pkg_op').provider)")
    assert named_plugin_output(site, code, "p-pkg") == "p-pkg"


# -- in-process: plugins added at runtime ------------------------------------------------
def test_load_plugin_at_runtime_by_module_name(tmp_path, monkeypatch):
    (tmp_path / "rt_plugin_ok.py").write_text(textwrap.dedent('''
        from opsdk import hookimpl, register_op

        @hookimpl
        def mxnext_register_ops(registry):
            register_op("_p_runtime_op").describe("added later")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    registry.on_new_op(lambda d: seen.append(d.name))
    info = plugins.load_plugin("rt_plugin_ok")
    assert info.status == "loaded" and info.contributions["ops"] == ["_p_runtime_op"]
    assert registry.get("_p_runtime_op").provider == "rt_plugin_ok"
    assert "_p_runtime_op" in seen
    assert plugins.load_plugin("rt_plugin_ok") is info
    before = plugins.report()
    plugins.load()
    plugins.ensure_loaded()
    assert plugins.report() == before and info in before
    assert plugins.manager().get_plugin("rt_plugin_ok") is not None


def test_load_plugin_failures_raise_and_are_recorded(tmp_path, monkeypatch):
    (tmp_path / "rt_plugin_bad.py").write_text(textwrap.dedent('''
        from opsdk import hookimpl, register_op

        @hookimpl
        def mxnext_register_ops(registry):
            register_op("_p_half_done")
            raise RuntimeError("boom while registering")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="rt_plugin_bad.*boom while registering"):
        plugins.load_plugin("rt_plugin_bad")
    info = {i.name: i for i in plugins.report()}["rt_plugin_bad"]
    assert info.status == "failed" and "RuntimeError" in info.error
    assert "_p_half_done" not in [d.name for d in registry.list_ops()]
    assert plugins.manager().get_plugin("rt_plugin_bad") is None
    with pytest.raises(PluginError, match="not installed"):
        plugins.load_plugin("no_such_plugin_module_xyz")


def test_hookimpl_with_wrong_signature_is_rejected(tmp_path, monkeypatch):
    (tmp_path / "rt_plugin_sig.py").write_text(textwrap.dedent('''
        from opsdk import hookimpl

        @hookimpl
        def mxnext_register_ops(registry, extra):
            pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="(?s)rt_plugin_sig.*extra"):
        plugins.load_plugin("rt_plugin_sig")


def test_hookspecs_document_every_hook():
    from mxnext import hookspecs
    names = [n for n in dir(hookspecs) if n.startswith("mxnext_")]
    assert names == ["mxnext_cli_commands", "mxnext_register_devices", "mxnext_register_kvstores",
                     "mxnext_register_ops"]
    assert all(getattr(hookspecs, n).__doc__ for n in names)
    hook_names = {h for h in dir(plugins.manager().hook) if h.startswith("mxnext_")}
    assert set(names) <= hook_names


def test_misspelt_hook_name_is_rejected(tmp_path, monkeypatch):
    (tmp_path / "rt_plugin_typo.py").write_text(textwrap.dedent('''
        from opsdk import hookimpl

        @hookimpl
        def mxnext_register_op(registry):
            pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="(?s)rt_plugin_typo.*mxnext_register_op"):
        plugins.load_plugin("rt_plugin_typo")
    assert plugins.manager().get_plugin("rt_plugin_typo") is None


# -- precedence: the first definition of a name wins, whatever the plugins are called ------
DUP = '''
from opsdk import ElemwiseShape, assign, extend_op, hookimpl, register_op


def _times7(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0] * 7)


@hookimpl
def mxnext_register_ops(registry):
    for name in ("relu", "FullyConnected", "_bp_own"):
        (register_op(name).set_attr("FInferShape", ElemwiseShape(1, 1))
         .set_attr("FCompute<cpu>", _times7))
    extend_op("abs").set_attr("FCompute<cpu>", _times7, plevel=20)   # a kernel override
'''

DUP_PROBE = '''
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import mxnext as mx
    from mxnext import ops as registry
    x = mx.nd.array([-1, 2])
    out = {"relu": mx.nd.relu(x).asnumpy().tolist(), "abs": mx.nd.abs(x).asnumpy().tolist(),
           "own": mx.nd._bp_own(x).asnumpy().tolist(), "sum": mx.nd.sum(x).asnumpy().tolist(),
           "fc": registry.get("FullyConnected").provider,
           "status": {i.name: i.status for i in mx.plugins.report()},
           "refused": sorted(map(list, registry.refused()))}
out["warnings"] = [str(w.message) for w in caught if "refused" in str(w.message)]
print(json.dumps(out))
'''


def test_a_plugin_defining_core_ops_is_refused_for_those_ops_only(tmp_path):
    make_dist(tmp_path, "bp-dup", DUP)        # sorts before ops-nn and ops-tensor
    proc = run_fresh(tmp_path, DUP_PROBE, MXNEXT_CACHE_DIR=str(tmp_path / "cache"))
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["relu"] == [0.0, 2.0] and res["sum"] == [1.0] and res["fc"] == "ops-nn"
    assert res["own"] == [-7.0, 14.0] and res["abs"] == [-7.0, 14.0]   # plevel still overrides
    assert res["status"]["bp-dup"] == res["status"]["ops-tensor"] == "loaded"
    assert res["status"]["ops-nn"] == "loaded"
    assert res["refused"] == [["FullyConnected", "ops-nn", "bp-dup"],
                              ["relu", "ops-tensor", "bp-dup"]]
    assert len(res["warnings"]) == 2
    assert all("'bp-dup'" in w for w in res["warnings"])
    assert any("'relu'" in w and "'ops-tensor'" in w for w in res["warnings"])


def _dist_info(root, dist, plugin, requires=()):
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"
                                   + "".join(f"Requires-Dist: {r}\n" for r in requires))
    (info / "entry_points.txt").write_text(f"[mxnext]\n{plugin} = {plugin.replace('-', '_')}\n")


def test_load_order_puts_dependencies_then_standard_distributions_first(tmp_path):
    from importlib.metadata import distributions

    from mxnext._runtime.plugins._order import load_order
    _dist_info(tmp_path, "aa-ext", "aa-ext", ["zz-base>=1", "pytest; extra == 'test'"])
    _dist_info(tmp_path, "zz-base", "zz-base", ["mxnext"])
    _dist_info(tmp_path, "ab-free", "ab-free")
    _dist_info(tmp_path, "mxnext-ops-nn", "a-nn")           # the entry-point name counts for
    _dist_info(tmp_path, "mxnext_ops_tensor", "z-tensor")   # nothing, the distribution does
    eps = {ep.name: ep for d in distributions(path=[str(tmp_path)]) for ep in d.entry_points}
    assert load_order(eps) == ["z-tensor", "a-nn", "ab-free", "zz-base", "aa-ext"]


# -- a plugin that exits or is interrupted while it imports ------------------------------
EXITS = '''
import sys
sys.exit(3)
'''

INTERRUPTED = '''
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)     # a real Ctrl-C, delivered while the plugin imports
time.sleep(10)
'''


def test_a_plugin_calling_sys_exit_is_reported_broken_and_the_program_goes_on(tmp_path):
    make_dist(tmp_path, "bp-exit", EXITS)
    code = ("import mxnext as mx; print(mx.nd.relu(mx.nd.array([-1, 2])).asnumpy().tolist()); "
            "i = {i.name: i for i in mx.plugins.report()}['bp-exit']; print(i.status, i.error)")
    proc = run_fresh(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[0.0, 2.0]",
                                        "failed SystemExit: the plugin called sys.exit(3)"]
    assert "'bp-exit'" in proc.stderr and "failed to load" in proc.stderr


def test_keyboard_interrupt_while_a_plugin_imports_still_stops_the_program(tmp_path):
    make_dist(tmp_path, "bp-int", INTERRUPTED)
    # a shell running the suite in the background ignores SIGINT, and a child inherits that
    # (Python then installs no KeyboardInterrupt handler): the program gets Ctrl-C's default
    proc = run_fresh(tmp_path, "import mxnext as mx; mx.nd.zeros((1,)); print('went on')",
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode != 0 and "went on" not in proc.stdout
    assert "KeyboardInterrupt" in proc.stderr
