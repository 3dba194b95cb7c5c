"""MXNet's own training tests (tests/mxnet_train/, verbatim copies) run unmodified on mxnext
through the ``mxnet`` import alias, in a child interpreter."""

import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).parent / "mxnet_train"


def test_mxnet_test_bucketing_runs_unmodified():
    # from mxnet.contrib.amp import amp; BucketingModule.fit over 5 epochs of LSTM buckets
    # whose labels include MXNet's padding (-1) and num_classes (MXNet gives those no target)
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(HERE / "test_bucketing.py")],
                         capture_output=True, text=True, timeout=600, cwd=HERE)
    assert out.returncode == 0, out.stderr[-3000:]
    perplexity = [float(v) for v in re.findall(r"Epoch\[\d\] Train-perplexity=([\d.]+)",
                                                out.stderr)]
    assert len(perplexity) == 5 * 2            # each line twice: the root logger's two handlers
    # random words over a vocabulary of 50: the model learns their frequencies, no more
    assert 40 < perplexity[-1] < 60
    assert "Finished fit..." in out.stderr
