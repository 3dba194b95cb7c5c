"""GluonNLP 0.10's models, unmodified, on mxnext: with parameters MXNet 1.9.1 initialised and
saved (``fixtures/make_gluonnlp_fixtures.py``), a small BERT, RoBERTa, AWD and standard LSTM
language models, BigRNN, a Transformer and ELMo give MXNet's outputs and parameter gradients
(``gluonnlp_models.py``, run in a child through ``python -m mxnext run``)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
MODELS = ["bert", "roberta", "awd_lstm", "standard_lstm", "big_rnn", "transformer", "elmo"]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluonnlp") is None,
                                reason="GluonNLP is not installed (the ecosystem extra)")


def _run(*args, cwd=None):
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", *map(str, args)],
                         capture_output=True, text=True, timeout=240, cwd=cwd)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def test_import_gluonnlp_gives_it_mxnext(tmp_path):
    (tmp_path / "imp.py").write_text(
        "import gluonnlp, mxnet, mxnext\n"
        "from gluonnlp.data import dataloader\n"
        "print(gluonnlp.__version__, dataloader.context is mxnext.context)\n")
    assert _run(tmp_path / "imp.py").split() == ["0.10.0", "True"]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    out = tmp_path_factory.mktemp("gluonnlp_check")
    _run(HERE / "gluonnlp_models.py", "check", FIXTURES, out)
    return out


@pytest.mark.parametrize("name", MODELS)
def test_model_gives_mxnets_outputs_and_gradients(checked, name):
    want = np.load(FIXTURES / f"gluonnlp_{name}.npz")
    got = np.load(checked / f"gluonnlp_{name}.npz")
    assert sorted(got.files) == sorted(want.files)
    assert any(k.startswith("grad:") for k in want.files)
    for key in want.files:
        assert got[key].shape == want[key].shape, key
        np.testing.assert_allclose(got[key], want[key], rtol=1e-4, atol=1e-5, err_msg=key)
