"""Which summary a run makes (`run --summary`), and what `auto` picks for a pair.

extract: the document's own sentences, chosen by the target, in the document's order (summary.extract);
free: the model writes the summary (today's abstractive one), each sentence checked
against the document afterwards (summary.support). auto: extract for a target below
AUTO_FREE_FROM parameters (read from its GGUF header), free from there on: the
embedded 135M pair's free summaries had 2.75 factual errors per summary on 20 held-out
news articles and none was error-free (docs/summaries.md); a target of a billion
parameters and more writes summaries a reader can use, and its free summary is still
checked.
"""

from __future__ import annotations

import os

AUTO, EXTRACT, FREE = "auto", "extract", "free"
SUMMARY_MODES = (AUTO, EXTRACT, FREE)
AUTO_FREE_FROM = 1_000_000_000  # parameters


def resolve(requested: str, target: str | os.PathLike) -> str:
    """The mode a run uses: `requested` unless it is auto, else by the target's size."""
    if requested not in SUMMARY_MODES:
        raise ValueError(f"summary must be one of {', '.join(SUMMARY_MODES)}, not {requested!r}")
    if requested != AUTO:
        return requested
    from localsidecar.backend.gguf import gguf_info

    return EXTRACT if gguf_info(target).n_params < AUTO_FREE_FROM else FREE
