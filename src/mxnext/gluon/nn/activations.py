"""Activation layers, as MXNet 1.9's ``gluon.nn``: each one op (``Activation``,
``LeakyReLU`` with an ``act_type``, or ``sigmoid`` for Swish) through ``F``."""

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']

from ... import initializer
from ..block import HybridBlock


class Activation(HybridBlock):
    """Applies ``mx.nd.Activation`` with ``act_type=activation`` ('relu', 'sigmoid',
    'tanh', 'softrelu', 'softsign'); the block is named for the activation."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._act_type})'


class LeakyReLU(HybridBlock):
    """``x`` where ``x >= 0``, else ``alpha * x`` (alpha >= 0)."""

    def __init__(self, alpha, **kwargs):
        if not alpha >= 0:
            raise AssertionError(f"LeakyReLU: alpha (the slope for x < 0) must be >= 0, "
                                 f"got {alpha!r}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._alpha})'


class PReLU(HybridBlock):
    """LeakyReLU with a learned slope ``alpha``: one value, or one per channel (axis 1)
    when ``in_channels`` > 1."""

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1,
                 **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,),
                                         init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (Clevert et al., 2016)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU with the fixed scale and alpha of Klambauer et al., 2017."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """Gaussian error linear unit (Hendrycks et al., 2016)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)`` (Ramachandran et al., 2017)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')
