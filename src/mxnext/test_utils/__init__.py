"""MXNet's ``mx.test_utils``: comparisons with MXNet's tolerances, random inputs, forward,
backward and gradient checks, statistical checks of random generators, test environment,
the MNIST and CIFAR-10 data sets of MXNet's tests and examples (``get_mnist`` ...), its
catalogue of pretrained models (``download_model``), speed and structure checks of Symbols
and the hybridize check of Gluon blocks.

There is no ``__all__``, on purpose: as with MXNet's module, ``from mxnext.test_utils import *``
also exports the modules and names imported here (``mx``, ``np``, ``sys``, ``os``, ``rnd``
(numpy.random), ``npt``, ``Context``, ``NDArray``, ``Symbol``, ``array``, ...), and test files written
for MXNet rely on them. Implementation modules are private (``_compare``, ...) so they stay
out of it. Not imported, unlike MXNet: ``ss`` (scipy.stats, not a dependency; the chi-square
checks compute their p-values here) and ``requests``.

Importing it puts back numpy 1.x's builtin-type aliases (``np.int``, ``np.float`` ...;
``mxnext._numpy_aliases``), as ``mxnext run`` does: MXNet 1.9's tests and test helpers ran on
numpy < 1.24 and spell them.

PYTEST_DONT_REWRITE: pytest rewrites the modules of a distribution that ships a pytest
plugin (mxnext-core ships opsdk's); its helpers (``@py_builtins``) would join the star import.
"""

import bz2
import errno
import gzip
import json
import logging
import numbers
import os
import platform
import struct
import sys
import time
import traceback
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import mxnext as mx

from .. import _numpy_aliases

from .._runtime.context import Context, current_context
from ..ndarray import NDArray, array
from ..symbol import Symbol
from ..util import getenv, setenv, use_np
from ._tolerance import (default_atols, default_dtype, default_numeric_eps, default_rtols,
                         effective_dtype, get_atol, get_etol, get_rtol, get_tolerance, get_tols)
from ._compare import (almost_equal, assert_allclose, assert_almost_equal,
                       assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
                       assert_exception, checkShapes, collapse_sum_like, compare_ndarray_tuple,
                       locationError, np_reduce, same, same_array)
from ._inputs import (assign_each, assign_each2, create_2d_tensor, create_vector,
                      default_context, get_identity_mat, get_identity_mat_batch, list_gpus,
                      new_matrix_with_real_eigvals_2d, new_matrix_with_real_eigvals_nd,
                      new_orthonormal_matrix_2d, new_sym_matrix_with_real_eigvals_2d,
                      new_sym_matrix_with_real_eigvals_nd, rand_coord_2d,
                      rand_shape_2d, rand_shape_3d, rand_shape_nd, random_arrays, random_sample,
                      random_uniform_arrays, set_default_context)
from ._gradients import (check_numeric_gradient, check_symbolic_backward,
                         check_symbolic_forward, numeric_grad, simple_forward)
from ._consistency import check_consistency
from ._sparse import (create_sparse_array, create_sparse_array_zd, rand_ndarray,
                      rand_sparse_ndarray, shuffle_csr_column_indices)
from ._stats import (chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check,
                     verify_generator)
from ._env import (EnvManager, discard_stderr, environment, get_im2rec_path, has_tvm_ops,
                   is_aarch64_run, is_cd_run, is_op_runnable, retry)
from ._optimizer import compare_optimizer
from ._data import (DummyIter, download, get_bz2_data, get_cifar10, get_mnist,
                    get_mnist_iterator, get_mnist_pkl, get_mnist_ubyte, get_zip_data)
from ._models import download_model
from ._symbol_tools import check_speed, same_symbol_structure
from ._hybridize import check_gluon_hybridize_consistency

_numpy_aliases.restore()
