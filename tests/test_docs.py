"""The ```python blocks of README.md and docs/*.md run.

Each doc file's blocks run in order in one fresh interpreter, sharing one namespace as a
reader typing them in would, in a temporary working directory (files the examples write
land there). A block whose first line is a ``# path/to/file.py`` comment is a file of the
project a guide builds (a plugin's module or test, which runs only once installed): it is
written to that path and compiled, not run. Signatures and sketches are tagged ```text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FILE_HEADER = re.compile(r"#\s*([\w./-]+\.py)\s*$")

# Runs the blocks given on stdin; compiled with the doc's path and padded to the doc's line
# numbers, so a traceback shows the doc's own lines.
RUNNER = r'''
import json, sys, traceback
from pathlib import Path

namespace = {"__name__": "__main__"}
for block in json.load(sys.stdin):
    where = f"{block['doc']}, block at line {block['line']}"
    try:
        code = compile("\n" * block["line"] + block["code"], block["path"], "exec")
        if block["file"]:
            Path(block["file"]).parent.mkdir(parents=True, exist_ok=True)
            Path(block["file"]).write_text(block["code"])
        else:
            exec(code, namespace)
    except BaseException as exc:
        print(f"{where} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}",
              file=sys.stderr)
        sys.exit(1)
'''


def python_blocks(doc: Path) -> list[dict]:
    """``{doc, path, line (of the opening fence), code, file}`` per ```python block, in
    order."""
    blocks, lines = [], doc.read_text(encoding="utf-8").splitlines()
    name = doc.relative_to(ROOT).as_posix()
    fence = None
    for number, line in enumerate(lines, 1):
        if fence is None:
            if line.strip() == "```python":
                fence, body = number, []
        elif line.strip() == "```":
            header = FILE_HEADER.match(body[0]) if body else None
            blocks.append({"doc": name, "path": str(doc), "line": fence, "code": "\n".join(body) + "\n",
                           "file": header.group(1) if header else None})
            fence = None
        else:
            body.append(line)
    if fence is not None:
        raise AssertionError(f"{name}: the ```python block at line {fence} is never closed")
    return blocks


def test_the_docs_have_python_blocks_to_run():
    counts = {doc.name: len(python_blocks(doc)) for doc in DOCS}
    assert counts["README.md"] >= 1 and counts["user-guide.md"] >= 5, counts


@pytest.mark.parametrize("doc", [d for d in DOCS if "```python" in d.read_text(encoding="utf-8")],
                         ids=lambda d: d.name)
def test_python_blocks_run_in_order(doc, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MXNEXT_")}
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(python_blocks(doc)),
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-6000:], pytrace=False)
