"""The device contract: what a device plugin registers through ``mxnext_register_devices``.

A device type is one object (``registry.register(dev)``, ``registry`` an
``opsdk.DeviceRegistrar``) serving every id of its type (``gpu(0)``, ``gpu(1)``, ...). The
runtime never imports a device library itself: it asks the object. ``Device`` is the
protocol; its building blocks are exported here: ``HostDevice`` (a device on host memory, the
base of the builtin ``cpu``: subclass it, name its ``type`` and change what differs), the
inline policies and, for a device with streams, ``StreamRunContext`` and ``Lane``;
``cpu_kernel(op)`` is an op's generic body, for a kernel that falls back to it. The
``testdev`` plugin (host memory behind its own type, with streams) and ``gpu``
(plugins/device-cupy) are built on these; ``opsdk.testing.run_device_checks`` checks any
device.

Memory. ``alloc(nbytes, device_id)`` returns a raw buffer of at least ``nbytes`` bytes and
raises ``MemoryError`` when the device is full (the runtime's pool then gives its cached
blocks back and tries once more); ``free(raw, device_id)`` returns it. The runtime pools
these per device id (``mxnext.storage``: ``Round``, ``Naive``, ``Unpooled``); a device may
name its own pool type with ``pool_type()`` (the GPU reads ``MXNEXT_GPU_MEM_POOL_TYPE``).
``view(raw, dtype, shape, offset)`` is an ``xp`` array on those bytes.

Copies. ``to_host(arr) -> numpy.ndarray`` and ``from_host(np_arr, device_id) -> xp array``
cross the host boundary; ``copy(dst, src)`` and ``fill(dst, value)`` work within one device.
They run inside engine functions, so they may enqueue work on the running thread's stream.

Kernels. ``xp`` is the device's array namespace (numpy, cupy); an op's kernel receives it as
``ctx.xp``. ``kernels`` lists the ``FCompute<kind>`` kinds the device runs, its own first:
``("gpu", "cpu")`` means an op's ``FCompute<gpu>`` when it has one, else its
``FCompute<cpu>`` body run on gpu arrays with ``ctx.xp`` = cupy, which fails naming the op
and the device when that body calls numpy on device arrays. So a device plugin need not
re-register every op; it attaches ``FCompute<gpu>`` (``opsdk.extend_op``) where the generic
body is slow or host-bound.

Streams and completion. A host device's work is done when its engine function returns
(``stream()`` is None, no ``run_context``). A device with streams sets ``run_context``, a
``StreamRunContext`` subclass whose ``lane()`` is the running thread's ``Lane`` (its stream
on that device id: one per engine worker and per user thread; the subclass of ``Lane``
records, waits on and queries the device's events). ``StreamRunContext.run`` then runs every
function on the device: it makes the lane's stream current, has it wait (on the device) for
work of other lanes the function depends on, calls the function, which enqueues its
kernels, and returns at once; the engine keeps per-var marks of what is still pending
(the stream policy). ``wait_to_read``/``asnumpy`` wait on an event for only the
work they depend on; ``synchronize(device_id)`` waits for everything on the device.

Engine policy. ``inline_policy`` is an inline policy object: ``TIMED_INLINE`` (cpu) lets the engine time a kernel and run fast ones
at once on the pushing thread; ``STREAM_INLINE`` (gpu) runs every kernel there, as it only
enqueues work, so the pushing thread never waits for the device; ``NEVER_INLINE`` always
hands kernels to the device's own worker pools (for a device whose functions block).

Random numbers and scratch space come from ``mxnext.resource`` per device id, built on
``view`` and ``xp.random.default_rng(entropy)``, or on the device's optional
``random_generator(entropy, device_id)`` (numpy ``Generator`` names: the gpu's is curand).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from mxnext._runtime import registry as _registry
from mxnext._runtime.base import MXNetError
from mxnext._runtime.device.cpu import HostDevice
from mxnext._runtime.inline import (NEVER_INLINE, STREAM_INLINE, TIMED_INLINE, NeverInline,
                                    StreamInline, TimedInline)
from mxnext._runtime.streams import Lane, StreamRunContext

__all__ = ["Device", "REQUIRED", "check_contract", "HostDevice", "cpu_kernel",
           "StreamRunContext", "Lane", "TIMED_INLINE", "STREAM_INLINE", "NEVER_INLINE",
           "TimedInline", "StreamInline", "NeverInline"]


@runtime_checkable
class Device(Protocol):
    type: str                      # "cpu", "gpu"
    xp: Any                        # array namespace (may import its library on first access)
    kernels: tuple                 # FCompute kinds run, preferred first
    inline_policy: TimedInline     # TIMED_INLINE, STREAM_INLINE, NEVER_INLINE

    def count(self) -> int: ...    # usable device ids; raise with the reason when none can be

    def alloc(self, nbytes: int, device_id: int): ...

    def free(self, raw, device_id: int) -> None: ...

    def view(self, raw, dtype, shape, offset: int = 0): ...

    def to_host(self, arr): ...

    def from_host(self, arr, device_id: int): ...

    def copy(self, dst, src) -> None: ...

    def fill(self, dst, value) -> None: ...

    def stream(self, device_id: int): ...        # this thread's stream, None without streams

    def synchronize(self, device_id: int) -> None: ...


REQUIRED = ("type", "xp", "kernels", "inline_policy", "count", "alloc", "free", "view",
            "to_host", "from_host", "copy", "fill", "stream", "synchronize")


def check_contract(dev) -> list[str]:
    """What ``dev`` lacks of the contract (names), without touching ``xp`` (which may import
    a device library); empty when it has everything."""
    cls = type(dev)
    missing = [n for n in REQUIRED if not hasattr(cls, n) and n not in vars(dev)]
    if hasattr(cls, "inline_policy") and not isinstance(dev.inline_policy, TimedInline):
        missing.append(f"inline_policy (an inline policy: TIMED_INLINE, STREAM_INLINE or "
                       f"NEVER_INLINE, got {dev.inline_policy!r})")
    return missing


def cpu_kernel(op_name: str):
    """Op ``op_name``'s generic body, its ``FCompute<cpu>`` (run on a device's arrays through
    ``ctx.xp``): what a device kernel falls back to. ``MXNetError`` when it has none."""
    fn = _registry.get(op_name).get_attr("FCompute<cpu>")
    if fn is None:
        raise MXNetError(f"opsdk.device.cpu_kernel: op {op_name!r} has no FCompute<cpu> body")
    return fn
