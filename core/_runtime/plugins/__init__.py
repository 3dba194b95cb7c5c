"""Plugin loading and the plugin health report (pluggy project ``mxnext``).

``load()`` runs once, at the first op or device lookup (``mxnext._runtime.firstuse``):
the builtin plugin first, then every entry point of group ``mxnext`` in name order. A plugin
that fails is recorded, warned about, its registry entries withdrawn, and
skipped, unless ``MXNEXT_PLUGINS`` names it (then ``PluginError``). On a
plevel tie the plugin loading later fails, naming both.
Environment: ``MXNEXT_DISABLE_PLUGIN_AUTOLOAD=1`` loads only the plugins in
``MXNEXT_PLUGINS=a,b``; ``MXNEXT_DISABLE_PLUGINS=a,b`` blocks some.
"""

from ._manager import (BUILTIN, ENTRY_POINT_GROUP, PluginInfo, PluginWarning, add_builtin,
                       ensure_loaded, load, load_plugin, manager, report)

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "PluginInfo", "PluginWarning", "add_builtin",
           "ensure_loaded", "load",
           "load_plugin", "manager", "report"]
