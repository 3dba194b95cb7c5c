"""The frontends' part of the builtin plugin: the ``local``, ``device`` and ``teststore``
KVStores, the ``Custom`` op (Python operators, ``mx.operator``) and the control-flow ops
(``_foreach``, ``_while_loop``, ``_cond``), registered through the same hooks as external
plugins (``mxnext/__init__.py`` adds this module to the builtin plugin)."""

from ._runtime.hookspecs import hookimpl


@hookimpl
def mxnext_register_kvstores(registry):
    from .kvstore.device import DEVICE_TYPES, DeviceKVStore
    from .kvstore.kvstore import LOCAL_TYPES, KVStore
    for name in LOCAL_TYPES:
        registry.register(name, KVStore)
    for name in DEVICE_TYPES:
        registry.register(name, DeviceKVStore)
    from .kvstore.teststore import TestStore
    registry.register("teststore", TestStore)


@hookimpl
def mxnext_register_ops(registry):
    from . import _control_flow_ops, _custom
    _custom.define(registry)
    _control_flow_ops.define(registry)
