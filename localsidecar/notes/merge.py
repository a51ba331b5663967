"""The tags and summary the tool writes into a note, and when a note is up to date.

A model's tag ('#MarketStreet') is written without '#', in the chosen
spelling (camel: MarketStreet, kebab: market-street, lower: marketstreet),
after `prefix` (ai/ gives the nested tag ai/MarketStreet). A tag the user
already has (compared without '#' and case, as Obsidian does) is not added
again. With a vocabulary the tags are spelled as the vocabulary spells them.

A note is up to date when its record holds the hash of its body and of the
settings: a rerun then reads it and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from localsidecar.hashtags.metrics import tag_words
from localsidecar.notes.frontmatter import Front, Owned

SPELLINGS = ("camel", "kebab", "lower")
HASH_CHARS = 16  # of a sha256, in the record: enough to tell two bodies or settings apart
_PREFIX = re.compile(r"^[^\W_][\w/-]*/$|^$")


def spell(tag: str, spelling: str) -> str:
    """'#MarketStreet' in `spelling` (SPELLINGS), without '#'."""
    body = tag.lstrip("#")
    if spelling == "camel":
        return body
    parts = tag_words(body)
    return "-".join(parts) if spelling == "kebab" else "".join(parts)


def check_prefix(prefix: str) -> str | None:
    """Why `prefix` cannot start a tag (None when it can): letters, digits,
    '_', '-' and '/', ending in '/'."""
    if _PREFIX.match(prefix):
        return None
    return f"--prefix {prefix!r}: a tag prefix is letters, digits, '_', '-' and '/', ending in '/' (e.g. ai/)"


def tag_identity(tag: str) -> str:
    """Two tags are one when this is equal (Obsidian: case-insensitive, '#' optional)."""
    return tag.strip().lstrip("#").casefold()


def new_tags(
    model_tags: Iterable[str], user_tags: Sequence[str], *, spelling: str, prefix: str
) -> tuple[str, ...]:
    """The tool's tags to follow `user_tags`: spelled, prefixed, none the user has, no repeat."""
    seen = {tag_identity(t) for t in user_tags}
    out = []
    for t in model_tags:
        tag = prefix + spell(t, spelling)
        if tag.strip("/") and tag_identity(tag) not in seen:
            seen.add(tag_identity(tag))
            out.append(tag)
    return tuple(out)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def settings_hash(settings: Mapping) -> str:
    """A hash of everything that changes what the tool writes (models, options, vocabulary)."""
    return content_hash(json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str))


@dataclass(frozen=True)
class NotePlan:
    """Settings of one run that decide what goes into a note."""

    summary_key: str | None  # None: --no-summary
    spelling: str = "camel"
    prefix: str = ""
    settings: str = ""  # settings_hash

    def up_to_date(self, front: Front, body_hash: str) -> bool:
        r = front.record or {}
        return r.get("body") == body_hash and r.get("settings") == self.settings

    def owned(self, front: Front, body_hash: str, model_tags: Sequence[str], summary: str | None) -> Owned:
        """What to write: the user's summary key is never taken (no summary then)."""
        tags = new_tags(model_tags, front.user_tags, spelling=self.spelling, prefix=self.prefix)
        key = self.summary_key
        if key and front.user_owns(key):
            key = None
        summary = summary.strip() if summary else None
        record = {"tags": list(tags), "body": body_hash, "settings": self.settings}
        if key and summary:
            record["summary"] = key
        return Owned(tags, key if summary else None, summary, record)
