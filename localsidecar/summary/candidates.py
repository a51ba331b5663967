"""The document's sentences an extract summary may be made of (`run --summary extract`).

A candidate is text of the document: its characters in order, each run of whitespace
(a line break of a hard-wrapped paragraph included) shown as one space, inline Markdown
markup left out (emphasis marks, code ticks, a link's target, footnote marks). `spans` are
the source offsets of its pieces, so every character of a summary made of candidates is
found in the document; the only characters a candidate adds are the '.' that closes a
clause cut or a list item written without one.

Candidates:
- sentences of paragraphs and list items (decoding.sentences has the sentence-end rule),
  at least MIN_WORDS words, starting with a capital letter or a digit;
- a list item that reads as a sentence without a final '.' (at least MIN_WORDS words, at
  least MIN_LOWER_WORDS of them lowercase: "Matteo Collina @mcollina (voting member)" is no
  sentence);
- a long sentence (more than CLAUSE_CUT_TOKENS tokens) also cut at a clause boundary (';',
  a dash, ', while', ', but', ', which') where the part before it stands alone.

A document in which nothing reads as a sentence (a title alone, a list of words) offers each
of its blocks as written instead (kind "text"), so every document with words has a summary.

Never candidates: a title line without a sentence end, header and label lines (`Date:`,
`Present:`, `Attendees:`, `Apologies:`, `Minutes of ...`), Markdown headings, front matter,
code blocks, tables, block quotes, link-only lines, bylines (`By ...`, `Posted ...`),
signatures (`-- Barry, Brett`), boilerplate (copyright, licences, share/subscribe), whole
sections under a heading such as Present, Links, License or Disclaimer, questions, and a
sentence that ends in ':' (it introduces a list).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from localsidecar.decoding.prompts import HEADER_LABELS
from localsidecar.decoding.sentences import sentence_ends

MIN_WORDS = 5
MIN_LOWER_WORDS = 3  # lowercase words a candidate needs: a list of names is no sentence
MAX_WORDS = 70  # a longer sentence is offered only cut at a clause boundary
CLAUSE_CUT_TOKENS = 45  # sentences longer than this are also offered cut
MIN_CUT_WORDS = 6  # the part kept of a cut sentence

# labels whose lines are a header, never content, besides the notes-header labels of prompts.py
LABELS = HEADER_LABELS | {
    "created by",
    "last modified",
    "last updated",
    "updated",
    "posted",
    "published",
    "author",
    "authors",
    "by",
    "status",
    "tags",
    "links",
    "recording",
    "github issue",
    "reviewers",
    "review date",
    "cc",
    "to",
    "from",
    "re",
}
# sections whose whole text is a list of people, links or legal text
SKIPPED_SECTIONS = re.compile(
    r"^(present|attendees|attendance|in attendance|apologies|absent|regrets|links|"
    r"external references|references|see also|licen[cs]e|copyright|disclaimer|footnotes|"
    r"(table of )?contents|acknowledge?ments|agenda|upcoming meetings|next meetings?)\W*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_ITEM = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)])\s+")
_DROPPED_LINE = re.compile(
    r"^\s*(>|\||\[\^[^\]]+\]:|\[[^\]]+\]:\s|<!--|</?[a-zA-Z][^>]*>\s*$)"  # quote, table, note/ref definition, HTML
)
_LABEL = re.compile(r"^\s*\**([A-Za-z][A-Za-z' -]{0,30}?)\**\s*:\s*(\S.*)?$")
_BYLINE = re.compile(r"^(by|posted|updated|published|written by|last updated|photo|image)\b", re.IGNORECASE)
_SIGNATURE = re.compile(r"^(--|—|–)\s")
_ATTRIBUTION = re.compile(r"^\([\w.@-]{1,30}\)\s+")  # "(eholk) We got plenty of nominations!"
_BOILERPLATE = re.compile(
    r"©|\bcopyright\b|all rights reserved|\bsubscribe\b|\bshare (this|on)\b|follow us|sign up\b|"
    r"newsletter|\bcookies?\b|click here|read more|\blicen[cs]ed under\b|\breleased under\b|"
    r"terms of (use|service)|privacy policy",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://|www\.|<[a-z]+:", re.IGNORECASE)
_MINUTES_OF = re.compile(r"^minutes of\b", re.IGNORECASE)
# inline markup: (pattern, the group kept or None to drop the match)
_INLINE = (
    (re.compile(r"\[\^[^\]]+\]"), None),  # footnote mark
    (re.compile(r"\s?\[#?\d+\]\([^)]*\)"), None),  # a link to an issue or a note: [#1011](...)
    (re.compile(r"!?\[([^\]]+)\]\([^)]*\)"), 1),  # [text](target), images too
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), 1),  # [text][ref]
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), 2),  # strong
    (re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])"), 1),  # *emphasis*
    (re.compile(r"(?<![\w_])_(?=\S)([^_]+?)(?<=\S)_(?![\w_])"), 1),  # _emphasis_
    (re.compile(r"`+([^`]+)`+"), 1),  # code
)
_CLAUSE = re.compile(r";|\s[—–-]\s|,\s(?:while|but|which)\b")
_WORD = re.compile(r"\S+")
_LOWER_WORD = re.compile(r"(?<![@#\w])[a-z][a-z'-]*\b")  # not a handle (@mcollina)
_OPEN_END = frozenset(
    "a an the and or but of to in on at for with by from as that which who whose while than "
    "into onto over under about after before its their his her our your my this these those".split()
)


@dataclass(frozen=True)
class Candidate:
    """One sentence the summary may take. text: as shown (see the module docstring); at:
    the source offset of each character of text (-1: added); index: its place in the
    document's candidate list; sentence: the ordinal of its whole sentence among all the
    document's sentences (a clause cut shares it; counted where no candidate was kept
    too, so sentence - 1 is the one right before it); kind: "sentence", "item",
    "clause" or "text" (the fallback); block: the ordinal of its paragraph or list item; section: of its heading's
    section (0 before the first heading); listed: it comes from a list item."""

    text: str
    at: tuple[int, ...] = field(repr=False)
    index: int
    sentence: int
    kind: str
    block: int = 0
    section: int = 0
    listed: bool = False  # from a list item

    @cached_property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """(start, end) source offsets of the pieces of text, in order."""
        return self.spans_upto(len(self.text))

    def spans_upto(self, n: int) -> tuple[tuple[int, int], ...]:
        """The spans of text[:n] (a candidate cut at --max-tokens)."""
        out: list[list[int]] = []
        for a in self.at[:n]:
            if a < 0:
                continue
            if out and out[-1][1] == a:
                out[-1][1] = a + 1
            else:
                out.append([a, a + 1])
        return tuple((a, b) for a, b in out)


class _Chars:
    """A string whose characters remember their source offsets (-1: added)."""

    def __init__(self, s: str, at: list[int]):
        self.s, self.at = s, at

    def sub(self, pattern: re.Pattern, keep: int | None) -> _Chars:
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
        return _Chars("".join(out_s), out_at)

    def squeeze(self) -> _Chars:
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
        return _Chars("".join(out_s), out_at)

    def piece(self, a: int, b: int) -> _Chars:
        while a < b and self.s[a].isspace():
            a += 1
        while b > a and self.s[b - 1].isspace():
            b -= 1
        return _Chars(self.s[a:b], self.at[a:b])


@dataclass
class _Block:
    kind: str  # "para" or "item"
    parts: list[tuple[str, int]]  # (line content, its source offset)
    indent: int = 0
    section: int = 0  # headings seen before it

    def chars(self) -> _Chars:
        s, at = [], []
        for k, (text, off) in enumerate(self.parts):
            if k:
                s.append("\n")
                at.append(-1)
            s.append(text)
            at.extend(range(off, off + len(text)))
        return _Chars("".join(s), at).squeeze()


def _lines(text: str) -> Iterator[tuple[int, str]]:
    off = 0
    for line in text.splitlines(keepends=True):
        yield off, line.rstrip("\r\n")
        off += len(line)


def _front_matter_end(text: str) -> int:
    """Offset just past a leading `---` ... `---` block (0: none)."""
    m = re.match(r"---[ \t]*\r?\n", text)
    if not m:
        return 0
    end = re.compile(r"^(---|\.\.\.)[ \t]*$", re.MULTILINE).search(text, m.end())
    return end.end() if end else 0


def _is_label_line(line: str) -> bool:
    m = _LABEL.match(line)
    return bool(m) and m.group(1).strip().lower() in LABELS


def _blocks(text: str) -> Iterator[_Block]:
    """Paragraphs and list items of the content (everything the module
    docstring excludes as a whole line or section is left out here)."""
    start = _front_matter_end(text)
    block: _Block | None = None
    in_fence = skipping = False
    section = 0
    first_line = True
    lines = list(_lines(text))
    for n, (off, line) in enumerate(lines):
        if off < start:
            continue
        stripped = line.strip()
        if in_fence:
            in_fence = not _FENCE.match(line)
            continue
        if _FENCE.match(line):
            in_fence = True
        elif _SETEXT.match(line) and block is not None and block.kind == "para" and len(block.parts) == 1:
            skipping = bool(SKIPPED_SECTIONS.match(block.parts[0][0].strip()))  # the block was a heading
            section += 1
            block = None
            continue
        if in_fence or not stripped or _HEADING.match(line) or _RULE.match(line):
            if block is not None:
                yield block
                block = None
            if _HEADING.match(line):
                skipping = bool(SKIPPED_SECTIONS.match(line.strip().lstrip("#").strip()))
                section += 1
            first_line = first_line and not stripped
            continue
        if skipping or _DROPPED_LINE.match(line) or _is_label_line(line):
            if block is not None:
                yield block
                block = None
            first_line = False
            continue
        item = _ITEM.match(line)
        content_at = item.end() if item else len(line) - len(line.lstrip())
        part = (line[content_at:].rstrip(), off + content_at)
        if item:
            if block is not None:
                yield block
            block = _Block("item", [part], indent=len(item.group(1)), section=section)
        elif block is None:
            block = _Block("para", [part], section=section)
        else:
            block.parts.append(part)
        following = lines[n + 1][1].lstrip() if n + 1 < len(lines) else ""
        if (
            first_line
            and not item
            and not re.search(r"[.!?:;,]$", stripped)
            and len(stripped.split()) <= 16
            and not following[:1].islower()
        ):
            yield block  # a title line stands alone (it has no sentence end: no candidate)
            block = None
        first_line = False
    if block is not None:
        yield block


def _clean(block: _Block) -> _Chars | None:
    """The block's text without inline markup; None for a block that is no content."""
    chars = block.chars()
    head = chars.s
    if _SIGNATURE.match(head) or (_BYLINE.match(head) and len(head.split()) <= 15):
        return None
    m = _ATTRIBUTION.match(head)
    if m:
        chars = chars.piece(m.end(), len(head))
    for pattern, keep in _INLINE:
        chars = chars.sub(pattern, keep)
    return chars.squeeze()


def _balanced(s: str) -> bool:
    straight = s.count('"') % 2 == 0
    curly = s.count("“") == s.count("”")
    return straight and curly and s.count("(") == s.count(")") and s.count("[") == s.count("]")


def reads_as_sentence(s: str, *, item: bool = False) -> bool:
    """Whether `s` (a whole sentence, or a list item without its final '.')
    may be a summary sentence by itself."""
    words = s.split()
    if len(words) < MIN_WORDS or len(_LOWER_WORD.findall(s)) < MIN_LOWER_WORDS:
        return False
    first = s[:1]
    if not (first.isupper() or first.isdigit() or (first in "\"“‘'(" and s[1:2].isupper())):
        return False
    if s.rstrip("\"'”’)]").endswith(("?", ":")):
        return False
    if not item and not re.search(r"[.!…]+[\"'”’)\]]*$", s):
        return False
    return not (_URL.search(s) or _BOILERPLATE.search(s) or _MINUTES_OF.match(s)) and _balanced(s)


def _with_stop(chars: _Chars) -> _Chars:
    """A cut clause or an item without a final stop gets an added '.'."""
    if re.search(r"[.!?…][\"'”’)\]]*$", chars.s):
        return chars
    return _Chars(chars.s.rstrip(",;:—–- ") + ".", chars.at[: len(chars.s.rstrip(",;:—–- "))] + [-1])


def _cuts(sentence: _Chars) -> Iterator[_Chars]:
    """The sentence cut at each clause boundary where the head stands alone."""
    for m in _CLAUSE.finditer(sentence.s):
        head = sentence.piece(0, m.start())
        words = head.s.split()
        if len(words) < MIN_CUT_WORDS or words[-1].lower().strip(",") in _OPEN_END:
            continue
        if reads_as_sentence(head.s, item=True):
            yield _with_stop(head)


def document_candidates(
    text: str, count_tokens: Callable[[str], int] | None = None, *, cuts: bool = True
) -> list[Candidate]:
    """Every candidate of `text`, in document order, each text once.
    count_tokens: a sentence's length in the target's tokens (default: 4
    tokens per 3 words) for the clause-cut rule."""
    count = count_tokens or (lambda s: (4 * len(s.split()) + 2) // 3)
    out: list[Candidate] = []
    seen: set[str] = set()
    ordinal = 0

    def add(chars: _Chars, kind: str, sentence: int, where: tuple[int, int, bool]) -> None:
        if chars.s not in seen:
            seen.add(chars.s)
            out.append(Candidate(chars.s, tuple(chars.at), len(out), sentence, kind, *where))

    for n_block, block in enumerate(_blocks(text)):
        where = (n_block, block.section, block.kind == "item")
        chars = _clean(block)
        if chars is None or not chars.s:
            continue
        ends = sentence_ends(chars.s, final=True)
        if block.kind == "item" and (not ends or ends[-1] < len(chars.s)):
            ends.append(len(chars.s))  # an item's last words need no stop
        start = 0
        for end in ends:
            piece = chars.piece(start, end)
            start = end
            ordinal += 1
            if not piece.s:
                continue
            is_item_tail = block.kind == "item" and end == len(chars.s)
            if not reads_as_sentence(piece.s, item=is_item_tail):
                continue
            if len(piece.s.split()) <= MAX_WORDS:
                shown = _with_stop(piece)
                add(shown, "item" if shown.s != piece.s else "sentence", ordinal, where)
            if cuts and count(piece.s) > CLAUSE_CUT_TOKENS:
                for cut in _cuts(piece):
                    add(cut, "clause", ordinal, where)
    if not out:  # nothing reads as a sentence (a title alone, a list of words): each block as written
        for n_block, block in enumerate(_blocks(text)):
            chars = _clean(block)
            if chars is not None and re.search(r"\w", chars.s):
                ordinal += 1
                add(chars, "text", ordinal, (n_block, block.section, block.kind == "item"))
    return out


def summary_spans(chosen: list[Candidate], lengths: list[int] | None = None) -> list[list[int]]:
    """The source spans of a summary made of `chosen`, in its order; `lengths`: the
    characters shown of each (a candidate cut at --max-tokens shows fewer)."""
    shown = lengths or [len(c.text) for c in chosen]
    return [[a, b] for c, n in zip(chosen, shown) for a, b in c.spans_upto(n)]
