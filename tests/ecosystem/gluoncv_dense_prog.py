"""Run by test_gluoncv_dense.py through ``python -m mxnext run``: a few training steps of
GluonCV's dense-prediction networks (``pretrained_base=False``) on one synthetic batch with
the losses their training scripts use: FCN (segmentation, with its auxiliary head),
simple pose (keypoint heatmaps) and CenterNet (its three heads; the targets are drawn here
because its CenterNetTargetGenerator calls ``int()`` on a 1-element array, which numpy 2
refuses). Each argument names one; prints ``NAME first-loss last-loss``."""

import sys

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
import gluoncv as gcv
from gluoncv.model_zoo import get_model

RNG = np.random.RandomState(0)


def _train(net, inputs, loss_fn, steps, lr=1e-3):
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': lr})
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(inputs))
            autograd.backward(loss)
        trainer.step(inputs.shape[0])
        yield sum(l.sum().asscalar() for l in (loss if isinstance(loss, list) else [loss]))


def fcn(steps):
    net = get_model('fcn_resnet50_voc', pretrained_base=False, aux=True, crop_size=64,
                    base_size=64)
    net.initialize()
    target = np.ones((2, 64, 64), np.float32)          # two classes, a border ignored (-1)
    target[:, :, 32:] = 5
    target[:, :4] = -1
    target = mx.nd.array(target)
    criterion = gcv.loss.MixSoftmaxCrossEntropyLoss(aux=True, aux_weight=0.5)
    return _train(net, mx.nd.array(RNG.uniform(size=(2, 3, 64, 64))),
                  lambda out: criterion(*out, target), steps)


def simple_pose(steps):
    net = get_model('simple_pose_resnet18_v1b', pretrained_base=False)
    net.initialize()
    heatmap = mx.nd.array(RNG.uniform(size=(2, 17, 16, 16)))
    weight = mx.nd.array(RNG.randint(0, 2, (2, 17, 1, 1)).repeat(16, 2).repeat(16, 3))
    l2 = gluon.loss.L2Loss()
    return _train(net, mx.nd.array(RNG.uniform(size=(2, 3, 64, 64))),
                  lambda out: l2(out, heatmap, weight), steps)


def center_net(steps):
    net = get_model('center_net_resnet18_v1b_voc', pretrained_base=False)
    net.initialize()
    heatmap = np.zeros((2, 20, 32, 32), np.float32)
    heatmap[:, 3, 10, 12] = heatmap[:, 7, 20, 5] = 1
    mask = np.zeros((2, 2, 32, 32), np.float32)
    mask[:, :, 10, 12] = mask[:, :, 20, 5] = 1
    wh, reg = mx.nd.array(mask * 9), mx.nd.array(mask * 0.5)
    heatmap, mask = mx.nd.array(heatmap), mx.nd.array(mask)
    focal = gcv.loss.HeatmapFocalLoss(from_logits=True)
    wh_loss, reg_loss = gcv.loss.MaskedL1Loss(weight=0.1), gcv.loss.MaskedL1Loss()
    return _train(net, mx.nd.array(RNG.uniform(size=(2, 3, 128, 128))),
                  lambda out: (focal(out[0], heatmap) + wh_loss(out[1], wh, mask)
                               + reg_loss(out[2], reg, mask)), steps)


for name in sys.argv[1:]:
    mx.random.seed(0)
    losses = list(globals()[name](4))
    print(name, f'{losses[0]:.4g}', f'{losses[-1]:.4g}', flush=True)
