"""One hashtag candidate (Candidate): its text, words and counts, what kind of tag it makes
(a person, a topic, an event) and when two say one thing (Candidate.same). The ranking that
makes them: hashtags.candidates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from localsidecar.hashtags.mentions import Kind
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.wordclass import singular
from localsidecar.hashtags.words import (
    CALENDAR,
    SURNAME_ZIPF,
    given_name_shaped,
    parts_of_speech,
    surname_shaped,
    zipf,
)

MISSPELT_CHARS = 6  # a name's word this long that differs by one letter is the same word misspelt
PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")  # "PCs", "MPs": an acronym's plural
# a name ending in one of these names an event, a law or a contest: a topic, not a name ('FA Cup')
EVENT_HEADS = frozenset(
    "cup cups championship championships open games olympics festival awards award oscars prize trophy "
    "league series tour final finals summit conference forum election elections act bill inquiry "
    "referendum budget strike war crisis nations grand prix marathon premiership court tribunal inquest "
    "trial hearing window aid".split()
)


@dataclass(frozen=True)
class Candidate:
    text: str  # display form without '#', CamelCase ('RiverTam')
    words: tuple[str, ...]
    kind: Kind
    score: float
    count: int
    person: bool = False
    listed: bool = False  # named as one of a meeting's people (Present: ..., (Name)); person too
    initials: str = ""  # of a name or phrase of several words: 'lse' of London Stock Exchange, 'ukip'
    passing: bool = False  # later (below), in a text of PASSING_WORDS tokens or more: in passing
    said: int = 0  # times said in these very words (count may add its head's or last word's mentions)
    generic: bool = False  # a term any story has, a role noun, a title, 'UK' ('talks', 'consumer'): no topic
    headline: bool = False  # said in the headline (or its first word is)
    # a name of two or three capitalised words the text also calls by its last word alone, a
    # rare word ('Andy Roddick' ... 'Roddick battled hard'): most likely a person (TagPlan.finish)
    surnamed: bool = False
    later: bool = False  # a name said once, outside the headline and first paragraph

    @property
    def person_shaped(self) -> bool:
        """A name of two words, the first no common word and the last a rare one the
        dictionary does not know, shown as a word, not an acronym ('JeffEbert', 'TonyCrofts';
        not 'MechanicalMOOC', 'TrimTrail', 'AshgroveAllotments'):
        in meeting notes, someone who spoke or was named, not what the meeting was about."""
        return (
            self.kind == "name"
            and surname_shaped(self.words)
            and len(self.words) == 2
            and given_name_shaped(self.words[0])
            # 'Allotments', 'Mondays': words, not surnames
            and not parts_of_speech(self.words[1])
            and zipf(singular(self.words[1])) < SURNAME_ZIPF
            and self.words[1].removesuffix("s") not in CALENDAR
            and bool(re.search(r"[A-Z][a-z]+$", self.text))
        )

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(stem(w) for w in self.words)

    def same(self, other: Candidate) -> bool:
        """One meaning for tags: one's word stems hold the other's, one is the
        other's acronym ('LSE', 'London Stock Exchange'; 'PCs', 'personal
        computers'; 'PC', 'PCs'), or they are one name spelt two ways
        ('Pritesh Bandi', 'Pritish Bandi': misspelt)."""
        if self.kind == other.kind == "name" and (
            named_after(self.words, other.words) or named_after(other.words, self.words)
        ):
            return False
        return (
            overlaps(self.stems, other.stems)
            or (bool(other.initials) and self.acronym == other.initials)
            or (bool(self.initials) and other.acronym == self.initials)
            or (bool(self.acronym) and self.acronym == other.acronym)  # 'PC', 'PCs'
            or (self.kind == other.kind == "name" and misspelt(self.words, other.words))
            or (self.kind == other.kind == "name" and clipped(self.text, other.text))
            or compound_tail(self.words, other.words)
            or compound_tail(other.words, self.words)
        )

    @property
    def acronym(self) -> str:
        """The acronym a one-word tag may be, lower case, a plural's 's' dropped ('PCs' -> 'pc')."""
        if len(self.words) != 1:
            return ""
        return self.words[0][:-1] if PLURAL_ACRONYM.fullmatch(self.text) else self.words[0]

    @property
    def topic(self) -> bool:
        """What the story is about rather than who: a term that is no generic
        or role noun, a phrase, or a name of an event, a law or a contest
        ('FA Cup', 'Licensing Act')."""
        return (self.kind != "name" and not self.generic) or self.event

    @property
    def event(self) -> bool:
        """A name of an event, a law or a contest ('FA Cup', 'Licensing Act', 'Sound of 2005')."""
        last = self.words[-1]
        return (
            self.kind == "name"
            and (last in EVENT_HEADS or (last.isdigit() and len(last) == 4))
            and not self.person
        )

    @property
    def named_topic(self) -> bool:
        """A topic of several words, said twice, or an event's name ('InterestRates', 'VoteRigging', 'FACup'):
        it says what this story is about where one common word ('Prices') says little."""
        return self.event or (
            not self.generic and (self.kind == "phrase" or self.compound) and self.said >= 2
        )

    @property
    def compound(self) -> bool:
        """A hyphenated term of two words or more ('VoteRigging' of 'vote-rigging')."""
        return self.kind == "term" and len(re.findall(r"[A-Z][a-z]{2,}", self.text)) >= 2


def misspelt(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two names of several words alike but for one letter of one word of MISSPELT_CHARS
    or more, its first letter kept ('pritesh bandi', 'pritish bandi')."""
    if len(a) != len(b) or len(a) < 2:
        return False
    odd = [(x, y) for x, y in zip(a, b) if x != y]
    if len(odd) != 1:
        return False
    x, y = odd[0]
    if min(len(x), len(y)) < MISSPELT_CHARS or x[0] != y[0] or abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        return sum(c != d for c, d in zip(x, y)) == 1
    short, long_ = sorted((x, y), key=len)
    return any(long_[:k] + long_[k + 1 :] == short for k in range(len(long_)))


CLIPPED_CHARS = 3  # a name's clipping keeps at least this many of its letters ('Mac')


# a place's last word that makes it a feature of the land or sea, no country or city
FEATURES = frozenset(
    "sea seas ocean river strait straits gulf bay lake canal peninsula coast desert basin channel mountains "
    "islands island valley".split()
)


def named_after(feature: Sequence[str], place: Sequence[str]) -> bool:
    """A feature's name holding a shorter name it is not ('south china sea' and 'china',
    'gulf of mexico' and 'mexico'): two places, two tags."""
    return (
        len(feature) > len(place)
        and feature[-1] in FEATURES
        and place[-1] not in FEATURES
        and any(tuple(feature[k : k + len(place)]) == tuple(place) for k in range(len(feature) - len(place)))
    )


def compound_tail(short: Sequence[str], long_: Sequence[str]) -> bool:
    """A phrase of two words or more that ends another whose word before it is a
    compound, hyphen dropped ('duvet lung' of 'featherduvet lung', said "feather-duvet
    lung"): the same thing, its stems apart only because the compound is one word."""
    n = len(short)
    if n < 2 or len(long_) < n:
        return False
    head = long_[len(long_) - n]
    return (
        tuple(short[1:]) == tuple(long_[len(long_) - n + 1 :])
        and len(head) > len(short[0])
        and head.endswith(short[0])
    )


def clipped(a: str, b: str) -> bool:
    """Two one-word names (display forms), one the other's first letters ('Mac',
    'Macintosh'); an acronym's longer form is another name ('CPAN', 'CPANSec')."""
    if not (a.isalpha() and b.isalpha()):
        return False
    short, long_ = sorted((a, b), key=len)
    return (
        len(short) >= CLIPPED_CHARS
        and len(long_) > len(short)
        and long_.startswith(short)
        and not short.isupper()
        and long_[len(short)].islower()
    )


def overlaps(a: frozenset[str], b: frozenset[str]) -> bool:
    """Same meaning for tags: one's word stems hold the other's."""
    return a <= b or b <= a
