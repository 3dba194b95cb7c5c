"""``mx.gluon.data.vision``: image datasets read from local files in their standard
formats."""

from .datasets import *  # noqa: F401,F403
