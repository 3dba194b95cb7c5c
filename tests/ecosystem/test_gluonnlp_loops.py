"""GluonNLP's blocks that loop with ``F.contrib.foreach`` / ``while_loop`` / ``cond``
(``ELMoBiLM``, ``BiLMEncoder``, ``HybridBeamSearchSampler``), hybridized, give what they
give imperatively: outputs and parameter gradients (``gluonnlp_loops.py``, run in a child
through ``python -m mxnext run``)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluonnlp") is None,
                                reason="GluonNLP is not installed (the ecosystem extra)")


def test_hybridized_loops_match_the_imperative_runs(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(HERE / "gluonnlp_loops.py"),
                          str(tmp_path / "loops.npz")], capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-4000:]
    got = np.load(tmp_path / "loops.npz")
    plain = [k for k in got.files if ".plain." in k]
    for block in ("elmo", "bilm_encoder", "beam_search"):
        assert any(k.startswith(block + ".plain.out") for k in plain), block
    assert any(k.startswith("elmo.plain.grad:") for k in plain)
    for key in plain:
        np.testing.assert_allclose(got[key.replace(".plain.", ".hybrid.")], got[key],
                                   rtol=1e-5, atol=1e-6, err_msg=key)
