"""The hashtag candidates of a document, ranked by salience (no model).

The grammar of the hashtag phase offers only these: whole names, noun
phrases and salient nouns of the document (never of the summary alone, which
can be wrong). docs/DESIGN.md, Hashtag candidates: gives each rule and its
measured effect. Invariants:

- a name is a maximal run of capitalised words, taken whole or not at all
  (leading titles such as 'Chancellor' aside): 'Gerhard Schroeder', never
  'German Chancellor Gerhard'; a sentence-initial capital counts only for a
  word the dictionary does not know or that is capitalised elsewhere
  mid-sentence;
- a possessive ends a run and is split off ("UK's economy" -> 'UK', 'economy');
- no candidate is a bare verb, pronoun, adjective, number, date or count: a
  single lowercase word must be a noun (the dictionary allows it and the
  document uses it as one: after a determiner or preposition, as a plural, or
  as the last word of a run of content words);
- candidates are distinct by meaning: none holds the word stems of a higher
  ranked one, or is held by them ('WPP' excludes 'WPP Profits');
- no quantity noun ('pieces of gold'), no verb before a number word ('serves
  four'), and no one-word name of a meeting's people unless it ranks first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

from localsidecar.hashtags.candidate import Candidate
from localsidecar.hashtags.distinct import distinct
from localsidecar.hashtags.document import ALL_RULES, HEADLINE, Document, Rules, read_document
from localsidecar.hashtags.later import LastWords
from localsidecar.hashtags.mentions import COMMON_ZIPF, Found, Kind, Mentions, collect
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.modifiers import add_modifier_terms
from localsidecar.hashtags.wordclass import gerund, past_form, singular, superlative, verb_gerund
from localsidecar.hashtags.words import (
    CONNECTORS,
    COUNTRY_ALIASES,
    NEWS_GENERIC,
    TITLES,
    cap_first,
    parts_of_speech,
    role_noun,
    surname_shaped,
    zipf,
)

CANDIDATES = 5  # the grammar's list: the model picks 3 of them
RANKED = 24  # candidates ranked for the offer (a topic below the first CANDIDATES may join it)
TOPIC_FLOOR = 0.3  # a topic joins an offer of names only at this share of the best score
LEADING_TOPIC = 2  # a topic the ranking puts this high names the story: no named topic replaces it
NAMED_TOPIC_FLOOR = 0.25  # a named topic under this share of the best is said in passing (see with_topic)
CLEAR_LEAD = 1.5  # a first topic this far ahead of every other topic offered stays in the set
TOPIC_CHOICES = 3  # the offer holds this many topics when the ranking has them: the model chooses one
PASSING_WORDS = 300  # in a document this long, a name said once past its first paragraph is in passing
OFFER_FLOOR = 0.5  # past the third, a candidate is offered only at this share of the best one's score
NAME_SPEC = 0.8  # a name is at least this specific, however common its words in English ('Europe')
HEADLINE_NAME_SPEC = 1.0  # a name the headline gives is the story's, however common its word ('Orange')
LISTED_PERSON = 0.5  # besides the person's x0.5: one the notes list by full name (Document.people)
SUMMARY_BONUS = 1.2  # a candidate the summary names too
SHOUTED_CHARS = 5  # an all-capital word this long, written otherwise too, is shouted: no acronym
CONTEXT_COUNTRIES = frozenset({"uk", "us"})  # said in passing by any English news story
NEWS_GENERIC_WEIGHT = 0.6  # a term that any news story has ('talks', 'offer', 'club')
BROAD_ZIPF = 5.0  # a word this common names a whole domain ('film', 'race', 'art'): no topic alone,
BROAD_COUNT = 4  # unless the document says it this often ('children' of a vaccine trial)
# the plural of a word this common counts things any story may count ('deals', 'wins',
# 'projects', 'charges'): judged weak 74% of the time and good 18% on rounds 11-14
COMMON_PLURAL_ZIPF = 4.5
DAY_PARTS = frozenset("morning mornings afternoon afternoons evening evenings".split())


def candidates(
    document: str, summary: str = "", limit: int = CANDIDATES, rules: Rules = ALL_RULES
) -> list[Candidate]:
    """The document's best `limit` candidates, best first, distinct by meaning.
    `summary` only ranks: a candidate it also names scores higher."""
    doc = read_document(document, rules)
    if doc is None:
        return []
    found = collect(doc, rules)
    if rules.modifier_topic:
        add_modifier_terms(doc, rules, found)
    return choose(score(found, doc, summary, rules), limit, rules)


def score(found: Found, doc: Document, summary: str = "", rules: Rules = ALL_RULES) -> list[Candidate]:
    """Every collected candidate that can be a tag, with its salience (docs/DESIGN.md,
    Hashtag candidates), in no particular order."""
    summary_stems = {stem(w) for w in re.findall(r"[^\W_]+", summary.lower())} if rules.summary else set()
    last = LastWords.of(found, doc)
    heads = _phrase_heads(found, doc) if rules.phrase_heads else set()
    out = []
    for key, e in found.items():
        if key in heads:
            continue  # 'rates' of 'interest rates': the phrase holds it
        c = _salience(e, doc, rules, last)
        if c is None:
            continue
        if summary_stems and all(stem(w) in summary_stems for w in c.words):
            c = replace(c, score=c.score * SUMMARY_BONUS)
        out.append(c)
    return out


def _phrase_heads(found: Found, doc: Document) -> set[str]:
    """The keys of terms that a repeated phrase ending in them mostly stands
    for: 'rates' when most of its mentions are 'interest rates'."""
    out = set()
    for e in found.values():
        if e.kind != "phrase" or e.count < 2:
            continue
        head = e.first[-1].lower()
        if 2 * e.count >= doc.stem_count.get(stem(head), e.count):
            out.add("t:" + stem(head))
    return out


def _salience(
    e: Mentions,
    doc: Document,
    rules: Rules,
    last: LastWords,
) -> Candidate | None:
    """One entry as a candidate, None when a rule keeps it out."""
    ws = e.form
    bonus = e.bonus
    surnamed = False
    lowers = [w.lower() for w in ws]
    if doc.handles and all(w in doc.handles for w in lowers):
        return None  # '@antiochp', '[Mukesh]': one of the meeting's people, by login or first name
    if len(lowers) == 1 and lowers[0] in doc.line_labels:
        return None  # 'AI: Hugo to ...', 'CW: I hear ...': what kind of line, or who says it
    specs = [doc.specificity(w, rules) for w in lowers if w != "and"]  # 'and' of 'foot and mouth'
    if e.kind == "term":
        if zipf(lowers[0]) >= COMMON_ZIPF or lowers[0] in DAY_PARTS:
            return None  # 'on Sunday afternoons' says when, not what
        if (
            rules.headline_verb
            and e.count == 1
            and e.bonus == HEADLINE
            and "VERB" in parts_of_speech(lowers[0])
        ):
            return None  # 'Satellite mapping aids Darfur relief': a headline's verb
        if verb_gerund(lowers[0]) and sum(t.lower == lowers[0] for t in doc.toks) < 2:
            return None  # an -ing form once is a verb as often as a topic ('expiring'; 'remain' is no 'remaining')
        if gerund(lowers[0]) and _verb_use(lowers[0], doc):
            return None  # 'taken to hospital suffering from flu': a verb
        mentions = doc.stem_count.get(stem(lowers[0]), 1)
        if rules.partitive and 2 * doc.of_count.get(stem(lowers[0]), 0) >= mentions:
            return None  # 'eleven pieces of ancient gold jewellery': the jewellery is the topic
        count, spec = doc.stem_count.get(stem(lowers[0]), e.count), specs[0]
    elif e.kind == "phrase":
        if rules.common_cut and 2 * e.cut > e.count:
            return None  # 'sector unions' of 'public sector unions': a fragment
        if when_or_praise(lowers[0]) or (gerund(lowers[-1]) and _verb_use(lowers[-1], doc)):
            return None  # 'the afternoon session' says when, 'the best person' praises, 'hospital suffering from'
        if e.count < 2 and (e.adjective or zipf(lowers[0]) >= COMMON_ZIPF):
            return None  # a common first word or an adjective only when repeated ('public sector unions')
        if e.count < 2 and (
            e.bonus == 1.0
            or (verb_gerund(lowers[-1]) and e.bonus < HEADLINE)
            or (lowers[-1].endswith(("s", "ed")) and "VERB" in parts_of_speech(lowers[-1]))
            or (rules.past_verb and past_form(lowers[-1]))
        ):
            return None  # once only near the top, and not ending in a possible verb ('server loads')
        head = doc.stem_count.get(stem(lowers[-1]), e.count)
        holds = rules.phrase_heads and e.count >= 2 and 2 * e.count >= head
        count = head if holds else e.count + 0.5 * max(0, head - e.count)
        spec = (max(specs) + sum(specs) / len(specs)) / 2
    else:
        if len(ws) == 1 and last.own_ends[lowers[0]]:
            return None  # 'Greaves' of 'Martin Greaves': counted there
        count = e.count
        if len(ws) > 1 and ws[-1][:1].isupper() and not last.apart(lowers):
            # mentions by the last word alone ('Mr Greaves'), where said
            count += len(last.later(lowers))
            surnamed = (
                surname_shaped(lowers)
                and all(w[:1].isupper() and w.lower() not in CONNECTORS for w in ws)
                and bool(last.later(lowers))
            )
            bonus = max([bonus, *(doc.bonus(t, rules) for t in last.lone(lowers))])  # where it is said
        if "".join(lowers) in doc.sites:
            bonus = HEADLINE  # 'Hackeriet' of notes linking to wiki.hackeriet.no: whose notes they are
        floor = HEADLINE_NAME_SPEC if rules.headline_name and bonus == HEADLINE else NAME_SPEC
        spec = max(floor, sum(specs) / len(specs)) if rules.english else 1.0
    s = (1 + math.log(max(1, count))) * spec * bonus * (1.15 if len(ws) > 1 else 1.0)
    if e.person and rules.person and not (rules.headline_person and bonus == HEADLINE and not e.listed):
        s *= 0.5  # a person the headline names is what the story is about (a meeting's listed people aside)
    if all(w in doc.people_words for w in lowers):
        s *= LISTED_PERSON  # notes name the people they list all through; they are rarely what it is about
    generic = (
        e.kind == "term"
        and (
            lowers[0] in NEWS_GENERIC
            or role_noun(lowers[0])
            or lowers[0] in doc.roles
            or (zipf(lowers[0]) >= BROAD_ZIPF and count < BROAD_COUNT)
            or ((one := singular(lowers[0])) != lowers[0] and zipf(one) >= COMMON_PLURAL_ZIPF)
        )
    ) or (rules.context_names and _context_name(e.kind, lowers))
    if rules.news_generic and generic:
        s *= NEWS_GENERIC_WEIGHT
    later = e.kind == "name" and count <= 1 and bonus == 1.0
    return Candidate(
        "".join(_shown(w, doc) for w in ws),
        tuple(lowers),
        e.kind,
        s,
        int(count),
        e.person,
        e.listed,
        _initials(ws) if len(ws) > 1 else "",
        later and len(doc.toks) >= PASSING_WORDS,
        e.count,
        generic,
        e.bonus == HEADLINE,
        surnamed,
        later,
    )


def when_or_praise(word: str) -> bool:
    """A phrase's first word that says when or praises, so the phrase is no topic ('the
    afternoon session', 'the best person'; a headline's subject too, headline.py)."""
    return word in DAY_PARTS or superlative(word)


VERB_FOLLOWERS = frozenset("from with about".split())  # 'suffering from', 'dealing with': a verb's words


def _verb_use(word: str, doc: Document) -> bool:
    """An -ing form said mostly before 'from', 'with' or 'about' ('taken to hospital
    suffering from ...' twice): a verb, no topic."""
    said = [k for k, t in enumerate(doc.toks) if t.lower == word]
    followed = sum(
        k + 1 < len(doc.toks) and not doc.toks[k].brk and doc.toks[k + 1].lower in VERB_FOLLOWERS
        for k in said
    )
    return 2 * followed > len(said)


def _shown(word: str, doc: Document) -> str:
    """`word` as a tag's part: a capital first; a word the document shouts in a title
    and writes otherwise elsewhere as it writes it in a sentence ('ASSOCIATION' ->
    'Association'; 'INSPIRE', an acronym, stays)."""
    if len(word) >= SHOUTED_CHARS and word.isupper() and word.lower() in doc.unshouted:
        return word.capitalize()
    return cap_first(word)


def _context_name(kind: Kind, lowers: list[str]) -> bool:
    """A name any English news story says in passing ('UK', 'US': the
    country of the reader or of the world's news), a title said as a phrase
    ('prime minister', 'chief executive') or one person described by a phrase
    ending in a title or a role ('petroleum minister', 'sitcom star',
    'prospective candidate'): no topic, and it ranks lower. A group
    ('terror suspects', 'mobile operators') may be what a story is about."""
    if kind == "name":  # and a title alone in capitals ('CEO', 'MP'): whose role, not whom
        return COUNTRY_ALIASES.get("".join(lowers)) in CONTEXT_COUNTRIES or (
            len(lowers) == 1 and lowers[0] in TITLES
        )
    head = lowers[-1]
    return kind == "phrase" and (
        all(w in TITLES for w in lowers) or (singular(head) == head and (head in TITLES or role_noun(head)))
    )


def _initials(words: Sequence[str]) -> str:
    """A name's acronym: each word's first letter, an all-capital word whole
    ('UK Independence Party' -> 'ukip'), connectors skipped, a hyphenated
    word's parts each ('World Anti-Doping Agency' -> 'wada')."""
    parts = [p for w in words if w.lower() not in CONNECTORS for p in _hyphen_parts(w)]
    return "".join(p if p.isupper() else p[:1] for p in parts).lower()


def _hyphen_parts(word: str) -> list[str]:
    """A joined hyphenated word's parts ('AntiDoping' -> Anti, Doping); other words whole ('McLaren')."""
    parts = re.findall(r"[A-Z][a-z]+", word)
    return parts if len(parts) > 1 and "".join(parts) == word and all(len(p) > 2 for p in parts) else [word]


def choose(scored: list[Candidate], limit: int, rules: Rules = ALL_RULES) -> list[Candidate]:
    """The best `limit` of `scored`, best first, distinct by meaning; one of a
    meeting's people named by one word only in first place."""
    ranked = sorted(scored, key=lambda c: (-c.score, c.text))
    if rules.lone_first_name:  # 'Wei' of 'Present: Helen, Wei': the story is about them only if they lead it
        ranked = [
            c
            for k, c in enumerate(ranked)
            if k == 0 or not (c.listed and (len(c.words) == 1 or len(c.words[-1]) == 1))
        ]  # ... and 'Sam K' of the notes, by first name and initial
    return distinct(ranked, limit)


def offer(ranked: list[Candidate], keep: int, limit: int = CANDIDATES) -> list[Candidate]:
    """The list the model picks from: the first `keep` of `ranked`, then those
    scoring at least OFFER_FLOOR of the best, at most `limit` (a weak tail is
    where the draft's bad picks came from: '#Train' after '#Headphones',
    '#ArdenQuiet'). Topics scoring at least TOPIC_FLOOR of the best take the
    places of the last other candidates until it holds TOPIC_CHOICES of them
    (a story is about something, not only someone, and the model chooses
    which), a named topic first when it holds none."""
    ranked = [c for k, c in enumerate(ranked) if k == 0 or not c.passing]
    out = [c for k, c in enumerate(ranked[:limit]) if k < keep or c.score >= OFFER_FLOOR * ranked[0].score]
    if not out:
        return out
    more = [c for c in ranked[len(out) :] if c.topic and c.score >= TOPIC_FLOOR * ranked[0].score]
    named = [c for c in more if c.named_topic][:1]
    if any(c.named_topic for c in out):
        named = []
    for c in [*named, *(c for c in more if c not in named)]:
        if sum(o.topic for o in out) >= TOPIC_CHOICES and not (named and c is named[0]):
            break
        if len(out) >= limit:
            others = [k for k, o in enumerate(out) if not o.topic and k > 0]
            if not others:
                break
            del out[others[-1]]
        out.append(c)
    return out


def clear_topic(offered: Sequence[Candidate]) -> Candidate | None:
    """The offer's first candidate when it is a topic scoring CLEAR_LEAD times
    every other topic offered ('Ringtones' of a story about ringtone sellers,
    before 'Rules' and 'Mobile'): no pick leaves it out."""
    if not offered or not offered[0].topic:
        return None
    rival = max((c.score for c in offered[1:] if c.topic), default=0.0)
    return offered[0] if offered[0].score >= CLEAR_LEAD * rival else None


def with_topic(
    chosen: list[Candidate],
    offered: Sequence[Candidate],
    want: int,
    preferred: Sequence[Candidate] = (),
    event: Candidate | None = None,
    headline_first: bool = True,
) -> list[Candidate]:
    """`chosen` (the tags of `offered` picked, at most `want`) with a topic:
    the offer's clear_topic if any (for the last tag). When it holds no named
    topic (Candidate.named_topic) nor a topic among the offer's first
    LEADING_TOPIC nor one the headline says (or its `event`: headline.headline_tags), and the offer holds a named
    topic, one takes the last tag's place (the model's least preferred),
    unless it is no event, scores under
    NAMED_TOPIC_FLOOR of the best and a topic chosen or left scores CLEAR_LEAD
    times it (said in passing); else, when it holds no topic at all,
    a topic does (not a term said once and scoring under TOPIC_FLOOR of the
    best). Which one: with headline_first (not for notes), a topic the headline says
    and the body says again; else the first in `preferred` (the model's order), else
    the ranking's best."""
    clear, lead = clear_topic(offered), offered[:LEADING_TOPIC]
    if clear is not None and chosen and not any(clear.same(o) for o in chosen):
        chosen = [*(chosen[:-1] if len(chosen) >= want else chosen), clear]
    if not chosen or any(
        c.named_topic or (c.topic and (c in lead or c.headline or c is event)) for c in chosen
    ):
        return chosen  # a topic ranked first or second, or the headline's, names the story: 'Batteries'
    order = list(dict.fromkeys([*preferred, *offered]))
    floor = TOPIC_FLOOR * offered[0].score  # below it, a term said once is in passing
    said = [c for c in order if c.named_topic or c.count >= 2 or c.score >= floor]
    left = [c for c in said if c.topic and c not in chosen]
    named = next((c for c in left if c.named_topic), None)
    if named is not None and not named.event and named.score < NAMED_TOPIC_FLOOR * offered[0].score:
        # 'TelevisionProgramme' of a lawsuit: in passing, and a topic far ahead is the story's
        if any(c.topic and c.score >= CLEAR_LEAD * named.score for c in [*chosen, *left]):
            named = None
    # a topic the headline says and the body says again names the story before a named topic
    # (headline_first; not of notes, whose first line names the meeting: 'Specification Committee')
    headline = next((c for c in left if c.headline and c.count >= 2), None) if headline_first else None
    topic = headline or named or (left[0] if left and not any(c.topic for c in chosen) else None)
    if topic is None:
        return chosen
    rest = chosen[:-1] if len(chosen) >= want else chosen
    return chosen if any(topic.same(o) for o in rest) else [*rest, topic]
