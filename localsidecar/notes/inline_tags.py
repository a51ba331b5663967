"""The tags a vault already uses: its notes' front matter tags (the user's,
not the tool's) and the inline `#tags` of their bodies, as Obsidian reads
them (a '#' not after a word character, '/' or '#', then letters, digits,
'_', '-', '/', at least one of them not a digit), outside code."""

from __future__ import annotations

import re
from collections.abc import Iterable

from localsidecar.hashtags.vocabulary import distinct_tags
from localsidecar.notes.vault import Note

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_INLINE = re.compile(r"(?<![\w/#&])#([\w/-]*[^\W\d][\w/-]*)")


def inline_tags(body: str) -> list[str]:
    text = _CODE.sub(" ", _FENCE.sub(" ", body))
    return [m.rstrip("/") for m in _INLINE.findall(text)]


def existing_tags(notes: Iterable[Note]) -> tuple[str, ...]:
    """Every tag the notes' users wrote, without '#', first spelling of each kept."""
    found: list[str] = []
    for note in notes:
        found += [t.strip().lstrip("#") for t in note.front.user_tags]
        found += inline_tags(note.body)
    return distinct_tags(found)
