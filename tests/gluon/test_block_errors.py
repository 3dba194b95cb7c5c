"""An op error inside an eagerly run block names the block (as the hybridized path names the
graph node), the op's own error chained; hybridize refuses backend options it cannot honour."""

import pytest

import mxnext as mx
from mxnext.base import MXNetError, ShapeError
from mxnext.gluon import loss, nn


def test_a_wrong_input_width_to_an_eager_dense_names_the_layer():
    net = nn.HybridSequential(prefix="model_")
    with net.name_scope():
        net.add(nn.Dense(8, in_units=4), nn.Dense(3, in_units=8))
    net.initialize()
    with pytest.raises(ShapeError) as err:
        net(mx.nd.ones((2, 5)))
    assert str(err.value) == ("Error in block 'model_dense0' (Dense) called on (2, 5): "
                              "Operator 'FullyConnected': input 'weight' has shape (8, 4), "
                              "expected (8, 5)")
    assert isinstance(err.value.__cause__, ShapeError)
    assert str(err.value.__cause__).startswith("Operator 'FullyConnected'")
    assert err.value.__cause__.__cause__ is not err.value


def test_a_wrong_label_shape_names_the_loss():
    with pytest.raises(ShapeError, match=r"^Error in block 'softmaxcrossentropyloss\d+' "
                                         r"\(SoftmaxCrossEntropyLoss\) called on \(2, 5\), "
                                         r"\(3,\): Operator 'pick'"):
        loss.SoftmaxCrossEntropyLoss()(mx.nd.ones((2, 5)), mx.nd.ones((3,)))


def test_the_hybridized_path_still_names_the_graph_node():
    net = nn.Dense(3, in_units=4, prefix="fc_")
    net.initialize()
    net.hybridize()
    with pytest.raises(ShapeError, match=r"^Error in operator 'fc_fwd' \(FullyConnected\)"):
        net(mx.nd.ones((2, 5)))


def test_hybridize_refuses_backend_opts_and_accepts_none_or_empty():
    net = nn.Dense(2, in_units=2)
    net.initialize()
    with pytest.raises(MXNetError, match=r"^hybridize: backend_opts=\{'dedup': True\} is not "
                                         r"supported; .* must be None or \{\}\)$"):
        net.hybridize(backend_opts={"dedup": True})
    for opts in (None, {}):
        net.hybridize(backend_opts=opts)
        assert net(mx.nd.ones((1, 2))).shape == (1, 2)
