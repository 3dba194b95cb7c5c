"""``DataParallelExecutorGroup``: one executor per context, each running a slice of the
batch (MXNet's data parallelism inside a Module)."""

from __future__ import annotations

from .. import ndarray as nd
from .._runtime.base import ParamError
from .._runtime.context import Context
from ..io import DataDesc
from .errors import ModuleError

__all__ = ["DataParallelExecutorGroup", "split_input_slice"]


def split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per device, sized by ``work_load_list`` (each
    share rounded as Python rounds; the last slice takes what rounding left)."""
    total = sum(work_load_list)
    sizes = [round(w * batch_size / total) for w in work_load_list]
    if sum(sizes) < batch_size:
        sizes[-1] += batch_size - sum(sizes)
    slices, end = [], 0
    for size in sizes:
        begin = min(end, batch_size)
        end = min(begin + size, batch_size)
        if begin >= end:
            raise ModuleError(f"split_input_slice: a batch of {batch_size} cannot be split "
                              f"by work loads {list(work_load_list)}: some slices are empty")
        slices.append(slice(begin, end))
    return slices


def _group2ctxs_per_device(group2ctxs, num_device):
    """One ``group2ctx`` dict (or None) per device from a dict (values a context or a list
    of one or ``num_device`` contexts) or a list of dicts."""
    if group2ctxs is None:
        return [None] * num_device
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != num_device:
            raise ModuleError(f"bind: group2ctxs has {len(group2ctxs)} entries for "
                              f"{num_device} contexts")
        return group2ctxs
    per_device = [{} for _ in range(num_device)]
    for group, ctxs in group2ctxs.items():
        if isinstance(ctxs, Context):
            ctxs = [ctxs]
        if len(ctxs) == 1:
            ctxs = list(ctxs) * num_device
        if len(ctxs) != num_device:
            raise ModuleError(f"bind: group2ctxs[{group!r}] has {len(ctxs)} contexts for "
                              f"{num_device} devices")
        for i, c in enumerate(ctxs):
            per_device[i][group] = c
    return per_device


def _copy_in(src, targets, axis):
    """Copy ``src`` (the whole batch) into each ``(slice, array)`` target."""
    for sl, dst in targets:
        if axis < 0 or (sl.start == 0 and sl.stop == src.shape[axis]):
            part = src
        elif axis == 0:
            part = src[sl.start:sl.stop]
        else:
            part = nd.slice_axis(src, axis=axis, begin=sl.start, end=sl.stop)
        if not isinstance(part, nd.NDArray):
            part = nd.array(part, dtype=dst.dtype)
        part.copyto(dst)


def _merge_parts(outputs, axes):
    """One array per output: the devices' parts concatenated on its batch axis (the first
    device's part alone for outputs without one)."""
    merged = []
    for parts, axis in zip(outputs, axes):
        if axis >= 0 and len(parts) > 1:
            ctx = parts[0].context
            merged.append(nd.concat(*[p.as_in_context(ctx) for p in parts], dim=axis))
        else:
            merged.append(parts[0])
    return merged


def _as_descs(shapes):
    """``DataDesc`` s from MXNet's forms of input shapes: descs or ``(name, shape)`` pairs."""
    if shapes is None:
        return None
    return [d if isinstance(d, DataDesc) else DataDesc(*d) for d in shapes]


class DataParallelExecutorGroup:
    """Binds ``symbol`` once per context, each executor to its share of the batch.

    ``param_arrays`` / ``grad_arrays`` list, per parameter, its array on every device
    (``grad_arrays`` entries are None for parameters without a gradient)."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=None,
                 fixed_param_names=None, grad_req="write", state_names=None,
                 group2ctxs=None):
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload)
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.logger = logger
        self.group2ctxs = _group2ctxs_per_device(group2ctxs, len(self.contexts))
        data_shapes, label_shapes = _as_descs(data_shapes), _as_descs(label_shapes)
        data_names = [d.name for d in data_shapes]
        self.grad_req = self._grad_reqs(grad_req, data_names)
        self.output_names = symbol.list_outputs()
        self.output_layouts = [DataDesc.get_batch_axis(symbol[n].attr("__layout__"))
                               for n in self.output_names]
        self.execs = []
        self.batch_size = None
        self.slices = None
        # per context, the arrays of the inputs (and other arguments that are not
        # parameters) by name, shared with every group made with this one as shared_group
        self.shared_data_arrays = ([{} for _ in self.contexts] if shared_group is None
                                   else shared_group.shared_data_arrays)
        self._bind(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req, data_names):
        if not self.for_training:
            return dict.fromkeys(self.arg_names, "null")
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ModuleError(f"bind: grad_req has {len(grad_req)} entries; the symbol "
                                  f"has {len(self.arg_names)} arguments")
            return dict(zip(self.arg_names, grad_req))
        default = grad_req if isinstance(grad_req, str) else "write"
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = "null" if name in self.fixed_param_names else default
            elif name in data_names:
                reqs[name] = default if self.inputs_need_grad else "null"
            else:
                reqs[name] = "null"
        if isinstance(grad_req, dict):
            reqs.update(grad_req)
        return reqs

    # -- binding ---------------------------------------------------------------------------
    def _decide_slices(self, data_shapes, label_shapes):
        """The batch axis of each data and label input; every input with one must hold the
        same batch size (checked before anything changes)."""
        layouts, batch_size = [], None
        for descs in (data_shapes, label_shapes or []):
            axes = [DataDesc.get_batch_axis(d.layout) for d in descs]
            for desc, axis in zip(descs, axes):
                if axis < 0:
                    continue
                if batch_size is None:
                    batch_size, first = desc.shape[axis], desc
                elif desc.shape[axis] != batch_size:
                    raise ModuleError(
                        f"bind: all data and labels must have the same batch size; "
                        f"{desc.name!r} has shape {tuple(desc.shape)} (batch size "
                        f"{desc.shape[axis]}), {first.name!r} has shape {tuple(first.shape)} "
                        f"(batch size {batch_size})")
            layouts.append(axes)
        if batch_size is not None and batch_size != self.batch_size:
            self.slices = split_input_slice(batch_size, self.workload)
            self.batch_size = batch_size
        return layouts[0], (layouts[1] if label_shapes is not None else None)

    def _sliced(self, shapes, i, axes):
        out = []
        for desc, axis in zip(shapes, axes):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def _bind(self, data_shapes, label_shapes, shared_group, reshape=False):
        self.data_layouts, self.label_layouts = self._decide_slices(data_shapes, label_shapes)
        execs = []
        for i, ctx in enumerate(self.contexts):
            dshapes = self._sliced(data_shapes, i, self.data_layouts)
            lshapes = (self._sliced(label_shapes, i, self.label_layouts)
                       if label_shapes is not None else [])
            shapes = {d.name: tuple(d.shape) for d in dshapes + lshapes}
            if reshape:
                execs.append(self.execs[i].reshape(allow_up_sizing=True, **shapes))
                continue
            types = {d.name: d.dtype for d in dshapes + lshapes}
            shared = None if shared_group is None else shared_group.execs[i]
            execs.append(self.symbol.simple_bind(
                ctx=ctx, grad_req=self.grad_req, type_dict=types,
                group2ctx=self.group2ctxs[i], shared_arg_names=self.param_names,
                shared_exec=shared, shared_buffer=self.shared_data_arrays[i], **shapes))
        self.execs = execs
        self.data_shapes, self.label_shapes = data_shapes, label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes] if label_shapes else []
        self._collect_arrays()

    def _collect_arrays(self):
        ex = self.execs
        self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(ex)]
                            for name in self.data_names]
        self.label_arrays = ([[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(ex)]
                              for name in self.label_names] if self.label_names else None)
        self.state_arrays = [[e.arg_dict[name] for e in ex] for name in self.state_names]
        self.param_arrays = [[e.arg_dict[name] for e in ex] for name in self.param_names]
        self.grad_arrays = [[e.grad_dict.get(name) for e in ex] for name in self.param_names]
        self.aux_arrays = [[e.aux_dict[name] for e in ex] for name in self.aux_names]
        self.input_grad_arrays = ([[e.grad_dict[name] for e in ex] for name in self.data_names]
                                  if self.inputs_need_grad else None)

    def reshape(self, data_shapes, label_shapes):
        """Rebind every executor for new input shapes (arrays sharing memory where they
        fit, as ``Executor.reshape(allow_up_sizing=True)``)."""
        data_shapes, label_shapes = _as_descs(data_shapes), _as_descs(label_shapes)
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        self._bind(data_shapes, label_shapes, None, reshape=True)

    # -- parameters ------------------------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        if not allow_extra:
            for given, known, kind in ((arg_params, self.arg_names, "argument"),
                                       (aux_params or {}, self.aux_names, "auxiliary state")):
                extra = sorted(set(given) - set(known))
                if extra:
                    raise ParamError(f"set_params: {extra} are not {kind}s of the symbol "
                                     f"(pass allow_extra=True to ignore them)")
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Average each parameter over the devices into ``arg_params`` / ``aux_params``."""
        cpu = Context("cpu", 0)
        for names, blocks, dest in ((self.param_names, self.param_arrays, arg_params),
                                    (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                total = block[0].copyto(cpu)
                for w in block[1:]:
                    total += w.copyto(cpu)
                if len(block) > 1:
                    total /= len(block)
                total.astype(dest[name].dtype).copyto(dest[name])

    # -- running ---------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        for src, targets, axis in zip(data_batch.data, self.data_arrays, self.data_layouts):
            _copy_in(src, targets, axis)
        if is_train is None:
            is_train = self.for_training
        if self.label_arrays is not None and data_batch.label:
            for name, src, targets, axis in zip(self.label_names, data_batch.label,
                                                self.label_arrays, self.label_layouts):
                if axis >= 0 and src.shape[axis] != self.batch_size:
                    raise ModuleError(f"forward: label {name!r} has shape {tuple(src.shape)} "
                                      f"(batch size {src.shape[axis]}); the data batch size "
                                      f"is {self.batch_size}")
                _copy_in(src, targets, axis)
        for e in self.execs:
            e.forward(is_train=is_train)

    def backward(self, out_grads=None):
        if not self.for_training:
            raise ModuleError("backward: the module was bound with for_training=False")
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        for i, e in enumerate(self.execs):
            sliced = None
            if out_grads is not None:
                sliced = []
                for grad, axis in zip(out_grads, self.output_layouts):
                    sl = self.slices[i]
                    if axis >= 0:
                        part = nd.slice_axis(grad, axis=axis, begin=sl.start, end=sl.stop)
                    else:
                        part = grad
                    sliced.append(part.as_in_context(self.contexts[i]))
            e.backward(out_grads=sliced)

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        end = len(self.output_names) if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge_parts(outputs, self.output_layouts[begin:end])
        return outputs

    def get_output_shapes(self):
        """``[(name, shape)]`` of the merged outputs (the batch axis holds the whole batch)."""
        shapes = []
        for name, out, axis in zip(self.output_names, self.execs[0].outputs,
                                   self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise ModuleError("get_input_grads: the module was bound with "
                              "inputs_need_grad=False")
        if merge_multi_context:
            return _merge_parts(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def get_states(self, merge_multi_context=True):
        if merge_multi_context:
            raise ModuleError("get_states: merge_multi_context=True is not supported (as in "
                              "MXNet); pass merge_multi_context=False")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        if states is not None:
            if value is not None:
                raise ModuleError("set_states: give states or value, not both")
            for per_dev, arrays in zip(states, self.state_arrays):
                for src, dst in zip(per_dev, arrays):
                    src.copyto(dst)
        elif value is not None:
            for arrays in self.state_arrays:
                for dst in arrays:
                    dst[:] = value
        else:
            raise ModuleError("set_states: give states or value")

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        for i, (e, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                parts = labels[i]
            else:
                parts = []
                axes = self.label_layouts or [0] * len(labels)
                for label, axis in zip(labels, axes):
                    if axis == 0:
                        parts.append(label[sl.start:sl.stop])
                    elif axis > 0:
                        parts.append(nd.slice_axis(label, axis=axis, begin=sl.start,
                                                   end=sl.stop))
                    else:
                        parts.append(label)
            eval_metric.update_dict(dict(zip(self.label_names, parts)),
                                    dict(zip(self.output_names, e.outputs)))

    def install_monitor(self, mon):
        for e in self.execs:
            mon.install(e)
