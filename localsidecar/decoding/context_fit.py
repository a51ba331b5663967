"""The one check that a document fits the context (--ctx) before anything is
decoded for it: every command that decodes a document calls it."""

from __future__ import annotations

from localsidecar.decoding.prompts import PromptTokens
from localsidecar.errors import LocalsidecarError


def check_context_fits(
    doc_id: str, p: PromptTokens, n_ctx: int, *, summary_tokens: int, reserve: int, hashtag_tokens: int = 0
) -> None:
    """One line naming the numbers unless the compound prompt (the most a
    cache holds before the summary), `reserve` cells after it (the summary and
    what decoding adds around it: SpecConfig.cells_after_prompt) and
    `hashtag_tokens` for the hashtag phase fit in `n_ctx` cells."""
    need = len(p.compound) + reserve + hashtag_tokens
    if need <= n_ctx:
        return
    hashtags = f" + {hashtag_tokens} for hashtags" if hashtag_tokens else ""
    raise LocalsidecarError(
        f"document {doc_id!r}: prompt of {len(p.compound)} tokens + {summary_tokens} summary tokens{hashtags} "
        f"needs a context of {need}, but --ctx is {n_ctx}; raise --ctx or shorten the document with --max-chars"
    )
