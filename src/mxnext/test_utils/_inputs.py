"""Test inputs: the default context, random arrays and shapes, structured matrices.

Random draws come from numpy's global generator in the same calls, in the same order, as
MXNet's helpers make them, so a test seeded as in MXNet sees the same inputs.
"""

from __future__ import annotations

import numpy as np

from .._runtime.base import ParamError
from .._runtime.context import Context, current_context
from ._tolerance import default_dtype


def default_context() -> Context:
    """The context tests run on: the current one (``with ctx:`` or :func:`set_default_context`)."""
    return current_context()


def set_default_context(ctx) -> None:
    """Make ``ctx`` this thread's default context, as MXNet does."""
    Context._local.value = Context(ctx)


def list_gpus():
    """The GPU ids there are: ``range(number of GPUs)``."""
    from ..util import get_gpu_count
    return range(get_gpu_count())


def random_arrays(*shapes):
    """Standard-normal float32 numpy arrays, one per shape (the array itself for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform numpy arrays in [low, high), one per shape (always a list, as in MXNet)."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of the sequence ``population`` in random order, without repeats."""
    if not 0 <= k <= len(population):
        raise ParamError(f"random_sample: argument 'k' expected 0 <= k <= {len(population)} "
                         f"(the population size), got {k}")
    pool = population[:]
    np.random.shuffle(pool)
    return pool[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-d shape with sides in [1 (0 if ``allow_zero_size``), dim]."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-d shape with sides in [1 (0 if ``allow_zero_size``), dim]."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-d shape (a tuple of ints) with sides in [1 (or 0), dim]."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random int64 point with x in [x_low, x_high) and y in [y_low, y_high)."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def assign_each(the_input, function):
    """``function`` applied to every element of numpy array ``the_input`` (float64 result);
    a copy when ``function`` is None."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(the_input).reshape(np.shape(the_input))


def assign_each2(input1, input2, function):
    """``function`` applied to every pair of elements of two same-shape numpy arrays (float64
    result); a copy of ``input1`` when ``function`` is None."""
    if function is None:
        return np.array(input1)
    if np.shape(input1) != np.shape(input2):
        raise ParamError(f"assign_each2: arguments 'input1' and 'input2' expected one shape, "
                         f"got {np.shape(input1)} and {np.shape(input2)}")
    return np.vectorize(function, otypes=[np.float64])(input1, input2).reshape(np.shape(input1))


# -- structured NDArrays (MXNet made them to test arrays past 2**32 elements) --------------------

def create_vector(size, dtype=np.int64):
    """``mx.nd.arange(0, size)`` in ``dtype``."""
    from .. import ndarray as nd
    return nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``rows`` x ``columns`` NDArray whose row ``i`` is all ``i``."""
    from .. import ndarray as nd
    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape((rows, 1)),
                           shape=(rows, columns))


def get_identity_mat(size):
    """A ``size`` x ``size`` float32 identity NDArray."""
    from .. import ndarray as nd
    return nd.eye(size)


def get_identity_mat_batch(size):
    """Two stacked ``size`` x ``size`` identity matrices: shape (2, size, size)."""
    from .. import ndarray as nd
    eye = get_identity_mat(size).asnumpy()
    return nd.array(np.stack([eye, eye]))


# -- random matrices with known spectra (numpy; for linear-algebra op tests) ------------------

def new_matrix_with_real_eigvals_2d(n):
    """A random ``n`` x ``n`` matrix with real eigenvalues in [-10, 10], similar to a diagonal
    one through a well-conditioned (cond < 3) transform."""
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, n))   # scale, then a reflection's normal,
        u = np.random.uniform(-1.0, 1.0, (n, 1))        # drawn in MXNet's order
        u /= np.linalg.norm(u)
        q = (np.eye(n) - 2 * u @ u.T) @ d
        if np.linalg.cond(q, 2) < 3:
            break
    return np.linalg.inv(q) @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape`` (..., n, n)."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]
                    ).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random ``n`` x ``n`` orthonormal matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n`` x ``n`` matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape`` (..., n, n)."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]
                    ).reshape(shape)
