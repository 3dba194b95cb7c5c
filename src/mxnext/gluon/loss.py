"""MXNet 1.9's ``gluon.loss``: losses as HybridBlocks, each ``loss(pred, label, ...)``
returning one value per sample (the non-batch axes averaged or summed out).

Every ``hybrid_forward`` is written once over ``F`` (``mx.nd`` imperatively, ``mx.sym`` when
hybridized or called on Symbols), so both give the same values and gradients.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ndarray as _nd
from .._runtime.base import MXNetError, numeric_types
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss`` times ``sample_weight`` (broadcast, e.g. shape (batch, 1)) and the scalar
    ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` with ``y``'s shape (same number of elements)."""
    if F is _nd:
        return x if x.shape == y.shape else x.reshape(y.shape)
    return F.reshape_like(x, y)


def _softplus_of_minus_abs(F, x):
    """``log(1 + exp(-|x|))``, the stable half of ``log(1 + exp(x))``."""
    return F.Activation(-F.abs(x), act_type="softrelu")


class Loss(HybridBlock):
    """Base of the losses: ``weight`` (a number or None) scales the loss, ``batch_axis``
    is the axis of the samples."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        if weight is not None and not isinstance(weight, numeric_types):
            raise TypeError(f"{type(self).__name__}: weight must be a number or None, got "
                            f"{type(weight).__name__} {weight!r}")
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")

    def _per_sample_mean(self, F, loss):
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L2Loss(Loss):
    """``weight / 2 * (label - pred)**2``, averaged per sample."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.square(_reshape_like(F, label, pred) - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return self._per_sample_mean(F, loss)


class L1Loss(Loss):
    """``|label - pred|``, averaged per sample."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.abs(_reshape_like(F, label, pred) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of ``sigmoid(pred)`` (or of ``pred`` itself with
    ``from_sigmoid``) against ``label`` in [0, 1]; ``pos_weight`` (broadcast to ``pred``)
    scales the positive term."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            # -log(sigmoid(x)) = relu(-x) + log(1 + exp(-|x|)), without overflow
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + _softplus_of_minus_abs(F, pred)
            else:
                scale = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + scale * (
                    _softplus_of_minus_abs(F, pred) + F.relu(-pred))
        else:
            eps = 1e-12
            positive = F.log(pred + eps) * label
            if pos_weight is not None:
                positive = F.broadcast_mul(positive, pos_weight)
            loss = -(positive + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


def _check_class_indices(loss, label, classes):
    """MXNetError unless every label truncates to a class index in [0, classes): ``pick``
    would clip it and give another class's loss. Labels in host memory only: a device's
    would be read every step, waiting for the device."""
    if label.context.device_type not in ("cpu", "cpu_pinned"):
        return
    values = label.asnumpy()
    t = np.trunc(values)
    if t.size and not (t.min() >= 0 and t.max() < classes):   # NaN fails both
        bad = ~((t >= 0) & (t < classes))
        raise MXNetError(f"{loss}: label {values.reshape(-1)[np.argmax(bad)]} is not a class "
                         f"index in [0, {classes})")


class SoftmaxCrossEntropyLoss(Loss):
    """Cross entropy of ``log_softmax(pred, axis)`` (``pred`` itself with ``from_logits``)
    against class indices (``sparse_label``, shape of ``pred`` without ``axis``) or
    probabilities (shape of ``pred``).

    Class indices out of range or NaN raise when called imperatively on host labels;
    hybridized, or on device labels, they are clipped (MXNet's ``pick``).
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            if F is _nd:
                _check_class_indices(type(self).__name__, label, pred.shape[self._axis])
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)`` summed per sample; ``pred`` is a log-probability
    (``from_logits``, the default) or unnormalized (then ``log_softmax(pred, axis)``)."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss (the ``CTCLoss`` op) of unnormalized
    ``pred`` (``layout`` 'NTC' or 'TNC'; the last class is the blank) against ``label``
    (``label_layout`` 'NT' or 'TN', padded with -1 unless ``label_lengths`` are given);
    ``pred_lengths`` and ``label_lengths`` (shape (batch,)) give each sample's lengths."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"CTCLoss: layout must be 'NTC' or 'TNC', got {layout!r}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"CTCLoss: label_layout must be 'NT' or 'TN', got "
                             f"{label_layout!r}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: ``(label - pred)**2 / (2 rho)`` where ``|label - pred| <= rho``,
    ``|label - pred| - rho / 2`` elsewhere, averaged per sample."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        err = F.abs(_reshape_like(F, label, pred) - pred)
        loss = F.where(err > self._rho, err - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(err))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


def _hinge(F, pred, label, margin):
    return F.relu(margin - pred * _reshape_like(F, label, pred))


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels -1/1, averaged per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = _hinge(F, pred, label, self._margin)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label)**2`` for labels -1/1, averaged per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.square(_hinge(F, pred, label, self._margin))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels -1/1 (``label_format='signed'``) or 0/1
    (``'binary'``), averaged per sample."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format must be 'signed' or 'binary', got "
                             f"{label_format!r}")
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + _softplus_of_minus_abs(F, pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._per_sample_mean(F, loss)


class TripletLoss(Loss):
    """``max(0, |positive - pred|**2 - |negative - pred|**2 + margin)`` per sample, the
    squared distances summed over the non-batch axes."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        return _apply_weighting(F, F.relu(loss + self._margin), self._weight)


class PoissonNLLLoss(Loss):
    """Negative log likelihood of ``target`` under a Poisson of rate ``exp(pred)``
    (``from_logits``, the default) or ``pred``, averaged over everything (one value);
    ``compute_full`` adds Stirling's approximation of ``log(target!)`` where target > 1."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * math.pi * target)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` where label is 1, ``max(0, cos - margin)`` where it is
    -1; one value per sample, shape (batch, 1)."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        norms = F.norm(input1, axis=-1) * F.norm(input2, axis=-1)
        cos = (F.sum(input1 * input2, axis=-1) / F.maximum(norms, 1e-12)).reshape((-1, 1))
        loss = (1 - cos) * (label == 1) + F.relu((label == -1) * (cos - self._margin))
        return _apply_weighting(F, loss, self._weight, sample_weight)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss of two aligned batches (batch, dim): row ``i``
    of ``x1`` should be nearest to row ``i`` of ``x2``. The KL divergence of
    ``softmax(-squared distances)`` from the identity smoothed by ``smoothing_parameter``
    (the rest of each row's mass spread over the other samples)."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def hybrid_forward(self, F, x1, x2):
        diffs = F.broadcast_sub(F.expand_dims(x1, axis=1), F.expand_dims(x2, axis=0))
        distances = F.sum(F.square(diffs), axis=2)
        # the smoothed identity, built from the (batch, batch) shape of distances
        ones = F.BlockGrad(F.ones_like(distances))
        gold = F.cumsum(ones, axis=0) == F.cumsum(ones, axis=1)
        batch = F.sum(ones, axis=1, keepdims=True)
        s = self.smoothing_parameter
        labels = gold * (1 - s) + F.broadcast_div((1 - gold) * s, batch - 1)
        loss = self.kl_loss(F.log_softmax(-distances, axis=1), labels)
        return _apply_weighting(F, loss, self._weight)
