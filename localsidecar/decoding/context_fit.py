"""The one check that a document fits the context before anything is decoded
for it: every command that decodes a document calls it (through
Engine.fit_context). With a fixed --ctx a document that does not fit ends
the command; with --ctx auto the context grows to what the document needs,
and only a document past the models' training context is refused
(DocumentTooLong: the command skips it and goes on). Why the size changes
no output: docs/DESIGN.md, Contexts sized per document."""

from __future__ import annotations

from dataclasses import dataclass

from localsidecar.decoding.prompts import PromptTokens
from localsidecar.errors import LocalsidecarError

AUTO = "auto"  # --ctx auto
CTX_STEP = 256  # --ctx auto sizes contexts in whole steps: llama.cpp pads its cache views to 256 cells


class ContextTooSmall(LocalsidecarError):
    """A document needs more cells than the context has (a fixed --ctx)."""


class DocumentTooLong(ContextTooSmall):
    """A document needs more cells than the models were trained on (--ctx auto)."""


@dataclass(frozen=True)
class ContextNeed:
    """The cells one document takes in a context: the compound prompt (the
    most a cache holds before the summary), `reserve` cells after it (the
    summary and what decoding adds around it: SpecConfig.cells_after_prompt)
    and `hashtag_tokens` for the hashtag phase."""

    doc_id: str
    prompt_tokens: int
    summary_tokens: int
    reserve: int
    hashtag_tokens: int = 0

    @classmethod
    def of(
        cls, doc_id: str, p: PromptTokens, *, summary_tokens: int, reserve: int, hashtag_tokens: int = 0
    ) -> ContextNeed:
        return cls(doc_id, len(p.compound), summary_tokens, reserve, hashtag_tokens)

    @property
    def cells(self) -> int:
        return self.prompt_tokens + self.reserve + self.hashtag_tokens

    def _what(self) -> str:
        hashtags = f" + {self.hashtag_tokens} for hashtags" if self.hashtag_tokens else ""
        return (
            f"document {self.doc_id!r}: prompt of {self.prompt_tokens} tokens + {self.summary_tokens} "
            f"summary tokens{hashtags} needs a context of {self.cells}"
        )

    def check(self, n_ctx: int) -> None:
        """One line naming the numbers unless the document fits `n_ctx` cells (a fixed --ctx)."""
        if self.cells > n_ctx:
            raise ContextTooSmall(
                f"{self._what()}, but --ctx is {n_ctx}; raise --ctx or shorten the document with --max-chars"
            )

    def check_trained(self, limit: int, models: str) -> None:
        """--ctx auto: one line unless the document fits the `limit` cells
        `models` (their names) were trained on."""
        if self.cells > limit:
            raise DocumentTooLong(
                f"{self._what()}, more than the {limit} tokens {models} was trained on; skipped "
                "(--max-chars shortens it)"
            )


def auto_size(cells: int, limit: int) -> int:
    """--ctx auto's context for a document of `cells`: whole CTX_STEPs, at most `limit`."""
    return min(limit, -(-cells // CTX_STEP) * CTX_STEP)
