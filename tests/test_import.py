"""What ``import mxnext`` does to the process besides defining modules."""

import os
import subprocess
import sys

import pytest

CODE = "import gc, mxnext; print(gc.get_freeze_count())"


@pytest.mark.parametrize("setting, frozen", [(None, True), ("1", True), ("0", False)])
def test_import_time_objects_leave_the_collectors_full_passes(setting, frozen):
    env = {k: v for k, v in os.environ.items() if k != "MXNEXT_GC_FREEZE"}
    if setting is not None:
        env["MXNEXT_GC_FREEZE"] = setting
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout
    count = int(out.split()[-1])
    assert (count > 10_000) if frozen else count == 0
