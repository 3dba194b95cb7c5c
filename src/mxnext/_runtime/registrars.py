"""The narrow objects the registration hooks receive: each has ``register(...)`` and nothing
else, and remembers what one plugin registered through it (so a plugin that fails is
withdrawn, and ``mxnext plugins`` lists what it added)."""

from __future__ import annotations

from . import device, kvstores, registry

__all__ = ["DeviceRegistrar", "KVStoreRegistrar", "OpRegistrar"]


class _Registrar:
    __slots__ = ("_plugin", "_names")

    def __init__(self, plugin: str):
        self._plugin = plugin
        self._names: list = []     # what this plugin registered, in order

    def __repr__(self):
        return f"<{type(self).__name__} of plugin {self._plugin!r}>"


class DeviceRegistrar(_Registrar):
    """What ``mxnext_register_devices`` receives."""

    __slots__ = ()

    def register(self, dev) -> None:
        """Serve every id of device type ``dev.type`` with ``dev`` (an object keeping the
        ``opsdk.device.Device`` contract). Registering the same type again is a no-op."""
        device.register(dev)
        if dev.type not in self._names:
            self._names.append(dev.type)


class KVStoreRegistrar(_Registrar):
    """What ``mxnext_register_kvstores`` receives."""

    __slots__ = ()

    def register(self, name: str, factory) -> None:
        """Make ``mx.kv.create(name)`` return ``factory(name)`` (a store class taking its
        type name is the usual factory); ``name`` is matched lower-case."""
        if kvstores.register(name, factory):
            self._names.append(name.lower())

    def _withdraw(self) -> None:
        for name in self._names:
            kvstores.unregister(name)


class OpRegistrar(_Registrar):
    """What ``mxnext_register_ops`` receives. Plugins normally define ops with
    ``opsdk.register_op`` (a builder over the same definition) and need not use it."""

    __slots__ = ()

    def register(self, name: str):
        """Define op ``name`` for this plugin and return its definition (a name another
        plugin defined first stays theirs: the definition is refused and reported)."""
        d = registry.define(name, provider=self._plugin)
        self._names.append(d.name)
        return d
