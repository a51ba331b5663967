"""Whether two models' token ids mean the same text: speculation compares ids.

`differing_tokens` compares the text of EVERY id below the common vocabulary
size (not a sample: one differing id in the middle would make the draft
propose a token the target reads as another). Cost: one llama.cpp call per id
and model, about 0.3 s for SmolLM2's 49,152 ids on a busy 2-core machine,
paid once per pair and process: the result is remembered by the files'
identity (path, size, modification time), so the Engines a test suite or a
long-lived worker opens on the same pair compare once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

_KNOWN: dict[tuple, list[int]] = {}


class _Vocab(Protocol):
    n_vocab: int
    path: Path

    def token_text(self, token: int) -> bytes: ...


def differing_tokens(target: _Vocab, draft: _Vocab) -> list[int]:
    """Ids (ascending) whose token text differs between the two models."""
    key = (_identity(target), _identity(draft))
    if None in key:
        return _compare(target, draft)
    if key not in _KNOWN:
        _KNOWN[key] = _compare(target, draft)
    return list(_KNOWN[key])


def _compare(target: _Vocab, draft: _Vocab) -> list[int]:
    n = min(target.n_vocab, draft.n_vocab)
    return [i for i in range(n) if target.token_text(i) != draft.token_text(i)]


def _identity(model: _Vocab) -> tuple | None:
    try:
        st = os.stat(model.path)
    except (OSError, AttributeError, TypeError):
        return None
    return (os.path.realpath(model.path), st.st_size, st.st_mtime_ns, st.st_ino, model.n_vocab)
