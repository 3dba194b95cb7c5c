"""Token counting (MXNet 1.9's ``mx.contrib.text.utils``)."""

from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """A ``Counter`` of the tokens of ``source_str``, split at the ``token_delim`` and
    ``seq_delim`` regular expressions (lower-cased when ``to_lower``); with
    ``counter_to_update``, that counter updated and returned."""
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    counter = collections.Counter() if counter_to_update is None else counter_to_update
    counter.update(tokens)
    return counter
