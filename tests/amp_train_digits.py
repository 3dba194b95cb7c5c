"""Trains one small CNN on scikit-learn's digits in float32, then (after amp.init) in
``sys.argv[1]`` with dynamic loss scaling, from the same start; prints both test
accuracies, the output dtype, the final loss scale and whether a step with an inf gradient
left the weights alone. Run by tests/test_amp.py in a child process (amp.init rewrites
mx.nd and mx.sym for the whole process)."""

import sys

import numpy as np
from sklearn.datasets import load_digits

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.contrib import amp
from mxnext.gluon import nn

digits = load_digits()
X = (digits.images / 16.0).astype(np.float32)[:, None]
Y = digits.target.astype(np.float32)
TRAIN, TEST = slice(0, 1400), slice(1400, None)


def train(use_amp, epochs=3):
    mx.random.seed(1)
    np.random.seed(1)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1, activation="relu"), nn.MaxPool2D(2),
            nn.Conv2D(32, 3, padding=1, activation="relu"), nn.MaxPool2D(2),
            nn.Flatten(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                          "momentum": 0.9})
    if use_amp:
        amp.init_trainer(trainer)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    batches = mx.io.NDArrayIter(X[TRAIN], Y[TRAIN], batch_size=50, shuffle=True)
    for _ in range(epochs):
        batches.reset()
        for batch in batches:
            with autograd.record():
                loss = loss_fn(net(batch.data[0]), batch.label[0])
                if use_amp:
                    with amp.scale_loss(loss, trainer) as scaled:
                        autograd.backward(scaled)
            if not use_amp:
                loss.backward()
            trainer.step(batch.data[0].shape[0])
    out = net(mx.nd.array(X[TEST]))
    return net, trainer, out, float((out.asnumpy().argmax(1) == Y[TEST]).mean())


def overflow_step_keeps_weights(net, trainer):
    """A batch holding an inf: its gradients overflow, so the step must skip the update."""
    before = [p.data().asnumpy().copy() for p in net.collect_params().values()]
    x = X[:2].copy()
    x[0, 0, 3, 3] = np.inf
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(mx.nd.array(x)), mx.nd.array(Y[:2]))
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(2)
    after = [p.data().asnumpy() for p in net.collect_params().values()]
    return all((a == b).all() for a, b in zip(after, before))


_, _, _, acc32 = train(False)
amp.init(sys.argv[1])
net, trainer, out, acc = train(True)
scale = trainer._amp_loss_scaler.loss_scale
print(acc32, acc, np.dtype(net[0](mx.nd.array(X[:2])).dtype).name, scale,
      overflow_step_keeps_weights(net, trainer))
