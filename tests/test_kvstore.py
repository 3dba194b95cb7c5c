"""mx.kv / mx.kvstore: the builtin ``local`` store (sums across devices, updaters, key
rules, through the engine) and KVStore types contributed by plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext import engine
from mxnext.base import MXNetError

SHAPE = (2, 3)
DEVS = [mx.cpu(0), mx.cpu(1)]


def full(value, ctx=None, dtype="float32"):
    return mx.nd.array(np.full(SHAPE, value), ctx=ctx, dtype=dtype)


def values(arrays):
    return [a.asnumpy().tolist() for a in arrays]


def test_kv_and_kvstore_are_the_same_module_with_create():
    assert mx.kv is mx.kvstore
    kv = mx.kv.create()
    assert isinstance(kv, mx.kvstore.KVStore) and isinstance(kv, mx.kvstore.KVStoreBase)
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    assert mx.kv.create("LOCAL_allreduce_cpu").type == "local_allreduce_cpu"
    assert kv.is_capable("optimizer")
    with pytest.raises(ValueError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")


def test_import_mxnext_does_not_import_the_kvstore():
    code = "import sys, mxnext; print('mxnext.kvstore' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_push_sums_values_from_several_devices_and_pull_fills_every_out():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros(SHAPE))
    kv.push(3, [full(1, DEVS[0]), full(2, DEVS[1]), full(4, DEVS[1])])
    outs = [mx.nd.empty(SHAPE, ctx=d) for d in DEVS]
    kv.pull(3, out=outs)
    assert [o.context for o in outs] == DEVS
    assert values(outs) == [np.full(SHAPE, 7.0).tolist()] * 2
    kv.push(3, full(5, DEVS[1]))            # without an updater a push replaces the value
    kv.pull(3, out=outs[0])
    assert outs[0].asnumpy().tolist() == np.full(SHAPE, 5.0).tolist()


def test_lists_of_keys_take_one_value_or_list_per_key():
    kv = mx.kv.create()
    kv.init(["a", "b"], [mx.nd.zeros(SHAPE), full(9)])
    kv.push(["a", "b", "a"], [[full(1, DEVS[0]), full(1, DEVS[1])], full(2), full(3)])
    outs = [[mx.nd.empty(SHAPE, d) for d in DEVS], [mx.nd.empty(SHAPE)]]
    kv.pull(["a", "b"], out=outs)
    assert values(outs[0]) == [np.full(SHAPE, 5.0).tolist()] * 2   # 1 + 1 + 3, same key summed
    assert values(outs[1]) == [np.full(SHAPE, 2.0).tolist()]


def test_init_copies_and_the_stored_dtype_wins():
    kv = mx.kv.create()
    src = full(4)
    kv.init(0, src)
    src[:] = 100                             # the store kept a copy
    kv.push(0, full(1.5, dtype="float64"))
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    assert out.dtype == np.float32 and out.asnumpy().tolist() == np.full(SHAPE, 1.5).tolist()


def test_pushpull_and_broadcast():
    kv = mx.kv.create()
    kv.init(1, mx.nd.zeros(SHAPE))
    vals = [full(2, DEVS[0]), full(3, DEVS[1])]
    kv.pushpull(1, vals)                    # no out: the sum goes back into the values
    assert values(vals) == [np.full(SHAPE, 5.0).tolist()] * 2
    out = mx.nd.empty(SHAPE)
    kv.pushpull(1, full(1), out=out, priority=3)
    assert out.asnumpy().tolist() == np.full(SHAPE, 1.0).tolist()

    outs = [mx.nd.empty(SHAPE, d) for d in DEVS]
    kv.broadcast(2, full(6), out=outs)
    assert values(outs) == [np.full(SHAPE, 6.0).tolist()] * 2
    with pytest.raises(MXNetError, match="KVStore.init: key 2 is already initialized"):
        kv.broadcast(2, full(6), out=outs)


def test_updater_gets_key_sum_and_stored_value_and_runs_in_push_order():
    seen = []

    def updater(key, recv, local):
        seen.append((key, recv.context, local.context))
        local[:] = local * 2 + recv          # not commutative: order shows

    for keys in ([5, 7], ["w", "v"]):
        kv = mx.kv.create()
        kv._set_updater(updater)
        kv.init(keys, [full(1), full(10)])
        for step in (1, 2, 3):
            kv.push(keys[0], [full(step, d) for d in DEVS])
        kv.push(keys[1], full(1))
        outs = [mx.nd.empty(SHAPE), mx.nd.empty(SHAPE)]
        kv.pull(keys, out=outs)
        # ((1*2 + 2)*2 + 4)*2 + 6 = 30 ; 10*2 + 1 = 21
        assert values(outs) == [np.full(SHAPE, 30.0).tolist(), np.full(SHAPE, 21.0).tolist()]
        assert [k for k, _, _ in seen] == [keys[0]] * 3 + [keys[1]]
        assert all(type(k) is type(keys[0]) for k, _, _ in seen)
        assert {c for _, rc, lc in seen for c in (rc, lc)} == {mx.cpu(0)}
        seen.clear()


def test_push_and_pull_wait_for_nothing():
    """A push whose value an unfinished engine operation is still writing returns at once;
    the pull after it sees the value that operation produced."""
    with engine.use_engine("ThreadedEnginePerDevice") as eng:
        kv = mx.kv.create()
        kv.init("k", mx.nd.zeros(SHAPE))
        val = mx.nd.zeros(SHAPE)
        data = val._data()
        started, completions = threading.Event(), []

        def finish(exc=None):               # once: by the test, or by the watchdog
            if completions:
                completions.pop()(exc)

        def slow_write(rctx, on_complete):   # done only when finish() is called
            completions.append(on_complete)
            started.set()

        eng.push_async(slow_write, val.context, (), (val._chunk.var,))
        watchdog = threading.Timer(30, finish, (RuntimeError("kv.push or pull waited"),))
        watchdog.start()
        kv.push("k", val)
        out = mx.nd.empty(SHAPE)
        kv.pull("k", out=out)
        assert started.wait(30)
        data[...] = 7
        watchdog.cancel()
        finish()
        assert out.asnumpy().tolist() == np.full(SHAPE, 7.0).tolist()


def test_key_types_are_int_or_str_and_never_mixed():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros(SHAPE))
    for call in (lambda: kv.init("a", full(1)), lambda: kv.push("a", full(1)),
                 lambda: kv.pull("a", out=full(1)), lambda: kv.pull(["a"], out=[full(1)])):
        with pytest.raises(MXNetError, match="key 'a' is str, but this store uses int keys"):
            call()
    with pytest.raises(MXNetError, match="keys must be int or str, got float 1.5"):
        kv.push(1.5, full(1))
    kv.push(np.int64(3), full(2))            # numpy integers are ints
    s = mx.kv.create()
    with pytest.raises(MXNetError, match="key 4 is int, but this store uses str keys"):
        s.init(["a", 4], [full(1), full(1)])


def test_bad_keys_and_values_name_the_call_and_the_key():
    kv = mx.kv.create()
    kv.init(1, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match=r"KVStore.pull: key 2 is not initialized; call "
                                         r"init\(2, value\) first"):
        kv.pull(2, out=mx.nd.empty(SHAPE))
    with pytest.raises(MXNetError, match="KVStore.push: key 2 is not initialized"):
        kv.push(2, full(1))
    with pytest.raises(MXNetError, match=r"KVStore.push: key 1: expected arrays of shape "
                                         r"\(2, 3\), got one of shape \(3,\)"):
        kv.push(1, mx.nd.ones((3,)))
    with pytest.raises(MXNetError, match="2 keys need a list of 2 values, got 1"):
        kv.push([1, 1], [full(1)])
    with pytest.raises(MXNetError, match="key 1: expected an NDArray or a list of NDArrays"):
        kv.push(1, np.ones(SHAPE))
    with pytest.raises(MXNetError, match="KVStore.init: key 5 takes one NDArray, got 2"):
        kv.init(5, [full(1), full(2)])
    with pytest.raises(MXNetError, match="pull: out is required"):
        kv.pull(1)


def test_row_sparse_pull_refusals_and_single_process_calls():
    kv = mx.kv.create()
    kv.init(1, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="row_sparse_pull: key 1: outputs must be row_sparse"):
        kv.row_sparse_pull(1, out=mx.nd.empty(SHAPE), row_ids=mx.nd.array([0]))
    with pytest.raises(MXNetError, match="set_gradient_compression: not supported for "
                                         "KVStore type 'local'"):
        kv.set_gradient_compression({"type": "2bit"})
    kv._barrier()
    kv._send_command_to_servers(0, "anything")
    out = mx.nd.empty(SHAPE)
    kv.pull(1, out=out, ignore_sparse=False)
    assert out.asnumpy().sum() == 0


class _StatefulUpdater:
    """An updater with states, as ``mx.optimizer.get_updater`` returns."""

    def __init__(self):
        self.count = 0

    def __call__(self, key, recv, local):
        self.count += 1
        local += recv

    def get_states(self, dump_optimizer=False):
        return f"{self.count}:{int(dump_optimizer)}".encode()

    def set_states(self, states):
        self.count = int(states.decode().split(":")[0])


def test_optimizer_states_round_trip_through_a_file(tmp_path):
    kv = mx.kv.create()
    with pytest.raises(MXNetError, match="no optimizer is set; call set_optimizer first"):
        kv.save_optimizer_states(str(tmp_path / "s"))
    kv._set_updater(lambda key, recv, local: None)
    with pytest.raises(MXNetError, match=r"has no get_states\(\)"):
        kv.save_optimizer_states(str(tmp_path / "s"))
    with pytest.raises(MXNetError, match="expected a callable updater"):
        kv._set_updater(3)
    up = _StatefulUpdater()
    kv._set_updater(up)
    kv.init(0, mx.nd.zeros(SHAPE))
    kv.push(0, full(1))
    kv.push(0, full(1))
    path = tmp_path / "states"
    kv.save_optimizer_states(str(path), dump_optimizer=True)
    assert path.read_bytes() == b"2:1" and os.listdir(tmp_path) == ["states"]
    up.count = 0
    kv.load_optimizer_states(str(path))
    assert up.count == 2


def test_set_optimizer_runs_the_optimizer_at_each_push():
    opt = pytest.importorskip("mxnext.optimizer")
    kv = mx.kv.create()
    kv.set_optimizer(opt.SGD(learning_rate=0.5, rescale_grad=1.0))
    kv.init("w", full(1))
    kv.push("w", [full(1, d) for d in DEVS])        # grad 2: w = 1 - 0.5 * 2
    out = mx.nd.empty(SHAPE)
    kv.pull("w", out=out)
    assert np.allclose(out.asnumpy(), 0.0)
    kv.push("w", full(-4))
    kv.pull("w", out=out)
    assert np.allclose(out.asnumpy(), 2.0)


def test_optimizer_states_saved_by_one_store_continue_in_another(tmp_path):
    opt = pytest.importorskip("mxnext.optimizer")

    def store():
        kv = mx.kv.create()
        kv.set_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=1.0))
        kv.init(0, full(1))
        return kv

    first, out = store(), mx.nd.empty(SHAPE)
    first.push(0, full(1))
    first.save_optimizer_states(str(tmp_path / "kv.states"))
    second = store()
    second.load_optimizer_states(str(tmp_path / "kv.states"))
    for kv in (first, second):
        kv.push(0, full(1))                  # momentum -0.1 carried: the step is -0.19
        kv.pull(0, out=out)                  # (fresh momentum would step -0.1)
        assert np.allclose(out.asnumpy(), 0.81 if kv is second else 0.71), kv


@pytest.mark.parametrize("name, text", [
    ("nccl", "unknown KVStore type 'nccl'; 'nccl' is an MXNet 1.x KVStore type provided by "
             "mxnext-device-cupy"),
    ("dist_async", "unknown KVStore type 'dist_async'; 'dist_async' is an MXNet 1.x KVStore "
                   "type mxnext does not provide: asynchronous updates need a parameter server"),
    ("locl", "unknown KVStore type 'locl' (did you mean 'local'?); known KVStore types are: "
             "device, "),
])
def test_unknown_types_say_where_they_come_from(name, text):
    with pytest.raises(MXNetError) as err:
        mx.kv.create(name)
    assert str(err.value).startswith(text)
    with pytest.raises(TypeError, match="name must be a str"):
        mx.kv.create(3)


def test_a_dist_type_without_its_plugin_says_how_to_install(monkeypatch):
    import importlib.metadata as md
    from mxnext.kvstore import base

    def version(dist):
        raise md.PackageNotFoundError(dist)

    monkeypatch.setattr(md, "version", version)
    mx.kvstore.available()                           # plugins loaded: nothing refills below
    for name in ("dist_sync", "dist_sync_device", "dist_device_sync"):
        monkeypatch.delitem(base._backends, name, raising=False)
    with pytest.raises(MXNetError, match=r"^unknown KVStore type 'dist_device_sync'; "
                                         r"'dist_sync_device' is an MXNet 1.x KVStore type "
                                         r"provided by mxnext-kvstore-mpi, which is not "
                                         r"installed: `mxnext install mxnext-kvstore-mpi`"):
        mx.kv.create("Dist_Device_Sync")


@pytest.mark.parametrize("name, kind, canonical", [
    ("local", "KVStore", "local"), ("Local_Update_CPU", "KVStore", "local"),
    ("local_whatever", "KVStore", "local"), ("device", "DeviceKVStore", "device"),
    ("local_allreduce_device", "DeviceKVStore", "device"),
    ("my_device_store", "DeviceKVStore", "device"),
])
def test_names_resolve_as_mxnet_resolves_them(name, kind, canonical):
    kv = mx.kv.create(name)
    assert (type(kv).__name__, kv.type) == (kind, name.lower())
    assert mx.kvstore.canonical_name(name.lower()) == canonical
    for given, dist in (("dist", "dist_sync"), ("dist_device_sync", "dist_sync_device"),
                        ("dist_sync_device", "dist_sync_device"), ("dist_async", "dist_async"),
                        ("dist_async_device", "dist_async_device"), ("nccl_x", "nccl")):
        assert mx.kvstore.canonical_name(given) == dist


def test_builtin_local_is_registered_through_the_plugin_hook():
    builtin = next(p for p in mx.plugins.report() if p.name == "builtin")
    assert builtin.contributions["kvstores"] == [
        "device", "local", "local_allreduce_cpu", "local_allreduce_device", "local_update_cpu",
        "local_update_device", "teststore"]
    assert mx.kvstore.available()["local"] is mx.kvstore.KVStore


def test_mxnet_register_decorator_fills_the_same_table():
    @mx.kvstore.KVStoreBase.register
    class _TestKVDecorated(mx.kvstore.KVStoreBase):
        @property
        def type(self):
            return "decorated"

    try:
        assert mx.kv.create("_testkvdecorated").type == "decorated"
        with pytest.warns(UserWarning, match="'_testkvdecorated' .* is overridden"):
            mx.kvstore.KVStoreBase.register(_TestKVDecorated)
        with pytest.raises(MXNetError, match="'local' is already registered by "
                                             "mxnext.kvstore.kvstore.KVStore"):
            mx.kvstore.register("local", _TestKVDecorated)
    finally:
        from mxnext.kvstore import base
        base._backends.pop("_testkvdecorated", None)



# MXNet 1.9's KVStore methods, with arguments to call each.
KVSTORE_CALLS = {
    "init": (0, None), "push": (0, None), "pull": (0, None), "row_sparse_pull": (0, None),
    "set_optimizer": (None,), "_set_updater": (None,), "set_gradient_compression": ({},),
    "save_optimizer_states": ("f",), "load_optimizer_states": ("f",), "_barrier": (),
    "_send_command_to_servers": (0, ""), "is_capable": ("optimizer",),
}


class _BareStore(mx.kvstore.KVStoreBase):
    @property
    def type(self):
        return "bare"


@pytest.mark.parametrize("method", sorted(KVSTORE_CALLS))
def test_kvstore_base_declares_every_mxnet_method_and_names_the_missing_one(method):
    with pytest.raises(NotImplementedError, match=rf"^KVStore type 'bare' \(_BareStore\) does "
                                                  rf"not implement {method}\(\); a KVStoreBase "
                                                  rf"subclass must override it$"):
        getattr(_BareStore(), method)(*KVSTORE_CALLS[method])


@pytest.mark.parametrize("prop", ["type", "rank", "num_workers"])
def test_kvstore_base_properties_name_the_class_when_the_type_is_missing(prop):
    with pytest.raises(NotImplementedError, match=rf"^KVStore type KVStoreBase does not "
                                                  rf"implement {prop}\(\)"):
        getattr(mx.kvstore.KVStoreBase(), prop)


def test_kvstore_base_builds_pushpull_and_broadcast_from_init_push_and_pull():
    class DictStore(_BareStore):
        def __init__(self):
            self.data, self.calls = {}, []

        def init(self, key, value):
            self.calls.append(("init", key))
            self.data[key] = value.copy()

        def push(self, key, value, priority=0):
            self.calls.append(("push", key, priority))
            self.data[key] += value

        def pull(self, key, out=None, priority=0, ignore_sparse=True):
            self.calls.append(("pull", key, priority))
            out[:] = self.data[key]

    kv = DictStore()
    out = mx.nd.zeros(SHAPE)
    kv.broadcast("w", full(2), out)
    assert values([out]) == [[[2.0] * 3] * 2]
    grad = full(3)
    kv.pushpull("w", grad, priority=-1)                 # no out: the result goes back to value
    assert values([grad]) == [[[5.0] * 3] * 2]
    kv.pushpull("w", full(1), out=out)
    assert values([out]) == [[[6.0] * 3] * 2]
    assert kv.calls == [("init", "w"), ("pull", "w", 0), ("push", "w", -1), ("pull", "w", -1),
                        ("push", "w", 0), ("pull", "w", 0)]


# -- a KVStore type from a third-party plugin (a real distribution on sys.path) ----------------
PLUGIN = '''
from opsdk import hookimpl


class EchoStore:
    """Returns what was pushed last, for any key."""

    def __init__(self, name):
        self.type, self.last = name, None

    def pushpull(self, key, value, out=None, priority=0):
        self.last = value


@hookimpl
def mxnext_register_kvstores(registry):
    registry.register("echo", EchoStore)
'''

CLASH = '''
from opsdk import hookimpl


@hookimpl
def mxnext_register_kvstores(registry):
    registry.register("clash_first", object)
    registry.register("local", object)
'''

PROBE = '''
import json, warnings
warnings.simplefilter("ignore")
import mxnext as mx
kv = mx.kv.create("ECHO")
kv.pushpull(0, "v")
try:
    clash_first = repr(mx.kv.create("clash_first"))
except mx.MXNetError as exc:
    clash_first = str(exc)
print(json.dumps({"type": kv.type, "last": kv.last, "cls": type(kv).__module__,
                  "plugins": {p.name: [p.status, p.contributions["kvstores"], p.error]
                              for p in mx.plugins.report()},
                  "local": type(mx.kv.create()).__name__, "clash_first": clash_first}))
'''


def _dist(root, name, source):
    module = name.replace("-", "_") + "_plugin"
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"mxnext_{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: mxnext-{name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[mxnext]\n{name} = {module}\n")


def test_a_plugin_contributes_a_kvstore_type_through_the_entry_point_hook(tmp_path):
    _dist(tmp_path, "kv-echo", PLUGIN)
    _dist(tmp_path, "kv-clash", CLASH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MXNEXT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (res["type"], res["last"], res["cls"]) == ("echo", "v", "kv_echo_plugin")
    assert res["plugins"]["kv-echo"] == ["loaded", ["echo"], None]
    status, contributed, error = res["plugins"]["kv-clash"]
    assert status == "failed" and contributed == []
    assert "KVStore type 'local' is already registered by mxnext.kvstore.kvstore.KVStore" in error
    assert res["local"] == "KVStore" and res["clash_first"].startswith(
        "unknown KVStore type 'clash_first'")      # the failed plugin's types are withdrawn
    assert "local" in res["plugins"]["builtin"][1] and "device" in res["plugins"]["builtin"][1]

