"""Relations a summary sentence states, for the support check (support.py): who does what
to whom, whether it has happened, and why.

- Roles: two names of one clause with the words between them ("Rangers have rejected a
  third bid from Blackburn") are said the other way round when every document sentence
  that has both names with a verb of those words between them has them in the other order
  ("Blackburn have rejected a third bid from Rangers"). A passive ("was rejected by")
  turns the order; "with", "and", "between" say no order.
- Doers: the name right before a verb (past an appositive or "who" between commas) does
  it; a name said to do what the document, wherever it names who does it, says only other
  names do ("Conte, who ..., has repeatedly denied" where Jones denied), or one name on
  both sides of a verb ("Deutsche Boerse, which had rejected an offer from Deutsche
  Boerse") the document never has.
- Tense: a verb said done ("has closed", "closed", "was closed") where every document
  sentence with the verb and the clause's names or numbers says it is to come or may be
  ("will close", "is to close", "could close"); and the reverse ("will close" where the
  document only says it closed).
- Titles: a title right before a name ("captain Mark Hughes") that the document, where it
  gives that name titles, never gives it ("Rovers boss Mark Hughes").
- Cause: a clause that says one thing happened because of another ("because", "due to",
  "as a result of", "led to", "caused", "thanks to") needs a document sentence (alone or
  with the next) that says a cause (those words or "after", "following", "so", "blamed",
  ...) with half the content words of the cause and one of the effect.
"""

from __future__ import annotations

import re

from localsidecar.hashtags.words import CALENDAR, FUNCTION_WORDS, TITLES
from localsidecar.summary.text import (
    ATTRIBUTION,
    CLAUSE_BREAK,
    OPENING_MARKS,
    WORD,
    all_lemmas,
    bare,
    content_words,
    lemmas,
)

DONE, WILL, UNDONE = "done", "to come", "planned or possible"

_BE = frozenset("be is are was were been being".split())
_HAVE = frozenset("has have had having".split())
_WILL = frozenset("will shall going".split()) | {"'ll", "’ll"}
_FUTURE = _WILL | frozenset("would could may might should must can".split())
_UNORDERED = frozenset("with and between vs v versus as".split())  # "talks with", "named as": no roles
_INTENT = frozenset(
    "plan plans planned planning set due expected expects aim aims aimed intend intends intended hope hopes "
    "hoped want wants wanted likely propose proposes proposed seek seeks sought going able ready poised "
    "scheduled promised promise promises agreed agree agrees decided decide decides".split()
)  # before "to": what is to come
_DAYS = frozenset(CALENDAR) - {"today", "yesterday", "tomorrow"}  # a present with a date is scheduled
_SPEECH = frozenset("say says said tell tells told ask asks asked".split())  # who speaks: no claim of what
_SKIP = frozenset(
    "not never also already now still just then yet recently reportedly repeatedly finally".split()
)

# the summary's words of cause; the document may say a cause in more ways
_SUMMARY_CAUSE = (
    "because",
    "due to",
    "as a result",
    "resulted in",
    "result of",
    "led to",
    "leading to",
    "lead to",
    "caused",
    "causing",
    "thanks to",
    "owing to",
    "prompted",
    "sparked",
)
_CAUSE_AFTER = frozenset({"because", "due to", "as a result", "result of", "thanks to", "owing to"})
_DOC_CAUSE = frozenset(
    "because due result results resulted lead leads led leading cause caused causes causing thanks owing "
    "after following since so therefore hence why reason reasons blame blamed blames prompt prompted "
    "spark sparked amid behind driven fuelled fueled boosted hit hurt helped".split()
)


def is_verb(word: str) -> bool:
    return "VERB" in all_lemmas(word)


_NOT_VERBS = FUNCTION_WORDS | _BE | _HAVE | _FUTURE


def _verb_lemmas(words: list[str], lemmas) -> set[str]:
    return {lem for w in words if w.lower() not in _NOT_VERBS and is_verb(w) for lem in lemmas(w)}


def is_passive(between: list[str]) -> bool:
    """The words between two names make the second the doer: "... was rejected by"."""
    low = [w.lower() for w in between]
    while low and between[len(low) - 1][:1].isupper():  # "by Victor [Conte]": the name's first words
        low.pop()
    return bool(low) and low[-1] == "by" and any(w in _BE for w in low)


def roles_swapped(between: list[str], doc_between: list[tuple[bool, list[str]]], lemmas) -> bool:
    """`between`: the words between two names of a summary clause; `doc_between`:
    for each place a document sentence has both names, (same order as the summary, the
    words between). True when the document joins them by a verb of those words only the
    other way round."""
    low = [w.lower() for w in between]
    if any(w in _UNORDERED for w in low):
        return False
    verbs = _verb_lemmas(between, lemmas)
    if not verbs:
        return False
    said_passive = is_passive(between)
    agree = disagree = 0
    for same_order, words in doc_between:
        if any(w.lower() in _UNORDERED for w in words):
            continue
        if not verbs & _verb_lemmas(words, lemmas):
            continue
        if same_order != (is_passive(words) != said_passive):
            agree += 1
        else:
            disagree += 1
    return disagree > 0 and agree == 0


def tense(before: list[str], word: str) -> str | None:
    """Whether the verb `word` (after the words `before` in its clause) is said done
    (DONE: "closed", "has closed", "was closed"), sure to come (WILL: "will close", "is
    going to close"), or only planned or possible (UNDONE: "to close", "could close"); None
    when the words say no tense (a present, an -ing form, a noun)."""
    low = word.lower()
    if not word.islower() or low in _NOT_VERBS or not is_verb(word):
        return None
    chain = []  # the verb's own words before it: "will not be", "has", "to"
    for w in reversed(before):
        if w.lower() not in _BE | _HAVE | _FUTURE | _SKIP | {"to"}:
            break
        chain.append(w.lower())
    if any(w in _WILL for w in chain):
        return WILL
    if any(w in _FUTURE for w in chain):
        return UNDONE
    if chain[:1] == ["to"]:  # "is to open", "plans to open"; "reached the final only to lose" is done
        ahead = before[-len(chain) - 1].lower() if len(before) > len(chain) else ""
        return UNDONE if ahead in _INTENT or any(w in _BE for w in chain) else None
    base = all_lemmas(low).get("VERB", ())
    if low in base or low.endswith("ing") or low.endswith("s") and low[:-1] in base:
        return None
    return DONE


def _is_present(word: str) -> bool:
    """A verb's present form ("closes", "close"): with a date, what is to happen then."""
    low = word.lower()
    base = all_lemmas(low).get("VERB", ())
    return word.islower() and (low in base or low.endswith("s") and low[:-1] in base)


def tense_contradicted(said: str, doc_tenses: list[str | None]) -> bool:
    """The summary says a verb done where the document, wherever it gives that verb a
    tense, says it is to come or may be; or says it will be where the document only says
    it was."""
    known = [t for t in doc_tenses if t is not None]
    if not known:
        return False
    if said == DONE:
        return all(t in (WILL, UNDONE) for t in known)
    return said == WILL and all(t == DONE for t in known)


def cause_split(clause_lower: str) -> tuple[int, int, bool] | None:
    """Where the clause's word of cause is (start, end), and whether the cause is said
    after it ("because of X", "caused by X") rather than before ("X led to")."""
    for phrase in _SUMMARY_CAUSE:
        m = re.search(rf"\b{re.escape(phrase)}\b", clause_lower)
        if m:
            after = phrase in _CAUSE_AFTER or clause_lower[m.end() :].lstrip().startswith("by ")
            return m.start(), m.end(), after
    return None


def says_cause(doc_words: list[str]) -> bool:
    return any(w.lower() in _DOC_CAUSE for w in doc_words)


MAX_BETWEEN = 12  # words between two names that can still say one relation of them
CAUSE_SHARE = 0.5  # share of the cause's content words a document sentence of cause must have


def _clauses(sentence: str) -> list[tuple[int, int]]:
    cuts = [0] + [x for m in CLAUSE_BREAK.finditer(sentence) for x in (m.start(), m.end())] + [len(sentence)]
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2) if cuts[i] < cuts[i + 1]]


def _last_word(name: str) -> re.Pattern:
    word = bare(WORD.findall(name)[-1])
    return re.compile(rf"\b{re.escape(word)}\b")


def swapped_roles(sentence: str, anchors, doc) -> list[str]:
    """Two names of one clause in the order the document joins them only the other way
    round (roles_swapped)."""
    names = sorted((a for a in anchors if a.kind == "name"), key=lambda a: a.start)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            between = WORD.findall(sentence[a.end : b.start])
            if CLAUSE_BREAK.search(sentence, a.end, b.start) or len(between) > MAX_BETWEEN:
                continue
            pa, pb = _last_word(a.text), _last_word(b.text)
            if pa.pattern == pb.pattern:
                continue
            places = []
            for s in doc.sentences:
                for x in pa.finditer(s):
                    for y in pb.finditer(s):
                        lo, hi = (x.end(), y.start()) if x.end() <= y.start() else (y.end(), x.start())
                        words = WORD.findall(s[lo:hi])
                        if lo > hi or re.search(r"[.;:!?]", s[lo:hi]) or CLAUSE_BREAK.search(s, lo, hi):
                            continue
                        if len(words) <= MAX_BETWEEN:
                            places.append((x.end() <= y.start(), words))
            if roles_swapped(between, places, lemmas):
                out.append(f"the document has {b.text!r} {' '.join(between)} {a.text!r}, not the reverse")
    return out


def tense_turned(sentence: str, anchors, doc) -> list[str]:
    """A verb said done (or to come) with a clause's names or numbers where every document
    sentence with them and the verb says the other."""
    out = []
    for lo, hi in _clauses(sentence):
        mine = [a for a in anchors if lo <= a.start < hi]
        if not mine:
            continue
        words = [
            m
            for m in WORD.finditer(sentence, lo, hi)
            if not any(a.start <= m.start() < a.end for a in anchors)
        ]
        hits = sorted({k for a in mine for k in doc.having(a)})
        for j, w in enumerate(words):
            said = tense([x.group(0) for x in words[:j]], w.group(0))
            if said is None:
                continue
            verbs = _verb_lemmas([w.group(0)], lemmas)
            found = []
            for k in hits:
                s = doc.sentences[k]
                for clo, chi in _clauses(s):
                    cw = WORD.findall(s[clo:chi])
                    dated = any(w.lower() in _DAYS for w in cw)
                    found += [
                        tense(cw[:i], x) or (WILL if dated and _is_present(x) else None)
                        for i, x in enumerate(cw)
                        if verbs & _verb_lemmas([x], lemmas)
                    ]
            if tense_contradicted(said, found):
                other = "to come or only planned or possible" if said == DONE else "done"
                out.append(f"{w.group(0)!r}: the document says it is {other}")
    return out


def cause_not_said(sentence: str, doc) -> list[str]:
    """A cause the summary states (cause_split) that no document sentence (alone or with
    the next one) states with words of both sides."""
    span = cause_split(sentence.lower())
    if span is None:
        return []
    effect, cause = [
        [lemmas(w) for _, w in content_words(part)] for part in (sentence[: span[0]], sentence[span[1] :])
    ]
    if not span[2]:
        effect, cause = cause, effect
    if not effect or not cause:
        return []
    for k in range(len(doc.sentences)):
        pair = doc.sentences[k : k + 2]
        if not says_cause(WORD.findall(" ".join(pair))):
            continue
        known = set().union(*doc.lemma_sets[k : k + 2])
        if any(w & known for w in effect) and sum(1 for w in cause if w & known) >= CAUSE_SHARE * len(cause):
            return []
    said = sentence[span[0] :] if span[2] else sentence[: span[1]]
    return [f"the document gives no cause like {said.strip()!r}"]


APPOSITIVE_REACH = 16  # words of ", who is facing a trial," between a name and its verb


def doer_of(text: str, words: list[re.Match], k: int, lowercase: set[str]) -> tuple[str, ...] | None:
    """The name that does the verb words[k]: the capitalised run right before it (its aux
    words skipped), or before a relative or an appositive between commas ("Jones, who is
    under investigation, has denied"). None when the doer is no name (a pronoun, a noun,
    the subject of a passive) or a sentence's first word the text also writes in lowercase."""
    j = k - 1
    chain = []
    while j >= 0 and (
        words[j].group(0).lower() in _BE | _HAVE | _FUTURE | _SKIP or words[j].group(0).endswith("ly")
    ):
        chain.append(words[j].group(0).lower())
        j -= 1
    if any(w in _BE for w in chain) or j < 0:
        return None  # "has been charged": its subject does not do it
    if words[j].group(0).lower() in ("who", "which"):
        j -= 1
    elif "," in text[words[j].end() : words[j + 1].start()]:
        opening = [
            i
            for i in range(j - 1, max(-1, j - APPOSITIVE_REACH), -1)
            if "," in text[words[i].end() : words[i + 1].start()]
        ]
        if not opening:
            return None
        j = opening[0]
    if j < 0 or not words[j].group(0)[:1].isupper():
        return None
    i = j
    while (
        i > 0 and words[i - 1].group(0)[:1].isupper() and text[words[i - 1].end() : words[i].start()] == " "
    ):
        i -= 1
    first = words[i].group(0)
    if (
        i == 0
        and not text[: words[0].start()].strip(OPENING_MARKS)
        and (first.lower() in lowercase or first.lower() in FUNCTION_WORDS)
    ):
        i += 1  # "The", "Profits": no name
    run = tuple(bare(w.group(0)) for w in words[i : j + 1])
    return run or None


def _acts(text: str, lowercase: set[str]) -> list[tuple[frozenset[str], tuple[str, ...] | None, str, bool]]:
    """Each verb said done or to come in `text`: its lemmas, its doer (doer_of), the word,
    and whether the doer's name comes again after it in the sentence ("Deutsche Boerse,
    which had rejected an offer from Deutsche Boerse")."""
    out = []
    words = list(WORD.finditer(text))
    for k, w in enumerate(words):
        low = w.group(0).lower()
        if low in ATTRIBUTION or low in _SPEECH:
            continue
        if tense([x.group(0) for x in words[max(0, k - 4) : k]], w.group(0)) is None:
            continue
        doer = doer_of(text, words, k, lowercase)
        after = [bare(x.group(0)) for x in words[k + 1 : k + 1 + MAX_BETWEEN]]
        reflexive = doer is not None and doer[-1] in after
        out.append((frozenset(_verb_lemmas([w.group(0)], lemmas)), doer, w.group(0), reflexive))
    return [act for act in out if act[0]]


def document_acts(
    sentences: list[str], lowercase: set[str]
) -> list[tuple[frozenset[str], tuple[str, ...] | None, str, bool]]:
    """Every verb of the document said done or to come, with its doer (one list, all sentences)."""
    return [act for s in sentences for act in _acts(s, lowercase)]


def doer_not_said(sentence: str, doc) -> list[str]:
    """A name said to do something the document says only other names do, wherever it
    names who does it: "Conte, who faces an indictment, has repeatedly denied using drugs"
    where only Jones denies it."""
    out = []
    for verbs, doer, word, reflexive in _acts(sentence, doc.lowercase):
        if doer is None or not all(w in doc.capitalised for w in doer):
            continue
        if reflexive and not any(v & verbs and r and d[-1] == doer[-1] for v, d, _, r in doc.acts):
            out.append(f"{' '.join(doer)!r} {word} ... {doer[-1]!r}: the document never says so of one name")
            continue
        said = [(d, w) for v, d, w, _ in doc.acts if v & verbs]
        if said and all(d is not None and not set(d) & set(doer) for d, _ in said):
            out.append(f"the document says {' '.join(said[0][0])!r} {said[0][1]}, not {' '.join(doer)!r}")
    return out


ROLE_REACH = 3  # words before a name that may say what the person is ("finance director Tomas Varga")
_HONORIFICS = frozenset("mr mrs ms miss dr sir dame lord lady st saint prof".split())
_SAME_ROLE = (
    frozenset("boss manager coach head".split()),
    frozenset("chief executive ceo".split()),
    frozenset("chairman chairwoman chair president".split()),
    frozenset("spokesman spokeswoman".split()),
    frozenset("skipper captain".split()),
)


def _roles_before(words: list[str], k: int) -> list[str]:
    """The title words right before words[k] ("finance director" before "Tomas")."""
    out: list[str] = []
    for w in reversed(words[max(0, k - ROLE_REACH) : k]):
        low = w.lower()
        if low not in TITLES or low in _HONORIFICS:
            break
        out.insert(0, low)
    return out


def _widened(roles: list[str]) -> set[str]:
    return {x for low in roles for x in next((group for group in _SAME_ROLE if low in group), {low})}


def role_not_said(sentence: str, anchors, doc) -> list[str]:
    """A title said right before a name where the document gives that name titles and never
    this one or a synonym ("chief executive Tomas Varga" for "finance director Tomas
    Varga"; "boss" and "manager" alike)."""
    out = []
    words = list(WORD.finditer(sentence))
    for a in anchors:
        if a.kind != "name":
            continue
        k = next((i for i, w in enumerate(words) if w.start() >= a.start), None)
        said = _roles_before([w.group(0) for w in words], k) if k is not None else []
        if not said:
            continue
        size = len(WORD.findall(a.text))
        last = bare(WORD.findall(a.text)[-1])
        known: list[str] = []
        for i in doc.having(a):
            ws = WORD.findall(doc.sentences[i])
            for j, w in enumerate(ws):
                if bare(w) == last:
                    known += _roles_before(ws, max(j - size + 1, 0)) + _roles_before(ws, j)
        if known and not _widened(said) & _widened(known):
            out.append(
                f"the document calls {a.text!r} {' or '.join(dict.fromkeys(known))}, not {' '.join(said)}"
            )
    return out
