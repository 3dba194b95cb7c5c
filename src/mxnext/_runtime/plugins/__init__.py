"""Plugin loading and the plugin health report (pluggy project ``mxnext``).

``load()`` runs once, at the first op or device lookup (``mxnext._runtime.firstuse``):
the builtin plugin first, then every entry point of group ``mxnext`` in ``load_order``
(dependencies first, then mxnext's own distributions, then by name). A plugin that fails
(``sys.exit()`` included; not ``KeyboardInterrupt``) is recorded, warned about, its registry
entries withdrawn, and skipped, unless ``MXNEXT_PLUGINS`` names it (then ``PluginError``).
On a plevel tie the plugin loading later fails, naming both; an op name defined by an
earlier plugin is refused for the later one (``registry.refused``).
Environment: ``MXNEXT_DISABLE_PLUGIN_AUTOLOAD=1`` loads only the plugins in
``MXNEXT_PLUGINS=a,b``; ``MXNEXT_DISABLE_PLUGINS=a,b`` blocks some.
"""

from ._manager import (BUILTIN, ENTRY_POINT_GROUP, PluginInfo, PluginWarning, add_builtin,
                       ensure_loaded, load, load_plugin, manager, report)

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "PluginInfo", "PluginWarning", "add_builtin",
           "ensure_loaded", "load",
           "load_plugin", "manager", "report"]
