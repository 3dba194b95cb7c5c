"""GluonNLP training on mxnext: ``gluonnlp_train.py`` (an AWD-LSTM language model on BPTT
batches with activation regularisation and clipping; a small BERT with masked-LM and
next-sentence losses under BERTAdam), run unmodified through ``python -m mxnext run`` on
synthetic data whose pattern can be learnt: each loss falls."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluonnlp") is None,
                                reason="GluonNLP is not installed (the ecosystem extra)")


@pytest.fixture(scope="module")
def losses(tmp_path_factory):
    path = tmp_path_factory.mktemp("gluonnlp_train") / "losses.json"
    out = subprocess.run([sys.executable, "-m", "mxnext", "run",
                          str(HERE / "gluonnlp_train.py"), str(path)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(path.read_text())


def test_language_model_loss_falls(losses):
    lm = np.array(losses["lm"])
    assert len(lm) == 90 and np.isfinite(lm).all()
    # from about log(vocabulary size) towards the pattern's entropy
    assert lm[-15:].mean() < lm[:15].mean() - 0.8, lm.round(2).tolist()


def test_bert_pretraining_loss_falls(losses):
    bert = np.array(losses["bert"])
    assert len(bert) == 25 and np.isfinite(bert).all()
    assert bert[-5:].mean() < 0.5 * bert[:3].mean(), bert.round(2).tolist()
