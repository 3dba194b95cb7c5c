"""libdnnl (oneDNN 3.x C API) through ctypes: where the library is, loading it at the first
kernel call, the functions and constants the kernels use, one CPU engine and a stream per
thread.

``MXNEXT_ONEDNN_LIBRARY`` names the library file to load instead of the one the
``onednn-cpu-gomp`` wheel installs."""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
from importlib import metadata

ENV = "MXNEXT_ONEDNN_LIBRARY"
DIST = "onednn-cpu-gomp"

# constants of dnnl_common_types.h / dnnl_types.h (oneDNN 3.x ABI)
F32 = 3
TAG_ANY, TAG_A = 1, 2             # plain row-major tags: TAG_A + ndims - 1 (ab, abc, ...)
# channels blocked by 8 or 16 (aBc8b, aBcd8b, aBcde8b / aBc16b, ...), by ndims
TAG_BLOCKED = {8: {3: 69, 4: 102, 5: 142}, 16: {3: 56, 4: 78, 5: 121}}
ISA_AVX512_CORE = 0x27            # dnnl_cpu_isa_t bits: avx512_core and up include them
FORWARD_TRAINING, FORWARD_INFERENCE, BACKWARD, BACKWARD_DATA, BACKWARD_WEIGHTS = \
    64, 96, 128, 160, 192
CONVOLUTION_DIRECT = 1
POOLING_MAX, POOLING_AVG_INCLUDE_PADDING, POOLING_AVG_EXCLUDE_PADDING = 511, 767, 1023
ELTWISE_SOFT_RELU = 0x27
ELTWISE_RELU_DST, ELTWISE_TANH_DST, ELTWISE_LOGISTIC_DST = 0x100, 0x101, 0x104  # use_dst_for_bwd
LRN_ACROSS_CHANNELS = 0xaff
BN_GLOBAL_STATS, BN_SCALE, BN_SHIFT = 1, 2, 4     # dnnl_normalization_flags_t
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 17, 33, 41
ARG_SRC_1, ARG_ATTR_SCALES = 2, 4096      # a runtime scale of argument a: ARG_ATTR_SCALES | a
BINARY_ADD = 0x1fff0
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS, ARG_DIFF_BIAS = 129, 145, 161, 169
ARG_WORKSPACE, ARG_SCRATCHPAD = 64, 80
ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT, ARG_DIFF_SCALE, ARG_DIFF_SHIFT = \
    49, 50, 51, 52, 255, 256
QUERY_MD = {ARG_SRC: 129, ARG_DIFF_SRC: 130, ARG_WEIGHTS: 131, ARG_DIFF_WEIGHTS: 132,
            ARG_DST: 133, ARG_DIFF_DST: 134, ARG_WORKSPACE: 135, ARG_SCRATCHPAD: 136}
QUERY_EXEC_ARG_MD = 255
SCRATCHPAD_USER = 1
UNIMPLEMENTED = 3
MAX_NDIMS = 12

_STATUS = {1: "out of memory", 2: "invalid arguments", 3: "unimplemented",
           4: "last implementation reached", 5: "runtime error", 6: "not required"}

Dims = ctypes.c_int64 * MAX_NDIMS
_P, _I, _SZ, _F = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_float

# name -> (restype, argtypes); restype c_int is a dnnl_status_t, checked on every call
_PROTOS = {
    "dnnl_engine_create": (_I, [ctypes.POINTER(_P), _I, _SZ]),
    "dnnl_get_effective_cpu_isa": (_I, []),
    "dnnl_stream_create": (_I, [ctypes.POINTER(_P), _P, _I]),
    "dnnl_stream_destroy": (_I, [_P]),
    "dnnl_memory_desc_create_with_tag": (_I, [ctypes.POINTER(_P), _I, Dims, _I, _I]),
    "dnnl_memory_desc_create_with_strides": (_I, [ctypes.POINTER(_P), _I, Dims, _I, Dims]),
    "dnnl_memory_desc_destroy": (_I, [_P]),
    "dnnl_memory_desc_equal": (_I, [_P, _P]),
    "dnnl_memory_desc_get_size": (_SZ, [_P]),
    "dnnl_memory_create": (_I, [ctypes.POINTER(_P), _P, _P, _P]),
    "dnnl_memory_destroy": (_I, [_P]),
    "dnnl_memory_set_data_handle": (_I, [_P, _P]),
    "dnnl_primitive_attr_create": (_I, [ctypes.POINTER(_P)]),
    "dnnl_primitive_attr_destroy": (_I, [_P]),
    "dnnl_primitive_attr_set_scratchpad_mode": (_I, [_P, _I]),
    "dnnl_primitive_attr_set_scales_mask": (_I, [_P, _I, _I]),
    "dnnl_primitive_desc_query_md": (_P, [_P, _I, _I]),
    "dnnl_primitive_desc_destroy": (_I, [_P]),
    "dnnl_primitive_create": (_I, [ctypes.POINTER(_P), _P]),
    "dnnl_primitive_destroy": (_I, [_P]),
    "dnnl_primitive_execute": (_I, [_P, _P, _I, _P]),
    "dnnl_reorder_primitive_desc_create": (_I, [ctypes.POINTER(_P), _P, _P, _P, _P, _P]),
    "dnnl_convolution_forward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _I, _P, _P, _P, _P, Dims, Dims, Dims, Dims, _P]),
    "dnnl_convolution_backward_data_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, Dims, Dims, Dims, Dims, _P, _P]),
    "dnnl_convolution_backward_weights_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, _P, Dims, Dims, Dims, Dims, _P, _P]),
    "dnnl_matmul_primitive_desc_create": (_I, [ctypes.POINTER(_P), _P, _P, _P, _P, _P, _P]),
    "dnnl_binary_primitive_desc_create": (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, _P]),
    "dnnl_pooling_forward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _I, _P, _P, Dims, Dims, Dims, Dims, Dims, _P]),
    "dnnl_pooling_backward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, Dims, Dims, Dims, Dims, Dims, _P, _P]),
    "dnnl_eltwise_forward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _I, _P, _P, _F, _F, _P]),
    "dnnl_eltwise_backward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, _F, _F, _P, _P]),
    "dnnl_lrn_forward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _I, _P, _P, ctypes.c_int64, _F, _F, _F, _P]),
    "dnnl_lrn_backward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, ctypes.c_int64, _F, _F, _F, _P, _P]),
    "dnnl_batch_normalization_forward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _F, ctypes.c_uint, _P]),
    "dnnl_batch_normalization_backward_primitive_desc_create":
        (_I, [ctypes.POINTER(_P), _P, _I, _P, _P, _P, _F, ctypes.c_uint, _P, _P]),
}


class ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


class DnnlError(RuntimeError):
    """A oneDNN call returned an error status (``status`` holds it)."""

    def __init__(self, fn: str, status: int):
        super().__init__(f"ops-onednn: {fn} failed with status {status} "
                         f"({_STATUS.get(status, 'unknown')})")
        self.status = status


def locate() -> str | None:
    """The library file to load: ``$MXNEXT_ONEDNN_LIBRARY``, else the ``onednn-cpu-gomp``
    wheel's ``libdnnl.so.3``; None when neither exists."""
    env = os.environ.get(ENV)
    if env:
        return env if os.path.isfile(env) else None
    try:
        files = metadata.distribution(DIST).files or []
    except metadata.PackageNotFoundError:
        return None
    found = sorted((f for f in files if f.name.startswith("libdnnl.so")), key=lambda f: f.name)
    paths = [str(f.locate()) for f in found]
    for path in paths:     # libdnnl.so, libdnnl.so.3, libdnnl.so.3.x: the first that exists
        if os.path.isfile(path):
            return path
    return None


def missing_reason() -> str:
    """Why ``locate`` found nothing, for the plugin's load error."""
    env = os.environ.get(ENV)
    if env:
        return f"{ENV}={env!r} is not a file"
    return (f"libdnnl.so was not found: the {DIST!r} distribution is not installed or holds "
            f"no libdnnl.so (pip install {DIST})")


class _Library:
    """The loaded library: checked functions as attributes, the CPU engine, a stream per
    thread."""

    def __init__(self, path: str):
        self.path = path
        cdll = ctypes.CDLL(path)
        for name, (res, args) in _PROTOS.items():
            fn = getattr(cdll, name)
            fn.restype, fn.argtypes = res, args
            setattr(self, name, fn)
        self.engine = ctypes.c_void_p()
        self.check("dnnl_engine_create", ctypes.byref(self.engine), 1, 0)   # dnnl_cpu, index 0
        self._local = threading.local()
        isa = self.dnnl_get_effective_cpu_isa()     # the channel block of its fast layouts:
        self.block = 16 if isa & ISA_AVX512_CORE == ISA_AVX512_CORE else 8
        try:                                        # libdnnl's OpenMP runtime, loaded with it
            self._omp_set = ctypes.CDLL("libgomp.so.1").omp_set_num_threads
        except (OSError, AttributeError):           # pragma: no cover - another runtime
            self._omp_set = None

    def check(self, name: str, *args) -> None:
        status = getattr(self, name)(*args)
        if status:
            raise DnnlError(name, status)

    def use_threads(self, n: int) -> int:
        """Run this thread's next primitives on ``n`` OpenMP threads; the count they will use
        (a primitive keeps the count it was created under, so plans are cached per count)."""
        if self._omp_set is None:
            return 0
        if getattr(_omp, "threads", 0) != n:
            self._omp_set(n)
            _omp.threads = n
        return n

    def stream(self) -> ctypes.c_void_p:
        """This thread's stream on the CPU engine (a stream is not shared across threads)."""
        s = getattr(self._local, "stream", None)
        if s is None:
            s = ctypes.c_void_p()
            self.check("dnnl_stream_create", ctypes.byref(s), self.engine, 1)  # default flags
            self._local.stream = s
        return s


_state: dict = {}
_lock = threading.Lock()
_omp = threading.local()


def threads() -> int:
    """The OpenMP thread count ``use_threads`` last set on this thread (0: none yet)."""
    return getattr(_omp, "threads", 0)


def lib() -> _Library | None:
    """The library, loaded at the first call; None (with one warning) when it cannot load,
    and then every kernel falls back to the op's next provider."""
    if "lib" in _state:
        return _state["lib"]
    with _lock:
        if "lib" not in _state:
            _state["lib"] = _load()
    return _state["lib"]


def avx512() -> bool:
    """Whether the library loads and runs its AVX-512 kernels (some rules were measured to
    differ there)."""
    loaded = lib()
    return loaded is not None and loaded.block == 16


def _load() -> _Library | None:
    path = locate()
    try:
        if path is None:
            raise OSError(missing_reason())
        _passive_omp()
        return _Library(path)
    except (OSError, AttributeError, DnnlError) as exc:
        _state["error"] = f"cannot load {path or 'libdnnl'}: {exc}"
        warnings.warn(f"ops-onednn is not usable ({_state['error']}); the next provider's "
                      f"kernels run instead", RuntimeWarning, stacklevel=4)
        return None


def _passive_omp() -> None:
    """OpenMP threads that sleep, not spin, between oneDNN's parallel regions (unless the
    user chose a policy): libgomp reads this when it loads, with libdnnl. Spinning threads
    take the cores from the engine's workers and BLAS threads between kernels; measured on a
    busy 2-core box, a LeNet training step took 2.7 s spinning and 0.22-0.33 s passive."""
    if "GOMP_SPINCOUNT" not in os.environ:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def load_error() -> str | None:
    """Why the library did not load (None when it loaded or was not tried yet)."""
    return _state.get("error")
