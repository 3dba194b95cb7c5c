"""The ``Optimizer`` base class and the registry ``register`` / ``create`` read.

An optimizer turns (index, weight, grad, state) into an updated weight. The base class
keeps what every optimizer shares: the learning rate (fixed or from an ``LRScheduler``),
weight decay, gradient rescaling and clipping, per-parameter multipliers and the update
counts the schedulers and bias corrections read.
"""

import warnings

import numpy

from .. import ndarray as nd
from ..util import is_np_array

__all__ = ["Optimizer", "register", "create"]


class Optimizer:
    """Base of every optimizer.

    ``learning_rate`` overrides the scheduler's ``base_lr`` when both are given; with
    neither, the rate is 0.01. ``param_idx2name`` (index -> name) turns weight decay off
    for parameters whose name ends neither in ``_weight`` nor ``_gamma``. ``sym`` supplies
    the ``__lr_mult__`` / ``__wd_mult__`` attributes of its arguments. ``param_dict``
    (index -> object with ``lr_mult`` and ``wd_mult``, as Gluon's Parameter) wins over
    both and is not pickled.
    """

    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None \
                and lr_scheduler.base_lr != learning_rate:
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                          "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names, got "
                            f"{type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = is_np_array()
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -------------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Class decorator: makes ``klass`` creatable by its lower-cased name."""
        if not isinstance(klass, type):
            raise TypeError(f"Optimizer.register: expected a class, got {klass!r}")
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is "
                          f"overriding existing optimizer {old.__module__}.{old.__name__}",
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An instance of the optimizer registered as ``name`` (any case) with ``kwargs``."""
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError(f"Cannot find optimizer {name}; registered: "
                             f"{', '.join(sorted(Optimizer.opt_registry))}")
        return klass(**kwargs)

    # -- learning rate and multipliers ------------------------------------------------------
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Sets the rate; refused (UserWarning raised, as MXNet) when a scheduler owns it."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note "
                              "that set_learning_rate can mutate the value of the learning "
                              "rate of the optimizer only when the LRScheduler of the "
                              "optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """Removed in MXNet long ago: use set_lr_mult."""
        raise DeprecationWarning

    def _sym_mults(self, key):
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {n: float(attrs[n][key]) for n in arg_names if key in attrs.get(n, {})}

    def set_lr_mult(self, args_lr_mult):
        """Per-parameter learning-rate multipliers, keyed by name or index; names take the
        symbol's ``__lr_mult__`` attributes first."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Per-parameter weight-decay multipliers: 0 for named parameters that are neither
        ``*_weight`` nor ``*_gamma`` (biases, betas), then the symbol's ``__wd_mult__``
        attributes, then ``args_wd_mult``."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (n.endswith("_weight") or n.endswith("_gamma"))}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _scaled(self, base, indices, mults, attr):
        out = []
        for index in indices:
            if index in self.param_dict:
                out.append(base * getattr(self.param_dict[index], attr))
            elif index in mults:
                out.append(base * mults[index])
            elif index in self.idx2name:
                out.append(base * mults.get(self.idx2name[index], 1.0))
            else:
                out.append(base)
        return out

    def _get_lrs(self, indices):
        """Learning rates for ``indices``: the current rate times each one's multiplier."""
        return self._scaled(self.learning_rate, indices, self.lr_mult, "lr_mult")

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays for ``indices``: ``wd`` times each one's multiplier."""
        return self._scaled(self.wd, indices, self.wd_mult, "wd_mult")

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # -- update counts ----------------------------------------------------------------------
    def _set_current_context(self, device_id):
        """Counts are kept per device: each device's copy of a weight counts its updates."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index):
        """Counts one more update of ``index`` (or each of a list of indices)."""
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    # -- states and updates -----------------------------------------------------------------
    def create_state(self, index, weight):
        """The auxiliary state (None, an NDArray or a tuple of them) for ``weight``; made
        once per weight and handed back to every ``update``."""
        return None

    def create_state_multi_precision(self, index, weight):
        """With ``multi_precision`` and a float16 weight: ``(float32 master copy, state of
        the copy)``; otherwise ``create_state``."""
        if weight.dtype == numpy.float16:
            if self.multi_precision:
                master = weight.astype(numpy.float32)
                return (master, self.create_state(index, master))
            _warn_fp16(type(self).__name__)
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Updates ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, run on the float32 master copy (then cast back into ``weight``) when
        the state came from the multi-precision branch of ``create_state_multi_precision``."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master, inner = state
            self.update(index, master, grad.astype(numpy.float32), inner)
            nd.cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    # -- pickling: param_dict holds live Gluon parameters, the trainer sets it again ----------
    def __getstate__(self):
        state = self.__dict__.copy()
        del state["param_dict"]
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


def _warn_fp16(name):
    warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                  "convergence. Consider using multi_precision=True option of the "
                  f"{name} optimizer", stacklevel=3)


register = Optimizer.register
create = Optimizer.create_optimizer


class FusedUpdate:
    """For optimizers whose ``_update_impl(index, weight, grad, state, multi_precision)``
    takes single values or lists (batched fused ops) and handles the master copy itself."""

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        mp = self.multi_precision and first.dtype == numpy.float16
        self._update_impl(index, weight, grad, state, multi_precision=mp)
