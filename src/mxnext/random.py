"""Random numbers (MXNet's ``mx.random``): seeding of every device's generator.

Samplers (``uniform``, ``normal``, ...) draw from the per-device RANDOM
resource (``mxnext.resource``) inside engine functions that mutate its var.
"""

from __future__ import annotations

import numpy

from ._runtime.base import ParamError
from ._runtime.context import Context
from ._runtime import resource as _resource

__all__ = ["seed"]


def seed(seed_state, ctx="all") -> None:
    """Seed the random generators of every device (``ctx="all"``) or of one context.

    The same seed gives the same numbers, on every engine: the reseed is ordered
    after everything already pushed on each generator's engine var.
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, (int, numpy.integer)):
        raise ParamError(f"random.seed: seed_state must be int, got "
                         f"{type(seed_state).__name__} {seed_state!r}")
    if not isinstance(ctx, Context) and ctx != "all":
        raise ParamError(f"random.seed: ctx must be a Context or 'all', got {ctx!r}")
    _resource.seed(int(seed_state), None if ctx == "all" else ctx)


# -- samplers (MXNet's mx.random.uniform ...): the mx.nd.random functions ------------------
def _sampler(name):
    def sample(*args, **kwargs):
        from .ndarray import random as _nd_random
        return getattr(_nd_random, name)(*args, **kwargs)
    sample.__name__ = sample.__qualname__ = name
    sample.__doc__ = f"Same as ``mx.nd.random.{name}``."
    return sample


for _name in ("uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
              "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"):
    globals()[_name] = _sampler(_name)
    __all__.append(_name)
del _name
