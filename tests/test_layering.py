"""The layers of the tree, read from the source (AST): the runtime (``mxnext._runtime``)
imports no frontend, no import circle exists anywhere (imports inside functions count),
not even between mxnext's top-level packages, and the runtime stays under the line budget
``docs/internals.md`` states."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _packages() -> dict[str, Path]:
    roots = {}
    for src in (ROOT / "src", *(ROOT / "plugins").glob("*/src")):
        for pkg in src.iterdir():
            if (pkg / "__init__.py").exists():
                roots[pkg.name] = pkg
    return roots


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the tree: dotted name -> (file, is a package)."""
    mods = {}
    for top, folder in _packages().items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            is_pkg = parts[-1] == "__init__"
            name = ".".join((top, *(parts[:-1] if is_pkg else parts)))
            mods[name] = (path, is_pkg)
    return mods


MODULES = _modules()


def _known(name: str) -> str | None:
    """The tree's module ``name`` is, or is in (an attribute of a module), or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """The tree's modules ``module`` imports, anywhere in its body."""
    path, is_pkg = MODULES[module]
    package = module if is_pkg else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else subs + [base]
        else:
            continue
        found.update(t for t in map(_known, targets) if t and t != module)
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_runtime_imports_no_frontend():
    bad = sorted(f"{m} imports {d}" for m, deps in GRAPH.items() if m.startswith("mxnext._runtime")
                 for d in deps if not d.startswith("mxnext._runtime"))
    assert bad == [], "the runtime must not import a frontend:\n" + "\n".join(bad)


def _top_packages() -> dict[str, set[str]]:
    """GRAPH seen from above: ``mxnext.<top>`` -> the other ``mxnext.<top>`` it imports
    (the package ``mxnext`` itself left out: it gathers every frontend)."""
    def top(name):
        parts = name.split(".")
        return ".".join(parts[:2]) if parts[0] == "mxnext" and len(parts) > 1 else None

    tops: dict[str, set[str]] = {}
    for module, deps in GRAPH.items():
        if top(module):
            tops.setdefault(top(module), set()).update(
                top(d) for d in deps if top(d) and top(d) != top(module))
    return tops


def _cycles(graph=None) -> list[list[str]]:
    """Strongly connected components of more than one node of ``graph`` (GRAPH when None;
    Tarjan, iterative)."""
    graph = GRAPH if graph is None else graph
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_circle_anywhere():
    assert _cycles() == []


def test_no_import_circle_between_top_level_packages():
    assert _cycles(_top_packages()) == []


def test_the_package_check_sees_a_circle_through_submodules():
    GRAPH["mxnext.image.image"].add("mxnext.gluon.block")
    try:
        assert any({"mxnext.image", "mxnext.gluon"} <= set(c) for c in _cycles(_top_packages()))
    finally:
        GRAPH["mxnext.image.image"].discard("mxnext.gluon.block")


def test_the_checks_see_a_circle_and_a_frontend_import():
    GRAPH["mxnext._runtime.storage"].add("mxnext.ndarray")
    GRAPH["mxnext.ndarray"].add("mxnext._runtime.storage")
    try:
        assert any({"mxnext._runtime.storage", "mxnext.ndarray"} <= set(c) for c in _cycles())
        try:
            test_the_runtime_imports_no_frontend()
        except AssertionError as exc:
            assert "mxnext._runtime.storage imports mxnext.ndarray" in str(exc)
        else:
            raise AssertionError("the frontend import went unnoticed")
    finally:
        GRAPH["mxnext._runtime.storage"].discard("mxnext.ndarray")
        GRAPH["mxnext.ndarray"].discard("mxnext._runtime.storage")


def _code_lines(text: str) -> int:
    """Lines holding code: blank lines, comments and docstrings left out."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        first = node.body[0] if isinstance(node, owners) and node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER)
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


def test_code_lines_leave_out_blanks_comments_and_docstrings():
    text = '''"""Module."""

import os  # a comment


def f(x):
    """Doc
    string."""
    # comment
    s = """not a
    docstring"""
    return s
'''
    assert _code_lines(text) == 5


def test_the_runtime_keeps_its_line_budget():
    text = (ROOT / "docs" / "internals.md").read_text()
    found = re.search(r"line budget: \*\*([\d,]+) code lines\*\*", text)
    budget = int(found.group(1).replace(",", ""))
    lines = sum(_code_lines(p.read_text()) for p in (ROOT / "src" / "mxnext" / "_runtime").rglob("*.py"))
    assert lines <= budget, f"src/mxnext/_runtime has {lines} code lines, over its budget of {budget}"


def _plugin_source_imports() -> list[str]:
    """``module imports target`` for each import of mxnext (not opsdk) in plugin source."""
    plugins = ROOT / "plugins"
    return sorted(f"{m} imports {d}" for m, deps in GRAPH.items()
                  if plugins in MODULES[m][0].parents
                  for d in deps if d == "mxnext" or d.startswith("mxnext."))


def test_plugin_source_imports_only_opsdk_of_mxnext():
    bad = _plugin_source_imports()
    assert bad == [], "plugin source may import opsdk, never mxnext:\n" + "\n".join(bad)


def test_the_check_sees_a_plugin_importing_mxnext():
    GRAPH["mxnext_kvstore_mpi.store"].add("mxnext.ndarray")
    try:
        assert _plugin_source_imports() == ["mxnext_kvstore_mpi.store imports mxnext.ndarray"]
    finally:
        GRAPH["mxnext_kvstore_mpi.store"].discard("mxnext.ndarray")


# the runtime's public faces (and MXNet's class-registry helper): each a file of its own
PUBLIC = ("base", "context", "engine", "engine.naive", "engine.threaded", "storage", "resource",
          "device", "device.cpu", "ops", "registry", "params", "opctx", "graph", "graph.ir",
          "graph.infer", "graph.gradient", "graph.cse", "graph.memory", "plugins", "hookspecs")

FIND = """
import importlib, importlib.util, json, sys
import mxnext
out = {}
for name in sys.argv[1:]:
    full = "mxnext." + name
    served = [type(f).__name__ for f in sys.meta_path
              if type(f).__module__.startswith("mxnext") and f.find_spec(full, None) is not None]
    mod = importlib.import_module(full)
    real = importlib.import_module("mxnext._runtime." + name.replace("ops", "registry"))
    out[name] = {"origin": importlib.util.find_spec(full).origin, "served": served,
                 "all": sorted(mod.__all__),
                 "same": all(getattr(mod, n) is getattr(real, n, getattr(mod, n))
                             for n in mod.__all__)}
print(json.dumps(out))
"""


def test_every_public_module_is_a_file_that_no_import_hook_serves():
    import json
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", FIND, *PUBLIC], capture_output=True, text=True,
                          check=True, timeout=120)
    found = json.loads(done.stdout)
    for name, got in found.items():
        path = Path(got["origin"])
        assert path.is_relative_to(ROOT / "src" / "mxnext"), (name, path)
        rel = path.relative_to(ROOT / "src").with_suffix("")
        assert ".".join(p for p in rel.parts if p != "__init__") == f"mxnext.{name}"
        assert got["served"] == [], f"mxnext.{name} is served by an import hook"
        assert got["all"] and got["same"], f"mxnext.{name} re-exports other objects"
    assert f"mxnext.{PUBLIC[0]}" in GRAPH and _known("mxnext.engine.get") == "mxnext.engine"
