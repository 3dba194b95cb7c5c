"""Issue 31's snippet over the whole Gluon model zoo, under each engine: a hybridized call
not waited on, the same call again, and the largest difference of the first output from the
second (0 when results read late are right). Prints one line per network and engine.

    .venv/bin/python tools/race_check.py [--static] [NAME ...]
"""

import argparse
import os
import subprocess
import sys

ENGINES = ("ThreadedEnginePerDevice", "ThreadedEngine", "NaiveEngine")
_CHILD = """
import sys, numpy as np, mxnext as mx
from mxnext.gluon.model_zoo import vision
name, static = sys.argv[1], sys.argv[2] == "1"
size = 299 if name.startswith("inception") else 224
net = vision.get_model(name); net.initialize(mx.init.Xavier())
net.hybridize(static_alloc=static, static_shape=static)
x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (1, 3, size, size)))
net(x).wait_to_read()
y = net(x)
ref = net(x).asnumpy()
print(np.abs(y.asnumpy() - ref).max())
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="networks (default: the whole zoo)")
    ap.add_argument("--static", action="store_true", help="hybridize with static_alloc")
    args = ap.parse_args()
    if not args.names:
        from mxnext.gluon.model_zoo.vision import _models
        args.names = sorted(_models)
    wrong = 0
    for name in args.names:
        for engine in ENGINES:
            env = dict(os.environ, MXNEXT_ENGINE_TYPE=engine)
            out = subprocess.run([sys.executable, "-c", _CHILD, name, str(int(args.static))],
                                 env=env, capture_output=True, text=True)
            diff = out.stdout.strip() if out.returncode == 0 else f"failed: {out.stderr[-300:]}"
            wrong += diff != "0.0"
            print(f"{name:18s} {engine:24s} {diff}", flush=True)
    print(f"{wrong} of {len(args.names) * len(ENGINES)} runs wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
