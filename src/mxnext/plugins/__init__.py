"""``mx.plugins``: the public face of ``mxnext._runtime.plugins``.

Plugin loading and the plugin health report (pluggy project ``mxnext``).
"""

from mxnext._runtime.plugins import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    PluginInfo,
    PluginWarning,
    add_builtin,
    ensure_loaded,
    load,
    load_plugin,
    manager,
    report,
)

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "PluginInfo", "PluginWarning", "add_builtin",
           "ensure_loaded", "load", "load_plugin", "manager", "report"]
