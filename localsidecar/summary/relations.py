"""Relations a summary sentence states, for the support check (support.py): who does what
to whom, whether it has happened, and why.

- Roles: two names of one clause with the words between them ("Rangers have rejected a
  third bid from Blackburn") are said the other way round when every document sentence
  that has both names with a verb of those words between them has them in the other order
  ("Blackburn have rejected a third bid from Rangers"). A passive ("was rejected by")
  turns the order; "with", "and", "between" say no order.
- Tense: a verb said done ("has closed", "closed", "was closed") where every document
  sentence with the verb and the clause's names or numbers says it is to come or may be
  ("will close", "is to close", "could close"); and the reverse ("will close" where the
  document only says it closed).
- Cause: a clause that says one thing happened because of another ("because", "due to",
  "as a result of", "led to", "caused", "thanks to") needs a document sentence that says a
  cause (those words or "after", "following", "so", "blamed", ...) with words of both.
"""

from __future__ import annotations

import re

from lemminflect import getAllLemmas

from localsidecar.hashtags.words import FUNCTION_WORDS

DONE, UNDONE = "done", "to come"

_BE = frozenset("be is are was were been being".split())
_HAVE = frozenset("has have had having".split())
_FUTURE = frozenset("will shall would could may might should must can going".split()) | {"'ll", "’ll"}
_UNORDERED = frozenset("with and between vs v versus".split())  # "talks with": no roles
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
_DOC_CAUSE = frozenset(
    "because due result results resulted lead leads led leading cause caused causes causing thanks owing "
    "after following since so therefore hence why reason reasons blame blamed blames prompt prompted "
    "spark sparked amid behind driven fuelled fueled boosted hit hurt helped".split()
)
MIN_CAUSE_SIDE = 1  # content words of each side of a cause a document sentence must have


def is_verb(word: str) -> bool:
    return "VERB" in getAllLemmas(word.lower())


_NOT_VERBS = FUNCTION_WORDS | _BE | _HAVE | _FUTURE


def _verb_lemmas(words: list[str], lemmas) -> set[str]:
    return {lem for w in words if w.lower() not in _NOT_VERBS and is_verb(w) for lem in lemmas(w)}


def is_passive(between: list[str]) -> bool:
    """The words between two names make the second the doer: "... was rejected by"."""
    low = [w.lower() for w in between]
    return bool(low) and low[-1] == "by" and any(w in _BE for w in low)


def roles_swapped(between: list[str], doc_between: list[tuple[bool, list[str]]], lemmas) -> bool:
    """`between`: the content words between two names of a summary clause; `doc_between`:
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
            disagree += 1
        else:
            agree += 1
    return disagree > 0 and agree == 0


def tense(before: list[str], word: str, lemmas) -> str | None:
    """Whether the verb `word` (after the words `before` in its clause) is said done or to
    come; None when the words do not say (a present, a noun)."""
    if word.lower() in _NOT_VERBS or not is_verb(word):
        return None
    low = word.lower()
    near = [w.lower() for w in before if w.lower() not in _SKIP][-3:]
    if any(w in _FUTURE for w in near) or (near and near[-1] == "to"):
        return UNDONE
    lemma_forms = getAllLemmas(low).get("VERB", ())
    if low in lemma_forms or low.endswith("ing") or low.endswith("s") and low[:-1] in lemma_forms:
        return None  # a present or an -ing form: no tense claimed
    if near and near[-1] in _BE and any(w in _FUTURE for w in near):
        return UNDONE
    return DONE


def tense_contradicted(said: str, doc_tenses: list[str | None]) -> bool:
    """The summary says the verb `said` (DONE or UNDONE); the document says it, where it
    says a tense at all, only the other way."""
    known = [t for t in doc_tenses if t is not None]
    return bool(known) and all(t != said for t in known)


def cause_split(clause_lower: str) -> tuple[int, int] | None:
    """Where the clause's word of cause is (start, end), if it has one."""
    for phrase in _SUMMARY_CAUSE:
        m = re.search(rf"\b{re.escape(phrase)}\b", clause_lower)
        if m:
            return m.start(), m.end()
    return None


def says_cause(doc_words: list[str]) -> bool:
    return any(w.lower() in _DOC_CAUSE for w in doc_words)
