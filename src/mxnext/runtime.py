"""MXNet's ``mx.runtime``: which features this installation has, under MXNet's feature names.

MXNet reports how its C library was built; mxnext reports what it can do here: the CPU
instruction sets numpy's kernels use, numpy's BLAS, and whether a plugin provides a GPU
device. Features MXNet names that mxnext has no counterpart for (oneDNN, TensorRT, ...)
are reported as disabled. ``thread_policy()`` says how many threads the engine's workers,
kernel threads, BLAS and OpenMP each get here, and a kernel takes its share of the cores
with ``cpu_share`` (``mxnext._runtime.threads``).
"""

from __future__ import annotations

import collections

import numpy as np

from ._runtime.threads import ThreadPolicy, apply_thread_policy, cpu_share, thread_policy

__all__ = ["Feature", "Features", "feature_list", "ThreadPolicy", "thread_policy",
           "apply_thread_policy", "cpu_share"]

# MXNet 1.9's feature names, in its order
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature:
    """One feature: its ``name`` and whether it is ``enabled``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool):
        self.name = name
        self.enabled = enabled

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_features() -> dict:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # pragma: no cover - another numpy layout
        return {}
    return __cpu_features__


def _blas() -> str:
    try:
        return str(np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]).lower()
    except Exception:  # pragma: no cover - a numpy without build information
        return ""


def _enabled() -> dict:
    from ._runtime import context
    cpu, blas = _cpu_features(), _blas()
    on = {
        "CUDA": context.num_gpus() > 0,       # a gpu plugin with a usable CUDA device
        "CPU_SSE": cpu.get("SSE", False), "CPU_SSE2": cpu.get("SSE2", False),
        "CPU_SSE3": cpu.get("SSE3", False), "CPU_SSE4_1": cpu.get("SSE41", False),
        "CPU_SSE4_2": cpu.get("SSE42", False), "CPU_AVX": cpu.get("AVX", False),
        "CPU_AVX2": cpu.get("AVX2", False), "SSE": cpu.get("SSE", False),
        "F16C": cpu.get("F16C", False),
        "BLAS_OPEN": "openblas" in blas, "BLAS_MKL": "mkl" in blas,
        "BLAS_APPLE": "accelerate" in blas, "LAPACK": True,
        "INT64_TENSOR_SIZE": True,        # numpy shapes and sizes are 64-bit
    }
    return {n: bool(on.get(n, False)) for n in _NAMES}


def feature_list() -> list[Feature]:
    """Every feature, enabled or not."""
    return [Feature(n, e) for n, e in _enabled().items()]


class Features(collections.OrderedDict):
    """``{name: Feature}`` of every feature (MXNet's ``mx.runtime.Features()``): one object,
    made at the first call, as MXNet's."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance,
                                             ((f.name, f) for f in feature_list()))
        return cls.instance

    def __init__(self):
        pass        # filled once, in __new__

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` is enabled; RuntimeError for a name MXNet does not have."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature {feature_name!r} is unknown, known features are: "
                               f"{', '.join(self)}")
        return self[name].enabled
