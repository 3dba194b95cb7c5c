"""``mx.hookspecs``: the public face of ``mxnext._runtime.hookspecs``.

The plugin contract: every hook a plugin of project ``mxnext`` may implement.
"""

from mxnext._runtime.hookspecs import (
    hookspec,
    hookimpl,
    mxnext_register_devices,
    mxnext_register_kvstores,
    mxnext_register_ops,
    mxnext_cli_commands,
)

__all__ = ["hookspec", "hookimpl", "mxnext_register_devices", "mxnext_register_kvstores",
           "mxnext_register_ops", "mxnext_cli_commands"]
