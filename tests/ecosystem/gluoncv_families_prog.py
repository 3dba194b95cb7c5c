"""Run by test_gluoncv_families.py through ``python -m mxnext run``: GluonCV model zoo
networks beyond image classification (action recognition on 5-D clips, HRNet, DLA, pose
estimation, CenterNet, ...) built with ``pretrained=False``, their parameters overwritten
with values drawn from a ``RandomState`` seeded by each parameter's position (so MXNet and
mxnext hold the same numbers without a parameter file), hybridized and run forward in
inference on a fixed input. Each name prints ``NAME ok`` when every output matches
fixtures/gluoncv_families.npz (rtol 1e-4 of the output's largest magnitude).

``--write`` runs the same networks and writes that fixture instead; it is run under
MXNet 1.9.1 and GluonCV 0.10:
    /work/mxnet-venv/bin/python tests/ecosystem/gluoncv_families_prog.py --write
"""

import os
import sys

import numpy as np
import mxnet as mx
from gluoncv.model_zoo import get_model

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures',
                       'gluoncv_families.npz')

# name: input shape (the smallest each network accepts, to keep CI fast)
NETWORKS = {
    'i3d_resnet50_v1_kinetics400': (1, 3, 8, 64, 64),
    'r2plus1d_resnet18_kinetics400': (1, 3, 8, 64, 64),
    'hrnet_w18_small_v1_c': (1, 3, 64, 64),
    'dla34': (1, 3, 64, 64),
    'mobile_pose_mobilenetv3_small': (1, 3, 128, 96),
    'center_net_mobilenetv3_small_duc_voc': (1, 3, 128, 128),
}


def _value(name, shape, rs):
    """A value in each parameter's usual range: positive scales and variances, small
    shifts, weights uniform in +-sqrt(3 / fan_in)."""
    if name.endswith(('running_var', 'gamma')):
        return rs.uniform(0.5, 1.5, shape)
    if name.endswith(('beta', 'bias', 'running_mean')):
        return rs.uniform(-0.1, 0.1, shape)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(np.prod(shape))
    bound = np.sqrt(3.0 / max(fan_in, 1))
    return rs.uniform(-bound, bound, shape)


def outputs(name, shape):
    """The network's inference outputs (flattened list of numpy arrays) on a fixed input."""
    kwargs = {'pretrained': False}
    if not name.startswith(('hrnet', 'dla')):
        kwargs['pretrained_base'] = False
    net = get_model(name, **kwargs)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(7).uniform(0, 1, shape).astype('float32'))
    net(x)                                   # settles the deferred shapes
    for i, param in enumerate(net.collect_params().values()):
        value = _value(param.name, param.shape, np.random.RandomState(1000 + i))
        param.set_data(mx.nd.array(value.astype('float32')))
    net.hybridize()
    out = net(x)
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    return [o.asnumpy() for o in out]


def main(args):
    if args == ['--write']:
        arrays = {f'{name}/{i}': o for name, shape in NETWORKS.items()
                  for i, o in enumerate(outputs(name, shape))}
        np.savez_compressed(FIXTURE, **arrays)
        return
    expected = np.load(FIXTURE)
    for name in args or NETWORKS:
        got = outputs(name, NETWORKS[name])
        keys = sorted((k for k in expected.files if k.split('/')[0] == name),
                      key=lambda k: int(k.split('/')[1]))
        assert len(got) == len(keys), f'{name}: {len(got)} outputs, MXNet gave {len(keys)}'
        for key, out in zip(keys, got):
            want = expected[key]
            assert out.shape == want.shape, f'{key}: shape {out.shape}, MXNet {want.shape}'
            err = np.abs(out - want).max() / max(np.abs(want).max(), 1e-6)
            assert err < 1e-4, f'{key}: relative error {err:.2e} against MXNet'
        print(name, 'ok', flush=True)


if __name__ == '__main__':
    main(sys.argv[1:])
