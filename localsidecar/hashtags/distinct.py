"""One meaning, one tag: the ranking's candidates kept distinct (candidates.choose).

A candidate overlapping a better one (Candidate.same: word stems, an acronym, a misspelt
name) gives way, unless it names the better one's topic as the story says it: a phrase for
the term it ends in or begins with, an event for the place it is held at, a topic phrase
for its acronym (which becomes that topic).
"""

from __future__ import annotations

from dataclasses import replace

from localsidecar.hashtags.candidate import Candidate
from localsidecar.hashtags.metrics import stem


def distinct(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """The first `limit` of `ranked` none of which overlaps a better one; a
    phrase said at least twice takes the place (and the score) of the better
    single term it ends in ('cold calls' for 'calls', 'central bank' for
    'bank'): the story's topic as it names it; and so does an event named up
    front of the better place it is held at ('Flora London Marathon', 'London').
    A better acronym of a topic phrase is that topic, as the acronym ('PCs' of
    'personal computers')."""
    out: list[Candidate] = []
    for c in ranked:
        hit = [k for k, o in enumerate(out) if c.same(o)]
        if not hit:
            out.append(c)
            if len(out) >= limit:
                break
        elif c.topic and c.kind == "phrase" and any(c.initials == out[k].acronym for k in hit):
            for k in hit:
                if c.initials == out[k].acronym:
                    out[k] = replace(out[k], kind="phrase", generic=False)
        elif len(hit) == 1 and (
            _names_its_head(c, out[hit[0]])
            or _names_its_modifier(c, out[hit[0]])
            or _names_its_venue(c, out[hit[0]])
        ):
            out[hit[0]] = replace(c, score=max(c.score, out[hit[0]].score))
    return out


def _names_its_head(phrase: Candidate, term: Candidate) -> bool:
    """A phrase said twice for the term it ends in; a name of two words or more too
    ('Age Verification' of notes' headings for 'verification'), unless a person's."""
    return (
        (phrase.kind == "phrase" or (phrase.kind == "name" and len(phrase.words) >= 2 and not phrase.person))
        and phrase.said >= 2
        and term.kind == "term"
        and stem(phrase.words[-1]) == stem(term.words[0])
    )


def _names_its_venue(event: Candidate, place: Candidate) -> bool:
    """'Flora London Marathon' for 'London': an event the story names up front (not in
    passing) at a place of one word it names more often; the place's mentions are the event's."""
    return (
        event.event
        and not event.later  # 'the Vietnam War' once, late in a story about Vietnam: its past
        and place.kind == "name"
        and not place.person
        and (len(place.words) == 1 and place.words[0] in event.words[:-1])
    )


def _names_its_modifier(phrase: Candidate, term: Candidate) -> bool:
    """'pension strike' for 'pension', a word the story mostly says before
    another noun, half the time in this phrase: its topic is the phrase."""
    return (
        phrase.kind == "phrase"
        and phrase.said >= 2
        and term.kind == "term"
        and 2 * term.said < term.count
        and 2 * phrase.said >= term.count - term.said  # not one of several ('beta test', 'beta users')
        and stem(phrase.words[0]) == stem(term.words[0])
    )
