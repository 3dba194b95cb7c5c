"""The error a Module raises when called out of order or with inputs it cannot take."""

from .._runtime.base import MXNetError


class ModuleError(MXNetError, AssertionError):
    """A Module call made before its prerequisite (``bind``, ``init_params``,
    ``init_optimizer``) or with arguments that do not fit the bound module. It is also an
    ``AssertionError``, what MXNet raises in these places."""
