"""The plugin contract: every hook a plugin of project ``mxnext`` may implement.

A plugin is a module (or object) registered under its entry-point name in
group ``mxnext``; it implements any subset of the hooks below, marked with
``opsdk.hookimpl``. Hooks run once, while plugins load (``mxnext.plugins``, at
the first op, device or KVStore lookup), never per operator call: they fill plain
tables that the hot path reads.
Within one plugin the registration hooks run in the order they appear here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from .registrars import DeviceRegistrar, KVStoreRegistrar, OpRegistrar

hookspec = pluggy.HookspecMarker("mxnext")
hookimpl = pluggy.HookimplMarker("mxnext")


# -------------------------------------------------------------------------
# Contribution hooks: what a plugin adds to the process
# -------------------------------------------------------------------------


@hookspec
def mxnext_register_devices(registry: "DeviceRegistrar") -> None:
    """Register device types.

    :param registry: a registrar (``opsdk.DeviceRegistrar``); call
        ``registry.register(dev)`` for each device object (the contract
        ``opsdk.device.Device``). Keep it cheap: defer importing the
        device library (cupy, ...) until the device is first used.

    Return value is ignored. Runs before ``mxnext_register_ops`` of the same
    plugin, so ops may refer to the device types registered here.
    """


@hookspec
def mxnext_register_kvstores(registry: "KVStoreRegistrar") -> None:
    """Register KVStore types (the names ``mx.kv.create(name)`` accepts).

    :param registry: a registrar (``opsdk.KVStoreRegistrar``); call
        ``registry.register(name, factory)`` for each type, where ``factory(name)``
        returns the store (an ``opsdk.kvstore.KVStore`` subclass taking the name is
        the usual factory). Import heavy libraries (mpi4py) inside the factory, not here.

    Return value is ignored. Registering a name another plugin holds fails this plugin.
    """


@hookspec
def mxnext_register_ops(registry: "OpRegistrar") -> None:
    """Define operators and attach attributes to operators.

    :param registry: a registrar (``opsdk.OpRegistrar``) whose
        ``registry.register(name)`` defines an op for this plugin. Plugins
        normally use ``opsdk.register_op`` (to define an op, with a builder),
        ``opsdk.extend_op`` (to add, e.g., ``FCompute<gpu>`` to another
        plugin's op) or ``opsdk.register_op_modules`` instead; all attribute
        entries to this plugin.

    Return value is ignored. An exception marks the plugin as failed and
    withdraws every entry it made (``registry.withdraw``), so a half-registered
    plugin never leaves half-working ops behind.
    """


# -------------------------------------------------------------------------
# Command-line hooks
# -------------------------------------------------------------------------


@hookspec
def mxnext_cli_commands(group: "click.Group") -> None:
    """Add subcommands to the ``mxnext`` command.

    :param group: the root ``click.Group``; call ``group.add_command(cmd)``.

    Return value is ignored. Called only by the CLI, after plugins loaded.
    """
