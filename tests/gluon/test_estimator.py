"""gluon.contrib.estimator: fit/evaluate on a tiny dataset, the order handlers run in and
how they stop training, checkpoints saved, rotated and resumed, and the errors for bad
arguments."""

from __future__ import annotations

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon
from mxnext.gluon.contrib.estimator import (BatchBegin, BatchEnd, BatchProcessor,
                                            CheckpointHandler, EarlyStoppingHandler,
                                            EpochBegin, EpochEnd, Estimator,
                                            GradientUpdateHandler, LoggingHandler,
                                            MetricHandler, StoppingHandler, TrainBegin,
                                            TrainEnd, ValidationHandler)


def _loader(n=12, batch_size=4):
    x = np.linspace(-1, 1, 2 * n, dtype=np.float32).reshape(n, 2)
    y = (x.sum(axis=1) > 0).astype(np.float32)
    return gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                 batch_size=batch_size)


def _estimator(lr=0.5, **kwargs):
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize(mx.init.Constant(0.1))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr,
                                                           "momentum": 0.9})
    return Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                     context=mx.cpu(), **kwargs)


class Journal(TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd):
    """Writes each event it sees, tagged, into a shared list."""

    def __init__(self, tag, log, priority=0):
        self.tag, self.log, self.priority = tag, log, priority

    def train_begin(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "train_begin"))

    def epoch_begin(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "epoch_begin"))

    def batch_begin(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "batch_begin"))

    def batch_end(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "batch_end"))

    def epoch_end(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "epoch_end"))

    def train_end(self, estimator, *args, **kwargs):
        self.log.append((self.tag, "train_end"))


def test_fit_trains_and_evaluate_reports_validation_metrics():
    est = _estimator()
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                   "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                 "validation softmaxcrossentropyloss"]
    est.evaluate(_loader())
    before = est.val_metrics[1].get()[1]
    est.fit(_loader(), val_data=_loader(), epochs=4)
    assert est.val_metrics[1].get()[1] < before            # the loss went down
    assert est.val_metrics[0].get()[1] == 1.0              # the data is separable
    assert est.train_metrics[1].get()[1] > 0               # training metrics were updated


def test_handlers_run_by_priority_and_every_handler_sees_the_stopping_batch():
    log = []
    est = _estimator()
    early, late = Journal("early", log, priority=-5000), Journal("late", log, priority=5000)
    est.fit(_loader(), event_handlers=[late, early], batches=2)
    assert log == [("early", "train_begin"), ("late", "train_begin"),
                   ("early", "epoch_begin"), ("late", "epoch_begin")] + [
        ("early", "batch_begin"), ("late", "batch_begin"),
        ("early", "batch_end"), ("late", "batch_end")] * 2 + [
        ("early", "epoch_end"), ("late", "epoch_end"),
        ("early", "train_end"), ("late", "train_end")]
    handlers = est._prepare_default_handlers(None, [late, early])
    assert [type(h).__name__ for h in handlers] == [
        "Journal", "GradientUpdateHandler", "MetricHandler", "StoppingHandler", "Journal",
        "LoggingHandler"]


def test_stopping_by_batches_crosses_epochs_and_a_handler_can_stop_early():
    est = _estimator()
    stopper = StoppingHandler()
    est.fit(_loader(), event_handlers=[stopper], batches=7)        # 3 batches an epoch
    assert (stopper.current_batch, stopper.current_epoch) == (7, 3)

    class StopAtSecondEpoch(EpochEnd):
        def __init__(self):
            self.seen = 0

        def epoch_end(self, estimator, *args, **kwargs):
            self.seen += 1
            return self.seen == 2

    stop = StopAtSecondEpoch()
    est.fit(_loader(), event_handlers=[stop], epochs=10)
    assert stop.seen == 2


def test_validation_handler_periods_and_early_stopping():
    est = _estimator()
    calls = []
    validation = ValidationHandler(_loader(), lambda **kw: calls.append(kw["batch_axis"]),
                                   epoch_period=2, batch_period=4)
    est.fit(_loader(), event_handlers=[validation], epochs=4)     # 12 batches
    assert calls == [0] * (3 + 2)

    acc = est.val_metrics[0]
    with pytest.warns(UserWarning, match="`greater` operator will be used"):
        early = EarlyStoppingHandler(monitor=acc, patience=2)
    est.fit(_loader(), val_data=_loader(), event_handlers=[early], epochs=20)
    # accuracy reaches 1.0 and stays: two epochs without improvement stop training
    assert early.stop_training and early.wait == 2
    assert early.current_epoch == early.stopped_epoch + 1 < 20


def test_checkpoints_are_named_rotated_and_resumed(tmp_path):
    est = _estimator()
    acc = est.train_metrics[0]
    ckpt = CheckpointHandler(str(tmp_path), model_prefix="m", monitor=acc, save_best=True,
                             mode="max", max_checkpoints=2)
    est.fit(_loader(), event_handlers=[ckpt], epochs=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m-best.params", "m-best.states", "m-epoch1batch6.params", "m-epoch1batch6.states",
        "m-epoch2batch9.params", "m-epoch2batch9.states"]   # a Dense is not hybridized
    saved = est.net.weight.data().asnumpy()

    fresh = _estimator()
    resume = CheckpointHandler(str(tmp_path), model_prefix="m", resume_from_checkpoint=True)

    class Peek(TrainBegin):
        priority = 1                   # after the checkpoint handler (priority 0) loaded

        def train_begin(self, estimator, *args, **kwargs):
            self.weight = estimator.net.weight.data().asnumpy()

    peek = Peek()
    fresh.fit(_loader(), event_handlers=[resume, peek], epochs=5)
    np.testing.assert_array_equal(peek.weight, saved)
    assert fresh.max_epoch == 2                      # epochs 3 and 4 were left
    assert (tmp_path / "m-epoch4batch15.params").exists()
    assert (tmp_path / "m-epoch4batch15.states").exists()
    with pytest.raises(ValueError, match="maximum number of epoch 5 reached"):
        _estimator().fit(_loader(), event_handlers=[
            CheckpointHandler(str(tmp_path), model_prefix="m", resume_from_checkpoint=True)],
            epochs=5)


def test_batch_checkpoints_resume_by_batches(tmp_path):
    est = _estimator()
    est.net.hybridize()
    ckpt = CheckpointHandler(str(tmp_path), epoch_period=None, batch_period=2)
    est.fit(_loader(), event_handlers=[ckpt], batches=4)
    assert (tmp_path / "model-symbol.json").exists()
    assert (tmp_path / "model-epoch1batch3.params").exists()
    resume = CheckpointHandler(str(tmp_path), epoch_period=None, batch_period=2,
                               resume_from_checkpoint=True)
    est.fit(_loader(), event_handlers=[resume], batches=8)
    assert est.max_batch == 4
    assert (tmp_path / "model-epoch3batch7.params").exists()
    with pytest.raises(AssertionError, match="same type of period"):
        est.fit(_loader(), event_handlers=[CheckpointHandler(
            str(tmp_path), resume_from_checkpoint=True)], batches=20)


def test_a_custom_batch_processor_replaces_the_step():
    class Halves(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            self.sizes.append(train_batch[0].shape[0])
            return super().fit_batch(estimator, train_batch, batch_axis)

    processor = Halves()
    processor.sizes = []
    _estimator(batch_processor=processor).fit(_loader(10, 4), epochs=1)
    assert processor.sizes == [4, 4, 2]


@pytest.mark.filterwarnings("ignore:No trainer specified")
@pytest.mark.parametrize("kwargs, error, match", [
    ({"loss": "mse"}, ValueError, "loss must be a Loss"),
    ({"train_metrics": "acc"}, ValueError, "metrics must be a Metric"),
    ({"context": "cpu"}, ValueError, "context must be a Context"),
    ({"context": [mx.gpu(100)]}, AssertionError, r"gpu\(100\) is not available"),
    ({"trainer": "sgd"}, ValueError, "Trainer must be a Gluon Trainer"),
    ({"batch_processor": object()}, ValueError, "must contain fit_batch"),
])
def test_bad_estimator_arguments(kwargs, error, match):
    args = {"loss": gluon.loss.L2Loss(), **kwargs}
    with pytest.raises(error, match=match):
        Estimator(gluon.nn.Dense(2), **args)


def test_bad_fit_and_handler_arguments():
    est = _estimator()
    with pytest.raises(ValueError, match="only support input as Gluon DataLoader"):
        est.fit(mx.io.NDArrayIter(np.zeros((4, 2))), epochs=1)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_loader(), epochs=1, batches=3)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_loader())
    with pytest.raises(ValueError, match="handlers must be an EventHandler"):
        est.fit(_loader(), epochs=1, event_handlers=["log"])
    # a user handler on a metric of its own next to default handlers: refused
    with pytest.raises(ValueError, match="LoggingHandler refers to a metric instance"):
        est.fit(_loader(), epochs=1, event_handlers=[LoggingHandler(metrics=mx.metric.MAE())])
    with pytest.raises(ValueError, match="log_interval must be"):
        LoggingHandler(log_interval="batch")
    with pytest.raises(ValueError, match="CompositeEvalMetric is not supported"):
        EarlyStoppingHandler(mx.metric.CompositeEvalMetric([mx.metric.Accuracy()]))
    with pytest.raises(ValueError, match="provide one of the metric objects"):
        EarlyStoppingHandler("accuracy")
    with pytest.raises(ValueError, match="To save best model only"):
        CheckpointHandler("unused", save_best=True)


def test_defaults_and_user_handlers_sharing_the_estimator_s_metrics_mix():
    est = _estimator()
    metric = MetricHandler(est.train_metrics)
    gradient = GradientUpdateHandler()
    est.fit(_loader(), epochs=1, event_handlers=[metric, gradient,
                                                 LoggingHandler(log_interval=1,
                                                                metrics=est.train_metrics)])
    assert est.train_metrics[0].num_inst == 12


def test_two_contexts_split_each_batch_and_train_as_one():
    def train(ctx):
        net = gluon.nn.Dense(2, in_units=2)
        net.initialize(mx.init.Constant(0.1), ctx=ctx)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                        context=ctx)
        est.fit(_loader(), epochs=2)
        return net.weight.data(ctx[0]).asnumpy(), est.train_metrics[0].num_inst

    one, two = train([mx.cpu(0)]), train([mx.cpu(0), mx.cpu(1)])
    np.testing.assert_allclose(two[0], one[0], rtol=1e-5)
    assert one[1] == two[1] == 12          # the metrics saw every sample once an epoch


def test_only_the_uninitialized_layers_get_the_initializer():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, in_units=2))
    net.initialize(mx.init.Constant(0.3))
    net.add(gluon.nn.Dense(2, in_units=3))            # the new head, as in fine-tuning
    with pytest.warns(UserWarning, match="already initialized, ignoring"), \
            pytest.warns(UserWarning, match="No trainer specified"):
        est = Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.Constant(0.7))
    assert [float(p.data().asnumpy().flat[0]) for p in net.collect_params().values()] == \
        pytest.approx([0.3, 0.0, 0.7, 0.0])
    with pytest.warns(UserWarning, match="Network already fully initialized"):
        Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.Zero(), trainer=est.trainer)
    assert float(net[1].weight.data().asnumpy().flat[0]) == pytest.approx(0.7)
