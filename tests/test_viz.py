"""mx.viz: print_summary prints, and plot_network draws, what MXNet 1.9.1 does for the same
networks (symbols-mxnet191.json holds MXNet's text and Graphviz source, see
make_symbols.py); a drawing renders when Graphviz's dot program is installed."""

import contextlib
import importlib.util
import io
import json
import re
import shutil
from pathlib import Path

import pytest

import mxnext as mx

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"
_spec = importlib.util.spec_from_file_location("symbol_nets", FIX / "symbol_nets.py")
nets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nets)
MXNET = json.loads((FIX / "symbols-mxnet191.json").read_text())["viz"]


def _symbol(source):
    if source in nets.BUILDERS:
        return nets.build(mx, source)
    return mx.sym.load(str(FIX / source))


def _mxnet_names(text):
    """MXNet registers split under the name SliceChannel (split is its alias there)."""
    return text.replace("SliceChannel", "split")


def _statements(source):
    """Graphviz source as {statement head: {attribute: value}}, quoting undone (quoting rules
    differ between graphviz package versions)."""
    out = {}
    for head, attrs in re.findall(r'^\t(.+?) \[(.*?)\]$', source, re.M | re.S):
        pairs = re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[^ ]+)', attrs)
        key = head
        while key in out:               # repeated edges (both outputs of a split)
            key += "'"
        out[key] = {k: v[1:-1] if v.startswith('"') else v for k, v in pairs}
    return out


@pytest.mark.parametrize("case", list(nets.VIZ))
def test_print_summary_prints_what_mxnet_prints(case):
    source, kwargs = nets.VIZ[case]
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        mx.viz.print_summary(_symbol(source), shape=kwargs.get("shape"))
    want = MXNET[case]["summary"]
    if "SliceChannel" in want:      # the op name's length moves the columns: compare words
        assert [line.split() for line in text.getvalue().splitlines()] == \
            [line.split() for line in _mxnet_names(want).splitlines()]
    else:
        assert text.getvalue() == want


@pytest.mark.parametrize("case", list(nets.VIZ))
def test_plot_network_draws_what_mxnet_draws(case):
    source, kwargs = nets.VIZ[case]
    dot = mx.viz.plot_network(_symbol(source), **kwargs)
    want = MXNET[case]["dot"]
    assert dot.source.splitlines()[0] == want.splitlines()[0]          # digraph <title> {
    assert _statements(dot.source) == _statements(want)
    assert dot.format == "pdf"


def test_summary_counts_parameters_from_the_shapes():
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        mx.viz.print_summary(_symbol("lenet-symbol.json"), shape={"data": (2, 1, 28, 28)})
    lines = text.getvalue().splitlines()
    assert lines[-2] == "Total params: 11126"
    conv1 = next(line for line in lines if line.startswith("conv1(Convolution)"))
    assert conv1.split()[1:4] == ["6x24x24", "156", "data"]     # 1*6*5*5 + 6


def test_viz_errors():
    net = _symbol("mlp")
    with pytest.raises(TypeError, match="Symbol"):
        mx.viz.print_summary("not a symbol")
    with pytest.raises(TypeError, match="Symbol"):
        mx.viz.plot_network(42)
    with pytest.raises(ValueError, match="do not decide"), pytest.warns(UserWarning):
        mx.viz.print_summary(net, shape={"softmax_label": (4,)})
    with pytest.warns(RuntimeWarning, match="same name in your graph.*Repeated names: x$"):
        mx.viz.plot_network(mx.sym.var("x") + mx.sym.var("x"))


def test_hidden_weights_leave_no_node_and_no_edge():
    dot = mx.viz.plot_network(_symbol("mlp"))
    assert "fc1_weight" not in dot.source and "fc1 -> data" in dot.source


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_plot_renders_with_dot(tmp_path):
    dot = mx.viz.plot_network(_symbol("lenet-symbol.json"), shape={"data": (2, 1, 28, 28)},
                              save_format="svg")
    path = Path(dot.render(str(tmp_path / "lenet")))
    svg = path.read_text()
    assert path.suffix == ".svg" and "<svg" in svg and "Convolution" in svg
