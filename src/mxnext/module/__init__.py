"""MXNet's Module API (``mx.mod``): symbolic training with ``Module.fit``, data-parallel
over several contexts."""

from .base_module import BaseModule, BatchEndParam
from .bucketing_module import BucketingModule
from .errors import ModuleError
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "BatchEndParam", "BucketingModule", "DataParallelExecutorGroup",
           "Module", "ModuleError", "SequentialModule"]
