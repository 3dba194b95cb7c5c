"""``Vocabulary``: tokens to indices, as MXNet 1.9's ``mx.contrib.text.vocab``: the unknown
token is index 0, the reserved tokens follow, then the counted tokens by falling frequency
(ties in token order)."""

from __future__ import annotations

import collections

from ..._runtime.base import MXNetError

__all__ = ["Vocabulary", "TextArgumentError"]


class TextArgumentError(MXNetError, ValueError, AssertionError):
    """A bad argument to ``mx.contrib.text``. MXNet 1.9 checks these with ``assert``, so
    this is an AssertionError (what MXNet code catches) as well as a ValueError."""


class Vocabulary:
    """Indices of ``unknown_token``, ``reserved_tokens`` and the keys of ``counter`` seen at
    least ``min_freq`` times (at most ``most_freq_count`` of them)."""

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if min_freq < 1:
            raise TextArgumentError(f"Vocabulary: min_freq: expected a positive count, "
                                    f"got {min_freq}")
        if reserved_tokens is not None and (unknown_token in reserved_tokens
                                            or len(set(reserved_tokens)) != len(reserved_tokens)):
            raise TextArgumentError(f"Vocabulary: reserved_tokens: expected distinct tokens "
                                    f"without the unknown token {unknown_token!r}, got "
                                    f"{reserved_tokens!r}")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + (self._reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is None:
            return
        if not isinstance(counter, collections.Counter):
            raise TypeError(f"Vocabulary: counter: expected a collections.Counter, got "
                            f"{type(counter).__name__}")
        special = set(self._idx_to_token)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        ranked = sorted(sorted(counter.items(), key=lambda kv: kv[0]), key=lambda kv: -kv[1])
        for token, freq in ranked:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        return self._token_to_idx

    @property
    def idx_to_token(self):
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (0 for unknown
        ones)."""
        if isinstance(tokens, list):
            return [self._token_to_idx.get(t, 0) for t in tokens]
        return self._token_to_idx.get(tokens, 0)

    def to_tokens(self, indices):
        """The token of an index, or the tokens of a list of indices."""
        single = not isinstance(indices, list)
        out = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or not 0 <= idx < len(self._idx_to_token):
                raise ValueError(f"Vocabulary.to_tokens: index {idx!r}: expected an int in "
                                 f"[0, {len(self._idx_to_token)})")
            out.append(self._idx_to_token[idx])
        return out[0] if single else out
