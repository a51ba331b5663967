"""Whether a sentence or a list item may stand alone in an extract summary (the first test
summary.candidates puts each one to): long enough, with lowercase words, opening with a
capital and closing with a stop, and no link, boilerplate, template line, the meeting's
running order, roll call or question with its asker, nor a sentence without its subject."""

from __future__ import annotations

import re

from localsidecar.summary.notes import LOGISTICS
from localsidecar.summary.people import ASKER, ROLL_CALL_VOTES, VOTER

MIN_WORDS = 5
MIN_LOWER_WORDS = 3  # lowercase words a candidate needs: a list of names is no sentence
NOTES_MIN_WORDS = 4  # of a notes-shaped document (is_notes)
NOTES_MIN_LOWER_WORDS = 2
_BOILERPLATE = re.compile(
    r"©|\bcopyright\b|all rights reserved|\bsubscribe\b|\bshare (this|on)\b|follow us|sign up\b|"
    r"newsletter|\bcookies?\b|click here|read more|\blicen[cs]ed under\b|\breleased under\b|"
    r"terms of (use|service)|privacy policy|"
    r"^(more )?(details|information|info|slides|notes)\b.{0,40}\b(found|are|is|see) here\b|"  # a link's word
    r"\b(add|save) .{0,60}\bto your calendars?\b|"
    r"^extracted from .* labell?ed issues",  # the agenda template of many projects' minutes
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"^(TBD|TODO|N/A)\b(?!:? [a-z]+ \w+)"
)  # a template's unfilled line, not "TODO: open an issue ..."
_URL = re.compile(r"https?://|www\.|<[a-z]+:", re.IGNORECASE)
_MINUTES_OF = re.compile(r"^minutes of\b", re.IGNORECASE)
_LOWER_WORD = re.compile(r"(?<![@#\w])[a-z][a-z'-]*\b")  # not a handle (@mcollina)


def _balanced(s: str) -> bool:
    straight = s.count('"') % 2 == 0
    curly = s.count("“") == s.count("”")
    return straight and curly and s.count("(") == s.count(")") and s.count("[") == s.count("]")


def reads_as_sentence(s: str, *, item: bool = False, notes: bool = False) -> bool:
    """Whether `s` (a whole sentence, or a list item without its final '.')
    may be a summary sentence by itself; notes: of a notes-shaped document,
    where a short item ("Michael re-elected as Chair") is a whole statement."""
    words = s.split()
    least, lower = (NOTES_MIN_WORDS, NOTES_MIN_LOWER_WORDS) if notes else (MIN_WORDS, MIN_LOWER_WORDS)
    if len(words) < least or len(_LOWER_WORD.findall(s)) < lower:
        return False
    first = s[:1]
    opens = first.isupper() or first.isdigit() or (first in "\"“‘'([" and s[1:2].isupper())
    if not (
        opens or (first == "@" and s[1:2].isalnum())
    ):  # "@petbernt will make ...": a handle names someone
        return False
    if s.rstrip("\"'”’)]").endswith(("?", ":")):
        return False
    if not item and not re.search(r"[.!…]+[\"'”’)\]]*$", s):
        return False
    return not (
        _URL.search(s)
        or _BOILERPLATE.search(s)
        or _MINUTES_OF.match(s)
        or _PLACEHOLDER.match(s)
        or LOGISTICS.search(s)
        or len(VOTER.findall(s)) >= ROLL_CALL_VOTES  # a roll call: who voted how, no statement
        or ASKER.search(s)  # a question and who asked it
        or _NO_SUBJECT.match(s)
    ) and _balanced(s)


# a sentence without its subject: "Was first developed in 2002 and 2003."
_NO_SUBJECT = re.compile(r"^(?:Was|Is|Are)\s+(?!there\b|it\b|this\b|that\b)[a-z]")
