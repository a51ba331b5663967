"""The opening line of a notes summary: the topics the notes were written under.

Minutes, notes and reports under section headings ("## Kernel Improvements", "### 4.1 Future
of Runtime Keys") tell a reader what the meeting covered in those headings, and a summary of
a few units cannot: so an extract summary of such notes opens with "Topics: " and the
headings' titles, joined by "; " and closed by ".", in the document's order. Its titles are
the document's text (summary_spans gives their offsets); "Topics: ", each "; " and the "."
are the only characters added.

A title is the outermost heading over a candidate unit that names a topic (topics.heading_title:
no generic label, date, meeting or the document's own title), without its section number,
and not a question, a label ("Chairs: Adam, Deb"), nor the meeting's own procedure
("Appoint minute-taker", "Review action items", "Next meetings"). Of more than MAX_TOPICS, the
MAX_TOPICS whose sections hold the most words of candidate units; fewer than MIN_TOPICS give
no line (the units' own titles say it).
"""

from __future__ import annotations

import re

from localsidecar.summary.blocks import Block
from localsidecar.summary.candidates import Candidate
from localsidecar.summary.chars import Chars
from localsidecar.summary.context import block_text
from localsidecar.summary.topics import heading_title

LABEL = "Topics: "
MIN_TOPICS = 2
MAX_TOPICS = 6
# the meeting's own business, no topic of it
PROCEDURE = re.compile(
    r"\b(welcome|agendas?|minute[- ]?takers?|minutes|logistics|roll ?call|attendance|attendees|"
    r"adjourn\w*|any other business|aob|next (meeting|call|steps?)s?|introductions?|housekeeping|"
    r"opening|closing|close|announcements?|action items?|apologies|regrets|absent|not present|participants|"
    r"quorum|patent call|call to order|correspondence|unfinished|guidelines|code of conduct|"
    r"important information|feedback on)\b",
    re.IGNORECASE,
)
_SUBSECTION = re.compile(r"^\d{1,3}(\.\d{1,3})+\.?\s+")  # "4.2 ", "4.2.1 "


def _title(heading: Block) -> Chars | None:
    """The topic `heading` names, None when it names none."""
    chars = block_text(heading)
    title = heading_title(chars, heading.first) if chars is not None else None
    if title is None:
        return None
    number = _SUBSECTION.match(title.s)
    if number:
        title = title.piece(number.end(), len(title.s))
    if title.s.endswith(":"):
        title = title.piece(0, len(title.s) - 1)
    s = title.s
    if not s or s.endswith("?") or ":" in s or PROCEDURE.search(s):
        return None
    return title


def topics_line(cands: list[Candidate], blocks: list[Block]) -> Candidate | None:
    """The opening line of a notes summary whose candidates `cands` stand under the
    headings of `blocks` (candidates.candidates_and_blocks), None when fewer than
    MIN_TOPICS topics."""
    titles: dict[str, Chars] = {}
    words: dict[str, int] = {}
    of_heading: dict[int, Chars | None] = {}  # id(heading) -> its title: each heading read once
    for c in cands:
        block = blocks[c.block] if 0 <= c.block < len(blocks) else None
        for h in block.headings if block is not None else ():
            if id(h) not in of_heading:
                of_heading[id(h)] = _title(h)
            title = of_heading[id(h)]
            if title is not None:
                key = title.s.lower()
                titles.setdefault(key, title)
                words[key] = words.get(key, 0) + len(c.text.split())
                break
    if len(titles) < MIN_TOPICS:
        return None
    keep = set(sorted(titles, key=lambda k: -words[k])[:MAX_TOPICS])  # ties: the earlier
    shown = [t for k, t in titles.items() if k in keep]
    line = Chars(LABEL, [-1] * len(LABEL))
    for k, t in enumerate(shown):
        line = line.then(t, "" if k == 0 else "; ")
    line = line.then(Chars("", []), ".")
    return Candidate(line.s, tuple(line.at), -1, -1, "topics", block=-1, section=-1)
