"""Defaults every command and the library share, each defined once here.

Imports nothing: any layer may use them.
"""

from __future__ import annotations

# Summary lengths (`--max-tokens`, `--soft-tokens`; SpecConfig.max_tokens),
# measured with docs/measurements/scripts/measure_summaries.py (docs/run.md, Summaries): a ~500-word
# article gets 2-4 sentences.
DEFAULT_MAX_TOKENS = 128
DEFAULT_SOFT_TOKENS = 48

# The longest draft `--draft-max auto` (and GGUFDraft's n_draft="auto")
# considers: `--draft-max-cap`.
DEFAULT_DRAFT_MAX_CAP = 8


def cells_after_prompt(max_tokens: int, longest_draft: int = 0) -> int:
    """KV cells a context takes after bare[:-1]: the last prompt token, the
    summary and the longest draft beyond it (0 when nothing is drafted, as in
    the lab's teacher-forced passes); layouts.prefill_draft's `reserve`."""
    return 1 + max_tokens + longest_draft
