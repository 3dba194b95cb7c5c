"""mx.metric: values against hand computations, local vs global counters, create/config
round trips and error messages."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError, ParamError, ShapeError


def nd(x, dtype="float32"):
    return mx.nd.array(np.asarray(x, dtype=dtype))


PRED3 = [[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]]


def test_metric_loads_lazily():
    code = ("import sys, mxnext; assert 'mxnext.metric' not in sys.modules; "
            "mxnext.metric; assert 'mxnext.metric' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_accuracy_value_and_python_float():
    m = mx.metric.create("acc")
    m.update([nd([0, 1, 1])], [nd(PRED3)])
    name, value = m.get()
    assert name == "accuracy" and value == 2 / 3 and type(value) is float
    assert m.num_inst == 3 and m.sum_metric == 2.0
    assert str(m) == f"EvalMetric: {{'accuracy': {2 / 3}}}"


def test_accuracy_axis_and_2d_label():
    m = mx.metric.Accuracy(axis=0)
    m.update([nd([1, 0])], [nd([[0.1, 0.9], [0.8, 0.2]])])  # argmax over rows -> [1, 0]
    assert m.get()[1] == 1.0
    m = mx.metric.Accuracy()
    m.update([nd([[0, 1], [1, 1]])], [nd([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])])
    assert m.get()[1] == 0.75                      # label read flat: 0 1 1 1 vs 0 1 0 1


def test_local_and_global_counters():
    m = mx.metric.create("acc")
    m.update([nd([0, 1, 1])], [nd(PRED3)])       # 2 of 3
    m.reset_local()
    assert math.isnan(m.get()[1])
    m.update([nd([1])], [nd([[0.2, 0.8]])])      # 1 of 1
    assert m.get() == ("accuracy", 1.0)
    assert m.get_global() == ("accuracy", 3 / 4)
    assert m.get_global_name_value() == [("accuracy", 0.75)]
    m.reset()
    assert math.isnan(m.get_global()[1])


def test_numpy_inputs_and_lone_arrays():
    m = mx.metric.create("acc")
    m.update(np.array([0, 1, 1]), np.array(PRED3, dtype="float32"))
    assert m.get()[1] == 2 / 3
    mse = mx.metric.create("mse")
    mse.update(np.array([1.0, 2.0]), np.array([1.5, 2.0]))
    assert mse.get()[1] == 0.125


def test_top_k_accuracy():
    m = mx.metric.create("top_k_acc", top_k=2)
    assert m.name == "top_k_accuracy_2"
    pred = nd([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    m.update([nd([2, 2, 0])], [pred])              # hits: row 0 (2 in top 2) only
    assert m.get()[1] == 1 / 3 and m.get_global()[1] == 1 / 3
    with pytest.raises(ParamError, match="top_k must be more than 1"):
        mx.metric.TopKAccuracy(top_k=1)


def test_f1_macro_and_micro():
    macro, micro = mx.metric.F1(), mx.metric.create("f1", average="micro")
    b1 = ([nd([1, 0, 1])], [nd([[0.2, 0.8], [0.3, 0.7], [0.9, 0.1]])])  # tp 1 fp 1 fn 1
    b2 = ([nd([1, 0])], [nd([[0.1, 0.9], [0.8, 0.2]])])                 # tp 1 tn 1
    for m in (macro, micro):
        m.update(*b1)
        m.update(*b2)
    assert macro.get()[1] == pytest.approx((0.5 + 1.0) / 2) and macro.num_inst == 2
    assert micro.get()[1] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1)) and micro.num_inst == 5
    with pytest.raises(ParamError, match=r"F1: only binary classification.*\[0, 1, 2\]"):
        macro.update([nd([0, 1, 2])], [nd([[1, 0], [0, 1], [1, 0]])])


def test_mcc_value_and_global():
    m = mx.metric.create("mcc", average="micro")
    m.update([nd([1, 0, 1, 0])], [nd([[0.2, 0.8], [0.3, 0.7], [0.9, 0.1], [0.6, 0.4]])])
    tp, fp, fn, tn = 1, 1, 1, 1
    expected = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert m.get()[1] == expected
    m.reset_local()
    m.update([nd([1, 0])], [nd([[0.1, 0.9], [0.8, 0.2]])])
    assert m.get()[1] == 1.0
    tp, tn = 2, 2
    whole = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert m.get_global()[1] == pytest.approx(whole)


def test_perplexity_ignore_label():
    m = mx.metric.create("perplexity", ignore_label=0)
    pred = nd([[0.5, 0.5], [0.25, 0.75], [0.9, 0.1]])
    m.update([nd([1, 1, 0])], [pred])              # the third sample is ignored
    assert m.get()[1] == pytest.approx(math.exp(-(math.log(0.5) + math.log(0.75)) / 2))
    assert m.num_inst == 2


def test_regression_errors_average_per_batch():
    label, pred = nd([[1.0, 2.0], [3.0, 4.0]]), nd([[1.5, 2.0], [3.0, 2.0]])
    expect = {"mae": 2.5 / 4, "mse": (0.25 + 4) / 4, "rmse": math.sqrt((0.25 + 4) / 4)}
    for name, value in expect.items():
        m = mx.metric.create(name)
        m.update([label], [pred])
        m.update([nd([0.0])], [nd([1.0])])        # a second batch of error 1
        assert m.get()[1] == pytest.approx((value + 1) / 2), name


def test_cross_entropy_and_nll():
    pred = nd([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    for name, shown in (("ce", "cross-entropy"), ("nll_loss", "nll-loss")):
        m = mx.metric.create(name)
        m.update([nd([2, 1])], [pred])
        assert m.get()[0] == shown
        assert m.get()[1] == pytest.approx(-(math.log(0.5) + math.log(0.1)) / 2, rel=1e-6)
    with pytest.raises(ShapeError, match=r"cross-entropy: 3 labels for 2 predictions"):
        m = mx.metric.create("ce")
        m.update([nd([2, 1, 0])], [pred])


def test_pearson_macro_micro_and_reset_local():
    a = np.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]])
    b = np.array([[1.0, 2.0], [3.0, 2.0], [4.0, 6.0]])
    la = np.array([[1, 0], [0, 1], [0, 1]])
    macro = mx.metric.create("pearsonr")
    micro = mx.metric.create("pearsonr", average="micro")
    for m in (macro, micro):
        m.update([nd(la)], [nd(a)])
        m.update([nd(la)], [nd(b)])
    per_batch = [np.corrcoef(x.ravel(), la.ravel())[0, 1] for x in (a, b)]
    assert macro.get()[1] == pytest.approx(sum(per_batch) / 2)
    whole = np.corrcoef(np.concatenate([a.ravel(), b.ravel()]), np.tile(la.ravel(), 2))[0, 1]
    assert micro.get()[1] == pytest.approx(whole)
    micro.reset_local()
    micro.update([nd(la)], [nd(b)])
    assert micro.get()[1] == pytest.approx(per_batch[1])
    whole3 = np.corrcoef(np.concatenate([a.ravel(), b.ravel(), b.ravel()]),
                         np.tile(la.ravel(), 3))[0, 1]
    assert micro.get_global()[1] == pytest.approx(whole3)


def test_pcc_matches_mcc_for_two_classes_and_grows():
    labels = nd([0, 0, 1, 1, 1], dtype="int32")
    preds = nd([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.1, 0.9], [0.6, 0.4]])
    pcc, mcc = mx.metric.create("pcc"), mx.metric.create("mcc")
    pcc.update([labels], [preds])
    mcc.update([labels], [preds])
    assert pcc.get()[1] == pytest.approx(mcc.get()[1])
    pcc.update([nd([3])], [nd([3])])               # class ids are accepted; matrix grows
    assert pcc.k == 4 and pcc.lcm.sum() == 6 and pcc.lcm[3, 3] == 1


def test_loss_family():
    for name in ("loss", "torch", "caffe"):
        m = mx.metric.create(name)
        m.update(None, nd([[1.0, 2.0], [3.0, 6.0]]))
        assert m.get() == (name, 3.0)


def test_custom_metric_and_np_decorator():
    def half_sum(label, pred):
        assert isinstance(label, np.ndarray) and isinstance(pred, np.ndarray)
        return float(np.abs(label - pred).sum()), 2

    m = mx.metric.create(half_sum)
    assert isinstance(m, mx.metric.CustomMetric) and m.name == "half_sum"
    m.update([nd([1.0, 2.0])], [nd([1.5, 3.0])])
    assert m.get()[1] == 0.75 and m.get_global()[1] == 0.75
    assert mx.metric.np(lambda lab, pr: 1.0).name == "custom(<lambda>)"
    with pytest.raises(NotImplementedError, match="half_sum"):
        m.get_config()


def test_custom_metric_one_element_array_formats_as_number():
    # NCF's cross_entropy feval sums over rows of (N, 1) predictions: an array([x]);
    # Speedometer then logs it with %f, which numpy 2 refuses for arrays
    def rows(label, pred):
        return sum(-np.log(p) for p in pred)

    m = mx.metric.create(rows)
    m.update([nd([1.0, 0.0])], [nd([[0.5], [0.25]])])
    m.update([nd([1.0])], [nd([[1.0]])])
    name, value = m.get()
    assert "%s=%.4f" % (name, value) == "rows=%.4f" % (math.log(8) / 2)


def test_composite_and_update_dict():
    comp = mx.metric.create(["acc", "mse"])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    comp.update([nd([0, 1, 1])], [nd([0, 1, 0])])
    names, values = comp.get()
    # the squared error is averaged in the inputs' float32, then counted in a double
    assert names == ["accuracy", "mse"] and values == [2 / 3, float(np.float32(1 / 3))]
    m = mx.metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": nd([1]), "other": nd([0])}, {"x": nd([[1, 0]]), "out": nd([[0, 1]])})
    assert m.get()[1] == 1.0
    with pytest.raises(ParamError, match="index 5 is out of range for 2 metrics"):
        comp.get_metric(5)


@pytest.mark.parametrize("spec,kwargs", [
    ("acc", {"axis": 0}), ("f1", {"average": "micro"}), ("mcc", {}),
    ("perplexity", {"ignore_label": -1}), ("pearsonr", {"average": "micro"}), ("pcc", {}),
    ("top_k_acc", {"top_k": 3}), ("ce", {"eps": 1e-8}), ("loss", {}), (["acc", "f1"], {}),
])
def test_config_round_trip(spec, kwargs):
    m = mx.metric.create(spec, **kwargs)
    again = mx.metric.create(json.dumps(m.get_config()))
    assert type(again) is type(m) and again.get_config() == m.get_config()
    assert mx.metric.create(m.get_config()).get_config() == m.get_config()


def test_create_forms_and_registry():
    inst = mx.metric.MAE()
    assert mx.metric.create(inst) is inst
    assert isinstance(mx.metric.create(mx.metric.RMSE), mx.metric.RMSE)
    assert mx.metric.create('["acc", {"axis": 0}]').axis == 0
    with pytest.raises(ParamError, match="already an instance"):
        mx.metric.create(inst, name="x")
    with pytest.raises(ParamError, match=r"'accuracyy' is not a registered metric.*accuracy"):
        mx.metric.create("accuracyy")

    @mx.metric.register
    @mx.metric.alias("always_one")
    class AlwaysOne(mx.metric.EvalMetric):
        def __init__(self, name="one"):
            super().__init__(name)

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += len(preds)

    m = mx.metric.create("ALWAYS_ONE")
    m.update([nd([0])], [nd([0])])
    assert m.get() == ("one", 1.0) and m.get_global() == m.get()   # no global counters
    with pytest.raises(ParamError, match="subclass of EvalMetric"):
        mx.metric.register(object)


def test_shape_errors_name_metric_and_shapes():
    with pytest.raises(ShapeError, match=r"accuracy: number of labels 1 does not match "
                                         r"number of predictions 2"):
        mx.metric.create("acc").update([nd([0])], [nd([[1, 0]]), nd([[0, 1]])])
    with pytest.raises(ShapeError, match=r"pearsonr: shape of labels \(2,\) does not match "
                                         r"shape of predictions \(3,\)"):
        mx.metric.create("pearsonr").update([nd([0, 1])], [nd([0, 1, 2])])
    with pytest.raises(ShapeError, match=r"perplexity: labels of shape \(3,\) do not fit "
                                         r"predictions of shape \(2, 2\)"):
        mx.metric.create("perplexity", -1).update([nd([0, 1, 1])], [nd([[1, 0], [0, 1]])])
    for name in ("mae", "mse", "rmse"):
        with pytest.raises(ShapeError, match=name + r": labels of shape \(3, 1\) do not match "
                                                    r"predictions of shape \(2, 2\)"):
            mx.metric.create(name).update([nd([0, 1, 1])], [nd([[1, 0], [0, 1]])])
        with pytest.raises(ShapeError, match=r"labels of shape \(1, 1\) do not match "
                                             r"predictions of shape \(3, 1\)"):
            mx.metric.create(name).update([nd([0])], [nd([1, 2, 3])])   # would broadcast
    m = mx.metric.create("mse")
    m.update([nd([1, 2])], [nd([[1, 1], [2, 4]])])     # a label per row: broadcasts as MXNet
    assert m.get()[1] == pytest.approx(4 / 4)
    err = pytest.raises(ValueError, mx.metric.check_label_shapes, [1], [1, 2])
    assert isinstance(err.value, MXNetError)
    with pytest.raises(ParamError, match="mse: expected an NDArray or numpy array, got list"):
        mx.metric.create("mse").update([[1.0]], [[1.0]])
