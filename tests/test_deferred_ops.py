"""Deferred op modules (``opsdk.register_op_modules``): a plugin's ops are known from a cached
manifest at load, and each op module is imported at the first use of one of its ops.

Each scenario runs in a fresh interpreter (loading happens once per process) with its own
manifest cache (``MXNEXT_CACHE_DIR``): the first load of a plugin writes the manifest, later
ones read it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PLUGIN = '''
from opsdk import hookimpl, register_op_modules


@hookimpl
def mxnext_register_ops(registry):
    register_op_modules(f"{__package__}.{m}" for m in ("alpha", "beta", "gamma"))
'''

ALPHA = '''
from opsdk import ElemwiseShape, Field, Param, register_op


class AlphaParam(Param):
    axis: int = Field(description="Required, so the input count is unknown until given.")


(register_op("_pl_alpha").add_alias("_pl_alpha_alias").describe("Alpha of the lazy plugin.")
 .set_attr_parser(AlphaParam).set_num_inputs(lambda p: p.axis)
 .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FCompute<cpu>", lambda *a: None))
'''

BETA = '''
import time

from opsdk import ElemwiseShape, Field, Param, assign, register_op

time.sleep(0.3)     # a slow import: a second lookup meanwhile must wait for it


class BetaParam(Param):
    scale: float = Field(2.0, description="Factor.")


def _scale(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0] * params.scale)


(register_op("_pl_beta").describe("Scales its input.").set_attr_parser(BetaParam)
 .set_num_inputs(1).set_num_outputs(1).add_argument("data", "NDArray-or-Symbol", "input")
 .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FCompute<cpu>", _scale))
'''

GAMMA = '''
import pl_helper  # a module outside the plugin package
from opsdk import register_op

register_op("_pl_gamma").set_attr("FCompute<cpu>", pl_helper.compute)
'''

EXTENSION = '''
from opsdk import extend_op, hookimpl, register_op_modules


@hookimpl
def mxnext_register_ops(registry):
    register_op_modules([f"{__package__}.kernels"])
'''

KERNELS = '''
from opsdk import extend_op

extend_op("_pl_beta").set_attr("FCompute<fake>", lambda *a: None, plevel=12)
'''

CLASH = '''
from opsdk import hookimpl, register_op


@hookimpl
def mxnext_register_ops(registry):
    register_op("_pl_alpha_alias")
'''


def _package(root, name, files: dict, entry: str | None = "plugin"):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for module, source in files.items():
        (pkg / f"{module}.py").write_text(textwrap.dedent(source))
    if entry is None:
        return
    dist = "mxnext-" + name.replace("_", "-")
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[mxnext]\n{name.replace('_', '-')} = {name}.{entry}\n")


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    _package(root, "p_lazy", {"plugin": PLUGIN, "alpha": ALPHA, "beta": BETA, "gamma": GAMMA})
    _package(root, "p_lazyext", {"plugin": EXTENSION, "kernels": KERNELS})
    _package(root, "p_aclash", {"plugin": CLASH})
    _package(root, "p_zclash", {"plugin": CLASH})
    (root / "pl_helper.py").write_text("def compute(*args):\n    pass\n")
    return root


SHIPPED = "ops-nn,ops-onednn,ops-tensor,device-cupy"     # plugins shipping deferred op modules


def fresh(site, argv, disable=f"p-aclash,p-zclash,{SHIPPED}", cache=None):
    """Python with ``argv`` in a fresh interpreter with ``site`` on the path, its own
    manifest cache and the plugins ``disable`` disabled (by default the shipped ones and
    those that clash)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MXNEXT_")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
               MXNEXT_CACHE_DIR=str(cache or site.parent / "cache"),
               MXNEXT_DISABLE_PLUGINS=disable)
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          timeout=120)


def run(site, code, **kw):
    """``fresh(site, ["-c", code])``, which must succeed; its last line of stdout as JSON."""
    proc = fresh(site, ["-c", textwrap.dedent(code)], **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


IMPORTED = '''
import json, sys
import mxnext
from mxnext import ops as registry, plugins
def imported(*prefixes):
    return sorted(m for m in sys.modules if m.startswith(prefixes or ("p_lazy.", "p_lazyext.")))
plugins.load()
'''


def loaded(body):
    """``body`` run once the plugins loaded, with ``imported(*prefixes)`` at hand."""
    return IMPORTED + textwrap.dedent(body)


def test_first_load_imports_and_writes_the_manifest_later_loads_import_nothing(site):
    code = IMPORTED + "print(json.dumps(imported()))"
    assert run(site, code) == ["p_lazy.alpha", "p_lazy.beta", "p_lazy.gamma",
                               "p_lazy.plugin", "p_lazyext.kernels", "p_lazyext.plugin"]
    assert sorted(p.name.rsplit("-", 1)[0] for p in (site.parent / "cache" / "op-manifests")
                  .iterdir()) == ["p-lazy", "p-lazyext"]
    assert run(site, code) == ["p_lazy.plugin", "p_lazyext.plugin"]


def test_without_a_writable_cache_every_load_imports_the_modules(site):
    code = IMPORTED + "print(json.dumps(imported()))"
    blocked = site / "pl_helper.py"             # a file: no folder can be made under it
    for _ in range(2):
        assert "p_lazy.beta" in run(site, code, cache=blocked)


def test_first_use_imports_the_modules_setting_entries_on_that_op(site):
    run(site, IMPORTED + "print('[]')")
    res = run(site, loaded('''
        import threading, time
        first = threading.Thread(target=registry.get, args=("_pl_beta",))
        first.start()
        time.sleep(0.1)
        beta = registry.get("_pl_beta")      # while the thread imports its module
        first.join()
        after_beta = imported()
        y = mxnext.nd._pl_beta(mxnext.nd.array([1.0, 2.0]), scale=3).asnumpy().tolist()
        alpha = registry.get("_pl_alpha_alias")
        print(json.dumps({"after_beta": after_beta, "y": y, "provider": beta.provider,
                          "fake": beta.attrs["FCompute<fake>"].provider,
                          "alpha": [alpha.name, alpha.provider], "after_alpha": imported()}))
    '''))
    assert res["after_beta"] == ["p_lazy.beta", "p_lazy.plugin", "p_lazyext.kernels",
                                 "p_lazyext.plugin"]
    assert res["y"] == [3.0, 6.0] and res["provider"] == "p-lazy" and res["fake"] == "p-lazyext"
    assert res["alpha"] == ["_pl_alpha", "p-lazy"] and "p_lazy.alpha" in res["after_alpha"]
    assert "p_lazy.gamma" not in res["after_alpha"]


DESCRIBE = IMPORTED + '''
def rows(infos):
    return {i.name: [i.provider, list(i.aliases), i.description, i.num_inputs, i.num_outputs,
                     {k: [e.plevel, e.provider] for k, e in sorted(i.attrs.items())}]
            for i in infos}
catalog = rows(registry.catalog())
names = registry.names()
before = imported("p_lazy.", "p_lazyext.", "mxnext_ops_nn.", "mxnext_ops_tensor.")
loaded = rows(registry.OpInfo.of(d) for d in registry.list_ops())
print(json.dumps({"catalog": catalog, "loaded": loaded, "names": names, "before": before,
                  "after": imported(), "dir": "_pl_alpha_alias" in dir(mxnext.nd)}))
'''


def test_catalog_and_names_describe_deferred_ops_as_importing_them_would(site):
    run(site, IMPORTED + "print('[]')")
    res = run(site, DESCRIBE)
    assert all(m.endswith(".plugin") for m in res["before"]) and "p_lazy.gamma" in res["after"]
    assert res["catalog"] == res["loaded"]
    assert res["catalog"]["_pl_alpha"] == [
        "p-lazy", ["_pl_alpha_alias"], "Alpha of the lazy plugin.", None, 1,
        {"FCompute<cpu>": [10, "p-lazy"], "FInferShape": [10, "p-lazy"],
         "FNumInputs": [10, "p-lazy"]}]
    assert res["catalog"]["_pl_beta"][5]["FCompute<fake>"] == [12, "p-lazyext"]
    assert {"_pl_alpha", "_pl_alpha_alias", "_pl_beta", "_pl_gamma"} <= set(res["names"])
    assert res["dir"]


def test_a_changed_plugin_file_rebuilds_its_manifest(site):
    code = IMPORTED + "print(json.dumps([imported(), registry.names()]))"
    run(site, code)
    with open(site / "p_lazy" / "beta.py", "a") as f:
        f.write('\nregister_op("_pl_beta_more")\n')
    imported, names = run(site, code)
    assert "p_lazy.beta" in imported and "_pl_beta_more" in names     # imported at load
    imported, names = run(site, code)
    assert "p_lazy.beta" not in imported and "_pl_beta_more" in names  # deferred again


def test_a_deferred_module_failing_to_import_names_plugin_module_and_op(site):
    run(site, IMPORTED + "print('[]')")
    (site / "pl_helper.py").unlink()   # not part of the plugin: the manifest stays current
    res = run(site, loaded('''
        errors = []
        for _ in range(2):
            try:
                registry.get("_pl_gamma")
            except mxnext.MXNetError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        print(json.dumps({"error": errors[0], "again": errors[1],
                          "failed": registry.validate().failed}))
    '''))
    assert res["error"].startswith("PluginError: plugin 'p-lazy'")
    assert "'p_lazy.gamma'" in res["error"] and "'_pl_gamma'" in res["error"]
    assert "pl_helper" in res["error"] and res["again"] == res["error"]
    assert res["failed"] == [["p_lazy.gamma", res["error"].removeprefix("PluginError: ")]]
    failed = run(site, IMPORTED + "print(json.dumps(registry.validate().failed))")
    assert [m for m, _ in failed] == ["p_lazy.gamma"] and "pl_helper" in failed[0][1]
    check = fresh(site, ["-m", "mxnext_cli", "plugins", "check"])
    assert check.returncode == 1 and "1 failed op module(s)" in check.stdout
    assert "p_lazy.gamma: plugin 'p-lazy'" in check.stdout


@pytest.mark.parametrize("clash, loser", [("p-aclash", "p-lazy"), ("p-zclash", "p-zclash")])
def test_defining_a_deferred_op_again_is_refused_for_the_later_plugin_naming_both(site, clash,
                                                                                  loser):
    run(site, IMPORTED + "print('[]')")      # the manifest, without the clash
    res = run(site, '''
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from mxnext import ops as registry, plugins
            plugins.load()
        print(json.dumps({"status": {p.name: p.status for p in plugins.report()},
                          "refused": [list(r) for r in registry.refused()],
                          "holder": registry.get("_pl_alpha_alias").provider,
                          "alpha": registry.get("_pl_alpha").provider,
                          "warnings": [str(w.message) for w in caught]}))
    ''', disable=f"p-aclash,p-zclash,{SHIPPED}".replace(clash, ""))
    winner = "p-lazy" if loser == clash else clash
    assert res["status"][loser] == res["status"][winner] == "loaded"   # only the name is lost
    assert res["refused"] == [["_pl_alpha_alias", winner, loser]]
    assert res["holder"] == winner and res["alpha"] == "p-lazy"
    (error,) = [w for w in res["warnings"] if "refused" in w]
    assert "'_pl_alpha_alias'" in error and f"'{winner}'" in error and f"'{loser}'" in error


# -- the shipped plugins ----------------------------------------------------------------------
def test_shipped_plugins_import_an_op_module_only_when_one_of_its_ops_is_used(tmp_path):
    code = '''
        import json, sys
        import mxnext as mx
        x = mx.nd.ones((2,))
        y = (x + x).asnumpy().tolist()
        before = "mxnext_ops_nn.convolution" in sys.modules
        out = mx.nd.Convolution(mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 1, 2, 2)),
                                kernel=(2, 2), num_filter=1, no_bias=True)
        print(json.dumps({"y": y, "before": before, "after": "mxnext_ops_nn.convolution" in
                          sys.modules, "out": out.asnumpy().ravel().tolist(),
                          "provider": mx.ops.get("Convolution").provider}))
    '''
    run(tmp_path, "import mxnext; mxnext.plugins.load(); print('{}')", cache=tmp_path, disable="")
    res = run(tmp_path, code, cache=tmp_path, disable="")
    assert res["y"] == [2.0, 2.0] and not res["before"] and res["after"]
    assert res["out"] == [4.0] * 4 and res["provider"] == "ops-nn"


def test_shipped_plugins_catalog_lists_every_op_as_loading_them_does(tmp_path):
    run(tmp_path, "import mxnext; mxnext.plugins.load(); print('{}')", cache=tmp_path, disable="")
    res = run(tmp_path, DESCRIBE, cache=tmp_path, disable="")
    assert res["before"] == ["mxnext_ops_nn.plugin", "mxnext_ops_tensor.plugin"]
    assert res["catalog"] == res["loaded"]
    providers = {v[0] for v in res["catalog"].values()}
    assert {"ops-nn", "ops-tensor", "builtin"} <= providers
    assert res["catalog"]["Convolution"][0] == "ops-nn" and res["catalog"]["dot"][0] == "ops-tensor"


def test_an_alias_lookup_imports_the_modules_extending_the_op_by_name(tmp_path):
    # ops-tensor's sparse kernels extend "elemwise_mul"; "_mul" is its alias
    code = '''
        import json
        import mxnext as mx
        x = mx.nd.array([[1.0, 0.0], [0.0, 0.0]]).tostype("row_sparse")
        print(json.dumps(mx.nd._internal._mul(x, x).stype))
    '''
    run(tmp_path, "import mxnext; mxnext.plugins.load(); print('{}')", cache=tmp_path, disable="")
    assert run(tmp_path, code, cache=tmp_path, disable="") == "row_sparse"
