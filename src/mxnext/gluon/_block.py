"""MXNet 1.9's ``gluon.Block``: a layer or model holding child blocks and parameters,
run imperatively by its ``forward``; saved and loaded by parameter or by structure."""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer, ndarray
from ._block_scope import _BlockScope
from ._parameter import Parameter, ParameterError
from ._parameter_dict import ParameterDict
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ["Block"]


class Block:
    """Base of every layer and model: holds child blocks and parameters; subclasses
    define ``forward``. Make children inside ``with self.name_scope():``."""

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        """Blocks and Parameters assigned as attributes are registered."""
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                            f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise ParameterError(f"Overriding Parameter attribute {name} is not allowed. If "
                                     f"you want to share parameters between blocks, please "
                                     f"set 'params' at Block construction instead.")
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or
                                                            k == "_children"):
                if _unregistered(v, children):
                    warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container '
                                  f'with Blocks. Note that Blocks inside the list, tuple or dict '
                                  f'will not be registered automatically. Make sure to register '
                                  f'them using register_child() or switching to '
                                  f'nn.Sequential/nn.HybridSequential instead. ', stacklevel=3)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    def name_scope(self):
        """``with block.name_scope():`` names children (and ops) under this block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this block's and its descendants' parameters; ``select`` a
        regex (``'.*weight|.*bias'``) keeps the names it matches."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        """Parameters by structural name, ``<child attribute>.<...>.<parameter attribute>``
        (``0.weight``): the keys of ``save_parameters``."""
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters under their structural names (MXNet 1.9's format); with
        ``deduplicate`` a shared parameter is saved once."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            by_param = {v: k for k, v in params.items()}
            params = {k: v for v, k in by_param.items()}
        ndarray.save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename):
        """Deprecated: save under the parameters' full names less this block's prefix."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.io/api/python/docs/tutorials/packages/gluon/"
                      "blocks/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may "
                             f"resolve this error.") from e

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load a file of ``save_parameters`` (or, when no name has a '.', of the legacy
        ``save_params``) onto ``ctx``."""
        loaded = ndarray.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)          # a shared parameter is saved once
            for k, v in params.items():
                names_of[v].append(k)
            for name, param in params.items():
                if not any(n in loaded for n in names_of[param]):
                    raise ParameterError(f"Parameter '{name}' is missing in file "
                                         f"'{filename}', which contains parameters: "
                                         f"{_brief_print_list(loaded.keys())}. Set "
                                         f"allow_missing=True to ignore missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(f"Parameter '{name}' loaded from file '{filename}' is not "
                                     f"present in ParameterDict, which contains parameters "
                                     f"{_brief_print_list(params.keys())}. Set "
                                     f"ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                    dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix):
        """Save the structure (``<prefix>-model.json``: names, graphs of hybridized blocks)
        and parameters (``<prefix>-model.params``), as MXNet 1.9's ``Block.save``."""
        from . import _structure
        _structure.save(self, prefix)

    def load(self, prefix):
        """Load what ``save(prefix)`` wrote into this block, built the same way."""
        from . import _structure
        _structure.load(self, prefix)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (name: its attribute, else its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` before every forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` after every forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant, then this block; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize the parameters of this block and its descendants (default
        ``init.Uniform()``)."""
        self.collect_params().initialize(init if init is not None else initializer.Uniform(),
                                         ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock descendants (a plain Block itself runs imperatively)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast the parameters of this block and its descendants to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def __call__(self, *args):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args)
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation; subclasses override it."""
        raise NotImplementedError

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for a forward of ``inputs``
        (the block must not be hybridized)."""
        from .summary import print_summary
        print_summary(self, inputs)


def _unregistered(data, children):
    """Whether nested lists, tuples and dicts ``data`` hold a Block not in ``children``."""
    if isinstance(data, (list, tuple)):
        return any(_unregistered(d, children) for d in data)
    if isinstance(data, dict):
        return any(_unregistered(d, children) for d in data.values())
    return isinstance(data, Block) and data not in children
