"""Convolution and its gradients on cuDNN, through the ``nvidia-cudnn-frontend`` package (the
plugin's ``[cudnn]`` extra; CuPy 14 has no cuDNN module of its own).

``FCompute<gpu>`` of ``Convolution`` and ``_backward_Convolution``: 2-D NCHW float32/float16
without ``cudnn_off``; anything else, or a machine without the package or cuDNN's library,
runs the op's generic im2col + GEMM body on cupy. One cuDNN graph per (kind, shapes, geometry,
dtype), built once and cached; one cuDNN handle per thread, pointed at the running lane's
stream before each call. TF32 tensor-core engines are left out unless
``MXNEXT_CUDA_ALLOW_TF32=1`` (or MXNet's ``MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1``),
so float32 results stay within float32 rounding of the cpu's, as MXNet 1.9's do.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ._cupy import cupy, generic

__all__ = ["available", "reason", "describe", "forward", "backward"]

_state = {}               # "module": the cudnn module, or "error": why it cannot be used
_graphs = {}              # key -> _Graph
_local = threading.local()
_lock = threading.Lock()


def _cudnn():
    if "module" not in _state and "error" not in _state:
        try:
            import cudnn
            _state["module"] = cudnn
        except Exception as e:     # not installed, or no libcudnn beside it
            _state["error"] = f"{type(e).__name__}: {e}"
    return _state.get("module")


def available() -> bool:
    return _cudnn() is not None


def describe() -> str:
    """The convolution the gpu runs, for reports."""
    if available():
        return f"cuDNN (nvidia-cudnn-frontend {getattr(_cudnn(), '__version__', '?')})"
    return f"im2col + GEMM ({reason() or 'cuDNN not tried yet'})"


def reason() -> str:
    """Why cuDNN is not used (empty when it is)."""
    return "" if available() else _state.get("error", "")


def _allow_tf32() -> bool:
    for name in ("MXNEXT_CUDA_ALLOW_TF32", "MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION"):
        if os.environ.get(name, "0") not in ("", "0"):
            return True
    return False


def _handle():
    h = getattr(_local, "handle", None)
    if h is None:
        h = _local.handle = _cudnn().create_handle()
    return h


def _strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return out[::-1]


class _Graph:
    """One built cuDNN graph: ``run(arrays)`` with device pointers for its tensors."""

    def __init__(self, kind, x_shape, w_shape, y_shape, stride, pad, dilate, dtype):
        cudnn = _cudnn()
        io = {np.float32: cudnn.data_type.FLOAT,
              np.float16: cudnn.data_type.HALF}[np.dtype(dtype).type]
        g = cudnn.pygraph(io_data_type=io, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=_handle())
        geo = {"padding": list(pad), "stride": list(stride), "dilation": list(dilate),
               "compute_data_type": cudnn.data_type.FLOAT}

        def tensor(name, shape):
            return g.tensor(name=name, dim=list(shape), stride=_strides(shape), data_type=io)

        if kind == "fprop":
            a, b = tensor("x", x_shape), tensor("w", w_shape)
            out = g.conv_fprop(image=a, weight=b, **geo)
            shape = y_shape
        elif kind == "dgrad":
            a, b = tensor("dy", y_shape), tensor("w", w_shape)
            out = g.conv_dgrad(loss=a, filter=b, **geo)
            shape = x_shape
        else:
            a, b = tensor("x", x_shape), tensor("dy", y_shape)
            out = g.conv_wgrad(image=a, loss=b, **geo)
            shape = w_shape
        out.set_output(True).set_dim(list(shape)).set_stride(_strides(shape)).set_data_type(io)
        g.validate()
        g.build_operation_graph()
        if not _allow_tf32():
            g.deselect_numeric_notes([cudnn.numerical_note.TENSOR_CORE])
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        self.graph, self.a, self.b, self.out = g, a, b, out
        self.out_shape = tuple(shape)
        self.workspace = g.get_workspace_size()

    def run(self, a, b, out):
        cp = cupy()
        ws = cp.empty((max(self.workspace, 1),), np.uint8)
        h = _handle()
        _cudnn().set_stream(handle=h, stream=cp.cuda.get_current_stream().ptr)
        self.graph.execute({self.a: a.data.ptr, self.b: b.data.ptr, self.out: out.data.ptr},
                           ws.data.ptr, handle=h)


def _geometry(p):
    """(stride, dilate, pad) with MXNet's defaults (1, 1, 0) where the param is empty."""
    n = len(p.kernel)
    return tuple(p.stride or (1,) * n), tuple(p.dilate or (1,) * n), tuple(p.pad or (0,) * n)


def _graph(kind, x_shape, w_shape, y_shape, p, dtype):
    stride, dilate, pad = _geometry(p)
    key = (kind, x_shape, w_shape, y_shape, stride, pad, dilate, dtype.str)
    g = _graphs.get(key)
    if g is None:
        with _lock:
            g = _graphs.get(key)
            if g is None:
                try:
                    g = _Graph(kind, x_shape, w_shape, y_shape, stride, pad, dilate, dtype)
                except Exception as e:  # this cuDNN cannot: the generic body from now on
                    _state.pop("module", None)
                    _state["error"] = f"building a {kind} graph failed: {type(e).__name__}: {e}"
                    return None
                _graphs[key] = g
    return g


def usable(p, dtype) -> bool:
    """Whether cuDNN runs this convolution (else the generic body does)."""
    return (len(p.kernel) == 2 and not p.cudnn_off and p.layout in (None, "NCHW")
            and np.dtype(dtype).type in (np.float32, np.float16) and available())


def _contig(a):
    return a if a.flags.c_contiguous else cupy().ascontiguousarray(a)


def _into(out, req, run):
    """Write a cuDNN result into ``out`` following ``req``: straight in for a plain write
    (``kWriteTo``) to contiguous memory; in place over an input, or added, through a copy."""
    if req == 0:
        return
    if req == 1 and out.flags.c_contiguous:
        run(out)
        return
    tmp = cupy().empty(out.shape, out.dtype)
    run(tmp)
    if req == 3:
        out += tmp
    else:
        out[...] = tmp


def forward(ctx, inputs, req, outputs, p):
    x, w = inputs[0], inputs[1]
    if not usable(p, x.dtype):
        return generic("Convolution", ctx, inputs, req, outputs, p)
    y = outputs[0]
    g = _graph("fprop", x.shape, w.shape, y.shape, p, x.dtype)
    if g is None:
        return generic("Convolution", ctx, inputs, req, outputs, p)
    _into(y, req[0], lambda o: g.run(_contig(x), _contig(w), o))
    if not p.no_bias and req[0]:
        y += inputs[2].reshape(1, -1, 1, 1)


def backward(ctx, inputs, req, outputs, p):
    og, x, w = inputs
    if not usable(p, x.dtype):
        return generic("_backward_Convolution", ctx, inputs, req, outputs, p)
    og = _contig(og)
    gw = _graph("wgrad", x.shape, w.shape, og.shape, p, x.dtype) if req[1] else None
    gd = _graph("dgrad", x.shape, w.shape, og.shape, p, x.dtype) if req[0] else None
    if (req[1] and gw is None) or (req[0] and gd is None):
        return generic("_backward_Convolution", ctx, inputs, req, outputs, p)
    if req[1]:
        _into(outputs[1], req[1], lambda o: gw.run(_contig(x), og, o))
    if not p.no_bias and req[2]:
        db = og.sum(axis=(0, 2, 3))
        if req[2] == 3:
            outputs[2] += db
        else:
            outputs[2][...] = db
    if req[0]:
        _into(outputs[0], req[0], lambda o: gd.run(og, _contig(w), o))
