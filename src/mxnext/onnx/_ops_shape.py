"""Converters for shape and indexing ops: reshape, transpose, concat, slice, gather,
broadcast, casts and the array-making ops."""

from __future__ import annotations

import numpy as np

from ._table import converts


@converts("Reshape", "reshape")
def reshape(b, n):
    spec = n.attr("shape", None) or n.attr("target_shape")
    if n.attr("reverse", False) or any(d < -1 for d in spec):
        out = list(n.out_shapes[0])     # MXNet's -2/-3/-4 codes: the inferred shape,
        if out and n.in_shapes[0] and out[0] == n.in_shapes[0][0]:
            out[0] = 0                   # keeping the batch dimension free
        spec = out
    b.add("Reshape", [n.x, b.ints(spec)], [n.out])


@converts("Flatten", "flatten")
def flatten(b, n):
    b.add("Flatten", [n.x], [n.out], axis=1)


@converts("transpose")
def transpose(b, n):
    axes = n.attr("axes", None)
    perm = list(axes) if axes else list(reversed(range(len(n.in_shapes[0]))))
    b.add("Transpose", [n.x], [n.out], perm=perm)


@converts("SwapAxis", "swapaxes")
def swapaxes(b, n):
    perm = list(range(len(n.in_shapes[0])))
    i, j = n.attr("dim1", 0), n.attr("dim2", 0)
    perm[i], perm[j] = perm[j], perm[i]
    b.add("Transpose", [n.x], [n.out], perm=perm)


@converts("expand_dims")
def expand_dims(b, n):
    b.unsqueeze(n.x, [n.attr("axis")], n.out)


@converts("squeeze")
def squeeze(b, n):
    axis = n.attr("axis", None)
    b.squeeze(n.x, None if axis is None else list(np.atleast_1d(axis)), n.out)


@converts("Concat", "concat", "_rnn_param_concat")
def concat(b, n):
    b.add("Concat", n.inputs, [n.out], axis=int(n.attr("dim", 1)))


@converts("stack")
def stack(b, n):
    axis = int(n.attr("axis", 0))
    parts = [b.unsqueeze(x, [axis]) for x in n.inputs]
    b.add("Concat", parts, [n.out], axis=axis)


@converts("SliceChannel", "split")
def split(b, n):
    axis, count = int(n.attr("axis", 1)), int(n.attr("num_outputs"))
    size = n.in_shapes[0][axis] // count
    if not n.attr("squeeze_axis", False):
        b.add("Split", [n.x, b.ints([size] * count)], n.outputs, axis=axis)
        return
    parts = b.add("Split", [n.x, b.ints([size] * count)], count, axis=axis)
    for part, out in zip(np.atleast_1d(parts), n.outputs):
        b.squeeze(str(part), [axis], out)


def _slice(b, n, starts, ends, axes, steps):
    big = np.iinfo(np.int64).max
    ends = [big if e is None else e for e in ends]
    b.add("Slice", [n.x, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)], [n.out])


@converts("slice", "crop")
def slice_(b, n):
    begin, end = n.attr("begin"), n.attr("end")
    step = n.attr("step", None) or [1] * len(begin)
    step = [1 if s is None else s for s in step]
    starts = [(0 if s > 0 else -1) if v is None else v for v, s in zip(begin, step)]
    ends = [e if e is not None else (None if s > 0 else -np.iinfo(np.int64).max)
            for e, s in zip(end, step)]
    _slice(b, n, starts, ends, list(range(len(begin))), step)


@converts("slice_axis")
def slice_axis(b, n):
    _slice(b, n, [n.attr("begin")], [n.attr("end", None)], [n.attr("axis")], [1])


@converts("slice_like")
def slice_like(b, n):
    axes = n.attr("axes", None) or range(len(n.in_shapes[1]))
    target = n.in_shapes[1]
    _slice(b, n, [0] * len(axes), [target[a] for a in axes], list(axes), [1] * len(axes))


@converts("take")
def take(b, n):
    index = b.cast(n.inputs[1], np.int64)
    axis = int(n.attr("axis", 0))
    size = n.in_shapes[0][axis]
    if n.attr("mode", "clip") == "clip":
        index = b.add("Clip", [index, b.const(0, np.int64), b.const(size - 1, np.int64)])
    else:
        index = b.add("Mod", [index, b.const(size, np.int64)])
    b.add("Gather", [n.x, index], [n.out], axis=axis)


@converts("Embedding")
def embedding(b, n):
    b.add("Gather", [n.inputs[1], b.cast(n.x, np.int64)], [n.out], axis=0)


@converts("pick")
def pick(b, n):
    rank = len(n.in_shapes[0])
    axis = n.attr("axis", -1) % rank
    index = b.cast(n.inputs[1], np.int64)
    index = b.add("Clip", [index, b.const(0, np.int64),
                           b.const(n.in_shapes[0][axis] - 1, np.int64)])
    index = b.unsqueeze(index, [axis]) if len(n.in_shapes[1]) < rank else index
    picked = b.add("GatherElements", [n.x, index], axis=axis)
    if n.attr("keepdims", False):
        b.add("Identity", [picked], [n.out])
    else:
        b.squeeze(picked, [axis], n.out)


@converts("one_hot")
def one_hot(b, n):
    depth = b.const([int(n.attr("depth"))], np.int64)
    values = b.const([float(n.attr("off_value", 0.0)), float(n.attr("on_value", 1.0))],
                     n.out_dtypes[0])
    b.add("OneHot", [b.cast(n.x, np.int64), depth, values], [n.out], axis=-1)


@converts("Cast", "cast", "amp_cast")
def cast(b, n):
    b.cast(n.x, n.out_dtypes[0], n.out)


@converts("tile")
def tile(b, n):
    reps = list(n.attr("reps"))
    rank = len(n.in_shapes[0])
    x = n.x
    if len(reps) > rank:
        x = b.add("Reshape", [x, b.ints([1] * (len(reps) - rank) + list(n.in_shapes[0]))])
    reps = [1] * (rank - len(reps)) + reps
    b.add("Tile", [x, b.ints(reps)], [n.out])


@converts("repeat")
def repeat(b, n):
    axis, count = n.attr("axis", None), int(n.attr("repeats"))
    shape = list(n.in_shapes[0])
    x = n.x
    if axis is None:
        x, shape, axis = b.add("Reshape", [x, b.ints([-1])]), [int(np.prod(shape))], 0
    axis %= len(shape)
    wide = b.unsqueeze(x, [axis + 1])
    reps = [1] * (axis + 1) + [count] + [1] * (len(shape) - axis - 1)
    tiled = b.add("Tile", [wide, b.ints(reps)])
    b.add("Reshape", [tiled, b.ints(list(n.out_shapes[0]))], [n.out])


@converts("broadcast_to", "broadcast_axis", "broadcast_axes", "broadcast_like")
def broadcast_to(b, n):
    # 1 where the input keeps its size, so that a free batch dimension stays free
    shape = [1 if i == o else o for i, o in zip(n.in_shapes[0], n.out_shapes[0])]
    b.add("Expand", [n.x, b.ints(shape)], [n.out])


@converts("reshape_like")
def reshape_like(b, n):
    b.add("Reshape", [n.x, b.add("Shape", [n.inputs[1]])], [n.out])


@converts("shape_array")
def shape_array(b, n):
    b.add("Shape", [n.x], [n.out])


@converts("size_array")
def size_array(b, n):
    b.add("Reshape", [b.add("Size", [n.x]), b.ints([1])], [n.out])


@converts("zeros_like", "ones_like")
def fill_like(b, n):
    value = b.const(0.0 if n.op == "zeros_like" else 1.0, n.in_dtypes[0])
    b.add("Add", [b.add("Mul", [n.x, b.const(0.0, n.in_dtypes[0])]), value], [n.out])


@converts("_zeros", "_ones", "_full", "_arange", "_eye", "_linspace")
def constant(b, n):     # their attributes fix every value: the export holds the array
    from .. import ndarray as nd
    args = {k: v for k, v in n.attrs.items() if not k.startswith("__")}
    value = getattr(nd, n.op)(**args).asnumpy()
    b.add("Identity", [b.const(value, hint=n.name)], [n.out])


@converts("dot", "batch_dot", "_linalg_gemm2")
def dot(b, n):
    a, c = n.inputs[:2]
    if n.attr("transpose_a", False):
        a = _swap_last(b, a, len(n.in_shapes[0]))
    if n.attr("transpose_b", False):
        c = _swap_last(b, c, len(n.in_shapes[1]))
    if n.op == "dot" and len(n.in_shapes[0]) > 2 and len(n.in_shapes[1]) > 1:
        raise n.fail("dot of arrays of more than 2 dimensions does not export")
    alpha = float(n.attr("alpha", 1.0))
    if alpha == 1.0:
        b.add("MatMul", [a, c], [n.out])
    else:
        b.add("Mul", [b.add("MatMul", [a, c]), b.const(alpha, n.in_dtypes[0])], [n.out])


def _swap_last(b, x, rank):
    perm = list(range(rank))
    perm[-2:] = perm[-1], perm[-2]
    return b.add("Transpose", [x], perm=perm)


@converts("Pad", "pad")
def pad(b, n):
    width = list(n.attr("pad_width"))
    pads = width[0::2] + width[1::2]
    mode = n.attr("mode", "constant")
    value = b.const(float(n.attr("constant_value", 0.0)), n.in_dtypes[0])
    if mode not in ("constant", "edge", "reflect"):
        raise n.fail(f"mode {mode!r} does not export")
    b.add("Pad", [n.x, b.ints(pads), value], [n.out], mode=mode)


@converts("UpSampling")
def upsampling(b, n):
    if n.attr("sample_type", "nearest") != "nearest":
        raise n.fail("sample_type 'bilinear' does not export (use nearest)")
    scale = float(n.attr("scale"))
    scales = b.const([1.0, 1.0, scale, scale], np.float32)
    b.add("Resize", [n.x, "", scales], [n.out], mode="nearest",
          nearest_mode="floor", coordinate_transformation_mode="asymmetric")


@converts("_contrib_BilinearResize2D")
def bilinear_resize(b, n):
    size = b.ints(list(n.out_shapes[0]))
    b.add("Resize", [n.x, "", "", size], [n.out], mode="linear",
          coordinate_transformation_mode="align_corners")


@converts("SequenceMask")
def sequence_mask(b, n):
    if not n.attr("use_sequence_length", False):
        b.add("Identity", [n.x], [n.out])
        return
    axis = int(n.attr("axis", 0))
    steps = n.in_shapes[0][axis]
    # mask[t, b] = t < length[b], laid out along the time axis and broadcast over features
    lengths = b.unsqueeze(n.inputs[1], [axis])
    time = b.const(np.arange(steps).reshape([-1, 1] if axis == 0 else [1, -1]), n.in_dtypes[1])
    keep = b.add("Less", [time, lengths])
    extra = len(n.in_shapes[0]) - 2
    keep = b.unsqueeze(keep, list(range(2, 2 + extra))) if extra else keep
    value = b.const(float(n.attr("value", 0.0)), n.in_dtypes[0])
    b.add("Where", [keep, n.x, value], [n.out])


@converts("topk")
def topk(b, n):
    kind = n.attr("ret_typ", "indices")
    if kind == "mask":
        raise n.fail("ret_typ 'mask' does not export")
    x, axis = n.x, n.attr("axis", -1)
    if axis is None:
        x, axis = b.add("Reshape", [x, b.ints([-1])]), 0
    values, indices = b.add("TopK", [x, b.ints([int(n.attr("k", 1))])], 2, axis=axis,
                            largest=int(not n.attr("is_ascend", False)))
    index_out = n.outputs[1] if kind == "both" else n.out
    if kind in ("value", "both"):
        b.add("Identity", [values], [n.out])
    if kind in ("indices", "both"):
        b.cast(indices, np.dtype(n.attr("dtype", "float32")), index_out)


@converts("depth_to_space")
def depth_to_space(b, n):
    b.add("DepthToSpace", [n.x], [n.out], blocksize=int(n.attr("block_size")), mode="DCR")


@converts("space_to_depth")
def space_to_depth(b, n):
    b.add("SpaceToDepth", [n.x], [n.out], blocksize=int(n.attr("block_size")))


@converts("gather_nd")
def gather_nd(b, n):     # MXNet indexes along the indices' first axis, ONNX their last
    rank = len(n.in_shapes[1])
    index = b.add("Transpose", [b.cast(n.inputs[1], np.int64)],
                  perm=list(range(1, rank)) + [0])
    b.add("GatherND", [n.x, index], [n.out])


@converts("SequenceLast")
def sequence_last(b, n):
    axis = int(n.attr("axis", 0))
    if not n.attr("use_sequence_length", False):
        last = n.in_shapes[0][axis] - 1
        b.add("Gather", [n.x, b.const(last, np.int64)], [n.out], axis=axis)
        return
    steps = b.add("Sub", [b.cast(n.inputs[1], np.int64), b.const(1, np.int64)])
    # one index per batch entry along the time axis, broadcast over the features
    shape = [1] * len(n.in_shapes[0])
    shape[1 - axis] = -1
    index = b.add("Reshape", [steps, b.ints(shape)])
    target = list(n.in_shapes[0])
    target[axis] = 1
    index = b.add("Expand", [index, b.ints(target)])
    b.squeeze(b.add("GatherElements", [n.x, index], axis=axis), [axis], n.out)


@converts("reverse", "flip")
def reverse(b, n):
    axes = [int(a) for a in np.atleast_1d(n.attr("axis"))]
    big = np.iinfo(np.int64).max
    _slice(b, n, [-1] * len(axes), [-big] * len(axes), axes, [-1] * len(axes))


@converts("SequenceReverse")
def sequence_reverse(b, n):
    axis = int(n.attr("axis", 0))
    steps, batch = n.in_shapes[0][axis], n.in_shapes[0][1 - axis]
    lengths = (b.cast(n.inputs[1], np.int64) if n.attr("use_sequence_length", False)
               else b.const([steps] * batch, np.int64))
    b.add("ReverseSequence", [n.x, lengths], [n.out], batch_axis=1 - axis, time_axis=axis)


@converts("argsort")
def argsort(b, n):
    x, axis = n.x, n.attr("axis", -1)
    size = int(np.prod(n.in_shapes[0])) if axis is None else n.in_shapes[0][axis]
    if axis is None:
        x, axis = b.add("Reshape", [x, b.ints([-1])]), 0
    _, indices = b.add("TopK", [x, b.ints([size])], 2, axis=axis,
                       largest=int(not n.attr("is_ascend", True)))
    b.cast(indices, np.dtype(n.attr("dtype", "float32")), n.out)

