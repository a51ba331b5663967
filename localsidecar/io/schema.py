"""One record schema: the keys the records of every command share.

Invariant: a key in SHARED means the same thing, with a value of the same
type, wherever a command's records (`run`, `acceptance`, `sweep`, `quant`,
`hashtags-eval`: their --json output and --out lines, nested rows included)
carry it; a thing that SHARED names is never written under another key.
tests/test_schema.py checks the real records of every command against it.

A key renamed to follow SHARED is listed in RENAMED under its command, and
`upgrade` reads an older --out record with the new names, so a file written
before the rename still resumes. The old names are never written again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

NUMBER = (int, float)
OPTIONAL_NUMBER = (int, float, type(None))

# key -> (the types its value may have, what it means)
SHARED: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str,), "the document's id"),
    "summary": ((str,), "the summary's text"),
    "summary_tokens": ((int,), "summary tokens (of one document, or summed over the documents counted)"),
    "summary_ids": ((list,), "the summary's token ids"),
    "prompt_tokens": ((int,), "tokens of the target's prompt"),
    "suffix_tokens": ((int, type(None)), "length in tokens of the hidden hashtag suffix"),
    "hashtags": ((list,), "one document's hashtags, display form"),
    "hashtags_raw": ((str,), "the model's hashtag text (a JSON array), before parsing"),
    "hashtags_by_doc": ((dict,), "document id -> that document's hashtags"),
    "hashtag_tokens": ((int,), "tokens of the hashtag phase"),
    "hashtag_jaccard": (OPTIONAL_NUMBER, "Jaccard of the hashtags with a reference's (null: none)"),
    "n_docs": ((int,), "how many documents"),
    "docs": ((list,), "the per-document records"),
    "drafted": ((int,), "tokens the draft proposed"),
    "few_drafted": ((bool,), "fewer drafted tokens than a rate needs to mean much"),
    "acceptance_rate": (OPTIONAL_NUMBER, "accepted ÷ drafted tokens in the real loop"),
    "mean_tokens_per_call": (OPTIONAL_NUMBER, "summary tokens ÷ rounds (target calls of the loop)"),
    "draft_ms_per_token": (OPTIONAL_NUMBER, "drafting ms ÷ drafted tokens, catch-up batches apart"),
    "tokens_per_s": (OPTIONAL_NUMBER, "summary tokens per second"),
    "target_only_tokens_per_s": (OPTIONAL_NUMBER, "the same without a draft"),
    "speedup": (OPTIONAL_NUMBER, "tokens_per_s ÷ target_only_tokens_per_s"),
    "text_sha256": ((str,), "hash of the document's text"),
    "numbers": ((str,), "--numbers: document (a summary's numbers are its document's) or free"),
}


def _ms_per_token(tokens_per_s: Any) -> Any:
    return round(1000 / tokens_per_s, 3) if isinstance(tokens_per_s, NUMBER) and tokens_per_s > 0 else None


# command -> old key -> the new key, or (the new key, how its value converts)
RENAMED: dict[str, dict[str, str | tuple[str, Callable[[Any], Any]]]] = {
    "acceptance": {"n": "suffix_tokens"},
    "hashtags-eval": {"tags": "hashtags", "raw": "hashtags_raw", "jaccard": "hashtag_jaccard"},
    "quant": {
        "tokens_per_call": "mean_tokens_per_call",
        "scored_tokens": "summary_tokens",
        "hashtags": "hashtags_by_doc",
        "draft_tokens_per_s": ("draft_ms_per_token", _ms_per_token),
    },
}
NESTED = {"hashtags-eval": "rows"}  # the records' lists of rows, renamed the same way


def _renamed(record: Mapping[str, Any], renames: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        new = renames.get(key)
        if new is None:
            out.setdefault(key, value)
        elif isinstance(new, tuple):
            out[new[0]] = new[1](value)
        else:
            out[new] = value
    return out


def upgrade(command: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` as this version writes it: keys renamed since (RENAMED[command])
    take their new names; a record already new comes back equal."""
    renames = RENAMED.get(command, {})
    out = _renamed(record, renames)
    rows = NESTED.get(command)
    if rows and isinstance(out.get(rows), list):
        out[rows] = [_renamed(r, renames) if isinstance(r, Mapping) else r for r in out[rows]]
    return out


def retired(command: str) -> set[str]:
    """The old names a record of `command` never carries."""
    return set(RENAMED.get(command, {}))
