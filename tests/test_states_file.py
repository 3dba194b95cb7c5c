"""Optimizer states files (``.states``, a pickle): files MXNet 1.9.1 wrote load and train on
as there; loading admits only the types such files hold, so a hostile file is refused before
anything in it runs; damaged files give an error naming the file."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxnext as mx
from mxnext.optimizer._states_file import StatesFormatError, loads

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet-1.9.1")
EXPECTED = np.load(os.path.join(FIXTURES, "states-expected.npz"))


def test_module_states_mxnet_wrote_continue_training_as_in_mxnet():
    mod = mx.mod.Module.load(os.path.join(FIXTURES, "states-sgd"), 1,
                             load_optimizer_states=True)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(EXPECTED["data"])],
                                         [mx.nd.array(EXPECTED["label"])]))
    mod.update()
    for name, value in mod.get_params()[0].items():
        np.testing.assert_allclose(value.asnumpy(), EXPECTED[f"sgd:{name}"], rtol=1e-5,
                                   atol=1e-7)


def test_states_with_the_optimizer_mxnet_wrote_update_as_in_mxnet():
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    with open(os.path.join(FIXTURES, "states-adam-opt.states"), "rb") as f:
        updater.set_states(f.read())
    opt = updater.optimizer
    assert type(opt) is mx.optimizer.Adam and opt.param_dict == {}
    assert type(opt.lr_scheduler) is mx.lr_scheduler.FactorScheduler
    for i in range(2):
        weight = mx.nd.array(EXPECTED[f"adam_before:{i}"])
        updater(i, mx.nd.array(EXPECTED[f"adam_grad:{i}"]), weight)
        np.testing.assert_allclose(weight.asnumpy(), EXPECTED[f"adam:{i}"], rtol=1e-5, atol=1e-7)


# the public ones: mx.contrib's private SVRG wrappers (registered once mx.contrib.svrg_optimization
# is imported, so not in every process) need an optimizer to wrap
OPTIMIZERS = sorted(n for n in mx.optimizer.Optimizer.opt_registry if not n.startswith("_"))


@pytest.mark.filterwarnings("ignore:learning rate from ``lr_scheduler``")
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_every_optimizer_round_trips_with_its_states(name):
    kwargs = {"lr_scheduler": mx.lr_scheduler.MultiFactorScheduler([2, 4], 0.5),
              "multi_precision": True}
    if name in ("sgd", "ccsgd", "nag", "signum", "lars"):
        kwargs["momentum"] = 0.9
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
    weights = [mx.nd.ones((3, 2)), mx.nd.ones((4, 1), dtype="float16")]
    for step in range(2):
        for i, w in enumerate(weights):
            updater(i, mx.nd.full(w.shape, 0.1 * (step + 1), dtype=w.dtype), w)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps((updater.states, updater.optimizer), protocol=protocol)
        again = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
        again.set_states(data)
        assert type(again.optimizer) is type(updater.optimizer)
        assert again.optimizer.lr_scheduler.step == [2, 4]
        flat = lambda s: [s] if s is None or isinstance(s, mx.nd.NDArray) else [  # noqa: E731
            x for part in s for x in flat(part)]
        for key, state in updater.states.items():
            got, want = flat(again.states[key]), flat(state)
            assert [type(x) for x in got] == [type(x) for x in want]
            for g, w in zip(got, want):
                if w is not None:
                    np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


class _RunsCode:
    """Pickles as a call of ``func(*args)``: what a hostile ``.states`` file does."""

    def __init__(self, func, *args):
        self.call = (func, args)

    def __reduce__(self):
        return self.call


def _hostile(tmp_path, func, *args, inside=False):
    payload = _RunsCode(func, *args)
    states = {0: [mx.nd.ones((2,)), payload]} if inside else payload
    path = tmp_path / "evil.states"
    path.write_bytes(pickle.dumps(states))
    return path


def test_a_hostile_states_file_is_refused_without_running(tmp_path):
    marker = tmp_path / "ran"
    for inside in (False, True):
        path = _hostile(tmp_path, os.system, f"touch {marker}", inside=inside)
        mod = _bound_module()
        with pytest.raises(StatesFormatError) as info:
            mod.load_optimizer_states(str(path))
        msg = str(info.value)
        assert repr(str(path)) in msg and "Module.load_optimizer_states" in msg
        assert "refers to posix.system" in msg and "refused" in msg
        assert not marker.exists()
    path = _hostile(tmp_path, eval, "__import__('os').system('touch " + str(marker) + "')")
    with pytest.raises(StatesFormatError, match="refers to builtins.eval"):
        mx.optimizer.get_updater(mx.optimizer.create("sgd")).set_states(path.read_bytes())
    assert not marker.exists()


def test_refused_names_are_never_imported():
    code = textwrap.dedent("""
        import pickle, sys
        from mxnext.optimizer._states_file import StatesFormatError, loads
        data = pickle.dumps(0).replace(b"K\\x00", b"cxml.dom.minidom\\nparseString\\n)R")
        try:
            loads(data)
        except StatesFormatError as exc:
            print("refused" if "xml.dom.minidom" in str(exc) else exc)
        print("xml.dom.minidom" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split() == ["refused", "False"], out.stdout + out.stderr


def _bound_module():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3,
                                                     name="fc"), name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    return mod


def test_damaged_states_files_give_an_error_naming_the_file(tmp_path):
    mod = _bound_module()
    good = tmp_path / "good.states"
    mod.save_optimizer_states(str(good))
    data = good.read_bytes()
    cases = {"empty": b"", "truncated": data[: len(data) // 2], "garbage": b"\x00\x01junk" * 9,
             "a list": pickle.dumps([1, 2]), "wrong pair": pickle.dumps(({}, 3))}
    for name, content in cases.items():
        path = tmp_path / f"{name}.states"
        path.write_bytes(content)
        with pytest.raises(StatesFormatError) as info:
            mod.load_optimizer_states(str(path))
        assert str(info.value).startswith(f"Module.load_optimizer_states: {str(path)!r}: "), name
    assert "truncated or corrupt" in str(pytest.raises(
        StatesFormatError, loads, data[:-3], "x").value)
    mod.load_optimizer_states(str(good))


def test_kvstore_states_files_are_checked_the_same_way(tmp_path):
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.create("sgd", momentum=0.9))
    kv.init(0, mx.nd.ones((2, 3)))
    kv.push(0, mx.nd.ones((2, 3)))
    path = tmp_path / "kv.states"
    kv.save_optimizer_states(str(path), dump_optimizer=True)
    kv.load_optimizer_states(str(path))
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(StatesFormatError, match=r"KVStore.load_optimizer_states: '.*kv.states': "
                                                r"not a valid optimizer states pickle"):
        kv.load_optimizer_states(str(path))
    evil = _hostile(tmp_path, os.system, "true")
    with pytest.raises(StatesFormatError, match="refers to posix.system"):
        kv.load_optimizer_states(str(evil))
