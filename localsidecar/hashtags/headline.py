"""The headline's subject as a tag: what the story names first, backed by its body.

A news headline opens with what the story is about ('Campbell to be Lions
consultant', 'Broadband challenges TV viewing', 'Mobile TV tipped as one to
watch'); a set without it misses the story even when every tag is good.
Invariants:

- the subject is found in the headline's opening words, up to the first
  function word, punctuation or verb form ('Campbell' | 'to'; 'Mobile TV' |
  'tipped'), the first one that the body backs:
  - a name by the full name the document ranks ('Campbell' ->
    'AlastairCampbell'), said again past the headline, never a name any
    news story says in passing ('US');
  - else a lowercase phrase of 2-3 words the body says SUBJECT_MENTIONS
    times in these words ('mobile TV'), or a single noun rarer in English
    than SUBJECT_ZIPF that the body says SUBJECT_MENTIONS times
    ('broadband'); never a role noun or a word any news story has;
- a name running on through a connector is one name ('Top of the Pops':
  names.py), so the subject is the whole of it ('TopOfThePops');
- a headline with no such subject (a demonym and a common word: 'Greek
  pair set for hearing') gives none: the body decides the tags alone;
- past the subject and its verb, the headline's last noun rarer in English
  than OBJECT_ZIPF that the body says again, in any form, names the event
  when the subject is a name or none ('Church urges Nelly show boycott' ->
  'Boycott'; the body says 'urged music fans to boycott'): the headline
  object, offered, and kept in a set with no tag that names the story
  (a named topic, a leading or clear topic), never in the subject's place;
  the headline's last word is no event when it can be a verb form ('-s', '-ed') that
  the body says as a verb ('Korn's guitarist quits': 'has quit'), and no word is one when
  the dictionary knows it only as a verb's -ing form ('denies faking road crash',
  'barred from suing').
"""

from __future__ import annotations

from collections.abc import Sequence

from localsidecar.hashtags.candidates import (
    CONTEXT_COUNTRIES,
    LEADING_TOPIC,
    Candidate,
    clear_topic,
    when_or_praise,
)
from localsidecar.hashtags.document import read_document
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.wordclass import nounish, plural, verb_gerund
from localsidecar.hashtags.words import (
    COUNTRY_ALIASES,
    DEMONYMS,
    FUNCTION_WORDS,
    NEWS_GENERIC,
    ORDINAL,
    Token,
    cap_first,
    parts_of_speech,
    role_noun,
    zipf,
)

SUBJECT_MENTIONS = 2  # the body says the headline's subject at least this often
SUBJECT_ZIPF = 4.5  # a single common noun this common or more is no subject ('pair', 'hearing')
SUBJECT_WORDS = 3  # a common-noun subject of at most this many words
OBJECT_ZIPF = 4.0  # a noun past the headline's verb this rare names the event ('boycott'; not 'ruling')


def headline_tags(document: str, ranked: Sequence[Candidate]) -> tuple[Candidate | None, Candidate | None]:
    """The headline's subject and its object (module docstring), the document read once;
    (None, None) when it has no headline."""
    doc = read_document(document)
    if doc is None or doc.headline_line < 0:
        return None, None
    head = [t for t in doc.toks if t.line == doc.headline_line]
    body = [t for t in doc.toks if t.line != doc.headline_line]
    subject = _subject(head, body, ranked)
    return subject, (None if subject is not None and subject.topic else _object(head, body, ranked))


def _subject(head: list[Token], body: list[Token], ranked: Sequence[Candidate]) -> Candidate | None:
    """The candidate for what the headline names first: one of `ranked` when it holds
    it, else a term or phrase made here; None when the body backs none of its words."""
    end = _subject_end(head)
    for k in range(end):
        if head[k].lower in DEMONYMS:
            continue  # 'Japanese mogul': the mogul is the subject, not the nation
        if not any(ch.isalpha() for ch in head[k].text) or ORDINAL.fullmatch(head[k].lower):
            continue  # '2017-05-17 Face to Face Meeting', 'AGM 2022', 'November 28th Meeting': a date
        # a common subject ends with the opening words: not 'VideoShows' of 'Video shows ...'
        found = _named(head[k], ranked) or _common(head[k:end], body, ranked)
        if found is not None:
            return found
    return None


def _object(head: list[Token], body: list[Token], ranked: Sequence[Candidate]) -> Candidate | None:
    """The headline's event past its subject and verb (asked only when the subject is a
    name or none): the ranked topic holding it when there is one, else a term made here;
    None when no such noun is said again in the body."""
    for t in reversed(head[_subject_end(head) + 1 :]):  # the word at the subject's end is its verb
        w = t.lower  # a hyphenated word is no event ('low-cost')
        if w in FUNCTION_WORDS or _name_word(t) or len(t.parts) > 1 or not (w.isalpha() and nounish(w)):
            continue
        if t is head[-1] and _verb_form(w) and _verb_in(w, body):
            continue  # 'Rock group Korn's guitarist quits': the headline's verb, said 'has quit'
        if verb_gerund(w):
            continue  # 'Kenteris denies faking road crash': a verb's -ing form names no event
        said = _said((w,), body)
        if said < 1 or zipf(w) >= OBJECT_ZIPF or not _specific_noun(w):
            continue
        # a phrase holding it counts when the body says it too: not the headline's 'gig boycott'
        held = next((c for c in ranked if stem(w) in c.stems and (c.said >= 2 or len(c.words) == 1)), None)
        if held is not None:
            return held if held.topic else None
        top = max((c.score for c in ranked), default=1.0)
        return Candidate(cap_first(w), (w,), "term", top, said + 1, said=said + 1)
    return None


def _subject_end(head: list[Token]) -> int:
    """Where the headline's opening noun phrase ends: at a function word, after
    punctuation, at a verb form ('-s', '-ed') of a lowercase word, or at a
    word that can be a verb right after an opening plural ('Tories attack')."""
    for k, t in enumerate(head):
        if k and (t.lower in FUNCTION_WORDS or head[k - 1].brk):
            return k
        if (
            k
            and not _name_word(t)
            and (
                _verb_form(t.lower)
                or (k == 1 and plural(head[0].lower) and "VERB" in parts_of_speech(t.lower))
            )
        ):
            return k
    return len(head)


def _name_word(t: Token) -> bool:
    return t.cap and not parts_of_speech(t.lower)


def _named(t: Token, ranked: Sequence[Candidate]) -> Candidate | None:
    """The ranked name holding the headline's capitalised word, said again in
    the body; the best ranked of several ('Campbell' -> 'AlastairCampbell')."""
    if not t.cap:
        return None
    return next(
        (
            c
            for c in ranked
            if c.kind == "name"
            and t.lower in c.words
            and c.count >= 2
            and not c.generic
            and not _in_context(c)
        ),
        None,
    )


def _in_context(c: Candidate) -> bool:
    """A name holding 'US' or 'UK' ('US TV'): where the story happens, not what it is about."""
    return any(COUNTRY_ALIASES.get(w) in CONTEXT_COUNTRIES for w in c.words)


def _common(rest: Sequence[Token], body: list[Token], ranked: Sequence[Candidate]) -> Candidate | None:
    """The longest lowercase phrase opening `rest` that the body repeats, or a
    rare single noun the body repeats: the ranked candidate of these words, else a new one."""
    for n in range(min(SUBJECT_WORDS, len(rest)), 0, -1):
        ws = tuple(t.lower for t in rest[:n])
        if any(t.brk for t in rest[: n - 1]) or any(w in FUNCTION_WORDS for w in ws) or not _noun_end(ws[-1]):
            continue
        if when_or_praise(ws[0]):
            continue  # "'Best person' for top legal job": praise, no topic
        said = _said(ws, body)
        if said < SUBJECT_MENTIONS or (n == 1 and not _specific_noun(ws[0])):
            continue
        held = next((c for c in ranked if c.words == ws), None)
        if held is not None:
            return held if held.topic else None
        kind = "phrase" if n > 1 else "term"
        top = max((c.score for c in ranked), default=1.0)
        return Candidate("".join(cap_first(t.text) for t in rest[:n]), ws, kind, top, said + 1, said=said + 1)
    return None


def _noun_end(word: str) -> bool:
    """A word that can end a noun phrase: a noun, or a word the dictionary
    knows only as an adjective that the body repeats ('broadband')."""
    return nounish(word) or parts_of_speech(word) == {"ADJ"}


# a word after one of these is a verb ('has quit', 'to quit', 'he quit')
VERB_CUES = frozenset("has have had will would to he she they who also never not did does".split())


def _verb_form(word: str) -> bool:
    """A word that can be a verb's -s or -ed form ('quits', 'resigns', 'agreed')."""
    return word.endswith(("s", "ed")) and "VERB" in parts_of_speech(word)


def _verb_in(word: str, body: list[Token]) -> bool:
    """The body says `word` (by its stem) as a verb: after 'has', 'to', 'he' ('has quit')."""
    key = stem(word)
    return any(stem(t.lower) == key and p.lower in VERB_CUES for p, t in zip(body, body[1:]))


def _specific_noun(word: str) -> bool:
    return zipf(word) < SUBJECT_ZIPF and word not in NEWS_GENERIC and not role_noun(word)


def _said(ws: tuple[str, ...], body: list[Token]) -> int:
    """Body mentions of `ws` in these words, its first word in lowercase (not
    a name's: 'US TV', 'Tories'); a single word counts by its stem."""
    if len(ws) == 1:
        key = stem(ws[0])
        return sum(1 for t in body if stem(t.lower) == key and not t.cap)
    n = len(ws)
    return sum(
        1
        for k in range(len(body) - n + 1)
        if tuple(t.lower for t in body[k : k + n]) == ws
        and not any(t.brk for t in body[k : k + n - 1])
        and not body[k].cap
    )


def with_subject(
    chosen: Sequence[Candidate], subject: Candidate | None, offered: Sequence[Candidate], want: int
) -> list[Candidate]:
    """`chosen` with the headline's subject: kept when a tag holds its words
    (or names it, for a name); else it takes the place of the tag it holds
    ('MobileTV' for 'Mobile'), else of the last tag that is no named topic,
    no topic of the offer's first two, not the offer's clear topic and, for
    a subject that is no topic, not the set's only topic ('China' of 'China
    had role in Yukos split-up' takes a name's place, not '#Oil's)."""
    out = list(chosen)
    if subject is None or not out:
        return out
    if any(subject.stems <= c.stems or (c.kind == subject.kind == "name" and c.same(subject)) for c in out):
        return out
    if len(out) < want:
        return [*(c for c in out if not c.same(subject)), subject]
    held = [k for k, c in enumerate(out) if c.same(subject)]
    clear = clear_topic(offered)
    kept = [c for c in offered[:2] if c.topic]
    sole = [c for c in out if c.topic] if not subject.topic else []  # a name never ousts the set's only topic
    free = [k for k, c in enumerate(out) if not (c.named_topic or c in kept or c is clear or sole == [c])]
    at = held[0] if held else (free[-1] if free else len(out) - 1)
    out[at] = subject
    return [c for k, c in enumerate(out) if k == at or not c.same(subject)]


def with_object(
    chosen: Sequence[Candidate],
    event: Candidate | None,
    subject: Candidate | None,
    offered: Sequence[Candidate],
    want: int,
) -> list[Candidate]:
    """`chosen` with the headline's object (headline_tags) when no tag names
    the story already (a named topic, a topic among the offer's first
    LEADING_TOPIC, the offer's clear topic): in the place of the last tag that
    is not the subject, else added when the set is short; unchanged when every
    tag is the subject or holds the object."""
    out = list(chosen)
    lead = [c for c in offered[:LEADING_TOPIC] if c.topic]
    clear = clear_topic(offered)
    if event is None or any(c.named_topic or c in lead or c is clear or c.same(event) for c in out):
        return out
    if len(out) < want:
        return [*out, event]
    free = [k for k, c in enumerate(out) if not (subject is not None and c.same(subject))]
    if free:
        out[free[-1]] = event
    return out


def offer_subject(
    offered: Sequence[Candidate], subject: Candidate | None, limit: int, keep: Candidate | None = None
) -> list[Candidate]:
    """The offer with the subject among it: added at the end, in the place of
    the last candidate past the first (and other than `keep`) when the offer is full."""
    out = list(offered)
    if subject is None or not out or any(c.words == subject.words for c in out):
        return out
    if len(out) >= limit:
        drop = [k for k, c in enumerate(out) if k > 0 and not (keep is not None and c.words == keep.words)]
        del out[drop[-1] if drop else -1]
    return [*out, subject]
