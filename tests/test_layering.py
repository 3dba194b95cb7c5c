"""The layers of the tree, read from the source (AST): the runtime (``mxnext._runtime``)
imports no frontend, no import circle exists anywhere (imports inside functions count),
and the runtime stays under the line budget ``docs/internals.md`` states."""

from __future__ import annotations

import ast
import re
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


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
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
                    work.append((w, iter(sorted(GRAPH[w]))))
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


def test_the_runtime_keeps_its_line_budget():
    text = (ROOT / "docs" / "internals.md").read_text()
    budget = int(re.search(r"line budget: \*\*([\d,]+) lines\*\*", text).group(1).replace(",", ""))
    lines = sum(len(p.read_text().splitlines()) for p in (ROOT / "src" / "mxnext" / "_runtime").rglob("*.py"))
    assert lines <= budget, f"src/mxnext/_runtime has {lines} lines, over its budget of {budget}"


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
