"""What a summary sentence claims beyond its words, for the support check (support.py):
the way a number moves or an event ends, a denial, a name of several words.

- Direction: a number said with a word of rising ("rose", "an increase", "up"), falling
  ("fell", "cut"), holding ("held", "unchanged"), or of the most or the least ("highest",
  "lowest") must have a word of the same way near it in a document sentence that has it:
  rates "held at 4.75%" are not "a 4.75% increase", the "lowest mortgage rates for 40 years"
  are not the "highest in 40 years". A name or a year said with winning or losing ("a 1974
  World Cup victory") must have that word in a document sentence that has it (the Dutch
  lost the 1974 final); a date is not judged ("held a meeting on 9 October").
- Negation: a clause that says nearly what a document clause says (MIN_SAME of its
  lowercase content words) must deny it or not as that clause does: "No customers
  complained to support" is not "Two customers complained to support", "the rollback script
  was tested" is not "had never been tested".
- Name runs: a name of two or more capitalised words must be a run of a document name
  ("Toshiyuki Shiga", "Official UK Singles Chart"); titles and nationalities between its parts are
  free ("Nissan Chief Executive Carlos Ghosn"); "UK Secret Service" is not backed by a
  document that has "UK", "Secret" and "Service" apart.
"""

from __future__ import annotations

import re

from localsidecar.hashtags.words import DEMONYMS, TITLES

RISE, FALL, HOLD, MOST, LEAST, WIN, LOSE = (
    "rising",
    "falling",
    "holding",
    "most",
    "least",
    "winning",
    "losing",
)
_DIRECTION_WORDS = {
    RISE: "rise increase grow growth gain climb jump surge soar boost raise hike up higher upturn expand "
    "expansion double treble triple rebound",
    FALL: "fall drop decline decrease cut reduce reduction lower slump plunge slide shrink down trim slash "
    "halve sink dip ease downturn contract slow",
    HOLD: "hold unchanged steady keep remain stable freeze flat maintain stay",
    MOST: "highest biggest largest greatest most",
    LEAST: "lowest smallest least fewest",
    WIN: "win victory triumph beat defeat champion",
    LOSE: "lose loss defeat beaten",
}
OUTCOMES = frozenset({WIN, LOSE})  # the ways a name or a date is judged by
DIRECTIONS_OF = {
    word: frozenset(way for way, words in _DIRECTION_WORDS.items() if word in words.split())
    for words in _DIRECTION_WORDS.values()
    for word in words.split()
}  # "defeat" is both a win and a loss
MIN_SAME = 0.6  # share of a clause's content words a document clause must have to say "the same"
DOC_REACH = 10  # words either side of a number in a document sentence that may say its way
SUMMARY_REACH = 5  # words either side of a number in the summary, inside its clause

_YEAR = re.compile(r"(?:1[6-9]|20)\d\d")
# a name's parts that say what or where someone is, not who: free between the parts of a run
ROLE_WORDS = TITLES | DEMONYMS | frozenset({"deputy", "vice", "former", "new", "acting"})


def is_year(number: str) -> bool:
    return bool(_YEAR.fullmatch(number))


def directions(words: list[str], lemmas) -> frozenset[str]:
    """The ways (RISE, FALL, HOLD, MOST, LEAST, WIN, LOSE) the words say something moves,
    stands or ends."""
    return frozenset(way for w in words for lem in lemmas(w) for way in DIRECTIONS_OF.get(lem, ()))


_NEGATIONS = frozenset("not no never none nobody nothing neither nor without cannot".split())


def is_negative(words: list[str]) -> bool:
    """The words deny something ("not", "never", "no customers", "didn't")."""
    return any(w.lower() in _NEGATIONS or w.lower().endswith(("n't", "n’t")) for w in words)


# words that say a thing could or may be, or is planned, not that it is
_HEDGES = frozenset(
    "could might may would possibly perhaps potentially likely unlikely possible potential plan plans planned "
    "proposed proposal propose proposes if whether expected hope hopes hoped consider considering "
    "considered soon goal goals aim aims urge urges urged".split()
)
_CALLS = frozenset("call calls called calling".split())  # "called for a shared goal": a wish, not a fact
HEDGE_SCOPE = 6  # words after a hedge it governs ("could now be returned to the public sector")
# a phrase after these is outside the hedge ("could be returned ... in the wake of the deal")
_SCOPE_ENDS = frozenset("in of at after before following since during amid despite because".split())
_SCOPE_ADVERBS = frozenset("now still also already just even only then".split())  # no part of the claim


_ASKING = frozenset("see ask asks asked check checks know find wonder".split())  # "to see if": a question


def is_hedged(words: list[str]) -> bool:
    """The words say something could or may be, or is planned ("could offer", "plans to",
    "only if"; not "to see if")."""
    return bool(_hedges(words))


def _hedges(words: list[str]) -> list[int]:
    """The indices of the words that say something could or may be, is planned or wished."""
    low = [w.lower() for w in words]
    return [
        k
        for k, w in enumerate(low)
        if (w in _HEDGES and not (w in ("if", "whether") and k and low[k - 1] in _ASKING))
        or (w in _CALLS and k + 1 < len(low) and low[k + 1] == "for")
    ]


def hedge_scope(words: list[str]) -> set[str]:
    """The words (lowercased) a hedge of `words` governs: up to HEDGE_SCOPE after it,
    not past a preposition that opens another phrase ("More than £550m could now be
    returned to the public sector in the wake of the deal": "deal" is no hedged word)."""
    low = [w.lower() for w in words]
    out: set[str] = set()
    for k in _hedges(words):
        for w in low[k + 1 : k + 1 + HEDGE_SCOPE]:
            if w in _SCOPE_ENDS:
                break
            if w not in _SCOPE_ADVERBS:
                out.add(w)
    return out


def name_parts(words: list[str]) -> list[tuple[str, ...]]:
    """A name's runs of two or more words (lowercase) that must be a document name's: the
    name cut at role words (titles, nationalities)."""
    parts: list[tuple[str, ...]] = []
    current: list[str] = []
    for w in words:
        low = w.lower()
        if low in ROLE_WORDS:
            parts.append(tuple(current))
            current = []
        else:
            current.append(low)
    parts.append(tuple(current))
    return [p for p in parts if len(p) >= 2]


def sub_runs(run: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Every contiguous part of a run of two or more words."""
    return {run[i:j] for i in range(len(run)) for j in range(i + 2, len(run) + 1)}
