"""GluonNLP 0.10's data side on mxnext: vocabularies, the BERT tokenizer and sentence
transform, batchify functions, bucket samplers, BPTT batching, the beam search sampler and
token embeddings from a local file give what they give on MXNet 1.9.1
(``gluonnlp_data.py`` run in a child through ``python -m mxnext run``; MXNet wrote
``fixtures/gluonnlp_data.json``)."""

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
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("gluonnlp_data") / "out.json"
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(HERE / "gluonnlp_data.py"),
                          str(path)], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(path.read_text())


WANT = json.loads((HERE / "fixtures" / "gluonnlp_data.json").read_text())


@pytest.mark.parametrize("part", sorted({k.split(".")[0] for k in WANT}))
def test_gluonnlp_data_part_matches_mxnet(results, part):
    keys = sorted(k for k in WANT if k.split(".")[0] == part)
    assert [k for k in results if k.split(".")[0] == part] == keys
    for key in keys:
        want, got = WANT[key], results[key]
        if all(isinstance(v, (int, float)) for v in want):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)
        else:
            assert got == want, key
