"""Text whose characters remember where in the document they come from (summary.candidates,
summary.topics): every transformation keeps each character's source offset, and a
character the summary adds (a '.' closing an item, the ': ' joining a topic title to its
unit) has offset -1."""

from __future__ import annotations

import re

# a Markdown backslash escape (r'Agenda Item \#1', r'\*not emphasis\*'): the character it escapes
MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


class Chars:
    """A string whose characters remember their source offsets (-1: added)."""

    def __init__(self, s: str, at: list[int]):
        self.s, self.at = s, at

    def sub(self, pattern: re.Pattern, keep: int | None) -> Chars:
        """Each match of `pattern` replaced by its group `keep` (None: dropped)."""
        s, at, out_s, out_at, last = self.s, self.at, [], [], 0
        for m in pattern.finditer(s):
            out_s.append(s[last : m.start()])
            out_at.extend(at[last : m.start()])
            if keep is not None:
                a, b = m.span(keep)
                out_s.append(s[a:b])
                out_at.extend(at[a:b])
            last = m.end()
        out_s.append(s[last:])
        out_at.extend(at[last:])
        return Chars("".join(out_s), out_at)

    def squeeze(self) -> Chars:
        """Whitespace runs as one space (the first one's offset), ends stripped."""
        out_s, out_at, space = [], [], False
        for c, a in zip(self.s, self.at):
            if c.isspace():
                if not space and out_s:
                    out_s.append(" ")
                    out_at.append(a if c == " " else -1)
                space = True
                continue
            out_s.append(c)
            out_at.append(a)
            space = False
        while out_s and out_s[-1] == " ":
            out_s.pop()
            out_at.pop()
        return Chars("".join(out_s), out_at)

    def piece(self, a: int, b: int) -> Chars:
        """s[a:b] without the whitespace at its ends."""
        while a < b and self.s[a].isspace():
            a += 1
        while b > a and self.s[b - 1].isspace():
            b -= 1
        return Chars(self.s[a:b], self.at[a:b])

    def then(self, other: Chars, joint: str) -> Chars:
        """This text, `joint` (added characters), then `other`."""
        return Chars(self.s + joint + other.s, self.at + [-1] * len(joint) + other.at)
