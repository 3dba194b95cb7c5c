"""mxnext._atomic_write: a file mxnext writes appears complete or not at all, even when the
writer is SIGKILLed; the temp files of killed writers are removed by the next write into
the same folder; errors name the target, never the temp file."""

from __future__ import annotations

import ast
import glob
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import mxnext as mx
from mxnext._atomic_write import AtomicFile, write_atomic
from mxnext.optimizer._states_file import StatesFormatError


def temps(folder):
    return sorted(glob.glob(os.path.join(folder, ".*.tmp")))


def test_writes_replace_the_target_and_leave_nothing_else(tmp_path):
    target = tmp_path / "out.bin"
    write_atomic(target, b"first")
    write_atomic(target, "zweite Fassung")
    assert target.read_text(encoding="utf-8") == "zweite Fassung"
    write_atomic(target, b" + more", append=True)
    assert target.read_bytes() == "zweite Fassung + more".encode()
    assert os.listdir(tmp_path) == ["out.bin"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temp(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="midway"):
        with AtomicFile(target) as f:
            f.write(b"half of the new")
            raise RuntimeError("midway")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]


def test_modes_and_symlinks_are_those_open_would_give(tmp_path):
    kept = tmp_path / "kept"
    kept.write_bytes(b"x")
    kept.chmod(0o640)
    write_atomic(kept, b"y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new", b"z")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o640
    link = tmp_path / "link"
    link.symlink_to("kept")
    write_atomic(link, b"through the link")
    assert link.is_symlink() and kept.read_bytes() == b"through the link"


def test_errors_name_the_target_not_the_temp_file(tmp_path):
    missing = tmp_path / "no such folder" / "a.params"
    with pytest.raises(FileNotFoundError) as info:
        write_atomic(missing, b"x")
    assert info.value.filename == str(missing) and ".tmp" not in str(info.value)
    (tmp_path / "a dir").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        mx.nd.save(str(tmp_path / "a dir"), [mx.nd.ones((2,))])
    assert info.value.filename == str(tmp_path / "a dir") and ".tmp" not in str(info.value)
    assert temps(tmp_path) == []


def test_a_permission_error_names_the_target():
    folder = tempfile.mkdtemp(prefix="mxnext-readonly-")
    try:
        os.chmod(folder, 0o555)
        target = os.path.join(folder, "model-0001.params")
        code = textwrap.dedent(f"""
            import os
            from mxnext._atomic_write import write_atomic
            if os.geteuid() == 0:      # root may write anywhere: be nobody for the write
                os.setuid(65534)
            try:
                write_atomic({target!r}, b"x")
            except PermissionError as exc:
                print(type(exc).__name__, exc.filename, "|", exc)
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60)
        assert out.stdout.startswith(f"PermissionError {target} |"), out.stdout + out.stderr
        assert ".tmp" not in out.stdout and os.listdir(folder) == []
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


def _start_writer(target):
    """A process that has written half a file to ``target``'s temp and waits there."""
    code = textwrap.dedent(f"""
        import sys, time
        from mxnext._atomic_write import AtomicFile
        out = AtomicFile({str(target)!r})
        out.file.write(b"half"); out.file.flush()
        print("writing", flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "writing\n"
    return proc


def test_the_next_write_removes_temp_files_of_killed_writers_only(tmp_path):
    target = tmp_path / "model-0001.states"
    target.write_bytes(b"old")
    running = _start_writer(target)
    try:
        killed = _start_writer(target)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        left = temps(tmp_path)
        assert len(left) == 2 and all(f".model-0001.states." in p for p in left)
        assert sorted(str(p.pid) in os.path.basename(t) for p in (killed, running)
                      for t in left).count(True) == 2      # each temp names its writer's pid
        assert target.read_bytes() == b"old"
        write_atomic(target, b"new")
        assert target.read_bytes() == b"new"
        assert [str(running.pid) in os.path.basename(t) for t in temps(tmp_path)] == [True]
    finally:
        running.kill()
        running.wait()
    write_atomic(target, b"newer")
    assert temps(tmp_path) == [] and target.read_bytes() == b"newer"


def test_a_write_of_another_file_removes_temp_files_of_killed_writers(tmp_path):
    running = _start_writer(tmp_path / "net-0002.params")
    try:
        killed = _start_writer(tmp_path / "net-0001.params")
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert len(temps(tmp_path)) == 2
        write_atomic(tmp_path / "net-symbol.json", b"{}")       # another target, same folder
        left = temps(tmp_path)
        assert len(left) == 1 and str(running.pid) in os.path.basename(left[0])
        assert not (tmp_path / "net-0001.params").exists()
    finally:
        running.kill()
        running.wait()


CHECKPOINT_WRITER = """
import itertools, sys
import mxnext as mx
prefix, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=rows,
                                                 name="fc"), name="softmax")
mod = mx.mod.Module(net, context=mx.cpu())
mod.bind([("data", (2, cols))], [("softmax_label", (2,))])
mod.init_params()
mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, cols))], [mx.nd.zeros((2,))]))
mod.update()                                  # the momentum states exist from here on
for i in itertools.count(1):
    mod.set_params({"fc_weight": mx.nd.full((rows, cols), i), "fc_bias": mx.nd.full((rows,), i)},
                   {})
    for state in mod._updater.states.values():
        state[:] = i
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    print(i, flush=True)
"""


def _check_complete(prefix, shape, with_states=True):
    """Both files load whole, each holding one version throughout (the states file: the
    momentum of both weights, unless ``with_states`` is False: a module that has not updated
    yet saves no states, as MXNet's)."""
    params = mx.nd.load(prefix + "-0000.params")
    assert params["arg:fc_weight"].shape == shape
    versions = {float(v.asnumpy().min()) for v in params.values()}
    versions |= {float(v.asnumpy().max()) for v in params.values()}
    assert len(versions) == 1 and min(versions) >= 1
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    with open(prefix + "-0000.states", "rb") as f:
        updater.set_states(f.read())
    states = [s.asnumpy() for s in updater.states.values()]
    if not with_states:
        assert states == []
        return
    assert sorted(s.shape for s in states) == sorted([shape, shape[:1]])
    assert len({float(s.min()) for s in states} | {float(s.max()) for s in states}) == 1


def test_checkpoints_survive_sigkill_at_any_time(tmp_path):
    shape = (1024, 1024)                      # 4 MB .params and 4 MB .states per save
    script = tmp_path / "writer.py"
    script.write_text(CHECKPOINT_WRITER)
    out = tmp_path / "ckpt"
    out.mkdir()
    prefix = str(out / "big")
    rng = random.Random(24)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, str(script), prefix, *map(str, shape)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "1"     # one save done
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        _check_complete(prefix, shape)
    # the next writes of the same files remove whatever the killed writers left; a kill
    # between the pair's two renames leaves each file whole but the pair mismatched, which
    # the load says (naming both files) instead of pairing them
    with_states = True
    try:
        mod = mx.mod.Module.load(prefix, 0, load_optimizer_states=True)
    except StatesFormatError as err:
        assert "big-0000.states" in str(err) and "big-0000.params" in str(err)
        mod, with_states = mx.mod.Module.load(prefix, 0), False
    mod.bind([("data", (2, shape[1]))], [("softmax_label", (2,))])
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    assert temps(out) == []
    assert sorted(os.listdir(out)) == ["big-0000.params", "big-0000.states", "big-symbol.json"]
    _check_complete(prefix, shape, with_states)


WRITERS = {"write_text", "write_bytes", "mkstemp", "NamedTemporaryFile", "save", "savez",
           "savez_compressed", "savetxt", "dump", "tofile"}


def _writes_by_itself(call):
    """Whether ``call`` opens or writes a file other than through ``_atomic_write``."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "open":
        mode = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg in ("mode", "flags")), None)
        if mode is None:
            return False
        if isinstance(call.args[0], ast.Attribute) and call.args[0].attr == "devnull":
            return False
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return any(c in mode.value for c in "wax+")
        return isinstance(func, ast.Name) or "O_RDONLY" not in ast.unparse(mode)
    if name in WRITERS and isinstance(func, ast.Attribute):
        owner = ast.unparse(func.value)
        return owner in ("np", "numpy", "pickle", "json", "tempfile") or name in (
            "write_text", "write_bytes", "tofile")
    return False


def test_every_writer_goes_through_the_atomic_helper():
    """No module of the tree opens or writes a file by itself (AST of every source)."""
    root = Path(__file__).resolve().parents[1]
    sources = [*root.glob("src/**/*.py"), *root.glob("plugins/*/src/**/*.py")]
    bad = []
    for path in sources:
        if path.name == "_atomic_write.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call) and _writes_by_itself(node):
                bad.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    assert bad == []


def test_the_writer_check_sees_writes():
    calls = ['open(p, "w")', 'open(p, "ab")', "open(p, self.flag)", 'Path(p).write_text("x")',
             "np.save(p, a)", "pickle.dump(x, f)", "tempfile.mkstemp()"]
    allowed = ["open(p)", 'open(p, "rb")', 'open(os.devnull, "w")', "nd.save(p, a)",
               "os.open(folder, os.O_RDONLY)", "json.dumps(x)"]
    parse = lambda c: ast.parse(c).body[0].value  # noqa: E731
    assert [_writes_by_itself(parse(c)) for c in calls] == [True] * len(calls)
    assert [_writes_by_itself(parse(c)) for c in allowed] == [False] * len(allowed)
