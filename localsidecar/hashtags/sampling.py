"""How the hashtag phase's model chooses: one value, validated once, read by
both pickers (the token trie, hashtags.picking, and the GBNF grammar,
hashtags.generation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from localsidecar.backend import Model

PenaltyScope = Literal["content", "all"]
PENALTY_SCOPES: tuple[PenaltyScope, ...] = ("content", "all")
HASHTAG_MAX_TOKENS = 64


def is_content_token(model: Model, token: int) -> bool:
    """A token that spells part of a word (not only JSON punctuation or '#')."""
    return any(ch.isalnum() for ch in model.piece(token).decode("utf-8", "ignore"))


@dataclass(frozen=True, kw_only=True)
class TagSampling:
    """temperature 0: greedy (the best choice, the lowest id on a tie); above
    0: a draw seeded by `seed`. penalty: the repetition penalty on what the
    phase already wrote (1.0: none); penalty_scope "content" applies it to
    word tokens only, "all" is llama.cpp's penalty sampler over every token
    (the grammar path; the trie never repeats an item). max_tokens: the
    phase's token budget."""

    temperature: float = 0.0
    seed: int = 0
    penalty: float = 1.3
    penalty_scope: PenaltyScope = "content"
    max_tokens: int = HASHTAG_MAX_TOKENS

    def __post_init__(self) -> None:
        if self.penalty_scope not in PENALTY_SCOPES:
            raise ValueError(
                f"unknown penalty scope {self.penalty_scope!r}; choose from {', '.join(PENALTY_SCOPES)}"
            )
        if not self.penalty >= 1.0:
            raise ValueError(f"the hashtag penalty must be at least 1.0, got {self.penalty}")
        if not self.temperature >= 0.0:
            raise ValueError(f"the hashtag temperature must be at least 0, got {self.temperature}")
        if self.max_tokens < 1:
            raise ValueError(f"the hashtag phase needs a token budget of at least 1, got {self.max_tokens}")

    def counts(self, model: Model) -> Callable[[int], bool]:
        """Which output tokens the content-scope penalty counts."""
        if self.penalty_scope == "content":
            return lambda t: is_content_token(model, t)
        return lambda t: True


__all__ = ["HASHTAG_MAX_TOKENS", "PENALTY_SCOPES", "PenaltyScope", "TagSampling", "is_content_token"]
