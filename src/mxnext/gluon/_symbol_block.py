"""MXNet 1.9's ``gluon.SymbolBlock``: a HybridBlock made from a Symbol graph, such as
one ``HybridBlock.export`` wrote."""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .. import symbol
from .._runtime.base import FLAG_TO_DTYPE, MXNetError
from ..ndarray import NDArray
from ..symbol import Symbol
from ._hybrid_block import HybridBlock
from ._nested import _flatten, _regroup
from ._parameter import ParameterError
from ._parameter_dict import ParameterDict

__all__ = ["SymbolBlock"]


def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


class SymbolBlock(HybridBlock):
    """A HybridBlock made from a Symbol graph: ``outputs`` computed from the variables
    ``inputs``; the graph's other arguments and auxiliary states become its parameters
    (taken from ``params`` where it has them)."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock of an exported model: ``symbol_file`` (``-symbol.json``), the names
        of its data inputs, and optionally the ``.params`` to load onto ``ctx``."""
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = symbol.Group(out) if len(out) > 1 else out[0]
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise ParameterError(f"Input symbols must be variable, but {s} is an output "
                                     f"of operators")
            input_names.add(s.name)
        for name, attrs in out.attr_dict().items():
            if attrs.get("__storage_type__", "0") not in ("0", "-1") and \
                    name not in input_names:
                raise ParameterError(f"SymbolBlock doesn't support Parameter {name!r} because "
                                     f"its storage type is not 'default'.")
        arg_types, aux_types = _infer_param_types(syms, out)
        for arg, dtype in zip(out.list_arguments(), arg_types):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=dtype)
        for aux, dtype in zip(out.list_auxiliary_states(), aux_types):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True, dtype=dtype)
        self._cached_graph = syms, out
        cut = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[cut:]: v for k, v in self._params.items()}

    def __repr__(self):
        syms, out = self._cached_graph
        return (f"{type(self).__name__}(\n{out} : {len(syms)} -> "
                f"{len(out.list_outputs())}\n)")

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise TypeError(f"HybridBlock requires the first argument to forward be either "
                            f"Symbol or NDArray, but got {type(x)}")
        flat, fmt = _flatten([x, *args], "input")
        if fmt != self._in_format:
            raise ValueError(f"SymbolBlock: invalid input format {fmt}, expected "
                             f"{self._in_format}")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _infer_param_types(inputs, out):
    """The dtypes of ``out``'s arguments and auxiliary states from its inputs' ``__dtype__``
    attributes (float32 where nothing says otherwise)."""
    given = {}
    for s in inputs:
        flag = s.attr("__dtype__")
        if flag is not None:
            given[s.name] = FLAG_TO_DTYPE[int(flag)]
    arg_types = aux_types = None
    if given:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                arg_types, _, aux_types = out.infer_type_partial(**given)
            except MXNetError:
                arg_types = aux_types = None
    n_args, n_aux = len(out.list_arguments()), len(out.list_auxiliary_states())
    arg_types = [np.dtype(t).type if t is not None else np.float32
                 for t in (arg_types or [None] * n_args)]
    aux_types = [np.dtype(t).type if t is not None else np.float32
                 for t in (aux_types or [None] * n_aux)]
    return arg_types, aux_types
