"""mx.callback: what fit calls per batch and per epoch, logging in MXNet 1.x's formats."""

import logging

import numpy as np
import pytest

import mxnext as mx


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _data(n=40):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return mx.io.NDArrayIter(x, (x[:, 0] > 0).astype(np.float32), batch_size=10)


def _messages(caplog):
    return [r.getMessage() for r in caplog.records]


def test_speedometer_logs_speed_and_metric_every_frequent_batches(caplog):
    caplog.set_level(logging.INFO)
    mod = mx.mod.Module(_net())
    mod.fit(_data(), num_epoch=2, batch_end_callback=mx.callback.Speedometer(10, frequent=2))
    lines = [m for m in _messages(caplog) if "Speed" in m]
    assert len(lines) == 2                                   # batches 2 of each epoch
    assert lines[0].startswith("Epoch[0] Batch [0-2]\tSpeed: ")
    assert lines[0].split("\t")[1].endswith(" samples/sec")
    assert lines[1].startswith("Epoch[1] Batch [0-2]")
    assert lines[0].split("\t")[2].startswith("accuracy=")


def test_speedometer_without_auto_reset_and_without_metric(caplog):
    caplog.set_level(logging.INFO)
    speed = mx.callback.Speedometer(4, frequent=1, auto_reset=False)
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0, 1], [0, 1]])])
    for nbatch in range(3):
        speed(mx.model.BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=metric, locals={}))
    speed(mx.model.BatchEndParam(epoch=3, nbatch=0, eval_metric=None, locals={}))
    msgs = _messages(caplog)
    assert msgs[0].startswith("Epoch[0] Batch [0-1]\tSpeed:")
    assert msgs[0].endswith("\taccuracy=0.500000")
    assert msgs[1].startswith("Epoch[0] Batch [0-2]")
    assert metric.num_inst == 2                             # not reset
    assert len(msgs) == 2                                    # a new epoch restarts the clock
    speed(mx.model.BatchEndParam(epoch=3, nbatch=1, eval_metric=None, locals={}))
    assert _messages(caplog)[-1].startswith("Iter[3] Batch [1]\tSpeed: ")


def test_log_train_metric_progress_bar_and_validation_log(caplog):
    caplog.set_level(logging.INFO)
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 1])], [mx.nd.array([[0, 1], [1, 0]])])
    param = mx.model.BatchEndParam(epoch=2, nbatch=4, eval_metric=metric, locals={})
    mx.callback.log_train_metric(2, auto_reset=True)(param)
    mx.callback.ProgressBar(total=8, length=8)(param)
    mx.callback.LogValidationMetricsCallback()(param)
    assert _messages(caplog) == ["Iter[2] Batch[4] Train-accuracy=0.500000",
                                 "[====----] 50%\r",
                                 "Epoch[2] Validation-accuracy=nan"]   # reset by the first


def test_do_checkpoint_and_module_checkpoint(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    prefix = str(tmp_path / "net")
    mod = mx.mod.Module(_net())
    mod.fit(_data(), num_epoch=4, epoch_end_callback=[
        mx.callback.do_checkpoint(prefix, period=2),
        mx.callback.module_checkpoint(mod, prefix + "-mod", period=3,
                                      save_optimizer_states=True)])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "net-0002.params", "net-0004.params", "net-mod-0003.params", "net-mod-0003.states",
        "net-mod-symbol.json", "net-symbol.json"]
    assert f'Saved checkpoint to "{prefix}-0004.params"' in _messages(caplog)
    sym, args, _ = mx.model.load_checkpoint(prefix, 4)
    assert sym.tojson() == _net().tojson()
    np.testing.assert_array_equal(args["fc_weight"].asnumpy(),
                                  mod.get_params()[0]["fc_weight"].asnumpy())


@pytest.mark.parametrize("period", [0, -3])
def test_checkpoint_period_below_one_means_every_epoch(tmp_path, period):
    cb = mx.callback.do_checkpoint(str(tmp_path / "n"), period=period)
    cb(0, _net(), {"fc_weight": mx.nd.ones((2, 3))}, {})
    assert (tmp_path / "n-0001.params").exists()
