"""What meeting notes add to a document that is no tag: markup (a URL, a Markdown link's
target, an HTML tag or comment, 'Lobby' of a chat room's address, 'Br' of '<br>') and the meeting's
people by login or first name ('@antiochp', '_antiochp:_', '[Mukesh]')."""

from __future__ import annotations

import re

from localsidecar.hashtags.words import FUNCTION_WORDS, Token, zipf
from localsidecar.summary.people import given_names, handles_and_speakers, listed_speakers

_MARKUP = re.compile(
    r"<!--.*?-->|\b(?:https?://|www\.)[^\s)>\]]+|\]\([^)\s]*\)|</?[a-zA-Z][^<>]{0,300}>", re.DOTALL
)
HANDLE_ZIPF = 3.0  # a handle or bracketed label this common in English is a word ('@defer', '[ACTION]')


def unmarked(document: str) -> str:
    """`document` without its markup; its line breaks stay (an HTML tag may span lines)."""
    return _MARKUP.sub(lambda m: "\n" * m.group().count("\n") or " ", document)


def meeting_handles(document: str, toks: list[Token]) -> frozenset[str]:
    """The words (lowercased) of the meeting's handles and quoted speakers that are people
    (a "Name:" label only when the list of who attended names them too):
    a rare word ('antiochp', 'mukesh'), one the text writes as a name mid-sentence ('Sean')
    or initials ('[DC]'), never a function word ('[All]'); a handle's parts each
    ('roni-frantchi'; 'wg-upgrades' gives 'wg' only, 'upgrades' being a word)."""
    people = handles_and_speakers(document) | listed_speakers(document)
    words = {part for w in people for part in re.split(r"[-_.]", w) if part}
    given = given_names(document)  # 'Basil' of a listed 'Basil Hess': a person by first name
    if not words:
        return given  # no handle and no quoted speaker: the tokens need not be read
    named = {t.lower for t in toks if t.cap and not t.initial and not t.text.isupper()}
    initials = {t.lower for t in toks if t.text.isupper() and len(t.text) <= 3}
    return given | frozenset(
        w for w in words if w not in FUNCTION_WORDS and (zipf(w) < HANDLE_ZIPF or w in named or w in initials)
    )
