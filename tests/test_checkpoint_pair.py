"""A Module checkpoint's ``.params`` and ``.states`` pair: a save interrupted between the two
files (a real SIGKILL), or files of two saves mixed, are refused at load naming both files;
a whole pair loads, and its ``.states`` stays a pickle MXNet reads."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext.optimizer._states_file import StatesFormatError

pytestmark = pytest.mark.timeout(120)


def trained(value):
    """A Module after one update, its parameters and momentum states all ``value``."""
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4,
                                                     name="fc"), name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind([("data", (2, 3))], [("softmax_label", (2,))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    mod.update()
    mod.set_params({"fc_weight": mx.nd.full((4, 3), value), "fc_bias": mx.nd.full((4,), value)},
                   {})
    for state in mod._updater.states.values():
        state[:] = value
    return mod


INTERRUPTED = """
import sys, time
from mxnext import _atomic_write

sys.path.insert(0, sys.argv[2])
from test_checkpoint_pair import trained

prefix = sys.argv[1]
trained(1.0).save_checkpoint(prefix, 1, save_optimizer_states=True)
commit = _atomic_write.AtomicFile.commit

def commit_then_wait(self):
    commit(self)
    if self.target.endswith(".states"):
        print("between the two renames", flush=True)
        time.sleep(300)

_atomic_write.AtomicFile.commit = commit_then_wait
trained(2.0).save_checkpoint(prefix, 1, save_optimizer_states=True)
"""


def _load(prefix):
    """Module.load of epoch 1 with its states, bound and given its optimizer."""
    mod = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    mod.bind([("data", (2, 3))], [("softmax_label", (2,))])
    mod.init_optimizer(optimizer="sgd", optimizer_params={"momentum": 0.9})
    return mod


def _refused(prefix):
    with pytest.raises(StatesFormatError) as info:
        _load(prefix)
    message = str(info.value)
    assert message.startswith(f"Module.load: {prefix + '-0001.states'!r}: saved with other "
                              f"parameters than those in {prefix + '-0001.params'!r}"), message


def test_a_save_killed_between_the_two_files_is_refused_at_load(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(INTERRUPTED)
    prefix = str(tmp_path / "net")
    proc = subprocess.Popen([sys.executable, str(script), prefix, os.path.dirname(__file__)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "between the two renames\n"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert float(mx.nd.load(prefix + "-0001.params")["arg:fc_bias"].asnumpy()[0]) == 1.0
    _refused(prefix)                                # each file whole, the pair mixed
    trained(3.0).save_checkpoint(prefix, 1, save_optimizer_states=True)
    mod = _load(prefix)
    assert mod.get_params()[0]["fc_bias"].asnumpy().tolist() == [3.0] * 4
    assert {float(s.asnumpy().max()) for s in mod._updater.states.values()} == {3.0}


def test_files_of_two_saves_of_one_epoch_are_refused_either_way(tmp_path):
    prefix = str(tmp_path / "net")
    first, second = tmp_path / "first", tmp_path / "second"
    for value, keep in ((1.0, first), (2.0, second)):
        trained(value).save_checkpoint(prefix, 1, save_optimizer_states=True)
        keep.mkdir()
        for ext in (".params", ".states"):
            shutil.copy(prefix + "-0001" + ext, keep)
    for params, states in ((second, first), (first, second)):
        shutil.copy(params / "net-0001.params", tmp_path)
        shutil.copy(states / "net-0001.states", tmp_path)
        _refused(prefix)
    shutil.copy(first / "net-0001.params", tmp_path)
    shutil.copy(first / "net-0001.states", tmp_path)
    assert {float(s.asnumpy().max()) for s in _load(prefix)._updater.states.values()} == {1.0}


def test_a_paired_states_file_is_still_a_plain_pickle(tmp_path):
    prefix = str(tmp_path / "net")
    mod = trained(1.0)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    with open(prefix + "-0001.states", "rb") as f:
        states = pickle.loads(f.read())             # what MXNet's set_states does
    assert {float(np.max(s.asnumpy())) for s in states.values()} == {1.0}
    other = trained(2.0)
    other.load_optimizer_states(prefix + "-0001.states")     # no pair to check here
    assert {float(s.asnumpy().max()) for s in other._updater.states.values()} == {1.0}
    mod.save_checkpoint(prefix, 2)                  # no states: the params alone
    assert mx.nd.load(prefix + "-0002.params").keys() == mx.nd.load(
        prefix + "-0001.params").keys()
