"""Straight-through estimators (MXNet's ``contrib/stes_op.cc``): ``_contrib_round_ste`` and
``_contrib_sign_ste`` compute round and sign, and pass the head gradient through unchanged
(d/dx = 1 instead of 0), as quantization-aware training wants."""

from __future__ import annotations

from opsdk import CloneGradient

from ._common import forward_compute
from .unary import _round_half_away, _sign, _unary

_STES = {
    "_contrib_round_ste": (_round_half_away,
                           "Straight-through estimator of round: forward, round to nearest "
                           "(halves away from zero), elementwise; backward, the output gradient "
                           "passes to the input unchanged (gradient 1, not round's 0). "
                           "round_ste([-1.5, 1.5, -1.9, 1.9, 2.7]) = [-2, 2, -2, 2, 3]."),
    "_contrib_sign_ste": (_sign,
                          "Straight-through estimator of sign: forward, -1, 0 or 1 (0 for NaN), "
                          "elementwise; backward, the output gradient passes to the input "
                          "unchanged (gradient 1, not sign's 0). sign_ste([-2, 0, 3]) = "
                          "[-1, 0, 1]."),
}

for _name, (_fwd, _doc) in _STES.items():
    (_unary(_name, forward_compute(_fwd), CloneGradient(), _doc)
     .set_attr("TExamples", [{"domain": (-3, 3), "grad": False},     # the true derivative is 0
                             {"inputs": [(4,)], "dtype": "int32", "domain": (-5, 5)},
                             {"inputs": [(3, 2)], "dtype": "float64", "domain": (-9, 9),
                              "grad": False}]))
