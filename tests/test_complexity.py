"""No function of the tree (core, cli, opsdk, the plugins' sources) is ranked D or worse by
radon's cyclomatic complexity, but for the few listed below."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank
from radon.visitors import ComplexityVisitor

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = [ROOT / "src" / "mxnext", ROOT / "src" / "mxnext_cli", ROOT / "src" / "opsdk", *sorted(ROOT.glob("plugins/*/src"))]

# a function is named by its qualified name, optionally after its module's path (its tail)
ALLOWED = {
    "FastPaths.push", "_imperative._run", "recipe._compile", "graph/infer._fixpoint",
}


def _functions(functions, classes, prefix=""):
    """``(qualified name, block)`` of every function and method radon found (a function's
    closures count in its own complexity)."""
    for block in functions:
        yield f"{prefix}{block.name}", block
    for cls in classes:
        yield from _functions(cls.methods, cls.inner_classes, f"{prefix}{cls.name}.")


def _names(path: Path, qualname: str) -> set[str]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return {qualname} | {"/".join(parts[i:]) + "." + qualname for i in range(len(parts))}


def too_complex(path: Path, source: str) -> list[str]:
    """``path:line name rank (complexity)`` of each function ranked D or worse that the
    allow-list does not name."""
    found = []
    visitor = ComplexityVisitor.from_code(source)
    for qualname, block in _functions(visitor.functions, visitor.classes):
        rank = cc_rank(block.complexity)
        if rank >= "D" and not _names(path, qualname) & ALLOWED:
            found.append(f"{path.relative_to(ROOT)}:{block.lineno} {qualname} "
                         f"{rank} ({block.complexity})")
    return found


def test_no_function_is_ranked_d_or_worse():
    found = [hit for folder in FOLDERS for path in sorted(folder.rglob("*.py"))
             for hit in too_complex(path, path.read_text())]
    assert found == [], "split these into named steps:\n" + "\n".join(found)


def _branchy(name: str, indent: int) -> str:
    """A function ``name`` of 25 ifs (complexity 26, rank D), indented by ``indent``."""
    pad = " " * indent
    body = "".join(f"{pad}    if x == {i}:\n{pad}        return {i}\n" for i in range(25))
    return f"{pad}def {name}(x):\n{body}"


def test_the_check_sees_a_complex_function_and_honours_the_allow_list():
    source = "class FastPaths:\n" + _branchy("push", 4) + "\n\n" + _branchy("step", 0)
    hits = too_complex(ROOT / "src" / "mxnext" / "example.py", source)
    assert [hit.split(" ", 1)[1] for hit in hits] == ["step D (26)"]
