"""``_TokenEmbedding``: a Vocabulary whose tokens each have a vector (MXNet 1.9's base of
``mx.contrib.text.embedding``). Index 0 is the unknown token; its vector is the one the
file gives for ``unknown_token``, else ``init_unknown_vec(shape=vec_len)``."""

from __future__ import annotations

import hashlib
import logging
import os
import tarfile
import warnings
import zipfile

import numpy as np

from ... import ndarray as nd
from ..._runtime.base import MXNetError
from .vocab import TextArgumentError, Vocabulary

__all__ = ["_TokenEmbedding", "APACHE_REPO_URL"]

APACHE_REPO_URL = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _sha1(path):
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _parse_line(line, elem_delim, line_num, path):
    """(token, [floats]) of one line of an embedding file."""
    elems = line.rstrip().split(elem_delim)
    if len(elems) < 2:
        raise TextArgumentError(f"token embedding file {path!r}, line {line_num}: expected "
                                f"a token and its vector separated by {elem_delim!r}, got "
                                f"{line.rstrip()!r}")
    return elems[0], [float(x) for x in elems[1:]]


class _TokenEmbedding(Vocabulary):
    """Base of the token embeddings: ``idx_to_vec`` (one row per index), ``vec_len``,
    lookup (``get_vecs_by_tokens``) and assignment (``update_token_vectors``)."""

    pretrained_file_name_sha1: dict = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @property
    def vec_len(self):
        return self._vec_len

    @property
    def idx_to_vec(self):
        return self._idx_to_vec

    # -- pretrained files ----------------------------------------------------------------
    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            name = cls.__name__.lower()
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token "
                           f"embedding {name}. Valid pretrained files for embedding {name}: "
                           f"{', '.join(cls.pretrained_file_name_sha1)}")

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        repo = os.environ.get("MXNET_GLUON_REPO", APACHE_REPO_URL)
        return (f"{repo}gluon/embeddings/{cls.__name__.lower()}/"
                f"{cls._get_download_file_name(pretrained_file_name)}")

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The path of ``pretrained_file_name`` under ``embedding_root/<class name>``,
        downloaded (and unpacked) from MXNet's repository unless there with the right
        SHA-1."""
        from ...test_utils._data import download     # not gluon.utils: gluon imports this
        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(folder, pretrained_file_name)
        sha1 = cls.pretrained_file_name_sha1[pretrained_file_name]
        if os.path.exists(path) and _sha1(path) == sha1:
            return path
        url = cls._get_pretrained_file_url(pretrained_file_name)
        archive = os.path.basename(url)
        archive_sha1 = getattr(cls, "pretrained_archive_name_sha1", {}).get(archive, sha1)
        try:
            got = download(url, archive, dirname=folder, sha1_hash=archive_sha1)
        except MXNetError as exc:
            raise MXNetError(f"text.embedding.{cls.__name__}: the pretrained file "
                             f"{pretrained_file_name!r} is not at {path!r} and could not be "
                             f"downloaded from {url}; without network, put the file (or the "
                             f"archive {archive!r}) into {folder!r} by hand") from exc
        if archive.endswith(".zip"):
            with zipfile.ZipFile(got) as zf:
                zf.extractall(folder)
        elif archive.endswith(".gz"):
            with tarfile.open(got, "r:gz") as tar:
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tar.extractall(folder, **safe)
        return path

    # -- loading -------------------------------------------------------------------------
    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding="utf8"):
        """Index every token of the file (the first vector of a repeated token wins; a line
        with a one-element vector is taken for a header and skipped)."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise TextArgumentError(f"token embedding: pretrained_file_path {path!r} is not "
                                    f"a file")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        rows, unknown_vec = [], None
        with open(path, encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                token, vec = _parse_line(line, elem_delim, line_num, path)
                if token == self._unknown_token and unknown_vec is None:
                    unknown_vec = vec
                elif token in self._token_to_idx:
                    warnings.warn(f"line {line_num} of {path}: token {token!r} already has "
                                  f"a vector; this one is skipped")
                elif len(vec) == 1:
                    warnings.warn(f"line {line_num} of {path}: token {token!r} with a "
                                  f"1-dimensional vector {vec} is likely a header; skipped")
                else:
                    if rows and len(vec) != len(rows[0]):
                        raise TextArgumentError(
                            f"line {line_num} of {path}: token {token!r} has a {len(vec)}-"
                            f"dimensional vector, the tokens before it {len(rows[0])}")
                    rows.append(vec)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
        if not rows and unknown_vec is None:
            raise TextArgumentError(f"token embedding file {path!r} holds no vectors")
        self._vec_len = len(rows[0]) if rows else len(unknown_vec)
        head = [unknown_vec or [0.0] * self._vec_len]
        self._idx_to_vec = nd.array(head + rows).reshape((-1, self._vec_len))
        if unknown_vec is None:
            self._idx_to_vec[0] = init_unknown_vec(shape=self._vec_len)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (None if vocabulary.reserved_tokens is None
                                 else list(vocabulary.reserved_tokens))

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """Row ``i`` is the concatenation of every embedding's vector for token ``i`` (their
        unknown vectors for index 0)."""
        blocks = []
        for embed in token_embeddings:
            block = np.empty((vocab_len, embed.vec_len), dtype=np.float32)
            block[0] = embed.idx_to_vec[0].asnumpy()
            if vocab_len > 1:
                block[1:] = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:])).asnumpy()
            blocks.append(block)
        self._idx_to_vec = nd.array(np.concatenate(blocks, axis=1))
        self._vec_len = self._idx_to_vec.shape[1]

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is None:
            return
        if not isinstance(vocabulary, Vocabulary):
            raise TextArgumentError(f"token embedding: vocabulary must be a "
                                    f"mx.contrib.text.vocab.Vocabulary, got "
                                    f"{type(vocabulary).__name__}")
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    # -- lookup and update ---------------------------------------------------------------
    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D) or the vectors of a list of tokens (2-D); unknown
        tokens get index 0's. With ``lower_case_backup`` a token not found is looked up
        again in lower case."""
        single = not isinstance(tokens, list)
        indices = []
        for token in [tokens] if single else tokens:
            idx = self._token_to_idx.get(token)
            if idx is None and lower_case_backup:
                idx = self._token_to_idx.get(token.lower())
            indices.append(0 if idx is None else idx)
        rows, dim = self._idx_to_vec.shape
        vecs = nd.Embedding(nd.array(indices), self._idx_to_vec, input_dim=rows,
                            output_dim=dim)
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Assign ``new_vectors`` (one row per token; 1-D allowed for one token) to the
        vectors of ``tokens``; the unknown token must be named as itself."""
        tokens = tokens if isinstance(tokens, list) else [tokens]
        if not isinstance(new_vectors, nd.NDArray) or new_vectors.ndim not in (1, 2):
            raise TextArgumentError(f"update_token_vectors: new_vectors must be a 1-D or 2-D "
                                    f"NDArray, got {new_vectors!r}")
        if new_vectors.ndim == 1 and len(tokens) == 1:
            new_vectors = new_vectors.reshape((1, -1))
        if new_vectors.shape != (len(tokens), self._vec_len):
            raise TextArgumentError(f"update_token_vectors: new_vectors must have shape "
                                    f"{(len(tokens), self._vec_len)} (tokens, vec_len), "
                                    f"got {new_vectors.shape}")
        for token in tokens:
            if token not in self._token_to_idx:
                raise TextArgumentError(
                    f"update_token_vectors: token {token!r} is unknown; to update the "
                    f"unknown token's vector name it as {self._idx_to_token[0]!r}")
        for row, token in enumerate(tokens):
            self._idx_to_vec[self._token_to_idx[token]] = new_vectors[row]
