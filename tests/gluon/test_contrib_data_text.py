"""gluon.contrib.data: WikiText read from local token files into (seq_len) rows of token
indices and the rows shifted by one; contrib.text's Vocabulary orders tokens as MXNet's."""

import collections

import numpy as np
import pytest

from mxnext import contrib  # noqa: F401  (mx.contrib.text loads with it)
from mxnext.base import MXNetError
from mxnext.contrib import text
from mxnext.gluon.contrib.data import IntervalSampler
from mxnext.gluon.contrib.data.text import WikiText2, WikiText103


def test_vocabulary_indexes_unknown_reserved_then_by_falling_frequency_ties_by_token():
    counter = text.utils.count_tokens_from_str("b a c a\n c b a d\n")
    assert counter == collections.Counter({"a": 3, "b": 2, "c": 2, "d": 1})
    vocab = text.Vocabulary(counter, reserved_tokens=["<eos>"])
    assert vocab.idx_to_token == ["<unk>", "<eos>", "a", "b", "c", "d"]
    assert vocab.to_indices(["c", "zz"]) == [4, 0] and vocab.to_indices("a") == 2
    assert vocab.to_tokens([5, 1]) == ["d", "<eos>"]
    assert len(text.Vocabulary(counter, most_freq_count=2, min_freq=2)) == 3
    with pytest.raises(ValueError, match="reserved_tokens"):
        text.Vocabulary(counter, reserved_tokens=["<unk>"])


def test_wikitext_rows_are_the_token_stream_and_labels_the_next_tokens(tmp_path):
    (tmp_path / "wiki.train.tokens").write_text(" \n = T = \n \n x y x \n y z \n")
    train = WikiText2(str(tmp_path), "train", seq_len=3)
    vocab = train.vocabulary
    stream = vocab.to_indices("= T = <eos> x y x <eos> y z <eos>".split())
    assert len(train) == 3                        # 11 tokens: 10 inputs, 3 whole rows
    assert np.array_equal(train._data.asnumpy().ravel(), stream[:9])
    assert np.array_equal(train._label.asnumpy().ravel(), stream[1:10])
    assert train.frequencies["x"] == 2 and vocab.idx_to_token[:2] == ["<unk>", "<eos>"]
    (tmp_path / "wiki.test.tokens").write_text(" new x \n")
    test = WikiText2(str(tmp_path), "test", vocab=vocab, seq_len=2)
    assert test.vocabulary is vocab and test[0][0].asnumpy().tolist() == [0, vocab.to_indices("x")]


def test_wikitext_without_its_file_names_it_and_does_not_download(tmp_path):
    with pytest.raises(MXNetError, match=r"wiki\.valid\.tokens not found in .*wikitext-103-v1"):
        WikiText103(str(tmp_path), "validation")
    with pytest.raises(ValueError, match="segment"):
        WikiText2(str(tmp_path), "dev")


def test_interval_sampler_is_gluon_data_s():
    assert list(IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]


def test_wikitext_reads_its_file_out_of_the_archive(tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "wikitext-2-v1.zip", "w") as zf:
        zf.writestr("wikitext-2/wiki.test.tokens", " a b c d \n")
    test = WikiText2(str(tmp_path), "test", seq_len=2)
    assert len(test) == 2 and (tmp_path / "wiki.test.tokens").exists()
