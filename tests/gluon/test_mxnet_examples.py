"""What MXNet's own Gluon examples need from mxnext, CI-safe (the examples themselves are
not in the repository: tools/gluon-examples.py copies and runs them). The dataset files
that runner writes in their standard formats are the ones mxnext's readers load, and a
program run through ``python -m mxnext run`` trains on them the way mnist.py does."""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon

TOOL = Path(__file__).resolve().parents[2] / "tools" / "gluon-examples.py"
spec = importlib.util.spec_from_file_location("gluon_examples", TOOL)
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)


def test_the_runner_s_mnist_files_are_read_by_mnist_and_mnistiter(tmp_path):
    runner.mnist_idx(tmp_path, train=30, test=10)
    train = gluon.data.vision.MNIST(str(tmp_path), train=True)
    image, label = train[3]
    assert len(train) == 30 and image.shape == (28, 28, 1) and image.dtype == np.uint8
    # the label is where the bright band is
    assert image.asnumpy()[2 + 2 * label:4 + 2 * label].min() == 255
    _, val = mx.test_utils.get_mnist_iterator(5, (1, 28, 28), path=str(tmp_path))
    assert sum(1 for _ in val) == 2


def test_the_runner_s_cifar_and_wikitext_files_are_read(tmp_path):
    runner.cifar10_bin(tmp_path, per_batch=4)
    assert len(gluon.data.vision.CIFAR10(str(tmp_path), train=True)) == 20
    runner.wikitext(tmp_path / "wt")
    wiki = gluon.contrib.data.text.WikiText2(str(tmp_path / "wt"), "validation",
                                             seq_len=5)
    data, label = wiki[0]
    assert data.shape == (5,) and np.array_equal(data.asnumpy()[1:], label.asnumpy()[:-1])


def test_an_mxnet_program_trains_through_the_alias_on_those_files(tmp_path):
    runner.mnist_idx(tmp_path / "data", train=200, test=50)
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import mxnet as mx
        from mxnet import gluon, autograd
        def tf(x, y):
            return x.reshape((-1,)).astype('float32') / 255, y
        data = gluon.data.DataLoader(gluon.data.vision.MNIST('./data', transform=tf),
                                     batch_size=20, shuffle=True, last_batch='discard')
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(32, activation='relu'), gluon.nn.Dense(10))
        net.initialize(mx.init.Xavier()); net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        loss, metric = gluon.loss.SoftmaxCrossEntropyLoss(), mx.metric.Accuracy()
        for epoch in range(4):
            metric.reset()
            for x, y in data:
                with autograd.record():
                    out = net(x); l = loss(out, y)
                l.backward(); trainer.step(x.shape[0]); metric.update([y], [out])
        print(metric.get()[1])
    """))
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", "prog.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[-1]) > 0.9
