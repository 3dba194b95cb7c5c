"""``mx.ops``: the public face of ``mxnext._runtime.registry``.

The operator registry: one ``OpDef`` per op, read by every frontend.
"""

from mxnext._runtime.registry import (
    OpDef,
    AttrEntry,
    Argument,
    Conflict,
    Refusal,
    Report,
    USER,
    op,
    get,
    define,
    add_alias,
    list_ops,
    providing,
    current_provider,
    on_new_op,
    validate,
    withdraw,
    provided_by,
    claim_package,
    require,
    missing_required,
    CORE_OPS_DISTRIBUTION,
    OpInfo,
    defer_modules,
    recording,
    catalog,
    names,
    refused,
)

__all__ = ["OpDef", "AttrEntry", "Argument", "Conflict", "Refusal", "Report", "USER", "op",
           "get", "define", "add_alias", "list_ops", "providing", "current_provider",
           "on_new_op", "validate", "withdraw", "provided_by", "claim_package", "require",
           "missing_required", "CORE_OPS_DISTRIBUTION", "OpInfo", "defer_modules",
           "recording", "catalog", "names", "refused"]
