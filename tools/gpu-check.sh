#!/usr/bin/env bash
# The GPU machine's check (issue 25), offline, under 5 minutes: install the checkout with the
# carried wheels, then the GPU tests, the device conformance kit on gpu(0), every op of
# ops-nn and ops-tensor on gpu(0) against cpu (tools/gpu_op_sweep.py, 6 processes, 100 s at most), LeNet on
# gpu(0) against cpu, and bench/gpu.py. Prints one PASS/FAIL line per step; the log goes to
# $OUT/gpu-check.log (or /tmp/gpu-check/).
#
# The machine has Python 3.12, cupy-cuda13x, numpy, pluggy, click, pytest and torch but no
# pydantic and no network. Before sending the checkout, fetch pydantic's wheels into the
# git-ignored .whl/ (".whl/" is in the main checkout's .git/info/exclude; the device run
# carries it: carry=[".whl"]), on a machine with network:
#   python3 -m pip download -d .whl --python-version 3.12 --only-binary=:all: \
#       --platform manylinux2014_x86_64 pydantic pydantic_core annotated-types typing-inspection
#   python3 -m pip download -d .whl --no-deps --python-version 3.12 --only-binary=:all: \
#       --platform manylinux_2_28_x86_64 nvidia-cudnn-frontend==1.16.0    # cuDNN convolution
set -u
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-check.log") 2>&1
export PY=${PYTHON:-python3}
FAILED=0

step() {   # step NAME SECONDS COMMAND...
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "=== $name"
    if declare -F "$1" >/dev/null; then       # a function of this script: timeout runs programs
        timeout "$limit" bash -c "$(declare -f "$1"); $1"
    else
        timeout "$limit" "$@"
    fi
    rc=$?
    if [ $rc -eq 0 ]; then echo "PASS $name ($((SECONDS - t0))s)"
    else echo "FAIL $name (exit $rc after $((SECONDS - t0))s)"; FAILED=1; fi
}

install() {
    if ls .whl/*.whl >/dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps .whl/*.whl || return 1
    elif ! $PY -c "import pydantic" 2>/dev/null; then
        echo "no .whl/ wheels for pydantic (see the header)"; return 1
    fi
    $PY -m pip install -q --no-index --no-deps --no-build-isolation -e . -e plugins/ops-tensor \
        -e plugins/ops-nn -e plugins/device-cupy -e plugins/device-testdev
}

conformance() {
    $PY - <<'PY'
import sys
import mxnext as mx
from opsdk.testing import run_device_checks
bad = 0
for name, err in run_device_checks(mx.gpu(0)):
    print(f"  {'PASS' if err is None else 'FAIL'} conformance/{name}" + (f": {err}" if err else ""))
    bad += err is not None
sys.exit(1 if bad else 0)
PY
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
step install 90 install
step devices 30 $PY -m mxnext_cli devices
# testdev's copies of the scripts' runs are left out: the steps below run them on the gpu
step gpu-tests 90 $PY -m pytest -q -p no:cacheprovider -rs --tb=short --maxfail=3 \
    plugins/device-cupy/tests plugins/device-testdev/tests \
    --ignore=plugins/device-testdev/tests/test_gpu_scripts.py
step conformance 60 conformance
sweep() {      # 6 processes side by side: compiling cupy's kernels is CPU work
    local k pids=() rc=0
    for k in 0 1 2 3 4 5; do
        $PY tools/gpu_op_sweep.py --ctx gpu --seconds 100 --shard $k/6 > "$OUT/sweep-$k.log" 2>&1 &
        pids+=($!)
    done
    for k in 0 1 2 3 4 5; do wait ${pids[$k]} || rc=1; cat "$OUT/sweep-$k.log"; done
    return $rc
}
step op-sweep 130 sweep
step lenet 90 $PY tools/gpu_lenet.py --ctx gpu --n 2048 --epochs 2
step bench 100 $PY bench/gpu.py
echo "gpu-check: $([ $FAILED -eq 0 ] && echo ALL PASS || echo SOME FAILED) in ${SECONDS}s"
exit $FAILED
