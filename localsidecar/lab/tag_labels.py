"""Hashtags scored against an editor's labels (benchmarks/tagset/labels.json).

A label file is a JSON object: document id -> {"good": [entry, ...], "bad":
[tag, ...]} (other keys, and ids starting with '_', are ignored). An entry is
one tag or alternatives separated by '|' ('#Ferry|#FerryService'); a tag
matches an entry when its word stems equal one alternative's (so '#Ferries'
matches 'Ferry'). Per document and tag list:

- good: share of the tags that match a good entry;
- bad: share of the tags that are bad: listed as bad, or (unless good) not
  grounded in the document (a word the document does not have: the summary's
  invention), or a date or a count ('#25August', '#30Years', '#2024');
- recall: good entries matched / min(entries, `expected`) (each entry once).

A document without tags scores good 0, bad 0, recall 0: no tags is a failure,
not a gap in the mean.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from localsidecar.hashtags import metrics as M
from localsidecar.hashtags.words import MONTHS, WEEKDAYS

EXPECTED_TAGS = 3
_CALENDAR = WEEKDAYS | MONTHS


@dataclass(frozen=True)
class Label:
    good: tuple[tuple[str, ...], ...]  # entries, each a tuple of alternatives
    bad: tuple[str, ...]


class LabelError(ValueError):
    pass


def parse_labels(data: Any, source: str = "labels") -> dict[str, Label]:
    """Labels from the decoded JSON of a label file (LabelError when malformed)."""
    if not isinstance(data, dict):
        raise LabelError(f"{source}: expected a JSON object of document id -> labels")
    out: dict[str, Label] = {}
    for doc_id, entry in data.items():
        if doc_id.startswith("_"):
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("good"), list) or not entry["good"]:
            raise LabelError(f"{source}: {doc_id!r} needs a non-empty list 'good'")
        bad = entry.get("bad", [])
        if not isinstance(bad, list) or not all(isinstance(x, str) for x in [*entry["good"], *bad]):
            raise LabelError(f"{source}: {doc_id!r}: 'good' and 'bad' must be lists of strings")
        good = tuple(tuple(a for a in g.split("|") if M.tag_key(a)) for g in entry["good"])
        if not all(good):
            raise LabelError(f"{source}: {doc_id!r} has an empty good entry")
        out[doc_id] = Label(good, tuple(bad))
    return out


def load_labels(path: str) -> dict[str, Label]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise LabelError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LabelError(f"{path} is not valid JSON: {exc}") from None
    return parse_labels(data, path)


def is_date_or_count(tag: str) -> bool:
    """A tag that is a number, or starts with one, or names a day or month."""
    ws = M.tag_words(tag)
    return bool(ws) and (ws[0].isdigit() or any(w in _CALENDAR for w in ws))


def _stems(tag: str, vocab: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(set(M.tag_stems(tag, vocab))))


def label_scores(
    tags: Sequence[str], label: Label, document: str, expected: int = EXPECTED_TAGS
) -> dict[str, float]:
    """good / bad / recall of one tag list (see the module docstring)."""
    if not tags:
        return {"good": 0.0, "bad": 0.0, "recall": 0.0}
    vocab = M.vocabulary(document)
    entries = [{_stems(a, vocab) for a in alts} for alts in label.good]
    bad = {_stems(b, vocab) for b in label.bad}
    matched: set[int] = set()
    n_good = n_bad = 0
    for t in tags:
        s = _stems(t, vocab)
        hit = next((i for i, e in enumerate(entries) if s in e), None)
        if hit is not None:
            n_good += 1
            matched.add(hit)
        elif s in bad or is_date_or_count(t) or not all(x in vocab for x in s):
            n_bad += 1
    return {
        "good": n_good / len(tags),
        "bad": n_bad / len(tags),
        "recall": len(matched) / min(len(entries), expected),
    }


LABEL_KEYS = ("good", "bad", "recall")


def add_label_scores(
    records: Iterable[dict[str, Any]], labels: dict[str, Label], texts: dict[str, str]
) -> None:
    """Give every row of every labelled record (id in `labels` and `texts`)
    its label scores, in place; rows of unlabelled documents get None."""
    for rec in records:
        label, text = labels.get(rec["id"]), texts.get(rec["id"])
        for row in rec["rows"]:
            scores = label_scores(row["hashtags"], label, text) if label and text is not None else {}
            for k in LABEL_KEYS:
                row[k] = scores.get(k)
