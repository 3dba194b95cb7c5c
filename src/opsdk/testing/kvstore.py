"""The KVStore conformance kit: MXNet 1.9's KVStore semantics, checked on any registered type.

Every check creates its own stores with ``mx.kv.create(type_name)`` and works for any number
of workers: rank ``r`` pushes values built from ``r + 1``, and the expected results are the
sums over ``num_workers`` ranks, so one check passes in a single process (``local``,
``device``, a dist store started without a launcher) and in every rank of an MPI job. Every
rank makes the same KVStore calls in the same order, whatever its assertions find.

In pytest::

    from opsdk.testing.kvstore import kvstore_conformance_tests
    test_device = kvstore_conformance_tests("device")

Under a launcher, every rank runs the checks and writes ``{"rank": r, "num_workers": n,
"failed": {check: message}}`` as JSON to ``DIR/rank-<r>.json`` (``--report DIR``) or as one
line to stdout::

    mpiexec -n 2 python -m opsdk.testing.kvstore dist_sync --report /tmp/kv
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np

__all__ = ["KVSTORE_CHECKS", "run_kvstore_check", "run_kvstore_checks",
           "kvstore_conformance_tests", "supports_compression"]

SHAPE = (3, 4)


def supports_compression(type_name: str) -> bool:
    """MXNet's rule: ``device`` and ``dist`` stores take gradient compression."""
    return "device" in type_name or "dist" in type_name


def _mx():
    import mxnext
    return mxnext


def _full(value, ctx=None, shape=SHAPE, dtype="float32"):
    mx = _mx()
    return mx.nd.array(np.full(shape, value), ctx=ctx, dtype=dtype)


def _expect(arrays, value, what):
    for i, a in enumerate(arrays if isinstance(arrays, (list, tuple)) else [arrays]):
        got = a.asnumpy()
        if not np.allclose(got, value, rtol=1e-6, atol=1e-6):
            raise AssertionError(f"{what}: output {i} holds {got.reshape(-1)[:4].tolist()}..., "
                                 f"expected {np.asarray(value).reshape(-1)[:4].tolist()}...")


def _ranks(kv):
    """(rank + 1, sum over ranks of rank + 1)."""
    n = kv.num_workers
    return kv.rank + 1, n * (n + 1) / 2


def _devices():
    mx = _mx()
    return [mx.cpu(0), mx.cpu(1)]


# -- the checks ---------------------------------------------------------------------------
def check_describes_itself(type_name):
    """``type`` is the name asked for; ``rank`` in ``range(num_workers)``; it can take an
    optimizer or says it cannot."""
    kv = _mx().kv.create(type_name)
    if kv.type != type_name.lower():
        raise AssertionError(f"type is {kv.type!r}, expected {type_name.lower()!r}")
    if not (isinstance(kv.num_workers, int) and 0 <= kv.rank < kv.num_workers):
        raise AssertionError(f"rank {kv.rank!r} is not in range(num_workers={kv.num_workers})")
    if not isinstance(kv.is_capable("optimizer"), bool):
        raise AssertionError("is_capable('optimizer') must be a bool")


def check_init_takes_rank0_value(type_name):
    """``init`` stores a copy; every worker pulls rank 0's value."""
    kv = _mx().kv.create(type_name)
    mine, _ = _ranks(kv)
    src = _full(mine)
    kv.init(0, src)
    src[:] = -1                                      # the store kept a copy
    out = _full(0)
    kv.pull(0, out=out)
    _expect(out, 1.0, "pull after init")


def check_push_sums_devices_and_workers(type_name):
    """A push sums the values of every device and worker; it replaces the stored value."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    devs = _devices()
    kv.init(3, _full(0))
    kv.push(3, [_full(mine, devs[0]), _full(2 * mine, devs[1])])
    outs = [_full(0, d) for d in devs]
    kv.pull(3, out=outs)
    _expect(outs, 3 * total, "pull after a push from two devices")
    if [o.context for o in outs] != devs:
        raise AssertionError("pull moved its outputs to other devices")
    kv.push(3, _full(mine))
    kv.pull(3, out=outs[1])
    _expect(outs[1], total, "a second push (replaces, no updater)")


def check_pushpull(type_name):
    """``pushpull`` with and without ``out``, from one and several devices."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    devs = _devices()
    kv.init(1, _full(0))
    vals = [_full(mine, d) for d in devs]
    kv.pushpull(1, vals)                             # no out: the sum goes back into value
    _expect(vals, 2 * total, "pushpull into its values")
    out = _full(0)
    kv.pushpull(1, _full(mine), out=out, priority=-1)
    _expect(out, total, "pushpull with out")
    outs = [_full(0, d) for d in devs]
    kv.pushpull(1, _full(mine, devs[1]), out=outs)
    _expect(outs, total, "pushpull into two devices")


def check_lists_of_keys(type_name):
    """Lists of keys take one value or a list per key; a key listed twice is summed."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    devs = _devices()
    keys = [5, 9, 7]
    kv.init(keys, [_full(0), _full(0), _full(0, shape=(7,))])
    kv.push([5, 9, 5, 7], [[_full(mine, devs[0]), _full(mine, devs[1])], _full(mine),
                           _full(3 * mine), _full(mine, shape=(7,))])
    outs = [[_full(0, d) for d in devs], _full(0), _full(0, shape=(7,))]
    kv.pull(keys, out=outs)
    _expect(outs[0], 5 * total, "key 5 (pushed twice in one call)")
    _expect(outs[1], total, "key 9")
    _expect(outs[2], total, "key 7")
    kv.pushpull(keys, [_full(1), _full(2), _full(3, shape=(7,))], out=outs)
    n = kv.num_workers
    _expect(outs[0], n, "key 5 after pushpull of a list")
    _expect(outs[1], 2 * n, "key 9 after pushpull of a list")
    _expect(outs[2], 3 * n, "key 7 after pushpull of a list")


def check_str_keys(type_name):
    """str keys work as int keys do; one store never mixes the two."""
    mx = _mx()
    kv = mx.kv.create(type_name)
    mine, total = _ranks(kv)
    kv.init(["w", "b"], [_full(0), _full(0, shape=(4,))])
    kv.push(["w", "b"], [_full(mine), _full(2 * mine, shape=(4,))])
    out_w, out_b = _full(0), _full(0, shape=(4,))
    kv.pull(["b", "w"], out=[out_b, out_w])
    _expect(out_w, total, "str key 'w'")
    _expect(out_b, 2 * total, "str key 'b'")
    try:
        kv.push(3, _full(1))
    except mx.MXNetError as exc:
        if "3" not in str(exc):
            raise AssertionError(f"mixing int and str keys: the error does not name the key: "
                                 f"{exc}") from None
    else:
        raise AssertionError("an int key was accepted by a store using str keys")


def check_errors_name_the_key(type_name):
    """Pulling a key never initialized, or pushing a value of another shape, is an
    MXNetError naming the key (and nothing is sent)."""
    mx = _mx()
    kv = mx.kv.create(type_name)
    kv.init(11, _full(0))
    for call, what in ((lambda: kv.pull(12, out=_full(0)), "pull of an unknown key"),
                       (lambda: kv.push(11, _full(1, shape=(2,))), "push of another shape")):
        try:
            call()
        except mx.MXNetError as exc:
            if "11" not in str(exc) and "12" not in str(exc):
                raise AssertionError(f"{what}: the error does not name the key: {exc}") from None
        else:
            raise AssertionError(f"{what} was accepted")


def check_broadcast(type_name):
    """``broadcast`` stores rank 0's value and fills every output with it."""
    kv = _mx().kv.create(type_name)
    mine, _ = _ranks(kv)
    outs = [_full(0, d) for d in _devices()]
    kv.broadcast("p", _full(10 * mine), out=outs)
    _expect(outs, 10.0, "broadcast")


def check_dtype_of_the_store_wins(type_name):
    """A value of another dtype is cast to the stored one."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    kv.init(2, _full(0))
    kv.push(2, _full(mine / 4, dtype="float64"))
    out = _full(0)
    kv.pull(2, out=out)
    if out.dtype != np.float32:
        raise AssertionError(f"pull gave {out.dtype}, the stored dtype is float32")
    _expect(out, total / 4, "push of float64 into a float32 key")


def check_updater_order(type_name):
    """The updater gets ``(key, sum, stored)`` once per push, in push order, everywhere."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    seen = []

    def updater(key, recv, local):
        seen.append(key)
        local[:] = local * 2 + recv                  # not commutative: the order shows

    kv._set_updater(updater)
    kv.init([4, 6], [_full(1), _full(10)])
    for step in (1, 2, 3):
        kv.push(4, [_full(step * mine, d) for d in _devices()])
    kv.push(6, _full(mine))
    outs = [_full(0), _full(0)]
    kv.pull([4, 6], out=outs)
    expect4 = ((1 * 2 + 2 * total) * 2 + 4 * total) * 2 + 6 * total
    _expect(outs[0], expect4, "key 4 after three updates")
    _expect(outs[1], 20 + total, "key 6 after one update")
    if seen != [4, 4, 4, 6]:
        raise AssertionError(f"updater saw keys {seen}, expected [4, 4, 4, 6]")


def check_optimizer_on_the_store(type_name):
    """``set_optimizer``: SGD with momentum runs on the sums of every push."""
    mx = _mx()
    kv = mx.kv.create(type_name)
    mine, total = _ranks(kv)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=1.0))
    kv.init("w", _full(1))
    out = _full(0)
    kv.pushpull("w", _full(mine), out=out)           # mom = -0.1 g; w = 1 - 0.1 g
    kv.pushpull("w", _full(mine), out=out)           # mom = -0.19 g; w = 1 - 0.29 g
    _expect(out, 1 - 0.29 * total, "weight after two SGD steps with momentum")


def check_optimizer_states_round_trip(type_name):
    """States saved by one store continue in a new one (momentum carried)."""
    mx = _mx()

    def store():
        kv = mx.kv.create(type_name)
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=1.0))
        kv.init(0, _full(1))
        return kv

    first = store()
    mine, total = _ranks(first)
    first.push(0, _full(mine))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"kv-{first.rank}.states")
        first.save_optimizer_states(path)
        second = store()
        second.load_optimizer_states(path)
    out = _full(0)
    second.push(0, _full(mine))                      # from 1: step -0.19 g (fresh: -0.1 g)
    second.pull(0, out=out)
    _expect(out, 1 - 0.19 * total, "a new store after load_optimizer_states")


def check_gradient_compression(type_name):
    """2-bit compression (``device`` and ``dist`` types, as MXNet): what a worker sends is
    +-threshold or 0, and what it keeps back is added to its next push."""
    mx = _mx()
    kv = mx.kv.create(type_name)
    params = {"type": "2bit", "threshold": 0.5}
    if not supports_compression(type_name):
        try:
            kv.set_gradient_compression(params)
        except mx.MXNetError:
            return
        raise AssertionError(f"{type_name!r} accepted gradient compression; MXNet's "
                             f"non-device, non-dist stores do not")
    kv.set_gradient_compression(params)
    n = kv.num_workers
    grad = np.array([0.3, -0.3, 0.6, -0.6, 1.7, 0.0, 0.49, -2.0], np.float32)
    kv.init("g", _full(0, shape=grad.shape))
    out = _full(0, shape=grad.shape)
    residual = np.zeros_like(grad)
    for step in range(3):
        kv.push("g", mx.nd.array(grad))
        kv.pull("g", out=out)
        residual += grad
        sent = np.where(residual >= 0.5, 0.5, np.where(residual <= -0.5, -0.5, 0.0))
        residual -= sent
        _expect(out, n * sent, f"compressed push {step + 1}")
    for bad in ({"type": "1bit"}, {"type": "2bit", "threshold": 0}):
        try:
            kv.set_gradient_compression(bad)
        except mx.MXNetError:
            continue
        raise AssertionError(f"set_gradient_compression accepted {bad}")


def check_barrier(type_name):
    """``_barrier`` returns on every worker; what was pushed before is there after."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    kv.init(8, _full(0))
    kv.push(8, _full(mine))
    kv._barrier()
    out = _full(0)
    kv.pull(8, out=out)
    _expect(out, total, "pull after a barrier")


def check_many_keys_in_flight(type_name):
    """Many keys pushed back to back, waited for at the end, keep their own values."""
    kv = _mx().kv.create(type_name)
    mine, total = _ranks(kv)
    keys = list(range(100, 124))
    kv.init(keys, [_full(0, shape=(k,)) for k in keys])
    for k in keys:
        kv.push(k, _full(k * mine, shape=(k,)))
    outs = [_full(0, shape=(k,)) for k in keys]
    for k, o in zip(keys, outs):
        kv.pull(k, out=o)
    for k, o in zip(keys, outs):
        _expect(o, k * total, f"key {k}")


KVSTORE_CHECKS = {
    "describes_itself": check_describes_itself,
    "init_takes_rank0_value": check_init_takes_rank0_value,
    "push_sums_devices_and_workers": check_push_sums_devices_and_workers,
    "pushpull": check_pushpull,
    "lists_of_keys": check_lists_of_keys,
    "str_keys": check_str_keys,
    "errors_name_the_key": check_errors_name_the_key,
    "broadcast": check_broadcast,
    "dtype_of_the_store_wins": check_dtype_of_the_store_wins,
    "updater_order": check_updater_order,
    "optimizer_on_the_store": check_optimizer_on_the_store,
    "optimizer_states_round_trip": check_optimizer_states_round_trip,
    "gradient_compression": check_gradient_compression,
    "barrier": check_barrier,
    "many_keys_in_flight": check_many_keys_in_flight,
}


def run_kvstore_check(type_name: str, check: str) -> None:
    """Run one check on ``type_name``; raises AssertionError (or the store's error)."""
    if check not in KVSTORE_CHECKS:
        raise KeyError(f"unknown KVStore check {check!r}; known: {', '.join(KVSTORE_CHECKS)}")
    KVSTORE_CHECKS[check](type_name)


def run_kvstore_checks(type_name: str, checks=None) -> dict:
    """``{check: error message}`` for the checks (all by default) that fail."""
    failed = {}
    for name in checks or KVSTORE_CHECKS:
        try:
            run_kvstore_check(type_name, name)
        except Exception as exc:
            failed[name] = f"{type(exc).__name__}: {exc}"
    return failed


def kvstore_conformance_tests(type_name: str, skip_checks=()):
    """A pytest test function parametrized over every check (but ``skip_checks``)."""
    import pytest

    @pytest.mark.parametrize("check", [c for c in KVSTORE_CHECKS if c not in skip_checks])
    def test_kvstore_conformance(check):
        run_kvstore_check(type_name, check)
    test_kvstore_conformance.__name__ = f"test_kvstore_conformance_{type_name}"
    return test_kvstore_conformance


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    report = None
    if "--report" in args:
        at = args.index("--report")
        report = args[at + 1] if at + 1 < len(args) else None
        del args[at:at + 2]
    if not args or ("--report" in (argv or sys.argv[1:]) and report is None):
        print("usage: python -m opsdk.testing.kvstore TYPE [CHECK ...] [--report DIR]",
              file=sys.stderr)
        return 2
    failed = run_kvstore_checks(args[0], args[1:] or None)
    kv = _mx().kv.create(args[0])
    text = json.dumps({"rank": kv.rank, "num_workers": kv.num_workers, "failed": failed})
    if report is None:
        print(text, flush=True)
    else:
        from mxnext._atomic_write import write_atomic
        write_atomic(os.path.join(report, f"rank-{kv.rank}.json"), text.encode())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
