"""MXNet 1.x tensor operators for mxnext, registered through the ``ops-tensor`` plugin."""

__version__ = "0.1.0"
