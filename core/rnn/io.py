"""MXNet's ``mx.rnn.io``: ``encode_sentences``. Its ``BucketSentenceIter`` is a
``mx.io.DataIter``, which mxnext does not have yet."""

from __future__ import annotations

from .._runtime.base import MXNetError

__all__ = ["encode_sentences"]


class NotThereYet(MXNetError, AttributeError):
    """An MXNet 1.x name whose mxnext counterpart needs a part mxnext does not have yet."""


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n",
                     start_label=0, unknown_token=None):
    """``(encoded sentences, vocab)``: each token of each sentence (a list of str) replaced
    by its index in ``vocab`` (str -> int).

    With ``vocab`` None a vocabulary is built, ``invalid_key`` mapping to ``invalid_label``
    and new tokens numbered from ``start_label``, skipping ``invalid_label`` and indices in
    use. With a ``vocab`` given, a token not in it is an error, unless ``unknown_token`` is
    set: such tokens then map to ``unknown_token``, which is added if missing. ``vocab`` is
    updated in place.
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    used = set(vocab.values())
    next_index = start_label
    encoded = []
    for sentence in sentences:
        codes = []
        for word in sentence:
            if word not in vocab:
                if unknown_token:
                    word = unknown_token
                elif not new_vocab:
                    raise MXNetError(f"encode_sentences: token {word!r} is not in the "
                                     f"vocabulary and no unknown_token is set")
            if word not in vocab:
                while next_index in used or next_index == invalid_label:
                    next_index += 1
                vocab[word] = next_index
                used.add(next_index)
            codes.append(vocab[word])
        encoded.append(codes)
    return encoded, vocab


def __getattr__(name):
    if name == "BucketSentenceIter":
        raise NotThereYet("mx.rnn.BucketSentenceIter is MXNet 1.x's bucketing sentence "
                          "iterator, a mx.io.DataIter; mxnext has no mx.io yet, so it is not "
                          "there yet (encode_sentences is)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
