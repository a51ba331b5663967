"""What meeting notes add to a document that is no tag: markup (a URL, a Markdown link's
target, an HTML tag or comment, 'Lobby' of a chat room's address, 'Br' of '<br>') and the meeting's
people by login or first name ('@antiochp', '_antiochp:_', '[Mukesh]')."""

from __future__ import annotations

import re
from collections import Counter

from localsidecar.hashtags.words import FUNCTION_WORDS, Token, zipf
from localsidecar.summary.people import given_names, handles_and_speakers, listed_speakers

# a comment, a URL, a link's target, an HTML tag, a reference link's definition line
# ("[LisaLister]: /Friends/LisaLister") and its label ("[Lisa Lister][LisaLister]")
_MARKUP = re.compile(
    r"<!--.*?-->|\b(?:https?://|www\.)[^\s)>\]]+|\]\([^)\s]*\)|</?[a-zA-Z][^<>]{0,300}>|"
    r"(?m:^ {0,3}\[[^\]\n]+\]:[ \t]*\S+[^\n]*$)|\]\[[^\]\n]*\]",
    re.DOTALL,
)
HANDLE_ZIPF = 3.0  # a handle or bracketed label this common in English is a word ('@defer', '[ACTION]')
# a radio amateur's call sign, as a club's minutes give it after a first name: "Bert (VE2ZAZ)"
_CALL_SIGN = r"[A-Z]{1,2}\d[A-Z]{1,4}"
_NAMED_CALL_SIGN = re.compile(rf"\b[A-Z][a-z]+ \(({_CALL_SIGN})\)")
_GRID_SQUARE = r"[A-R]{2}\d\d[a-x]{2}"  # where a station is ('FN25ag'), in the same notes
CALL_SIGNS = 2  # notes that give this many people's call signs so: each call sign of them is a person's


def call_signs(document: str) -> frozenset[str]:
    """The call signs (lowercased) of notes that name CALL_SIGNS people or more by one
    ("Bert (VE2ZAZ)"): every word of that shape there, a table's too ('ve2zaz'), and their
    stations' grid squares ('fn25ag'); none of other documents (a sky survey's 'PS1NEO')."""
    if len(set(_NAMED_CALL_SIGN.findall(document))) < CALL_SIGNS:
        return frozenset()
    return frozenset(w.lower() for w in re.findall(rf"\b(?:{_CALL_SIGN}|{_GRID_SQUARE})\b", document))


def unmarked(document: str) -> str:
    """`document` without its markup; its line breaks stay (an HTML tag may span lines)."""
    return _MARKUP.sub(lambda m: "\n" * m.group().count("\n") or " ", document)


def meeting_handles(document: str, toks: list[Token]) -> frozenset[str]:
    """The words (lowercased) of the meeting's handles and quoted speakers that are people
    (a "Name:" label only when the list of who attended names them too):
    a rare word ('antiochp', 'mukesh'), one the text writes as a name mid-sentence ('Sean')
    or initials ('[DC]'), never a function word ('[All]'); a handle's parts each
    ('roni-frantchi'; 'wg-upgrades' gives 'wg' only, 'upgrades' being a word); the
    call signs of radio amateurs (call_signs)."""
    people = handles_and_speakers(document) | listed_speakers(document)
    words = {part for w in people for part in re.split(r"[-_.]", w) if part}
    # 'Basil' of a listed 'Basil Hess': a person by first name; a radio amateur by call sign
    given = given_names(document) | call_signs(document)
    if not words:
        return given  # no handle and no quoted speaker: the tokens need not be read
    named = {t.lower for t in toks if t.cap and not t.initial and not t.text.isupper()}
    initials = {t.lower for t in toks if t.text.isupper() and len(t.text) <= 3}
    return given | frozenset(
        w for w in words if w not in FUNCTION_WORDS and (zipf(w) < HANDLE_ZIPF or w in named or w in initials)
    )


_URL = re.compile(r"\b(?:https?://|www\.)([\w.-]+)(/[^\s)>\]]*)?")
# hosts of any group's links: their names say where the notes link to, not whose they are
PLATFORMS = frozenset(
    "www com org net io no de uk co gov edu github gitlab bitbucket google docs drive youtube youtu twitter x "
    "facebook linkedin instagram mastodon zoom meet slack discord gitter matrix medium wikipedia hackmd notion "
    "dropbox microsoft teams apple amazon npmjs pypi readthedocs reddit bit ly forms calendar pad wiki "
    "cloud portal blog lists mail groups discourse forum community".split()
)
OWN_SITE_LINKS = 2
SECOND_LEVEL = frozenset("co ac gov org com net edu".split())
CODE_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"})


def own_sites(document: str) -> frozenset[str]:
    """The name (lowercased) of the site `document` links to most, twice or more, when it
    is no platform's: 'hackeriet' of 'https://wiki.hackeriet.no/projects' and
    'https://pad.hackeriet.no', 'rrra' of 'https://cloud.rrra.org', 'kanthaus' of
    'https://gitlab.com/kanthaus/kanthaus-public/issues/140' (a code host's account).
    Notes link to their own group's pages most: a name the text gives and its links
    give is whose the notes are, where a tool's or a partner's site is linked once."""
    links: Counter[str] = Counter()
    for m in _URL.finditer(document):
        host = m.group(1).lower().rstrip(".")
        labels = host.split(".")
        if host.removeprefix("www.") in CODE_HOSTS and m.group(2):
            links[re.sub(r"[-_]", "", m.group(2).strip("/").split("/")[0].lower())] += 1
        elif len(labels) >= 2:
            # the registrable name: 'hackeriet' of 'pad.hackeriet.no', 'ox' of 'www.ox.ac.uk'
            second = len(labels) >= 3 and labels[-2] in SECOND_LEVEL
            links[labels[-3] if second else labels[-2]] += 1
    ranked = [(n, w) for w, n in links.items() if w not in PLATFORMS and len(w) > 1]
    most = max((n for n, _ in ranked), default=0)
    return frozenset(w for n, w in ranked if n == most >= OWN_SITE_LINKS)
