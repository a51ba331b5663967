"""The document's sentences an extract summary may be made of (`run --summary extract`).

A candidate is text of the document: its characters in order, each run of whitespace
(a line break of a hard-wrapped paragraph included) shown as one space, inline Markdown
markup left out (emphasis marks, code ticks, a link's target, footnote marks). `spans` are
the source offsets of its pieces, so every character of a summary made of candidates is
found in the document; the only characters a candidate adds are the '.' that closes a
clause cut or a list item written without one.

Candidates:
- sentences of paragraphs and list items (decoding.sentences has the sentence-end rule),
  at least MIN_WORDS words (summary.readable), starting with a capital letter or a digit;
- a list item that reads as a sentence without a final '.' (at least MIN_WORDS words, at
  least MIN_LOWER_WORDS of them lowercase: "Matteo Collina @mcollina (voting member)" is no
  sentence);
- a long sentence (more than CLAUSE_CUT_TOKENS tokens) also cut at a clause boundary (';',
  a dash, ', while', ', but', ', which') where the part before it stands alone.

A document with fewer than FEW_SENTENCES sentences (minutes written as lines without a
stop: "Yves: add text that says ...") also offers a paragraph past the first that reads as a
sentence without its final '.', as a list item. A document in which nothing reads as a
sentence (a title alone, a list of words) offers each of its blocks as written instead (kind
"text"), so every document with words has a summary.

A notes-shaped document (is_notes: minutes, notes, a retro, a status report) also offers
short items (NOTES_MIN_WORDS) and sentences cut from NOTES_CLAUSE_CUT_TOKENS on, at more
boundaries, and a sentence joined to the few words (OUTCOME_WORDS) after it that tell its
outcome ("Vote to appoint an auditor called by chair. Unanimously Rejected."); its Agenda
section is content when most of the notes are under it. Each candidate knows its topic
(the list item it is nested under) and whether it carries a decision or an action (cue),
which the notes settings of summary.extract use; a topic title that nearly every unit
carries (SHARED_TITLE) is no unit's topic and is dropped.

Never candidates: a title line without a sentence end, header and label lines (`Date:`,
`Present:`, `Attendees:`, `Apologies:`, `Minutes of ...`), Markdown headings, front matter,
code blocks, tables (a row's cell of sentences aside: an item under the row's first
cell), block quotes, link-only lines, bylines (`By ...`, `Posted ...`),
signatures (`-- Barry, Brett`), boilerplate (copyright, licences, share/subscribe), whole
sections under a heading such as Present, Links, License or Disclaimer, questions, and a
sentence that ends in ':' (it introduces a list).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

from localsidecar.decoding.sentences import sentence_ends
from localsidecar.summary.blocks import Block, content_blocks, front_matter_end
from localsidecar.summary.chars import Chars
from localsidecar.summary.context import block_text, in_its_context
from localsidecar.summary.notes import (
    CUE,
    DECISION,
    NEXT_MEETING,
    NOTES_CLAUSE,
    NOTES_KEY,
    NOTES_LINE,
    NOTES_TITLE,
    OPTIONS_INTRO,
    OUTCOME,
)
from localsidecar.summary.people import (
    listed_speakers,
    meeting_people,
)
from localsidecar.summary.readable import reads_as_sentence
from localsidecar.summary.text import echoes, inside_quote

NOTES_CLAUSE_CUT_TOKENS = 24  # a notes summary takes several short units: long ones are also offered cut
# an Agenda section is content when the notes with it hold more than AGENDA_SHARE times
# the candidates of the notes without it (the notes were written under its items)
AGENDA_SHARE = 2
MAX_WORDS = 70  # a longer sentence is offered only cut at a clause boundary
OUTCOME_WORDS = 3  # a notes sentence this short telling an outcome joins the sentence before it
CLAUSE_CUT_TOKENS = 45  # sentences longer than this are also offered cut
MIN_CUT_WORDS = 6  # the part kept of a cut sentence
SHARED_TITLE = 0.9  # a topic title this share of a notes document's units carry titles none
SHARED_TITLE_UNITS = 8  # ... when they are at least this many
FEW_SENTENCES = 3  # a document with fewer sentences offers its paragraphs' lines without a stop too

# the title in YAML or TOML front matter
FRONT_TITLE = re.compile(r"^title\s*[:=]\s*['\"]?(.+?)['\"]?\s*$", re.IGNORECASE | re.MULTILINE)
# where a notes title may stand: the first line, or a line of TITLE_WORDS or fewer among the
# first TITLE_LINES ("Oct 27", then "SUBJECT: sc-dev Meeting Minutes")
TITLE_LINES = 3
TITLE_WORDS = 8
_DONE = re.compile(r"(done|completed?|closed|finished|resolved)[.!]?", re.IGNORECASE)  # an action's state
_REPORTS = re.compile(r"\b(said|says|told|tells|added|adds)\b")  # a sentence that says who speaks
_CLAUSE = re.compile(r";|\s[—–-]\s|,\s(?:while|but|which)\b")
_WORD = re.compile(r"\S+")
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
    section (0 before the first heading); listed: it comes from a list item; topic: the block
    of the item it is about (_topic); cue: it carries a decision, outcome or action."""

    text: str
    at: tuple[int, ...] = field(repr=False)
    index: int
    sentence: int
    kind: str
    block: int = 0
    section: int = 0
    listed: bool = False  # from a list item
    topic: int = 0  # the block of the item it is nested under (itself when not nested)
    cue: bool = False  # says what was decided or is to be done (CUE), or under such a heading
    lead: int = 0  # characters of text before the unit itself: its topic title and speaker (topics)
    decision: bool = (
        False  # a decision or a task given to someone (DECISION), or under a Decisions/Actions heading
    )
    unvoiced: bool = False  # speaks in the first person and names no speaker (topics.speaks_unnamed)
    option: bool = False  # an item of a list of options (notes.OPTIONS_INTRO): no decision, and it leans back
    quoted: bool = False  # opens inside a quotation a sentence before it opened: its speaker is said there
    echoes: bool = False  # opens on a definite noun the sentence before says ('The box': text.echoes)

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


# an item in lower case opening so goes on from the line before it ("and the Swiss page ...")
_CONTINUES = re.compile(r"(and|or|but|so|also|like|then|with|e\.g\.?|i\.e\.?|eg|ie|etc)\b")


def _outcome_of_the_last(s: str) -> bool:
    """A sentence of a few words telling the outcome of the one before ("Unanimously
    Rejected.", "This was agreed.", "Carried."): too short to stand alone, a unit with it."""
    return len(s.split()) <= OUTCOME_WORDS and bool(OUTCOME.search(s))


def _with_stop(chars: Chars) -> Chars:
    """A cut clause or an item without a final stop gets an added '.'."""
    if re.search(r"[.!?…][\"'”’)\]]*$", chars.s):
        return chars
    return Chars(chars.s.rstrip(",;:—–- ") + ".", chars.at[: len(chars.s.rstrip(",;:—–- "))] + [-1])


def _cuts(sentence: Chars, notes: bool = False) -> Iterator[Chars]:
    """The sentence cut at each clause boundary where the head stands alone."""
    for m in (NOTES_CLAUSE if notes else _CLAUSE).finditer(sentence.s):
        head = sentence.piece(0, m.start())
        words = head.s.split()
        if len(words) < MIN_CUT_WORDS or words[-1].lower().strip(",") in _OPEN_END:
            continue
        if reads_as_sentence(head.s, item=True, notes=notes):
            yield _with_stop(head)


def is_notes(text: str) -> bool:
    """Whether `text` is shaped like meeting notes, minutes, a retro or a status report:
    an attendance, agenda or actions line or heading (Present:, ## Attendees, Minutes:,
    Action items), a title that says so (minutes, notes, retro, stand-up, a meeting with
    a date), or list items with decisions and actions (CUE) in two or more sections. A
    news article, a review or a recipe is none of these."""
    start = front_matter_end(text)
    front, body = text[:start], text[start:]
    if NOTES_LINE.search(body) or NOTES_KEY.search(front):
        return True
    if any(NOTES_TITLE.search(v) for v in FRONT_TITLE.findall(front)):
        return True
    lines = [line.strip("#* \t") for line in body.splitlines() if line.strip()][:TITLE_LINES]
    if any(NOTES_TITLE.search(t) for k, t in enumerate(lines) if k == 0 or len(t.split()) <= TITLE_WORDS):
        return True
    blocks = [b for b in content_blocks(text) if b.kind == "item"]
    cued = [b for b in blocks if (c := block_text(b)) is not None and CUE.search(c.s)]
    return len({b.section for b in blocks}) >= 2 and len(cued) >= 2


def document_candidates(
    text: str,
    count_tokens: Callable[[str], int] | None = None,
    *,
    cuts: bool = True,
    notes: bool | None = None,
) -> list[Candidate]:
    """Every candidate of `text`, in document order, each text once (candidates_and_blocks)."""
    return candidates_and_blocks(text, count_tokens, cuts=cuts, notes=notes)[0]


def candidates_and_blocks(
    text: str,
    count_tokens: Callable[[str], int] | None = None,
    *,
    cuts: bool = True,
    notes: bool | None = None,
) -> tuple[list[Candidate], list[Block]]:
    """Every candidate of `text`, in document order, each text once, and the blocks
    their `block` ordinals index.
    count_tokens: a sentence's length in the target's tokens (default: 4
    tokens per 3 words) for the clause-cut rule. notes: the document is
    notes-shaped (None: is_notes decides): short items are candidates, a
    sentence is also offered cut from NOTES_CLAUSE_CUT_TOKENS on, and an
    Agenda section is content when most of the notes are under it (AGENDA_SHARE)."""
    count = count_tokens or (lambda s: (4 * len(s.split()) + 2) // 3)
    notes = is_notes(text) if notes is None else notes
    cut_from = NOTES_CLAUSE_CUT_TOKENS if notes else CLAUSE_CUT_TOKENS
    out: list[Candidate] = []
    seen: set[str] = set()
    people = meeting_people(text) if notes else frozenset()
    speakers = listed_speakers(text) if notes else frozenset()

    options: set[int] = set()  # ordinals of the items of a list of options

    def add(
        chars: Chars,
        kind: str,
        sentence: int,
        block: Block,
        titled: bool = False,
        quoted: bool = False,
        echoing: bool = False,
    ) -> None:
        """titled: only shown after its topic title or speaker (an item in lower case);
        quoted: it opens inside a quotation (Candidate.quoted); echoing: Candidate.echoes."""
        option = block.topic.ordinal in options
        cue = not option and (
            block.cue_section or (bool(CUE.search(chars.s)) and not NEXT_MEETING.search(chars.s))
        )
        decision = not option and (block.cue_section or bool(DECISION.search(chars.s)))
        lead, unvoiced = 0, False
        if notes:
            chars, lead, unvoiced = in_its_context(chars, block, people, speakers)
            decision = decision and not unvoiced  # "I've decided to ..." is not the meeting's decision
        if titled and not lead:
            return
        if chars.s not in seen:
            seen.add(chars.s)
            where = (block.ordinal, block.section, block.kind == "item", block.topic.ordinal, cue, lead)
            out.append(
                Candidate(
                    chars.s,
                    tuple(chars.at),
                    len(out),
                    sentence,
                    kind,
                    *where,
                    decision,
                    unvoiced,
                    option,
                    quoted,
                    echoing,
                )
            )

    def gather(blocks: list[Block], bare: bool = False) -> int:
        """Fill `out` with the candidates of `blocks`; the sentences counted. bare: a
        paragraph's last words need no stop either, as an item's (past the first block)."""
        out.clear()
        seen.clear()
        options.clear()
        ordinal = 0
        before = ""  # the text of the sentence before the one read (text.echoes)
        weighed: int | None = None  # the section of the paragraph before the list, if it introduces options
        for block in blocks:
            chars = block_text(block)
            if chars is None or not chars.s:
                continue
            if block.kind != "item":
                last = re.split(r"(?<=[.!?])\s+", chars.s)[-1]
                weighed = block.section if OPTIONS_INTRO.search(last) else None  # in its last sentence
            elif weighed == block.section and block.topic is block:
                options.add(block.ordinal)  # an item of the list right under it, in its section
            ends = sentence_ends(chars.s, final=True)
            open_end = block.kind == "item" or (bare and block.kind == "para" and block.ordinal > 0)
            if open_end and (not ends or ends[-1] < len(chars.s)):
                ends.append(len(chars.s))  # an item's last words need no stop
            # "AI: Hugo to repeat the tests.\nDone": the last sentence is finished business, and says so
            done = (
                notes and bool(ends) and not open_end and bool(_DONE.fullmatch(chars.s[ends[-1] :].strip()))
            )
            start = 0
            said: tuple[int, int] | None = None  # the block's last sentence kept: (its start, its ordinal)
            quote_at, in_quote = 0, False  # inside_quote's answer so far, read up to quote_at
            for end in ends:
                piece = chars.piece(start, end)
                begin, start = start, end
                ordinal += 1
                if not piece.s:
                    continue
                echoing, before = not notes and echoes(piece.s, before), piece.s
                is_item_tail = open_end and end == len(chars.s)
                # an item of notes in lower case ("- every visitor needs a host") reads as one
                # after its topic title ("The host system: every visitor ..."; add() keeps it only so)
                lowered = notes and block.kind == "item" and piece.s[:1].islower()
                if lowered and _CONTINUES.match(piece.s):
                    continue  # "and the Swiss page ...", "e.g. when we ...": the rest of a line before
                as_read = piece.s[:1].upper() + piece.s[1:] if lowered else piece.s
                if not reads_as_sentence(as_read, item=is_item_tail, notes=notes):
                    if notes and said is not None and _outcome_of_the_last(piece.s):
                        whole = _with_stop(chars.piece(said[0], end))
                        if len(whole.s.split()) <= MAX_WORDS:
                            add(whole, "sentence", said[1], block)  # it and its outcome, one unit
                    continue
                said = (begin, ordinal)
                if done and end == ends[-1]:
                    piece = chars.piece(begin, len(chars.s))
                # inside a quotation, unless it says who speaks ("All companies said ...": a quote's
                # close the text lost; '..." he told the Telegraph': references.needs_antecedent's)
                in_quote, quote_at = inside_quote(chars.s, begin, quote_at, in_quote), begin
                quoted = in_quote and not _REPORTS.search(piece.s)
                if len(piece.s.split()) <= MAX_WORDS:
                    shown = _with_stop(piece)
                    add(
                        shown,
                        "item" if shown.s != piece.s else "sentence",
                        ordinal,
                        block,
                        lowered,
                        quoted,
                        echoing,
                    )
                if cuts and count(piece.s) > cut_from:
                    for cut in _cuts(piece, notes):
                        add(cut, "clause", ordinal, block, quoted=quoted, echoing=echoing)
        return ordinal

    blocks = content_blocks(text)
    ordinal = gather(blocks)
    if notes:  # the notes may be written under the Agenda's items
        plain = len(out)
        with_agenda = content_blocks(text, keep_agenda=True)
        if len(with_agenda) > len(blocks):
            n = gather(with_agenda)
            if len(out) > AGENDA_SHARE * plain:
                blocks, ordinal = with_agenda, n  # most of what the notes say is under it
            else:
                ordinal = gather(blocks)
    if len(out) < FEW_SENTENCES:  # minutes written as lines without stops ('Yves: add text that says ...')
        had = len(out)
        n = gather(blocks, bare=True)
        if len(out) > had:
            ordinal = n
        else:
            ordinal = gather(blocks)
    if not out:  # nothing reads as a sentence (a title alone, a list of words): each block as written
        for block in blocks:
            chars = block_text(block)
            if chars is not None and re.search(r"\w", chars.s):
                ordinal += 1
                add(chars, "text", ordinal, block)
    return (_without_shared_title(out) if notes else out), blocks


def _without_shared_title(cands: list[Candidate]) -> list[Candidate]:
    """`cands` without the topic title that nearly all of them carry (SHARED_TITLE of them,
    SHARED_TITLE_UNITS at least: Ember's minutes, every line under '#### Flags'): it tells
    no unit's topic, and units that share a title repeat one another (extract.Options.repeats),
    so it would leave the summary one unit."""
    leads = Counter(c.text[: c.lead] for c in cands if c.lead)
    if not leads:
        return cands
    title, n = leads.most_common(1)[0]
    if n < max(SHARED_TITLE_UNITS, SHARED_TITLE * len(cands)):
        return cands
    out: list[Candidate] = []
    seen: set[str] = set()
    for c in cands:
        if c.lead and c.text[: c.lead] == title:
            c = replace(c, text=c.text[c.lead :], at=c.at[c.lead :], lead=0)
        if c.text not in seen:
            seen.add(c.text)
            out.append(replace(c, index=len(out)))
    return out


def summary_spans(chosen: list[Candidate], lengths: list[int] | None = None) -> list[list[int]]:
    """The source spans of a summary made of `chosen`, in its order; `lengths`: the
    characters shown of each (a candidate cut at --max-tokens shows fewer)."""
    shown = lengths or [len(c.text) for c in chosen]
    return [[a, b] for c, n in zip(chosen, shown) for a, b in c.spans_upto(n)]
