"""Names in a summary sentence, for the support check (support.py): runs of capitalised
words, a sentence's first word when it is a name, a first word that misspells one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from localsidecar.hashtags.words import CALENDAR, FUNCTION_WORDS
from localsidecar.summary.claims import name_parts
from localsidecar.summary.text import OPENING_MARKS, WORD, bare, first_word

# sentence-initial words that start no name ("The UK Secret Service": "UK" starts it)
NAME_BREAKERS = FUNCTION_WORDS | frozenset({"i"})
MIN_MISSPELT, MISSPELT_RATIO = 5, 0.8  # a first word this long, this like a document name, misspells it


@dataclass
class Anchor:
    """A name or a number of a summary sentence and where it is."""

    kind: str  # "number" or "name"
    text: str
    start: int
    end: int


def capitalised_runs(sentence: str) -> list[list[re.Match]]:
    """Runs of capitalised words next to each other (a possessive ends a run: "Nissan's
    Toshiyuki Shiga" is two)."""
    words = list(WORD.finditer(sentence))
    runs: list[list[re.Match]] = []
    k = 0
    while k < len(words):
        if not words[k].group(0)[:1].isupper():
            k += 1
            continue
        j = k
        while (
            j + 1 < len(words)
            and bare(words[j].group(0)) == words[j].group(0)
            and words[j + 1].group(0)[:1].isupper()
            and sentence[words[j].end() : words[j + 1].start()] in (" ", "-")
        ):
            j += 1
        runs.append(words[k : j + 1])
        k = j + 1
    return runs


def names_in(sentence: str) -> list[Anchor]:
    """Runs of capitalised words; a sentence's first word starts a run only when the next
    word is capitalised too and it is no function word ("The")."""
    out: list[Anchor] = []
    for run in capitalised_runs(sentence):
        if run[0].start() and sentence[run[0].start() - 1].isdigit():
            continue  # a number's unit: "160GB"
        before = sentence[: run[0].start()].rstrip(OPENING_MARKS)
        first_word = not before or before.endswith(":")
        if first_word:
            if run[0].group(0).lower() in NAME_BREAKERS or len(run) == 1:
                run = run[1:]
        if run and not (len(run) == 1 and len(run[0].group(0)) == 1):  # "A", "I"
            end = run[-1].start() + len(bare(run[-1].group(0)))
            out.append(Anchor("name", sentence[run[0].start() : end], run[0].start(), end))
    return out


def first_name(sentence: str, doc) -> Anchor | None:
    """A sentence's first word when it is a name of the document: capitalised there and
    never written in lowercase ("Rangers have rejected ...", not "Profits rose ...")."""
    m = first_word(sentence)
    if m is None or len(m.group(0)) < 2:
        return None
    word = bare(m.group(0))
    if not word[:1].isupper() or word.lower() in NAME_BREAKERS or word not in doc.capitalised:
        return None
    if word.lower() in doc.lowercase or word.lower() in CALENDAR:
        return None
    return Anchor("name", word, m.start(), m.start() + len(word))


def misspelt_first(sentence: str, doc) -> list[str]:
    """A sentence's first word the document never writes that is nearly one of its names
    ("Specter" for Spector): a name misspelt, not a word of the summary's own."""
    m = first_word(sentence)
    if m is None:
        return []
    word = bare(m.group(0))
    if (
        len(word) < MIN_MISSPELT
        or not word[:1].isupper()
        or word in doc.capitalised
        or word.lower() in doc.words_lower
    ):
        return []
    near = [
        name
        for name in sorted(doc.capitalised)
        if len(name) >= MIN_MISSPELT
        and name[0] == word[0]
        and SequenceMatcher(None, name.lower(), word.lower()).ratio() >= MISSPELT_RATIO
    ]
    return [f"name {word!r} is not in the document (it has {near[0]!r})"] if near else []


def name_not_in(doc, name: str) -> tuple[str, ...] | None:
    """The part of a name whose words are the document's but never together, if any."""
    for part in name_parts([bare(w) for w in WORD.findall(name)]):
        if part not in doc.name_runs and f" {' '.join(part)} " not in f" {doc.phrases} ":
            return part
    return None
