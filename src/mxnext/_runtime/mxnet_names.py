"""MXNet 1.x names that mxnext does not have yet, and the distribution meant to provide each.

Read only on the error path: a lookup that failed asks ``hint(kind, name)`` for the
sentence to append to its not-found error, so that ``FullyConnected`` or ``gpu``
says where it comes from instead of suggesting ``max`` or ``cpu``. The table is
plain data; nothing is built at import time.
"""

from __future__ import annotations

__all__ = ["hint", "suggest"]

# Distributions named below that are not released yet: they are named as planned and
# never offered to ``mxnext install``. Drop one from here when it is released.
PLANNED: frozenset = frozenset()

# MXNet 1.9 operators (names and aliases) that mxnext-ops-tensor does not define.
OPS = {
    "mxnext-ops-nn": """
        Activation BatchNorm BatchNorm_v1 Convolution Convolution_v1 Deconvolution Dropout
        Embedding FullyConnected GroupNorm InstanceNorm L2Normalization LayerNorm LeakyReLU
        LRN Pooling Pooling_v1 RNN UpSampling
        BilinearSampler Correlation Crop GridGenerator ROIPooling SpatialTransformer
        _contrib_ROIAlign _contrib_RROIAlign _contrib_BilinearResize2D
        _contrib_AdaptiveAvgPooling2D _contrib_SyncBatchNorm _contrib_interleaved_matmul_selfatt_qk
        _contrib_interleaved_matmul_selfatt_valatt _contrib_interleaved_matmul_encdec_qk
        _contrib_interleaved_matmul_encdec_valatt
        im2col col2im
        SequenceLast SequenceMask SequenceReverse
        softmax log_softmax softmin SoftmaxActivation SoftmaxOutput Softmax
        softmax_cross_entropy
        LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput SVMOutput
        MakeLoss make_loss smooth_l1 IdentityAttachKLSparseReg
        CTCLoss ctc_loss _contrib_CTCLoss _contrib_ctc_loss
        sgd_update sgd_mom_update mp_sgd_update mp_sgd_mom_update nag_mom_update
        mp_nag_mom_update multi_sgd_update multi_sgd_mom_update multi_mp_sgd_update
        multi_mp_sgd_mom_update preloaded_multi_sgd_update preloaded_multi_sgd_mom_update
        preloaded_multi_mp_sgd_update preloaded_multi_mp_sgd_mom_update
        adam_update _adamw_update _mp_adamw_update _multi_adamw_update _multi_mp_adamw_update
        rmsprop_update rmspropalex_update ftrl_update ftml_update signsgd_update signum_update
        lamb_update_phase1 lamb_update_phase2 mp_lamb_update_phase1 mp_lamb_update_phase2
        _multi_lamb_update _multi_mp_lamb_update multi_lars multi_sum_sq reset_arrays
    """,
}

DEVICES = {"mxnext-device-cupy": "gpu"}

KVSTORES = {
    "mxnext-device-cupy": "nccl",
    "mxnext-kvstore-mpi": "dist_sync dist_sync_device dist_device_sync",
}

# MXNet 1.x KVStore types no distribution provides, and why.
KVSTORES_NOT_PROVIDED = dict.fromkeys(
    ("dist_async", "dist_async_device"),
    "asynchronous updates need a parameter server, and mxnext-kvstore-mpi runs the "
    "synchronous types (dist_sync, dist_sync_device) over MPI allreduce")

# MXNet's builtin KVStore types: they come with mxnext's own KVStore, not with a plugin.
BUILTIN_KVSTORES = "local device"

_TABLES = {"op": ("operator", OPS), "device": ("device type", DEVICES),
           "kvstore": ("KVStore type", KVSTORES)}


def hint(kind: str, name: str) -> str | None:
    """The sentence to append to "unknown ``kind`` ``name``", or None when MXNet 1.x has
    no such name either.

    ``kind`` is ``"op"``, ``"device"``, ``"kvstore"`` or ``"plugin"`` (a plugin name such
    as ``ops-nn``, or its distribution's name).
    """
    if kind == "plugin":
        dist = name if name.startswith("mxnext-") else f"mxnext-{name}"
        known = set(PLANNED).union(*(table for _, table in _TABLES.values()))
        return f"plugin {name!r} comes with {dist}{_availability(dist)}" if dist in known else None
    if kind not in _TABLES:
        raise ValueError(f"hint: kind must be one of {', '.join(sorted(_TABLES))} or 'plugin', "
                         f"not {kind!r}")
    if kind == "kvstore" and name in BUILTIN_KVSTORES.split():
        return (f"{name!r} is MXNet 1.x's builtin KVStore type; mxnext's builtin plugin "
                f"registers it (`mxnext plugins` shows whether that failed)")
    if kind == "kvstore" and name in KVSTORES_NOT_PROVIDED:
        return (f"{name!r} is an MXNet 1.x KVStore type mxnext does not provide: "
                f"{KVSTORES_NOT_PROVIDED[name]}")
    what, table = _TABLES[kind]
    for dist, names in table.items():
        if name in names.split():
            return f"{name!r} is an MXNet 1.x {what} provided by {dist}{_availability(dist)}"
    return None


def suggest(kind: str, name: str, choices) -> str:
    """What to append to "unknown ``kind`` ``name``": ``; <hint>`` when MXNet 1.x has the
    name, else `` (did you mean ...?)`` from ``choices``, else nothing."""
    from .base import did_you_mean
    found = hint(kind, name)
    return f"; {found}" if found else did_you_mean(name, choices)


def _availability(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        version(dist)
    except PackageNotFoundError:
        if dist in PLANNED:
            return " (planned, not yet released)"
        return f", which is not installed: `mxnext install {dist}`"
    return ", which is installed but does not provide it here (`mxnext plugins` shows its status)"
