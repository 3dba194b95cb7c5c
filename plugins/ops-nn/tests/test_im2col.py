"""im2col and col2im (1-3 spatial dims) against loops, their adjointness, gradients and
errors."""

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, run_op

RNG = np.random.default_rng(0)


def im2col_ref(x, kernel, stride, dilate, pad):
    nd = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    blocks = [(s + 2 * p - d * (k - 1) - 1) // st + 1
              for s, k, st, d, p in zip(x.shape[2:], kernel, stride, dilate, pad)]
    cols = np.zeros((x.shape[0], x.shape[1] * int(np.prod(kernel)), int(np.prod(blocks))))
    for c in range(x.shape[1]):
        for t, offs in enumerate(np.ndindex(*kernel)):
            for l, pos in enumerate(np.ndindex(*blocks)):
                idx = tuple(q * st + o * d for q, o, st, d in zip(pos, offs, stride, dilate))
                cols[:, c * int(np.prod(kernel)) + t, l] = xp[(slice(None), c) + idx]
    assert len(blocks) == nd
    return cols


@pytest.mark.parametrize("shape,kw", [
    ((2, 2, 5, 6), {"kernel": (3, 2)}),
    ((1, 2, 7, 6), {"kernel": (2, 3), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 2)}),
    ((2, 3, 9), {"kernel": (3,), "stride": (2,), "dilate": (2,), "pad": (1,)}),
    ((1, 1, 4, 3, 5), {"kernel": (2, 2, 3), "stride": (1, 2, 1), "pad": (0, 1, 1)})])
def test_im2col_matches_loop_and_col2im_is_its_adjoint(shape, kw):
    x = RNG.standard_normal(shape)
    nd = len(kw["kernel"])
    geo = (kw["kernel"], kw.get("stride", (1,) * nd), kw.get("dilate", (1,) * nd),
           kw.get("pad", (0,) * nd))
    cols = check_forward("im2col", [x], im2col_ref(x, *geo), kw)[0]
    c = RNG.standard_normal(cols.shape)
    img = run_op("col2im", [c], {**kw, "output_size": shape[2:]})[0]
    assert np.vdot(cols, c) == pytest.approx(np.vdot(x, img))       # <Ax, c> = <x, A^T c>
    check_backward("im2col", [x], [c], [img], kw, rtol=1e-10)
    check_backward("col2im", [c], [x], [cols], {**kw, "output_size": shape[2:]}, rtol=1e-10)


def test_errors_name_op_and_argument():
    with pytest.raises(ShapeError, match="im2col.*kernel extent 5 exceeds.*4"):
        run_op("im2col", [np.zeros((1, 1, 4, 4))], {"kernel": (5, 1)})
    with pytest.raises(ShapeError, match="col2im.*\\(batch, channels \\* 4, 9\\).*\\(1, 8, 8\\)"):
        run_op("col2im", [np.zeros((1, 8, 8))], {"kernel": (2, 2), "output_size": (4, 4)})
    with pytest.raises(ShapeError, match="im2col.*4 dims"):
        run_op("im2col", [np.zeros((1, 1, 4))], {"kernel": (2, 2)})
