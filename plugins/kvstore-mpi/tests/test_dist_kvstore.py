"""dist_sync and dist_sync_device over real ``mpiexec -n 2`` and ``-n 3`` jobs: the KVStore
conformance kit on every rank, Module.fit equal to local on the summed data, the one-worker
store without a launcher, ``mxnext launch`` and what importing costs."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest



def _kit(jobs, tmp_path, n, type_name, extra_env=None):
    proc = jobs.mpiexec(n, "-m", "opsdk.testing.kvstore", type_name, "--report", tmp_path,
                   extra_env=extra_env)
    got = jobs.reports(tmp_path, n)
    assert proc.returncode == 0 and all(got), proc.stdout + proc.stderr
    return got


def test_conformance_dist_sync_two_ranks(jobs, tmp_path):
    for r, rep in enumerate(_kit(jobs, tmp_path, 2, "dist_sync")):
        assert (rep["rank"], rep["num_workers"], rep["failed"]) == (r, 2, {})


def test_conformance_dist_device_sync_three_ranks_with_keys_split(jobs, tmp_path):
    # keys above 5 elements go across in parts of 5: every key of the kit but the smallest
    got = _kit(jobs, tmp_path, 3, "dist_device_sync", {"MXNET_KVSTORE_BIGARRAY_BOUND": "5"})
    assert [(rep["rank"], rep["num_workers"], rep["failed"]) for rep in got] == [
        (0, 3, {}), (1, 3, {}), (2, 3, {})]


def test_without_a_launcher_a_dist_store_is_one_worker(jobs):
    proc = jobs.run([sys.executable, "-m", "opsdk.testing.kvstore", "dist_sync"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {"rank": 0, "num_workers": 1,
                                                        "failed": {}}


def test_import_loads_no_mpi_until_a_dist_store_is_created(jobs):
    code = ("import sys, mxnext as mx; mx.nd.ones((2,)); mx.kv.create('device'); "
            "a = 'mpi4py' in sys.modules; mx.kv.create('dist_sync'); "
            "print(a, 'mpi4py' in sys.modules)")
    proc = jobs.run([sys.executable, "-c", code])
    assert proc.stdout.split() == ["False", "True"], proc.stderr


FIT = '''
import os, sys
import numpy as np
import mxnext as mx

folder = sys.argv[1]
for update_on_kvstore in ("1", "0"):
    os.environ["MXNET_UPDATE_ON_KVSTORE"] = update_on_kvstore
    kv = mx.kv.create("dist_sync")
    it = mx.io.MNISTIter(image=f"{folder}/images", label=f"{folder}/labels", batch_size=8,
                         shuffle=False, flat=True, silent=True, num_parts=kv.num_workers,
                         part_index=kv.rank)
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc2")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"), context=mx.cpu())
    # with the optimizer on the store, rank 0's initial values reach every rank (broadcast);
    # without, as in MXNet, every rank starts from its own: the same seed makes them equal
    mx.random.seed(kv.rank if update_on_kvstore == "1" else 0)
    mod.fit(it, num_epoch=2, kvstore=kv, optimizer="sgd",
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
            initializer=mx.init.Xavier())
    args = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    np.savez(f"{folder}/params-{update_on_kvstore}-{kv.rank}.npz", **args)
'''


def _mnist(folder, count=96, side=4):
    rng = np.random.default_rng(5)
    images = rng.integers(0, 256, (count, side, side), dtype=np.uint8)
    labels = (images.reshape(count, -1).mean(1) > 127).astype(np.uint8)
    (folder / "images").write_bytes(np.array([2051, count, side, side], ">i4").tobytes()
                                    + images.tobytes())
    (folder / "labels").write_bytes(np.array([2049, count], ">i4").tobytes() + labels.tobytes())
    return images.reshape(count, -1).astype(np.float32) / 256, labels.astype(np.float32)


def test_module_fit_on_two_ranks_equals_local_on_the_summed_data(jobs, tmp_path):
    import mxnext as mx
    x, y = _mnist(tmp_path)
    proc = jobs.mpiexec(2, jobs.write_script(tmp_path, FIT), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # local over two devices: device k gets rank k's batch (rank k reads part k of the files)
    order = np.arange(len(x)).reshape(2, -1, 8).transpose(1, 0, 2).reshape(-1)
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8, name="fc1")
    net = mx.sym.FullyConnected(mx.sym.Activation(net, act_type="relu"), num_hidden=2,
                                name="fc2")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"),
                        context=[mx.cpu(0), mx.cpu(1)])
    mx.random.seed(0)
    mod.fit(mx.io.NDArrayIter(x[order], y[order], batch_size=16), num_epoch=2, kvstore="local",
            optimizer="sgd", optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
            initializer=mx.init.Xavier())
    local = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    for mode in ("1", "0"):
        ranks = [np.load(tmp_path / f"params-{mode}-{r}.npz") for r in (0, 1)]
        for name, value in local.items():
            assert np.array_equal(ranks[0][name], ranks[1][name]), (mode, name)
            np.testing.assert_allclose(ranks[0][name], value, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name}, update_on_kvstore={mode}")


def test_launch_starts_the_workers_and_prints_its_commands(jobs, tmp_path):
    script = jobs.write_script(tmp_path, '''
        import sys, mxnext as mx
        kv = mx.kv.create("dist_sync")
        open(f"{sys.argv[1]}/rank-{kv.rank}.json", "w").write(
            f'{{"rank": {kv.rank}, "num_workers": {kv.num_workers}, "args": "{sys.argv[2]}"}}')
    ''')
    proc = jobs.run([jobs.MXNEXT, "launch", "-n", "2", "--timeout", "30", str(script),
                     str(tmp_path), "--lr=0.1"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert jobs.reports(tmp_path, 2) == [{"rank": r, "num_workers": 2, "args": "--lr=0.1"}
                                    for r in (0, 1)]
    dry = jobs.run([jobs.MXNEXT, "launch", "-n", "3", "--dry-run", str(script), "a b"])
    assert dry.stdout.split()[1:4] == ["-disable-auto-cleanup", "-n", "3"]
    assert dry.stdout.strip().endswith(f"{sys.executable} {script} 'a b'")
    bad = jobs.run([jobs.MXNEXT, "launch", "-n", "2", "--hostfile", str(script), str(script)])
    assert bad.returncode == 2 and "--hostfile goes with --launcher mpi" in bad.stderr


def test_launch_prefixes_each_whole_line_with_the_workers_rank(jobs, tmp_path):
    script = jobs.write_script(tmp_path, '''
        import os, sys, time
        rank = os.environ["PMI_RANK"]
        for i in range(3):
            print(f"step {i} of rank", end="", flush=True)
            time.sleep(0.05)
            print(f" {rank} done", flush=True)
        print(f"warning from {rank}", file=sys.stderr, flush=True)
        sys.stdout.buffer.write("accuracy 0.97 \u00b5".encode() + rank.encode())
    ''')
    proc = jobs.run([jobs.MXNEXT, "launch", "-n", "2", str(script)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = {f"[rank {r}] step {i} of rank {r} done" for r in (0, 1) for i in range(3)}
    want |= {f"[rank {r}] accuracy 0.97 \u00b5{r}" for r in (0, 1)}
    assert sorted(proc.stdout.splitlines()) == sorted(want)
    assert {f"[rank {r}] warning from {r}" for r in (0, 1)} <= set(proc.stderr.splitlines())


@pytest.mark.parametrize("name", ["dist_async", "dist_async_device"])
def test_async_types_say_why_they_are_not_provided(name):
    import mxnext as mx
    with pytest.raises(mx.MXNetError, match=f"'{name}' is an MXNet 1.x KVStore type mxnext "
                                            f"does not provide: asynchronous updates need a "
                                            f"parameter server"):
        mx.kv.create(name)


def test_kvstores_command_lists_the_dist_types_with_this_plugin(jobs):
    proc = jobs.run([jobs.MXNEXT, "kvstores", "--json"])
    rows = {r["type"]: r for r in json.loads(proc.stdout)}
    for name, cls in (("dist_sync", "DistSyncKVStore"), ("dist_sync_device",
                                                         "DistSyncDeviceKVStore"),
                      ("dist_device_sync", "DistSyncDeviceKVStore")):
        assert rows[name]["plugin"] == "kvstore-mpi"
        assert rows[name]["implementation"] == f"mxnext_kvstore_mpi.store.{cls}"
    assert rows["local"]["plugin"] == rows["device"]["plugin"] == "builtin"


EXIT_AFTER_PUSHES = """
import sys, time
import mxnext as mx
kv = mx.kv.create("dist_sync")
kv.init("w", mx.nd.zeros((1 << 20,)))
grad, out = mx.nd.zeros((1 << 20,)), mx.nd.zeros((1 << 20,))
for step in range(5):             # heavy work the engine keeps for this thread, then the sums
    grad = grad + (kv.rank + 1)
    kv.pushpull("w", grad, out=out)
print("issued", flush=True)       # and the program ends without waiting for any of it
"""


def test_a_program_ending_right_after_its_pushes_ends_at_once(jobs, tmp_path):
    # the collectives wait for data the engine hands over; the store waits for the engine
    # before its collective thread, so the end takes no KVStore timeout (here 100 s)
    proc = jobs.mpiexec(2, jobs.write_script(tmp_path, EXIT_AFTER_PUSHES), timeout=60,
                        extra_env={"MXNEXT_KVSTORE_TIMEOUT": "100"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("issued") == 2


def test_sparse_values_are_refused_by_name(jobs):
    code = ("import mxnext as mx; kv = mx.kv.create('dist_sync'); "
            "kv.init(0, mx.nd.zeros((3, 2))); "
            "kv.push(0, mx.nd.ones((3, 2)).tostype('row_sparse'))")
    proc = jobs.run([sys.executable, "-c", code])
    assert proc.returncode != 0
    assert "KVStore.push: key 0: the dist stores take dense values, got a row_sparse" in \
        proc.stderr
