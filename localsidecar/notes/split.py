"""A note's text split into its byte order mark, front matter and body.

    [BOM] "---" NL  yaml  "---" NL            body     (YAML front matter)
    [BOM] "+++" NL  toml  "+++" NL            body     (TOML, Hugo)
    [BOM]                                     body     (no front matter)

Invariant: `parts.join() == text` for every text `split_note` accepts, so an
edit that changes only `front` changes no byte of the fences, the BOM or the
body. Line breaks are the note's own (\\n or \\r\\n; a lone \\r in the
front matter is refused, since YAML would count it as a line break and this
module would not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from localsidecar.errors import LocalsidecarError

BOM = "\ufeff"
YAML, TOML = "yaml", "toml"
_OPEN = {"---": YAML, "+++": TOML}
_CLOSE = {YAML: ("---",), TOML: ("+++",)}  # "..." ends YAML too, but Obsidian and Jekyll read only "---"
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


class FrontMatterError(LocalsidecarError):
    """Front matter this tool will not edit; the message names the line (1-based, in the file)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class NoteParts:
    bom: str  # "" or BOM
    kind: str | None  # YAML, TOML or None (no front matter)
    opening: str  # the opening fence line with its line break ("" without front matter)
    front: str  # the front matter's text, whole lines ("" when empty or absent)
    closing: str  # the closing fence line with its line break (may lack one at the end of the file)
    body: str
    newline: str  # the line break new lines use: the opening fence's, else the body's first, else "\n"

    def join(self) -> str:
        return self.bom + self.opening + self.front + self.closing + self.body

    def with_front(self, front: str) -> NoteParts:
        return replace(self, front=front)

    @property
    def first_front_line(self) -> int:
        """The file's line number (1-based) of the front matter's first line."""
        return 2 if self.kind else 1


def _newline_of(line: str) -> str | None:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else None


def split_note(text: str) -> NoteParts:
    """Split `text` (decoded, BOM kept); FrontMatterError for a fence that opens
    and never closes, a lone carriage return in the front matter, or JSON front
    matter (a note starting with '{', which Hugo reads as front matter)."""
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    lines = _LINE.findall(rest)
    first = lines[0] if lines else ""
    kind = _OPEN.get(first.rstrip("\r\n").rstrip(" \t"))
    if kind is None:
        if first.startswith("{"):
            raise FrontMatterError(1, "JSON front matter is not supported (only YAML '---' and TOML '+++')")
        newline = _newline_of(first) or "\n"
        return NoteParts(bom, None, "", "", "", rest, newline)
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n").rstrip(" \t") in _CLOSE[kind]:
            front = "".join(lines[1:i])
            if re.search(r"\r(?!\n)", front):
                raise FrontMatterError(2, "a carriage return without a line feed in the front matter")
            body = "".join(lines[i + 1 :])
            return NoteParts(bom, kind, first, front, line, body, _newline_of(first) or "\n")
    fence = first.rstrip("\r\n").rstrip(" \t")
    raise FrontMatterError(1, f"front matter opened with {fence!r} is never closed")
