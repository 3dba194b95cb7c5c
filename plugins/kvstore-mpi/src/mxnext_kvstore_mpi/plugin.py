"""Entry point of the ``kvstore-mpi`` plugin: the dist KVStore types and ``mxnext launch``.
Nothing here imports mpi4py; the first store created does."""

from opsdk import hookimpl


@hookimpl
def mxnext_register_kvstores(registry):
    from .store import DistSyncDeviceKVStore, DistSyncKVStore
    registry.register("dist_sync", DistSyncKVStore)
    for name in ("dist_sync_device", "dist_device_sync"):
        registry.register(name, DistSyncDeviceKVStore)


@hookimpl
def mxnext_cli_commands(group):
    from .launch import launch
    group.add_command(launch)
