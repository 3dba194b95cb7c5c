"""Files written by MXNet 1.9.1's Gluon (fixtures/, made by fixtures/make_fixtures.py) load
here and compute what they computed there; what mxnext writes has MXNet's bytes layout and
key names (that MXNet 1.9.1 loads mxnext's files was checked by hand with MXNet itself)."""

import json
import pathlib

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon
from mxnext.gluon import nn

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
IO = mx.nd.load(str(FIXTURES / "mxnet_io.nd"))
STRUCTURE_KEYS = ["0.weight", "0.bias", "1.gamma", "1.beta", "1.running_mean",
                  "1.running_var", "2.weight", "2.bias"]


def _net():
    """The network of make_fixtures.py, named as in a fresh MXNet process."""
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(6, in_units=4), nn.BatchNorm(in_channels=6),
                    nn.Dense(3, in_units=6))
    return net


@pytest.mark.parametrize("fname", ["mxnet_net.params", "mxnet_net_legacy.params"])
def test_mxnet_save_parameters_and_save_params_files_load(fname):
    net = _net()
    net.load_parameters(str(FIXTURES / fname))
    np.testing.assert_allclose(net(IO["x"]).asnumpy(), IO["y"].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_mxnet_export_loads_in_symbol_block_and_module():
    prefix = str(FIXTURES / "mxnet_export")
    sb = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    assert sb.collect_params()["hybridsequential0_batchnorm0_running_var"].grad_req == "null"
    np.testing.assert_allclose(sb(IO["x"]).asnumpy(), IO["y"].asnumpy(), rtol=1e-5, atol=1e-6)
    sym, args, aux = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))], for_training=False)
    mod.set_params(args, aux)
    mod.forward(mx.io.DataBatch([IO["x"]]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), IO["y"].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_our_files_have_mxnets_names_and_round_trip(tmp_path):
    net = _net()
    net.load_parameters(str(FIXTURES / "mxnet_net.params"))
    net.save_parameters(str(tmp_path / "net.params"))
    assert list(mx.nd.load(str(tmp_path / "net.params"))) == STRUCTURE_KEYS
    assert (tmp_path / "net.params").read_bytes() == (FIXTURES / "mxnet_net.params").read_bytes()
    net.hybridize()
    net(IO["x"])
    sym_file, params_file = net.export(str(tmp_path / "net"), epoch=3)
    assert params_file.endswith("net-0003.params")
    ours, theirs = (json.loads(pathlib.Path(f).read_text())
                    for f in (sym_file, FIXTURES / "mxnet_export-symbol.json"))
    assert ours == theirs
    assert mx.nd.load(params_file).keys() == \
        mx.nd.load(str(FIXTURES / "mxnet_export-0000.params")).keys()
    back = gluon.SymbolBlock.imports(sym_file, "data", params_file)
    np.testing.assert_allclose(back(IO["x"]).asnumpy(), IO["y"].asnumpy(), rtol=1e-5,
                               atol=1e-6)
