"""mx.io.ImageDetRecordIter (its augmenters off) against MXNet 1.9.1's batches of
tests/fixtures/image_iter/det.rec (make_image_iter_fixtures.py): resize modes,
normalisation, label padding, round_batch over two epochs. Decoding needs Pillow."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

pytest.importorskip("PIL")
HERE = Path(__file__).parent / "fixtures" / "image_iter"
EXPECTED = np.load(HERE / "expected.npz")
INFO = json.loads((HERE / "expected.json").read_text())
REC = str(HERE / "det.rec")


@pytest.mark.parametrize("name, kwargs", [
    ("detrec_plain", dict(data_shape=(3, 8, 8), batch_size=2, mean_r=10.0, std_g=2.0, scale=0.5)),
    ("detrec_force", dict(data_shape=(3, 6, 5), batch_size=3, inter_method=0,
                          label_pad_width=20, label_pad_value=-2.0)),
    ("detrec_fit", dict(data_shape=(3, 6, 12), batch_size=2, resize_mode="fit",
                        inter_method=0, resize=4)),
    ("detrec_part", dict(data_shape=(3, 8, 8), batch_size=2, num_parts=2, part_index=1)),
])
def test_batches_match_mxnet(name, kwargs):
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, **kwargs)
    assert [[d.name, list(d.shape)] for d in it.provide_data + it.provide_label] == \
        INFO[name + "_provide"]
    for epoch in range(2):
        count = 0
        for k, batch in enumerate(it):
            key = f"{name}_e{epoch}_b{k}"
            np.testing.assert_allclose(batch.data[0].asnumpy(), EXPECTED[key + "_data"],
                                       rtol=1e-6, err_msg=key)
            np.testing.assert_array_equal(batch.label[0].asnumpy(), EXPECTED[key + "_label"])
            assert batch.pad == INFO[key + "_pad"], key
            count += 1
        assert count == INFO[f"{name}_e{epoch}_count"], (name, epoch)
        it.reset()


def test_random_augmenters_and_short_padding_are_refused_by_name():
    with pytest.raises(MXNetError, match="rand_mirror_prob=0.5: MXNet's random detection"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 rand_mirror_prob=0.5)
    with pytest.raises(MXNetError, match="label_pad_width: 14 smaller than the longest"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 label_pad_width=14)
    with pytest.raises(MXNetError, match="has a 7-value label but label_width is 5"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                                 label_width=5)
