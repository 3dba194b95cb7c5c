"""mx.contrib.text.embedding: files of vectors, vocabularies over them, composition."""

import collections
import hashlib

import numpy as np
import pytest

import mxnext as mx
from mxnext.contrib import text


def _write(path, lines, delim="\t"):
    path.write_text("".join(delim.join(map(str, row)) + "\n" for row in lines))
    return str(path)


def test_custom_embedding_indexes_the_file_and_looks_up_vectors(tmp_path):
    f = _write(tmp_path / "v.txt", [["a", 1, 2], ["B", 3, 4], ["<unk>", 9, 9], ["a", 0, 0]])
    with pytest.warns(UserWarning, match="already has a vector"):
        e = text.embedding.CustomEmbedding(f, "\t")
    assert e.idx_to_token == ["<unk>", "a", "B"] and e.vec_len == 2
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[9, 9], [1, 2], [3, 4]])
    np.testing.assert_allclose(e.get_vecs_by_tokens(["b", "a"]).asnumpy(), [[9, 9], [1, 2]])
    np.testing.assert_allclose(e.get_vecs_by_tokens("b", lower_case_backup=False).asnumpy(),
                               [9, 9])
    e.update_token_vectors("a", mx.nd.array([5, 6]))
    np.testing.assert_allclose(e.get_vecs_by_tokens("a").asnumpy(), [5, 6])


def test_vocabulary_and_composite_concatenate_vectors(tmp_path):
    e1 = text.embedding.CustomEmbedding(_write(tmp_path / "1.txt", [["a", 1, 1], ["b", 2, 3]]),
                                        "\t", init_unknown_vec=mx.nd.ones)
    e2 = text.embedding.CustomEmbedding(_write(tmp_path / "2.txt", [["b", 7, 8]]), "\t")
    vocab = text.vocab.Vocabulary(collections.Counter(["b", "b", "c"]), reserved_tokens=["<p>"])
    comp = text.embedding.CompositeEmbedding(vocab, [e1, e2])
    assert comp.idx_to_token == ["<unk>", "<p>", "b", "c"] and comp.vec_len == 4
    np.testing.assert_allclose(comp.idx_to_vec.asnumpy(),
                               [[1, 1, 0, 0], [1, 1, 0, 0], [2, 3, 7, 8], [1, 1, 0, 0]])


def test_bad_files_and_updates_raise_assertion_errors_as_mxnet(tmp_path):
    with pytest.raises(AssertionError, match="line 2 .*3-dimensional vector, the tokens"):
        text.embedding.CustomEmbedding(_write(tmp_path / "x.txt", [["a", 1, 2], ["b", 3, 4, 5]]),
                                       "\t")
    with pytest.raises(AssertionError, match="line 1: expected a token and its vector"):
        text.embedding.CustomEmbedding(_write(tmp_path / "y.txt", [["a"]]), "\t")
    with pytest.raises(AssertionError, match="holds no vectors"), pytest.warns(UserWarning):
        text.embedding.CustomEmbedding(_write(tmp_path / "h.txt", [[3, 300]], " "))
    e = text.embedding.CustomEmbedding(_write(tmp_path / "z.txt", [["a", 1, 2]]), "\t")
    with pytest.raises(ValueError, match="token 'q' is unknown"):
        e.update_token_vectors("q", mx.nd.array([1, 2]))
    with pytest.raises(AssertionError, match=r"shape \(1, 2\).*got \(1, 3\)"):
        e.update_token_vectors("a", mx.nd.array([1, 2, 3]))
    with pytest.raises(AssertionError, match="min_freq"):
        text.vocab.Vocabulary(collections.Counter("ab"), min_freq=0)


def test_registered_embedding_reads_a_present_pretrained_file(tmp_path):
    content = "hello 1 2\nworld 3 4\n"
    sha1 = hashlib.sha1(content.encode()).hexdigest()

    @text.embedding.register
    class TinyTestEmbed(text.embedding._Pretrained):
        pretrained_file_name_sha1 = {"tiny.vec": sha1}

        def __init__(self, embedding_root, **kwargs):
            super().__init__("tiny.vec", embedding_root, mx.nd.zeros, None, **kwargs)

    (tmp_path / "tinytestembed").mkdir()
    (tmp_path / "tinytestembed" / "tiny.vec").write_text(content)
    e = text.embedding.create("tinytestembed", embedding_root=str(tmp_path))
    np.testing.assert_allclose(e.get_vecs_by_tokens("world").asnumpy(), [3, 4])
    assert text.embedding.get_pretrained_file_names("tinytestembed") == ["tiny.vec"]
    names = text.embedding.get_pretrained_file_names()
    assert len(names["glove"]) == 10 and len(names["fasttext"]) == 327
    with pytest.raises(KeyError, match="Cannot find pretrained file nope.txt"):
        text.embedding.GloVe("nope.txt")


def test_missing_pretrained_file_without_network_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    with pytest.raises(mx.MXNetError, match=r"'glove.6B.50d.txt' is not at .*could not be "
                                            r"downloaded.*archive 'glove.6B.zip'"):
        text.embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))
