"""What a word can be in a tag, without its document: a noun, a plural, a
verb and nothing else, an activity's -ing form, a past verb form, an
adjective that names a kind, a modifier that makes one term with the next
(mentions.py applies them to a document's runs of words)."""

from __future__ import annotations

from localsidecar.hashtags.words import NEWS_GENERIC, parts_of_speech, zipf

GERUND_ZIPF = 4.8  # an -ing form rarer than this in a noun's place is a topic ('roaming', 'drinking')
# a modifier this common cut off a phrase leaves a fragment ('public | sector unions')
BROAD_MODIFIER_ZIPF = 5.0
CLASSIFYING_ZIPF = 5.4  # an adjective this common or more names no kind ('new', 'big')
# adjectives of relational ending that grade or judge rather than classify ('dramatic rise')
DEGREE_ADJECTIVES = frozenset(
    "dramatic substantial crucial critical special total final real general potential typical actual usual "
    "normal original ideal vital fatal formal brutal classic historic tragic fantastic basic similar popular "
    "regular particular familiar spectacular necessary ordinary extraordinary primary temporary contrary "
    "voluntary initial annual local overall additional economical practical physical radical logical "
    "electrical identical dynamic drastic terrific horrific specific".split()
)


def nounish(word: str) -> bool:
    """A word that can be a noun: the dictionary says so, it is an activity's
    -ing form, or the dictionary does not know it and it has no -ed or -ly."""
    pos = parts_of_speech(word)
    if not pos:
        return not word.endswith(("ed", "ly"))
    # a gerund in a noun's place names an activity: 'roaming', 'drinking' (not 'working', 'coming')
    return "NOUN" in pos or "PROPN" in pos or gerund(word)


def plural(word: str) -> bool:
    """A noun's plural form ('unions'; not 'news', 'bus')."""
    return singular(word) != word


def singular(word: str) -> str:
    """A plural noun's singular ('deals' -> 'deal'); any other word as it is."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get("NOUN", ())
    return lemmas[0] if lemmas and word.endswith("s") else word


def verb_only(word: str) -> bool:
    """A word the dictionary knows but never as a noun (a verb, an adjective
    or an adverb), and no activity's -ing form."""
    pos = parts_of_speech(word)
    return bool(pos) and "NOUN" not in pos and "PROPN" not in pos and not gerund(word)


def verb_gerund(word: str) -> bool:
    """A gerund the dictionary knows only as a verb form ('expiring', 'roaming')."""
    return gerund(word) and "NOUN" not in parts_of_speech(word)


def gerund(word: str) -> bool:
    """An -ing form rare enough to name an activity ('roaming', 'drinking'; not 'working', 'coming')."""
    return word.endswith("ing") and zipf(word) < GERUND_ZIPF


def past_form(word: str) -> bool:
    """A past verb form: a verb lemma of the dictionary differs from it and it
    has no -s or -ing ('rose', 'fell' of 'fall', 'paid')."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get("VERB", ())
    return any(x != word for x in lemmas) and not word.endswith(("s", "ing"))


def classifying_adjective(word: str) -> bool:
    """An adjective that names a kind ('nuclear waste', 'civil liberties',
    'electric cars', 'financial crisis'): the dictionary knows it only as an
    adjective, in its base form, of a relational ending (-al, -ic, -ar,
    -ary, -il), rarer than CLASSIFYING_ZIPF and no adjective of degree
    ('significant', 'huge', 'dramatic', 'substantial' are none)."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word)
    return (
        set(lemmas) == {"ADJ"}
        and word in lemmas["ADJ"]
        and word.endswith(("al", "ic", "ar", "ary", "il"))
        and zipf(word) < CLASSIFYING_ZIPF
        and word not in DEGREE_ADJECTIVES
    )


def common_modifier(word: str) -> bool:
    """A common word that makes one term with the next ('public sector',
    'world trade'), not an evaluative adjective ('new', 'big'), a possible
    verb ('cut winter deaths') nor a news word ('key'): a phrase cut just
    after it is a fragment ('#SectorUnions')."""
    pos = parts_of_speech(word)
    return (
        zipf(word) >= BROAD_MODIFIER_ZIPF and "NOUN" in pos and "VERB" not in pos and word not in NEWS_GENERIC
    )


def superlative(word: str) -> bool:
    """An adjective's superlative ('best', 'biggest', 'latest'): it ranks or praises
    ('the best person'), it names no kind."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get("ADJ", ())
    return word.endswith("st") and any(x != word for x in lemmas)
