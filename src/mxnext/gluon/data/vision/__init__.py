"""``mx.gluon.data.vision``: image datasets read from local files in their standard
formats, and image transforms."""

from .datasets import *  # noqa: F401,F403
from . import transforms  # noqa: F401
from .folder import ImageFolderDataset  # noqa: F401
from .record import ImageRecordDataset  # noqa: F401
