"""Run by test_gluoncv_detection.py through ``python -m mxnext run``: a few training
iterations of GluonCV detectors (``pretrained_base=False``) on one synthetic batch, with the
components GluonCV's own training scripts use (train transforms with their target
generators, batchify functions, losses, ``gluon.Trainer``). Each argument names a
detector; prints ``NAME first-loss last-loss``."""

import sys

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
import gluoncv as gcv
from gluoncv.data.batchify import Pad, Stack, Tuple
from gluoncv.model_zoo import get_model

SIZE = 128


def _samples(transform, n=2):
    """``n`` transformed copies of one synthetic image with two boxes (VOC labels)."""
    rng = np.random.RandomState(0)
    img = mx.nd.array(rng.randint(0, 256, (150, 180, 3)), dtype='uint8')
    label = np.array([[10, 20, 100, 120, 3, 0], [60, 40, 170, 140, 7, 0]], np.float32)
    return [transform(img, label) for _ in range(n)]


def _loaded(batch):
    """The batch's arrays moved to the training context (the scripts' ``split_and_load``;
    GluonCV's batchify functions put them in ``cpu_shared`` memory)."""
    return [gluon.utils.split_and_load(x, [mx.cpu()])[0] for x in batch]


def _trainer(net, lr):
    return gluon.Trainer(net.collect_params(), 'sgd',
                         {'learning_rate': lr, 'momentum': 0.9, 'wd': 5e-4})


def ssd(steps):
    from gluoncv.data.transforms.presets.ssd import SSDDefaultTrainTransform
    net = get_model('ssd_300_mobilenet0.25_voc', pretrained_base=False)
    net.initialize()
    with autograd.train_mode():
        _, _, anchors = net(mx.nd.zeros((1, 3, SIZE, SIZE)))
    batch = _loaded(Tuple(Stack(), Stack(), Stack())(
        _samples(SSDDefaultTrainTransform(SIZE, SIZE, anchors))))
    net.hybridize(static_alloc=True, static_shape=True)
    mbox_loss, trainer = gcv.loss.SSDMultiBoxLoss(), _trainer(net, 0.01)
    for _ in range(steps):
        with autograd.record():
            cls_preds, box_preds, _ = net(batch[0])
            sum_loss, _, _ = mbox_loss(cls_preds, box_preds, batch[1], batch[2])
            autograd.backward(sum_loss)
        trainer.step(1)
        yield sum(l.sum().asscalar() for l in sum_loss)


def yolo3(steps):
    from gluoncv.data.transforms.presets.yolo import YOLO3DefaultTrainTransform
    net = get_model('yolo3_mobilenet0.25_voc', pretrained_base=False)
    net.initialize()
    batch = _loaded(Tuple(*([Stack() for _ in range(6)] + [Pad(axis=0, pad_val=-1)]))(
        _samples(YOLO3DefaultTrainTransform(SIZE, SIZE, net))))
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = _trainer(net, 0.001)
    for _ in range(steps):
        with autograd.record():
            losses = net(batch[0], batch[6], *batch[1:6])
            autograd.backward(losses)
        trainer.step(batch[0].shape[0])
        yield sum(l.sum().asscalar() for l in losses)


def faster_rcnn(steps):
    from gluoncv.data.batchify import FasterRCNNTrainBatchify
    from gluoncv.data.transforms.presets.rcnn import FasterRCNNDefaultTrainTransform
    net = get_model('faster_rcnn_resnet50_v1b_voc', pretrained_base=False)
    net.initialize()
    # the RPN keeps 2000 proposals in training: the feature map must hold that many anchors
    transform = FasterRCNNDefaultTrainTransform(192, 256, net, ashape=net.ashape)
    # one shard: image and label come as batches, the RPN targets as 1-tuples of batches
    data, label, *rpn_targets = FasterRCNNTrainBatchify(net)(_samples(transform, 1))
    data, label, rpn_cls_t, rpn_box_t, rpn_box_m = _loaded(
        [data, label] + [field[0] for field in rpn_targets])
    rpn_cls_loss = gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    rpn_box_loss, rcnn_box_loss = gluon.loss.HuberLoss(rho=1 / 9.), gluon.loss.HuberLoss()
    rcnn_cls_loss = gluon.loss.SoftmaxCrossEntropyLoss()
    net.collect_params().setattr('grad_req', 'null')
    net.collect_train_params().setattr('grad_req', 'write')
    trainer = gluon.Trainer(net.collect_train_params(), 'sgd',
                            {'learning_rate': 0.001, 'momentum': 0.9, 'wd': 1e-4})
    for _ in range(steps):
        with autograd.record():
            out = net(data, label[:, :, :4], label[:, :, 4:5])
            cls_pred, box_pred, _, _, _, rpn_score, rpn_box, _, cls_t, box_t, box_m, _ = out
            rpn_score = rpn_score.squeeze(axis=-1)
            n_rpn = (rpn_cls_t >= 0).sum()
            n_rcnn = (cls_t >= 0).sum()
            total = (rpn_cls_loss(rpn_score, rpn_cls_t, rpn_cls_t >= 0)
                     * rpn_cls_t.size / n_rpn
                     + rpn_box_loss(rpn_box, rpn_box_t, rpn_box_m) * rpn_box.size / n_rpn
                     + rcnn_cls_loss(cls_pred, cls_t, cls_t.expand_dims(-1) >= 0)
                     * cls_t.size / n_rcnn
                     + rcnn_box_loss(box_pred, box_t, box_m) * box_pred.size / n_rcnn)
            autograd.backward(total)
        trainer.step(1)
        yield total.sum().asscalar()


def mask_rcnn(steps):
    """Mask R-CNN through the training script's own ``ForwardBackwardTask``; its mask train
    transform needs pycocotools, so the image, boxes and RPN targets come from the Faster
    R-CNN transform and the object masks are the boxes filled in."""
    from gluoncv.data.batchify import FasterRCNNTrainBatchify
    from gluoncv.data.transforms.presets.rcnn import FasterRCNNDefaultTrainTransform
    from gluoncv.model_zoo.rcnn.mask_rcnn.data_parallel import ForwardBackwardTask
    net = get_model('mask_rcnn_resnet18_v1b_coco', pretrained_base=False)
    net.initialize()
    transform = FasterRCNNDefaultTrainTransform(192, 256, net, ashape=net.ashape)
    data, label, *rpn_targets = FasterRCNNTrainBatchify(net)(_samples(transform, 1))
    masks = np.zeros((1, 2) + data.shape[2:], np.float32)
    for k, (x0, y0, x1, y1) in enumerate(label[0, :, :4].asnumpy().astype(int)):
        masks[0, k, y0:y1, x0:x1] = 1
    batch = _loaded([data, label, mx.nd.array(masks)] + [t[0] for t in rpn_targets])
    net.collect_params().setattr('grad_req', 'null')
    net.collect_train_params().setattr('grad_req', 'write')
    trainer = gluon.Trainer(net.collect_train_params(), 'sgd',
                            {'learning_rate': 0.001, 'momentum': 0.9, 'wd': 1e-4})
    bce = gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False)
    task = ForwardBackwardTask(net, trainer, bce, gluon.loss.HuberLoss(rho=1 / 9.),
                               gluon.loss.SoftmaxCrossEntropyLoss(), gluon.loss.HuberLoss(),
                               bce, amp_enabled=False)
    for _ in range(steps):
        rpn1, rpn2, rcnn1, rcnn2, mask = task.forward_backward(batch)[:5]
        trainer.step(1)
        yield sum(float(l.asscalar()) for l in (rpn1, rpn2, rcnn1, rcnn2, mask))


for name in sys.argv[1:]:
    mx.random.seed(0)
    losses = list(globals()[name](5))
    print(name, f'{losses[0]:.4g}', f'{losses[-1]:.4g}', flush=True)
