"""Sparse kernels for plugin authors: the host storages an op's ``FComputeSparse`` kernel
receives and returns, and their conversions.

``FComputeSparse``: ``kernel(params, inputs, dense) -> list of outputs, or None``. Each input
is a ``CSRStorage``, a ``RowSparseStorage`` or a numpy array (dense); ``dense(*arrays)``
runs the op's own dense kernel on numpy arrays and returns its outputs (numpy). Return the
visible outputs in the storage types MXNet's ``FInferStorageType`` gives, or None where
MXNet has no sparse kernel for these inputs: the core then runs the storage fallback
(inputs densified, dense kernel, dense outputs). An op with ``FMutateInputs`` (an
optimizer's states) returns after its outputs the new value of each mutated input, in the
order ``FMutateInputs`` lists them; the core writes them back in each input's storage type.

The kernel is also the op's storage-type rule in bound graphs: executors call it at bind on
inputs that store nothing (empty storages, zero dense arrays), so the storage types it
returns must follow from the inputs' storage types, shapes, dtypes and the parameters
alone. Raising (an ``MXNetError``) refuses the inputs' storage types, as MXNet's
``FInferStorageType`` can.

A stateful op's kernel (one with ``FCreateOpState``, as the core's ``Custom``) returns
``(outputs, (state, input shapes, input dtypes))``, or None: autograd hands that state to
the op's backward, as on the dense path; executors do not call it at bind (a stateful op's
outputs in a bound graph are dense).
"""

from mxnext.ndarray.sparse_storage import (CSRStorage, RowSparseStorage, csr_from_dense,
                                           from_dense, rsp_from_dense, stype_of, to_dense)

__all__ = ["CSRStorage", "RowSparseStorage", "stype_of", "to_dense", "from_dense",
           "csr_from_dense", "rsp_from_dense"]
