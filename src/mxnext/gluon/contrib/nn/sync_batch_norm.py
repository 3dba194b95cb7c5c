"""``SyncBatchNorm``: BatchNorm over axis 1 through ``_contrib_SyncBatchNorm``. mxnext runs
one device per process, so the statistics are those of the one device's batch and
``num_devices`` defaults to 1 (MXNet counts the GPUs); the op refuses more."""

__all__ = ['SyncBatchNorm']

from ...nn import BatchNorm


class SyncBatchNorm(BatchNorm):
    """MXNet 1.9's cross-device BatchNorm (same parameters as ``nn.BatchNorm`` with
    ``axis=1``); ``num_devices`` is the ``ndev`` of the op, the block's prefix its ``key``."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats,
                        'ndev': 1 if num_devices is None else num_devices,
                        'key': self.prefix}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var,
                                       name='fwd', **self._kwargs)
