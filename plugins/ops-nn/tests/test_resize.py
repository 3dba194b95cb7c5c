"""BilinearResize2D and AdaptiveAvgPooling2D against loops, the output-size modes,
gradients and errors."""

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(0)
RESIZE, ADAPTIVE = "_contrib_BilinearResize2D", "_contrib_AdaptiveAvgPooling2D"


def resize_ref(x, oh, ow, align=True):
    ih, iw = x.shape[2:]

    def src(o, n_in, n_out):
        if n_out == 1:
            return 0.0
        if align:
            return o * (n_in - 1) / (n_out - 1)
        return max((o + 0.5) * n_in / n_out - 0.5, 0.0)
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i, j in np.ndindex(oh, ow):
        y, xx = src(i, ih, oh), src(j, iw, ow)
        y0, x0 = int(y), int(xx)
        y1, x1 = y0 + (y0 < ih - 1), x0 + (x0 < iw - 1)
        ly, lx = y - y0, xx - x0
        out[:, :, i, j] = ((1 - ly) * ((1 - lx) * x[:, :, y0, x0] + lx * x[:, :, y0, x1])
                           + ly * ((1 - lx) * x[:, :, y1, x0] + lx * x[:, :, y1, x1]))
    return out


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("size", [(5, 9), (2, 3), (1, 4)])
def test_bilinear_resize_matches_loop(size, align):
    x = RNG.standard_normal((2, 2, 4, 6))
    check_forward(RESIZE, [x], resize_ref(x, *size, align),
                  {"height": size[0], "width": size[1], "align_corners": align}, rtol=1e-6)
    check_numeric_gradient(RESIZE, [x], {"height": size[0], "width": size[1],
                                         "align_corners": align}, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kw,size", [
    ({"scale_height": 1.5, "scale_width": 0.5}, (7, 3)),
    ({"mode": "odd_scale", "scale_height": 2, "scale_width": 0.5}, (9, 3)),
    ({"mode": "to_even_down"}, (4, 6)), ({"mode": "to_even_up"}, (6, 6)),
    ({"mode": "to_odd_down"}, (5, 5)), ({"mode": "to_odd_up"}, (5, 7))])
def test_resize_modes_choose_the_size(kw, size):
    x = RNG.standard_normal((1, 1, 5, 6))
    assert run_op(RESIZE, [x], kw)[0].shape == (1, 1) + size


def test_like_mode_takes_the_second_input_size_and_gives_it_no_gradient():
    x, like = RNG.standard_normal((1, 2, 3, 3)), RNG.standard_normal((1, 2, 5, 2))
    check_forward(RESIZE, [x, like], resize_ref(x, 5, 2), {"mode": "like"})
    check_numeric_gradient(RESIZE, [x, like], {"mode": "like"}, rtol=1e-6, atol=1e-9)


def adaptive_ref(x, oh, ow):
    out = np.zeros(x.shape[:2] + (oh, ow))
    ih, iw = x.shape[2:]
    for i, j in np.ndindex(oh, ow):
        rows = slice(i * ih // oh, -(-(i + 1) * ih // oh))
        cols = slice(j * iw // ow, -(-(j + 1) * iw // ow))
        out[:, :, i, j] = x[:, :, rows, cols].mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("size", [1, 3, (4, 2), (7, 9)])
def test_adaptive_avg_pooling_matches_loop(size):
    x = RNG.standard_normal((2, 2, 5, 7))
    oh, ow = (size, size) if isinstance(size, int) else size
    check_forward(ADAPTIVE, [x], adaptive_ref(x, oh, ow), {"output_size": size}, rtol=1e-10)
    check_numeric_gradient(ADAPTIVE, [x], {"output_size": size}, rtol=1e-6, atol=1e-9)


def test_errors_name_op_and_argument():
    with pytest.raises(ShapeError, match="BilinearResize2D.*'odd_scale' needs scale_height"):
        run_op(RESIZE, [np.zeros((1, 1, 3, 3))], {"mode": "odd_scale", "scale_width": 2})
    with pytest.raises(ShapeError, match="BilinearResize2D.*'data'.*4-d"):
        run_op(RESIZE, [np.zeros((1, 3, 3))], {"height": 2, "width": 2})
    with pytest.raises(ParamError, match="output_size"):
        run_op(ADAPTIVE, [np.zeros((1, 1, 3, 3))], {"output_size": (1, 2, 3)})
