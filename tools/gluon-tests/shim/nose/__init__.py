"""The part of ``nose`` that MXNet 1.9's test files import (``nose.tools``); real nose
does not import on current Python. Used for MXNet and mxnext alike."""
from . import tools  # noqa: F401
