"""The words of a text as the support check (support.py, relations.py) reads them: words,
clauses, lemmas, the words that carry meaning."""

from __future__ import annotations

import re
from functools import lru_cache

from localsidecar.hashtags.words import CALENDAR, FUNCTION_WORDS, NUMBER_WORDS

WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W\d_]+)*", re.UNICODE)  # "G7", "A380" are words
CLAUSE_BREAK = re.compile(r"[;:()\[\]—–]|,\s|\s-\s|\band\b|\bbut\b|\bwhile\b|\bwhich\b|\bwho\b")
_SPELLING = re.compile(r"is(e|es|ed|ing|ation|ations)$")  # British -ise, American -ize: one lemma
# words that say who says something, not what: a summary attributes in its own words
ATTRIBUTION = frozenset(
    "according report reports reported claim claims claimed state states stated announce announces announced "
    "add adds added explain explains explained note notes noted".split()
)


@lru_cache(maxsize=65536)
def all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of the lowercase word, by part of speech ("VERB": ("close",))."""
    from lemminflect import getAllLemmas

    return getAllLemmas(word.lower())


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """The word's lemmas (lowercase; the word itself when the dictionary does not know it)."""
    low = word.lower()
    spellings = {low, _SPELLING.sub(r"iz\1", low) if len(low) > 5 else low}  # "raised" is no -ise word
    found = {lemma for w in spellings for forms in all_lemmas(w).values() for lemma in forms}
    return frozenset(found | spellings)


def content_words(text: str) -> list[tuple[int, str]]:
    """(offset, word) of the words of `text` that carry meaning: no function word,
    number word, calendar word, word of attribution ("according to a report"), nor a word
    of one or two letters."""
    return [
        (m.start(), m.group(0))
        for m in WORD.finditer(text)
        if len(m.group(0)) > 2
        and m.group(0).lower() not in FUNCTION_WORDS
        and m.group(0).lower() not in NUMBER_WORDS
        and m.group(0).lower() not in CALENDAR
        and m.group(0).lower() not in ATTRIBUTION
    ]
