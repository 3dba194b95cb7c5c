#!/usr/bin/env python3
"""Run MXNet 1.9's own ``tests/python/unittest/test_image.py``, unmodified, on mxnext.

The test file is not part of this repository: it is read from an MXNet checkout (default
the mirror /work/.mirror/apache+mxnet/repo at branch v1.9.x; ``--from FILE`` for a plain
copy) into a temporary folder, next to what it imports from MXNet's test tree, written
here: ``common`` (``with_seed``, ``assertRaises``) and ``nose.tools.raises`` as small
pytest-based stand-ins, and a conftest that installs the ``mxnet`` -> ``mxnext`` alias and
gives ``TestImage.IMAGES`` sixteen local JPEG images in place of MXNet's download (the
iterator tests count batches of 16 images). Tests comparing with OpenCV need ``cv2``.

    python tools/mxnet-image-tests.py [--python .venv/bin/python] [pytest args...]

Not part of the test suite (it needs the MXNet sources).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MIRROR = Path("/work/.mirror/apache+mxnet/repo")

COMMON = '''
import functools
import random

import numpy as np
import pytest

import mxnet as mx


def with_seed(seed=None):
    def decorate(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            value = np.random.randint(0, 2 ** 31 - 1) if seed is None else seed
            np.random.seed(value)
            random.seed(value)
            mx.random.seed(value)
            return test(*args, **kwargs)
        return run
    return decorate


def assertRaises(exc, fn, *args, **kwargs):
    with pytest.raises(exc):
        fn(*args, **kwargs)
'''

NOSE_TOOLS = '''
import functools

import pytest


def raises(exc):
    def decorate(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            with pytest.raises(exc):
                test(*args, **kwargs)
        return run
    return decorate
'''

CONFTEST = '''
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxnext import mxnet_alias
mxnet_alias.install()
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGES = []
os.makedirs(os.path.join(HERE, "data", "imgs"), exist_ok=True)
for i in range(16):
    h, w = 240 + 7 * i, 260 + 5 * (15 - i)
    y, x = np.mgrid[0:h, 0:w]
    pixels = np.stack([x * 255 // w, y * 255 // h, (x + y + 20 * i) % 256], -1)
    path = os.path.join(HERE, "data", "imgs", f"img{i}.jpg")
    Image.fromarray(pixels.astype(np.uint8)).save(path, quality=95)
    IMAGES.append(path)


def pytest_collection_modifyitems(session, config, items):
    import test_image
    test_image.TestImage.IMAGES = IMAGES
'''


def test_source(given: str | None) -> str:
    if given:
        return Path(given).read_text()
    return subprocess.run(["git", "--git-dir", str(MIRROR), "show",
                           "v1.9.x:tests/python/unittest/test_image.py"],
                          check=True, capture_output=True, text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with mxnext")
    parser.add_argument("--from", dest="source", help="a copy of test_image.py")
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="mxnet-image-tests-") as tmp:
        folder = Path(tmp)
        (folder / "test_image.py").write_text(test_source(args.source))
        (folder / "common.py").write_text(COMMON)
        (folder / "nose").mkdir()
        (folder / "nose" / "__init__.py").write_text("")
        (folder / "nose" / "tools.py").write_text(NOSE_TOOLS)
        (folder / "conftest.py").write_text(CONFTEST)
        return subprocess.run([os.path.abspath(args.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "test_image.py", *pytest_args], cwd=folder).returncode


if __name__ == "__main__":
    sys.exit(main())
