"""``compare_optimizer``: one step of two optimizers on the same random inputs, compared."""

from __future__ import annotations

import copy

from ._compare import assert_almost_equal, compare_ndarray_tuple
from ._inputs import default_context
from ._sparse import rand_ndarray


def _pair(shape, stype, dtype, density=None):
    """Two equal arrays: a dense one for ``opt1`` and one of storage ``stype`` for ``opt2``
    (a sparse one's updates take the storage fallback: dense kernels, written back)."""
    from .. import random
    ctx = default_context()
    if stype == "default":
        second = random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        return second.copyto(ctx), second
    second = rand_ndarray(shape, stype, density=density, dtype=dtype)
    return second.copyto(ctx).tostype("default"), second


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Run one ``update_multi_precision`` of ``opt1`` and ``opt2`` from equal weights,
    gradients and fresh states; assert equal states (before and after) and weights.

    A list of shapes checks a multi-tensor update: ``opt2`` updates all ``ntensors`` weights
    in one call (indices 0..ntensors-1), ``opt1`` one weight at a time.
    """
    from .. import random
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError(f"compare_optimizer: ntensors={ntensors} needs a list of shapes")
        w1, w2 = _pair(shape, w_stype, dtype, density=1)
        g1, g2 = _pair(shape, g_stype, dtype)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    ctx = default_context()
    w1 = tuple(random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
