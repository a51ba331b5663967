"""The words of a text as the support check (support.py, relations.py) reads them: words,
clauses, lemmas, the words that carry meaning."""

from __future__ import annotations

import re
from functools import lru_cache

from localsidecar.decoding.sentences import sentence_ends
from localsidecar.hashtags.words import CALENDAR, FUNCTION_WORDS, NUMBER_WORDS, parts_of_speech

WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W\d_]+)*", re.UNICODE)  # "G7", "A380" are words
CLAUSE_BREAK = re.compile(r"[;:()\[\]—–]|,\s|\s-\s|\band\b|\bbut\b|\bwhile\b|\bwhich\b|\bwho\b")
_SPELLING = re.compile(r"is(e|es|ed|ing|ation|ations)$")  # British -ise, American -ize: one lemma
# words that say who says something, not what: a summary attributes in its own words
ATTRIBUTION = frozenset(
    "according report reports reported claim claims claimed state states stated announce announces announced "
    "add adds added explain explains explained note notes noted".split()
)


# what may stand before a sentence's first word: quotes, brackets, Markdown marks ("**Summary**", "- Testing")
OPENING_MARKS = " \"'“‘([*_#>`+-"


def bare(word: str) -> str:
    """The word without a possessive ending ("UK's" -> "UK")."""
    return re.sub(r"['’]s?$", "", word)


def first_word(text: str) -> re.Match | None:
    """The text's first word, when nothing but OPENING_MARKS stands before it."""
    m = WORD.search(text)
    return None if m is None or text[: m.start()].strip(OPENING_MARKS) else m


def clause_around(text: str, start: int, end: int) -> tuple[int, int]:
    """(lo, hi) of the clause of text[start:end]: from the last CLAUSE_BREAK before it to
    the first after it."""
    lo = max((m.end() for m in CLAUSE_BREAK.finditer(text, 0, start)), default=0)
    hi_m = CLAUSE_BREAK.search(text, end)
    return lo, hi_m.start() if hi_m else len(text)


@lru_cache(maxsize=65536)
def all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of the lowercase word, by part of speech ("VERB": ("close",))."""
    from lemminflect import getAllLemmas

    return getAllLemmas(word.lower())


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """The word's lemmas (lowercase; the word itself when the dictionary does not know it)."""
    low = word.lower()
    spellings = {low, _SPELLING.sub(r"iz\1", low) if len(low) > 5 else low}  # "raised" is no -ise word
    found = {lemma for w in spellings for forms in all_lemmas(w).values() for lemma in forms}
    return frozenset(found | spellings)


def content_words(text: str) -> list[tuple[int, str]]:
    """(offset, word) of the words of `text` that carry meaning: no function word,
    number word, calendar word, word of attribution ("according to a report"), nor a word
    of one or two letters."""
    return [
        (m.start(), m.group(0))
        for m in WORD.finditer(text)
        if len(m.group(0)) > 2
        and m.group(0).lower() not in FUNCTION_WORDS
        and m.group(0).lower() not in NUMBER_WORDS
        and m.group(0).lower() not in CALENDAR
        and m.group(0).lower() not in ATTRIBUTION
    ]


# a line that starts a block of its own: a list item, heading, quote or table row
_BLOCK_LINE = re.compile(r"\s*(?:[-*+>|#]|\d+[.)]\s)")


def _blocks(text: str) -> list[re.Match]:
    """The text's lines, a wrapped line joined to the one it continues: a line break is
    soft when the line ends mid-sentence (a word, comma, bracket) and the next line is
    no list item, heading, quote or table row."""
    lines = list(re.finditer(r"[^\n]+", text))
    out: list[re.Match] = []
    k = 0
    while k < len(lines):
        j = k
        while (
            j + 1 < len(lines)
            and lines[j + 1].start() == lines[j].end() + 1
            and not _BLOCK_LINE.match(lines[j + 1].group(0))
            and not lines[j].group(0).lstrip().startswith(("#", "|"))
            and re.search(r"[\w,;`\])'\"”]\s*$", lines[j].group(0))
        ):
            j += 1
        out.append(re.compile(r"[\s\S]+").match(text, lines[k].start(), lines[j].end()))
        k = j + 1
    return out


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of the sentences of `text`; a line break ends one too, unless the
    line is wrapped (_blocks)."""
    out: list[tuple[int, int]] = []
    for m in _blocks(text):
        a = m.start()
        line = m.group(0)
        for e in sentence_ends(line, final=True) + [len(line)]:
            piece = text[a : m.start() + e]
            if piece.strip():
                out.append((a, m.start() + e))
            a = m.start() + e
    return [(a, b) for a, b in out if text[a:b].strip()]


def inside_quote(text: str, at: int, since: int = 0, inside: bool = False) -> bool:
    """A quotation opened before `at` in `text` is still open there: 'He said: "You go to
    the cinema ... third act. There is no first or second act.' (the second sentence is
    his, and says so nowhere). A straight quote opens after a space or the text's start,
    closes before a space or a stop; a news paragraph that goes on quoting opens again
    ('... second act. "There is this ...') and stays open. since, inside: go on from what
    an earlier call answered for `since` (a paragraph's sentences are read in one pass)."""
    for k in range(since, min(at, len(text))):
        ch = text[k]
        if ch in "“”":
            inside = ch == "“"
        elif ch == '"':
            before = text[k - 1] if k else " "
            after = text[k + 1] if k + 1 < len(text) else " "
            if before.isspace() or before in "(:—–-":
                inside = True
            elif after.isspace() or after in ".,;:!?)":
                inside = False
            else:
                inside = not inside
    return inside


# a sentence's opening definite noun phrase: 'The box had come ...', '"The adaptation, about ...'
_DEFINITE_OPENING = re.compile(r"^[\"“]?The ((?:[a-z][a-z'’-]*,? ?){1,4})")
ECHO_WORDS = 3  # the words of that phrase read for its noun


def echoes(text: str, before: str) -> bool:
    """`text` opens with a definite noun phrase whose noun `before` (the sentence before
    it) says: it names what that sentence introduced ('... from a police box in which his
    clothes were stored.' then 'The box had come from ...'; '... the London to Brighton
    service ...' then 'The service, which has been developed with Southern trains, ...').
    Read without it, the phrase points at nothing, or at something else the summary says."""
    m = _DEFINITE_OPENING.match(text)
    if m is None or not before:
        return False
    head = ""
    for w in re.findall(r"[a-z][a-z'’-]*|,", m.group(1))[:ECHO_WORDS]:
        pos = parts_of_speech(w)
        if w == "," or w in FUNCTION_WORDS or (pos and not pos & {"NOUN", "ADJ"}):
            break  # 'The box had', 'The service, which': the phrase ends there
        head = w
    if not head:
        return False
    said = {x for w in WORD.findall(before.lower()) for x in lemmas(w)}
    return bool(lemmas(head) & said)
