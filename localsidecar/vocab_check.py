"""Whether two models' token ids mean the same text: speculation compares ids.

`differing_tokens` compares the text of EVERY id below the common vocabulary
size (not a sample: one differing id in the middle would make the draft
propose a token the target reads as another). Cost: one llama.cpp call per id
and model, about 0.3 s for SmolLM2's 49,152 ids on a busy 2-core machine,
paid once per Engine (the pair is loaded once per command or worker).
"""

from __future__ import annotations

from typing import Protocol


class _Vocab(Protocol):
    n_vocab: int

    def token_text(self, token: int) -> bytes: ...


def differing_tokens(target: _Vocab, draft: _Vocab) -> list[int]:
    """Ids (ascending) whose token text differs between the two models."""
    n = min(target.n_vocab, draft.n_vocab)
    return [i for i in range(n) if target.token_text(i) != draft.token_text(i)]
