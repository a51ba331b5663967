"""Defaults every command and the library share, each defined once here.

Imports nothing: any layer may use them.
"""

from __future__ import annotations

# Summary lengths (`--max-tokens`, `--soft-tokens`; SpecConfig.max_tokens),
# measured with docs/measurements/scripts/measure_summaries.py (docs/run.md, Summaries): a ~500-word
# article gets 2-4 sentences.
DEFAULT_MAX_TOKENS = 128
DEFAULT_SOFT_TOKENS = 48
# `--max-tokens auto` of an extract summary: its own settings set its length in sentences
# and words (summary.extract.settings_for); this only bounds it (docs/summaries.md, Length)
EXTRACT_MAX_TOKENS = 320


def max_tokens_for(summary: str) -> int:
    """The most summary tokens of a `summary` mode ("free" or "extract") when none is given."""
    return EXTRACT_MAX_TOKENS if summary == "extract" else DEFAULT_MAX_TOKENS


# The longest draft `--draft-max auto` (and GGUFDraft's n_draft="auto")
# considers: `--draft-max-cap`.
DEFAULT_DRAFT_MAX_CAP = 8


def cells_after_prompt(max_tokens: int, longest_draft: int = 0) -> int:
    """KV cells a context takes after bare[:-1]: the last prompt token, the
    summary and the longest draft beyond it (0 when nothing is drafted, as in
    the lab's teacher-forced passes); layouts.prefill_draft's `reserve`."""
    return 1 + max_tokens + longest_draft
