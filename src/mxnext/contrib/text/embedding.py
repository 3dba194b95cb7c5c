"""MXNet 1.9's ``mx.contrib.text.embedding``: token embeddings read from pretrained files
(GloVe, fastText: downloaded from MXNet's repository into ``$MXNET_HOME/embeddings``),
from a file of one's own (``CustomEmbedding``) or concatenated over a vocabulary
(``CompositeEmbedding``); ``register``/``create`` make the kinds creatable by name."""

from __future__ import annotations

import json
import os

from ... import ndarray as nd
from ... import registry
from ..._runtime.base import data_dir
from ._token_embedding import _TokenEmbedding
from .vocab import TextArgumentError, Vocabulary

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

with open(os.path.join(os.path.dirname(__file__), "pretrained_files.json"),
          encoding="utf8") as _f:
    _PRETRAINED = json.load(_f)    # name -> {"files": {file: sha1}, "archives": {...}}


def register(embedding_cls):
    """Class decorator: make a ``_TokenEmbedding`` subclass creatable by its lower-cased
    name."""
    return registry.get_register_func(_TokenEmbedding, "token embedding")(embedding_cls)


def create(embedding_name, **kwargs):
    """An instance of the embedding registered as ``embedding_name`` (case-insensitive)."""
    return registry.get_create_func(_TokenEmbedding, "token embedding")(embedding_name,
                                                                         **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names of ``embedding_name``, or a dict of them for every
    registered embedding."""
    table = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in table.items()}
    if embedding_name not in table:
        raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Registered: "
                       f"{', '.join(sorted(table))}")
    return list(table[embedding_name].pretrained_file_name_sha1)


class _Pretrained(_TokenEmbedding):
    """A pretrained embedding read from a space-separated file."""

    def __init__(self, pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                 **kwargs):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = type(self)._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class GloVe(_Pretrained):
    """GloVe vectors (Pennington, Socher and Manning, https://nlp.stanford.edu/projects/glove/;
    PDDL licence); the ``.txt`` files come in per-corpus ``.zip`` archives."""

    pretrained_file_name_sha1 = _PRETRAINED["glove"]["files"]
    pretrained_archive_name_sha1 = _PRETRAINED["glove"]["archives"]

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        corpus = pretrained_file_name.split(".")[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split(".")[1] == corpus)

    def __init__(self, pretrained_file_name="glove.840B.300d.txt",
                 embedding_root=os.path.join(data_dir(), "embeddings"),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


@register
class FastText(_Pretrained):
    """fastText vectors (https://fasttext.cc/; CC BY-SA 3.0); each ``.vec`` file comes in
    a ``.zip`` archive of the same stem."""

    pretrained_file_name_sha1 = _PRETRAINED["fasttext"]["files"]
    pretrained_archive_name_sha1 = _PRETRAINED["fasttext"]["archives"]

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name.rsplit(".", 1)[0] + ".zip"

    def __init__(self, pretrained_file_name="wiki.simple.vec",
                 embedding_root=os.path.join(data_dir(), "embeddings"),
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from one's own file: per line a token then its vector's elements, all
    separated by ``elem_delim``."""

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the concatenation of its vectors in
    ``token_embeddings`` (one embedding or a list)."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, Vocabulary):
            raise TextArgumentError(f"CompositeEmbedding: vocabulary must be a Vocabulary, "
                                    f"got {type(vocabulary).__name__}")
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for i, embed in enumerate(token_embeddings):
            if not isinstance(embed, _TokenEmbedding):
                raise TextArgumentError(f"CompositeEmbedding: token_embeddings[{i}] must be "
                                        f"a token embedding, got {type(embed).__name__}")
        super().__init__()
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
