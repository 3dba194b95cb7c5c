"""MXNet's 15 example image-classification networks (apache/mxnet v1.9.x
``example/image-classification/symbols``, their -symbol.json written by MXNet 1.9.1 under
tests/fixtures/example_symbols): each loaded, given parameters, exported with
mx.onnx.export_model with a free batch dimension, run by ONNX Runtime against mxnext's
forward (1e-4 relative), imported back with mx.contrib.onnx.import_model and run again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

FIXTURES = Path(__file__).parent / "fixtures" / "example_symbols"
NETWORKS = json.loads((FIXTURES / "networks.json").read_text())
# the heaviest run at batch 1, the others at batch 2 (through the free batch dimension)
BATCH_ONE = {"inception-v3", "inception-v4", "inception-resnet-v2"}


def parameters(sym, shape, rng):
    """Weights scaled by fan-in (He's gain) so that activations neither vanish nor blow up
    with depth; BatchNorm statistics away from the identity so that folding them counts."""
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    arg = {}
    for name, s in zip(sym.list_arguments(), arg_shapes):
        if name == "data" or name.endswith("_label"):
            continue
        if name.endswith("weight"):
            value = rng.standard_normal(s, np.float32) * np.float32(np.sqrt(2 / np.prod(s[1:])))
        elif name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, s)
        else:
            value = rng.normal(0, 0.1, s)
        arg[name] = mx.nd.array(value, dtype=np.float32)
    aux = {name: mx.nd.array(rng.uniform(0.5, 1.5, s) if name.endswith("var")
                             else rng.normal(0, 0.1, s), dtype=np.float32)
           for name, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    return arg, aux


def calibrate(sym, x, arg, aux):
    """Scale the classifier (the FullyConnected under SoftmaxOutput) so that the logits
    spread by about 2: a flat or a saturated softmax would hide differences."""
    classifier = sym.get_children()[0]
    logits = forward(classifier, x, arg, aux)
    scale = 2.0 / max(float(logits.std()), 1e-12)
    for name in classifier.get_children().list_outputs()[1:]:      # its weight and bias
        arg[name] = arg[name] * scale


def forward(sym, x, arg, aux):
    feeds = {n: mx.nd.zeros(s) for n, s in
             zip(sym.list_arguments(), sym.infer_shape(data=x.shape)[0])
             if n.endswith("_label")}
    executor = sym.bind(mx.cpu(), {"data": mx.nd.array(x), **feeds, **arg}, aux_states=aux)
    return executor.forward(is_train=False)[0].asnumpy()


def assert_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    err = float(np.abs(got - want).max())
    assert err <= 1e-4 * float(np.abs(want).max()), f"{what}: max abs difference {err}"


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_example_network_exports_runs_and_imports(name, tmp_path):
    entry = NETWORKS[name]
    sym = mx.sym.load(str(FIXTURES / f"{name}-symbol.json"))
    shape = tuple(entry["data_shape"])
    shape = shape if name in BATCH_ONE else (2, *shape[1:])
    rng = np.random.default_rng(0)
    arg, aux = parameters(sym, shape, rng)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    calibrate(sym, x, arg, aux)
    want = forward(sym, x, arg, aux)
    assert (want.max(1) > 3 * want.min(1)).all(), "the softmax is not flat"
    assert 1e-5 < want.min() and want.max() < 0.99, "the softmax is not saturated"

    # exported for batch 1 with the batch left free, run at the test's batch
    path = mx.onnx.export_model(sym, (arg, aux), [(1, *shape[1:])], np.float32,
                                str(tmp_path / f"{name}.onnx"), dynamic=True,
                                dynamic_input_shapes=[(None, *shape[1:])])
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["data"]
    batch = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert not batch.HasField("dim_value"), "the batch dimension is free"
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert_close(session.run(None, {"data": x})[0], want, f"{name}: ONNX Runtime")

    sym2, arg2, aux2 = mx.contrib.onnx.import_model(model)
    assert_close(forward(sym2, x, arg2, aux2), want, f"{name}: imported back")
