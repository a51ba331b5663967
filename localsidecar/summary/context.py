"""A block's text as a summary unit reads it (block_text: no markup, no byline, no code
line), and a unit of notes in its context (in_its_context: its topic title and speaker, so
that read alone it says what it is about and who says it)."""

from __future__ import annotations

import re

from localsidecar.summary.blocks import DATELINE, Block
from localsidecar.summary.chars import MD_ESCAPE, Chars
from localsidecar.summary.people import LOWER_SPEAKER, names_only_people
from localsidecar.summary.topics import (
    SPEAKER,
    heading_title,
    in_context,
    item_title,
    names_topic,
    speaker,
    speaks_unnamed,
)

_BYLINE = re.compile(
    r"^(by|posted|updated|published|written by|last updated|photo|image|edited by\b.*\bfor publi\w+)\b",
    re.IGNORECASE,
)
_SIGNATURE = re.compile(r"^(--|—|–)\s")
_ATTRIBUTION = re.compile(r"^\([\w.@-]{1,30}\)\s+")  # "(eholk) We got plenty of nominations!"
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")  # a task list's box: "[ ] [Lee] Write up a plan"
_CODE_ONLY = re.compile(r"^(`+)[^`]+\1$")  # an item or line that is all code (a stack trace's line)

# inline markup: (pattern, the group kept or None to drop the match)
_INLINE = (
    (re.compile(r"\[\^[^\]]+\]"), None),  # footnote mark
    # a link to an issue or a note: [#1011](...), [1011](...); a year's link is its year: [2024](...)
    (re.compile(r"\s?\[(?:#\d+|(?!(?:19|20)\d\d\])\d+)\]\([^)]*\)"), None),
    (re.compile(r"!?\[\]\([^)]*\)"), None),  # [](target): a link with no text
    (re.compile(r"!?\[([^\]]+)\]\([^)]*\)"), 1),  # [text](target), images too
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), 1),  # [text][ref]
    (re.compile(r"(?<!\\)(\*\*|__)(?=\S)(.+?)(?<=[^\s\\])\1"), 2),  # strong (an escaped mark is no markup)
    (re.compile(r"(?<![\w*\\])\*(?=\S)([^*]+?)(?<=[^\s\\])\*(?![\w*])"), 1),  # *emphasis*
    (re.compile(r"(?<![\w_\\/])_(?=\S)([^_]+?)(?<=[^\s\\])_(?![\w_/])"), 1),  # _emphasis_ (not a URL's '/_/')
    (re.compile(r"`([^`<]+?)\s*<[^<>`]+>`__?"), 1),  # a reStructuredText link: `text <target>`_
    (re.compile(r"`+([^`]+)`+"), 1),  # code
    (
        re.compile(r"<(?:br|/?(?:b|i|em|strong|span|sup|sub|u|mark|p|div))\b[^<>]*>"),
        None,
    ),  # inline HTML: "voted in.<br>"; the space around it stays ("atmosphere.</p> <p>In")
    (MD_ESCAPE, 1),  # last: an escaped mark is text, not markup
)


def _opening_aside(head: str, block: Block) -> re.Match[str] | None:
    """A paragraph's opening that is no part of its first sentence: a news dateline
    ('(Reuters) — The ...', blocks.DATELINE) or a speaker's handle ('(eholk) We got ...')."""
    dateline = DATELINE.match(head) if block.kind == "para" else None
    if dateline and head[dateline.end() : dateline.end() + 1].isupper():
        return dateline
    return _ATTRIBUTION.match(head)


def block_text(block: Block) -> Chars | None:
    """The block's text without inline markup; None for a block that is no content."""
    chars = block.chars()
    head = chars.s
    if _SIGNATURE.match(head) or (_BYLINE.match(head) and len(head.split()) <= 15) or _CODE_ONLY.match(head):
        return None
    m = _opening_aside(head, block) or (_CHECKBOX.match(head) if block.kind == "item" else None)
    if m:
        chars = chars.piece(m.end(), len(head))
    for pattern, keep in _INLINE:
        chars = chars.sub(pattern, keep)
    return chars.squeeze()


def topic_title(block: Block, unit: Chars, people: frozenset[str]) -> Chars | None:
    """The title of what `unit` of `block` is about (topics): the question its item asks
    before it, else the innermost item it is nested under that names a topic, else the
    innermost heading it stands under that does; an item or heading that is only the name
    of one of the meeting's `people` names none (people.names_only_people)."""
    if block.kind == "item" and (chars := block_text(block)) is not None:
        title = item_title(chars)
        if title is not None and title.s.endswith("?") and 0 <= title.at[-1] < unit.at[0]:
            return title
    for parent in reversed(block.parents):
        chars = block_text(parent)
        title = item_title(chars) if chars is not None else None
        if title is not None and not names_only_people(title.s, people):
            return title
    for h in reversed(block.headings):
        chars = block_text(h)
        title = heading_title(chars, h.first) if chars is not None else None
        if title is not None and not names_only_people(title.s, people):
            return title
    return None


def speaker_of(block: Block) -> Chars | None:
    """Who says `block`: its opening label ("Gael:", "[Lee]", "(CJ)"), task box aside."""
    chars = block.chars()
    box = _CHECKBOX.match(chars.s) if block.kind == "item" else None
    if box:
        chars = chars.piece(box.end(), len(chars.s))
    who = speaker(chars)
    for pattern, keep in _INLINE if who is not None else ():
        who = who.sub(pattern, keep)
    return who


def in_its_context(
    unit: Chars, block: Block, people: frozenset[str], speakers: frozenset[str]
) -> tuple[Chars, int, bool]:
    """A notes unit with its topic title, unless it names it, and with its speaker when it
    speaks in the first person without naming them, or when the speaker is one of the
    `speakers` the list of who attended names too and the unit is a later sentence of what
    they said ("Simonsapin: I wrote ... Once we make a decision, ...": alone, it reads as
    said by whoever the unit before it names) (topics.in_context); and whether it speaks in
    the first person with no speaker to name."""
    title = topic_title(block, unit, people)
    if title is not None and names_topic(unit.s, title.s):
        title = None
    unnamed = speaks_unnamed(unit.s)
    who = speaker_of(block)
    login = None
    if who is None:
        said = block.chars()
        login = LOWER_SPEAKER.match(said.s)
        if login:
            who = said.piece(0, login.end())  # "paul: ...": shown only when listed
    listed = who is not None and set(re.findall(r"[\w'’-]+", who.s.lower())) <= speakers
    opens = SPEAKER.match(unit.s) or LOWER_SPEAKER.match(unit.s)
    if not ((unnamed and not login) or (listed and not opens)):
        who = None
    return *in_context(unit, title, who), unnamed and who is None
