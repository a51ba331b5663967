"""The blocks of a document an extract summary's candidates come from (summary.candidates):
its paragraphs and list items, each knowing the headings it stands under, the items it is
nested under and its section; header lines, labels, code, quotes, tables (but for a
row's cells of sentences, items under the row's first cell) and whole sections of
people, links or legal text are left out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from localsidecar.decoding.prompts import HEADER_LABELS
from localsidecar.summary.chars import Chars
from localsidecar.summary.notes import AGENDA, CUE_SECTIONS, DECISION

# a news dateline opening a story's first paragraph: a city in capitals with its region or country
# or the agency or both, or the agency alone, then a dash ('SAN FRANCISCO (AP) — ', 'COLUMBIA,
# S.C. (AP) — ', 'DUBAI, United Arab Emirates — ', '(Reuters) — '): where it was filed, no content
_AGENCY = r"\((?:AP|Reuters|AFP|UPI|PTI|IANS|CNN|Bloomberg)\)"
DATELINE = re.compile(
    r"(?:(?:[A-Z][A-Z.'’-]+ ){0,3}[A-Z][A-Z.'’-]{2,}"
    r"(?:, [A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,3}(?: " + _AGENCY + r")?| " + _AGENCY + r")"
    r"|" + _AGENCY + r")\s*(?:[—–]|--?(?= ))\s*"
)

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
    "when",
    "where",
}
# sections whose whole text is a list of people, links or legal text ("Other attendees",
# "Voting member attendance", "Members present" too)
SKIPPED_SECTIONS = re.compile(
    r"^((?:[\w'’-]+ ){0,3}(present|attendees|attendance|apologies|absent|regrets|participants)|links|"
    # the notes' house rules and their template's questions, no part of the meeting
    r"(participation )?guidelines|code of conduct|important information|"
    r"feedback on (this|the) (session|meeting|call)|"
    r"external references|references|see also|licen[cs]e|copyright|disclaimer|footnotes|"
    r"(table of )?contents|acknowledge?ments|agenda|upcoming meetings|next meetings?|"
    # the meeting's procedure: "Review of the agenda", "Approval of previous minutes", "Appoint
    # minute-taker", "Welcome, opening and meeting logistics", "Adjournment"
    r"(review|approval|adoption|acceptance) of (the )?(previous |last )?(meeting'?s? )?(agenda|minutes)|"
    r"(appoint(ment of)?|select(ion of)?) (a )?(minute|note)[- ]?taker|"
    r"(welcome|opening)(,? (and )?(welcome|opening|(meeting )?logistics))*|adjournment|closing)\W*$",
    re.IGNORECASE,
)
# a section number before a title: "10. ", an escaped "10\. ", "4.2 "
_SECTION_NUMBER = re.compile(r"^\d{1,3}(?:\\?\.\d{1,3})*\\?\.?\s+")
_LEADING_SYMBOLS = re.compile(r"^[^\w\s#\\]+\s*")  # an emoji or a mark before a title: "🤸 Attendees"
_FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(?:#{1,6}(\s|$)|#{2,6}(?=[A-Za-z]))")  # "##Potential partners" too
RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
ITEM = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)])\s+")
# plain-text minutes number their lines without a dot: " 2 Apologies: ...", " 6.1 Mark Littlewood ..."
_PLAIN_NUMBER = re.compile(r"^(\s*)(\d{1,2}(?:\.\d{1,2})*)\s+(?=[A-Z])")
SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_CLOSING_HASHES = re.compile(r"(?:^|\s+)#+\s*$")  # a Markdown heading's optional closing marks
# a paragraph of one bold line, a blank line before its text: a title ("**Alice for Secretary.**")
_BOLD_LINE = re.compile(r"^(\*\*|__)([^*_\s](?:.*?[^*_\s])?)\1$")
BOLD_TITLE_WORDS = 10
# a paragraph that opens with a bold label over its own text: "**D. Sale Committee report:** The sale ..."
_BOLD_LEAD = re.compile(r"^(\*\*|__)[^*_\s][^*_]{0,80}?(?::\1|\1:)\s+\S")
_TABLE_ROW = re.compile(r"^\s{0,3}\|.*\|")
_TABLE_RULE = re.compile(r"^\s{0,3}\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CELL_BAR = re.compile(r"(?<!\\)\|")  # an escaped '\|' is a cell's text
TABLE_TEXT_WORDS = 8  # a table cell of this many words ending as a sentence is text, not a label
_DROPPED_LINE = re.compile(
    r"^\s*(>|\||\[\^[^\]]+\]:|\[[^\]]+\]:\s|<!--|</?[a-zA-Z][^>]*>\s*$)"  # quote, table, note/ref definition, HTML
)
_LABEL = re.compile(r"^\s*\**([A-Za-z][A-Za-z' -]{0,30}?)\**\s*:\s*(\S.*)?$")


@dataclass
class Block:
    kind: str  # "para" or "item"
    parts: list[tuple[str, int]]  # (line content, its source offset)
    indent: int = 0
    section: int = 0  # headings seen before it
    ordinal: int = -1  # its place among the blocks yielded
    topic: Block | None = None  # the item it is nested under (see _topic), else itself
    cue_section: bool = False  # under a heading such as Decisions or Action items
    headings: tuple[Block, ...] = ()  # the headings it stands under, outermost first
    parents: tuple[Block, ...] = ()  # the items it is nested under, outermost first
    first: bool = False  # a heading: the document's first line of content (its title)

    def chars(self) -> Chars:
        s, at = [], []
        for k, (text, off) in enumerate(self.parts):
            if k:
                s.append("\n")
                at.append(-1)
            s.append(text)
            at.extend(range(off, off + len(text)))
        return Chars("".join(s), at).squeeze()


def _cells(line: str, off: int) -> list[tuple[str, int]]:
    """A table row's cells, stripped, each with its source offset (an escaped '\\|' is text)."""
    out, start = [], line.index("|") + 1
    for m in _CELL_BAR.finditer(line, start):
        cell = line[start : m.start()]
        out.append((cell.strip(), off + start + len(cell) - len(cell.lstrip())))
        start = m.end()
    tail = line[start:]
    if tail.strip():  # a row need not end with '|'
        out.append((tail.strip(), off + start + len(tail) - len(tail.lstrip())))
    return out


def _row_blocks(line: str, off: int, section: int, cue: bool, headings: tuple[Block, ...]) -> list[Block]:
    """A table row whose cells after the first hold sentences ("| Voting | Diane seconded
    Adam's motion ... |"): each such cell an item under the row's first cell, its title."""
    cells = _cells(line, off)
    if len(cells) < 2:
        return []
    title = Block("item", [cells[0]], section=section, headings=headings)
    out = []
    for text, at in cells[1:]:
        if len(text.split()) >= TABLE_TEXT_WORDS and re.search(r"[.!?]$", text):
            b = Block("item", [(text, at)], 1, section, cue_section=cue, headings=headings, parents=(title,))
            b.topic = b
            out.append(b)
    return out


def _lines(text: str) -> Iterator[tuple[int, str]]:
    off = 0
    for line in text.splitlines(keepends=True):
        yield off, line.rstrip("\r\n")
        off += len(line)


_QUOTE_MARK = re.compile(r"^(\s{0,3}>[ \t]?)")


def _unquoted_sections(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """`lines` with the quote marks blanked (offsets kept) of every section under a Markdown
    heading whose whole text is one block quote ('### Reminder for next week' over '> We
    continue the discussion ...'): the notes' own text set off, not a quotation in a text."""
    out = list(lines)
    heads = [n for n, (_, line) in enumerate(lines) if HEADING.match(line)] + [len(lines)]
    for h, end in zip(heads, heads[1:]):
        body = [n for n in range(h + 1, end) if lines[n][1].strip()]
        if body and all(_QUOTE_MARK.match(lines[n][1]) for n in body):
            for n in body:
                off, line = lines[n]
                mark = _QUOTE_MARK.match(line)
                out[n] = (off, " " * mark.end() + line[mark.end() :])
    return out


def front_matter_end(text: str) -> int:
    """Offset just past a leading `---` ... `---` (YAML) or `+++` ... `+++` (TOML) block
    (0: none)."""
    m = re.match(r"(---|\+\+\+)[ \t]*\r?\n", text)
    if not m:
        return 0
    close = r"^(---|\.\.\.)[ \t]*$" if m.group(1) == "---" else r"^\+\+\+[ \t]*$"
    end = re.compile(close, re.MULTILINE).search(text, m.end())
    return end.end() if end else 0


def _is_label_line(line: str) -> bool:
    m = _LABEL.match(line)
    return bool(m) and m.group(1).strip().lower() in LABELS


def _bold_title(line: str) -> re.Match[str] | None:
    """A line that is one bold phrase of at most BOLD_TITLE_WORDS words and no task or
    decision ("**Action - LM to invite JS to the Council.**" is a task): a title when a
    blank line and text follow it (content_blocks)."""
    bold = _BOLD_LINE.match(line)
    if bold and len(bold.group(2).split()) <= BOLD_TITLE_WORDS and not DECISION.search(bold.group(2)):
        return bold
    return None


def _title_like(line: str, most_words: int = 8) -> bool:
    """A short line without a sentence end: a heading when content follows it."""
    words = line.split()
    return 0 < len(words) <= most_words and not re.search(r"[.!?:;,]$", line) and line[:1].isupper()


def _topic(block: Block, stack: list[Block]) -> Block:
    """The item a list item is about: its outermost ancestor, or the one below that
    when the outermost is a label of a few words ("Old business", "Announcements")."""
    if not stack:
        return block
    outer = stack[0]
    if len(" ".join(t for t, _ in outer.parts).split()) > 3:
        return outer
    return stack[1] if len(stack) > 1 else block


def _plain_numbered(lines: list[tuple[int, str]], n: int) -> re.Match[str] | None:
    """Line n as an item of a run of plain numbered lines: it and the line before or after
    it open with a number and no dot ("1 Attendance: ...", "2 Apologies: ...")."""
    m = _PLAIN_NUMBER.match(lines[n][1])
    if m is None:
        return None
    near = [lines[k][1] for k in (n - 1, n + 1) if 0 <= k < len(lines)]
    return m if any(_PLAIN_NUMBER.match(line) for line in near) else None


def content_blocks(text: str, keep_agenda: bool = False) -> list[Block]:
    """Paragraphs and list items of the content (everything the module
    docstring excludes as a whole line or section is left out here).
    keep_agenda: an Agenda section is content (notes written under it)."""
    start = front_matter_end(text)
    out: list[Block] = []
    block: Block | None = None
    in_fence = skipping = cue_section = False
    section = 0
    first_line = True
    underlined = -1  # the line that underlines the last setext heading read ahead
    stack: list[Block] = []  # the list items the next one may be nested under
    headings: list[tuple[int, Block]] = []  # (level, heading) of the open sections
    lines = _unquoted_sections(list(_lines(text)))

    def after_gap_of(n: int) -> bool:
        """Line n+1 is blank and text that is no heading follows it."""
        rest = next((line for _, line in lines[n + 2 :] if line.strip()), "")
        return bool(rest) and not HEADING.match(rest) and not _BOLD_LINE.match(rest.strip())

    def bold_title_at(n: int, text: str) -> re.Match[str] | None:
        """Line n, whose content is `text`, is a bold title over text: a blank line, then
        text that is no heading (_bold_title)."""
        blank_next = n + 1 >= len(lines) or not lines[n + 1][1].strip()
        return _bold_title(text) if blank_next and after_gap_of(n) else None

    def open_headings() -> tuple[Block, ...]:
        return tuple(h for _, h in headings)

    def emit(b: Block | None) -> None:
        if b is not None:
            b.ordinal = len(out)
            b.topic = b.topic or b
            out.append(b)

    def heading(title: str, at: int, level: int) -> None:
        nonlocal skipping, cue_section, section, block
        while headings and headings[-1][0] >= level:
            headings.pop()
        headings.append((level, Block("heading", [(title, at)], first=not out and not section)))
        title = _SECTION_NUMBER.sub("", _LEADING_SYMBOLS.sub("", title.strip().strip("*_").strip()))
        skipping = bool(SKIPPED_SECTIONS.match(title)) and not (keep_agenda and AGENDA.match(title))
        cue_section = bool(CUE_SECTIONS.match(title))
        section += 1
        block = None
        stack.clear()

    for n, (off, line) in enumerate(lines):
        if off < start:
            continue
        stripped = line.strip()
        following = lines[n + 1][1] if n + 1 < len(lines) else ""
        if in_fence:
            in_fence = not _FENCE.match(line)
            continue
        if _FENCE.match(line):
            in_fence = True
        elif SETEXT.match(line) and block is not None and block.kind == "para" and len(block.parts) == 1:
            heading(*block.parts[0], 1 if line.strip()[0] == "=" else 2)  # the block was a heading
            continue
        elif n == underlined:
            continue  # the underline of a heading below (a skipped section's text makes no block)
        elif (
            skipping
            and stripped
            and not (ITEM.match(line) or HEADING.match(line))
            and SETEXT.match(following)
        ):
            # "Report" over "------" in a skipped section, whose text makes no block for the rule above
            heading(stripped, off + len(line) - len(line.lstrip()), 1 if following.strip()[0] == "=" else 2)
            underlined = n + 1
            continue
        elif skipping and (bold := bold_title_at(n, stripped)) is not None:
            # "**Progress**" after "**Attendees**": a bold title ends the skipped section as below
            heading(bold.group(2), off + len(line) - len(line.lstrip()) + bold.start(2), 7)
            continue
        if in_fence or not stripped or HEADING.match(line) or RULE.match(line):
            emit(block)
            block = None
            if HEADING.match(line):
                marks = len(line.lstrip()) - len(line.lstrip().lstrip("#"))
                at = len(line) - len(line.lstrip().lstrip("#").lstrip())
                closing = _CLOSING_HASHES.search(line, at)  # "## Quick Recap ##": its marks are no text
                heading(line[at : closing.start() if closing else len(line)], off + at, marks)
            elif not stripped and not ITEM.match(following):
                stack.clear()  # a blank line ends a list unless an item follows
            first_line = first_line and not stripped
            continue
        header_row = _TABLE_RULE.match(following)  # a header row is no text: dropped below
        if not skipping and _TABLE_ROW.match(line) and not header_row:
            emit(block)
            block = None
            first_line = False
            for b in _row_blocks(line, off, section, cue_section, open_headings()):
                emit(b)
            continue
        if skipping or _DROPPED_LINE.match(line) or _is_label_line(line):
            emit(block)
            block = None
            first_line = False
            continue
        item = ITEM.match(line) or _plain_numbered(lines, n)
        content_at = item.end() if item else len(line) - len(line.lstrip())
        content = line[content_at:].rstrip()
        nxt = following.strip()
        after_gap = lines[n + 2][1] if not nxt and item is not None and n + 2 < len(lines) else ""
        if (
            not first_line
            and (item is None or item.group(2)[:1].isdigit())
            and _title_like(content)
            and (block is None or item is not None)
            # "10. Adjourn (7:32 PM)" right under "9. Second call ...": the last item of a list
            and not (item is not None and n > 0 and ITEM.match(lines[n - 1][1]))
            and (nxt or after_gap.strip())
            and (
                ITEM.match(following)
                if item is None
                else not ITEM.match(following or after_gap) and (nxt or after_gap.lstrip())[:1].isupper()
            )
        ):  # a numbered title may stand one blank line above its paragraph ("1. Release date")
            emit(block)  # "1. Water supply" over its paragraph, "Decisions" over its list: a heading
            heading(content, off + content_at, 7)  # below any Markdown heading
            continue
        bold = bold_title_at(n, content) if item is None and block is None else None
        if bold:
            # "**Cart for Treasurer.**" over its text: a title below any Markdown heading
            heading(bold.group(2), off + content_at + bold.start(2), 7)
            continue
        part = (content, off + content_at)
        if item:
            emit(block)
            indent = len(item.group(1))
            while stack and stack[-1].indent >= indent:
                stack.pop()
            block = Block("item", [part], indent, section, cue_section=cue_section, headings=open_headings())
            block.topic = _topic(block, stack)
            block.parents = tuple(stack)
            stack.append(block)
        elif block is None:
            if _BOLD_LEAD.match(content):
                while headings and headings[-1][0] == 7:
                    headings.pop()  # its own label ends the bold or numbered title above it
            block = Block("para", [part], section=section, cue_section=cue_section, headings=open_headings())
        else:
            block.parts.append(part)
        if (
            first_line
            and not item
            and not re.search(r"[.!?:;,]$", stripped)
            and len(stripped.split()) <= 16
            and not nxt[:1].islower()
            and not SETEXT.match(following)  # underlined: a heading (the setext rule above)
        ):
            emit(block)  # a title line stands alone (it has no sentence end: no candidate)
            block = None
        first_line = False
    emit(block)
    return out
