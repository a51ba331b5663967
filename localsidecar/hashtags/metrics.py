"""Hashtag quality metrics and a no-model keyword baseline (no dependencies).

Tags are compared by key, their lowercase letters and digits ('#CityLibrary'
-> 'citylibrary', see hashtags.normalize_tag for the display form). Words are
compared by a tiny suffix-stripping stemmer, so 'libraries' / 'library' and
'closing' / 'closed' / 'close' meet. A tag's words are its CamelCase parts
(or its parts between hyphens or spaces); a word the vocabulary does not know
is split into known words when it can be ('Citylibrary' -> 'city',
'library').
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

STOPWORDS = frozenset(
    "a about after all also an and are as at be been before but by can could did do does for from had has have he her "
    "his i if in into is it its itself more most my no not of on or our out over she so than that the their them then "
    "there these they this those to up us was we were what when which while who will with would you your".split()
)
_VOWELS = set("aeiouy")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Lowercase `word` and strip one plural and one -ing/-ed ending, then a
    final 'e': libraries -> library, closing/closed/closes/close -> clos,
    planned -> plan. Words of three letters or fewer stay as they are."""
    w = word.lower()
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        base = w[: -len(suffix)]
        if w.endswith(suffix) and len(base) >= 3 and _VOWELS & set(base):
            w = base
            if w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_IN_WORD_APOSTROPHE = re.compile(r"(?<=[^\W_])['’](?=[^\W_])")


def words(text: str) -> list[str]:
    """Lowercase words (letters and digits) of free text; an apostrophe
    inside a word is dropped ("Queen's" -> 'queens')."""
    return re.findall(r"[^\W_]+", _IN_WORD_APOSTROPHE.sub("", unicodedata.normalize("NFKC", text)).lower())


def tag_key(tag: str) -> str:
    """What tags are compared and deduplicated on: lowercase letters and digits."""
    return "".join(words(tag))


def tag_words(tag: str) -> list[str]:
    """A tag's lowercase words: its parts between hyphens or spaces, each
    split at CamelCase and letter/digit boundaries ('#MarketStreet2024' ->
    market, street, 2024; 'city-library' -> city, library)."""
    out: list[str] = []
    for part in re.findall(r"[^\W_]+", _IN_WORD_APOSTROPHE.sub("", unicodedata.normalize("NFKC", tag))):
        word = part[0]
        for prev, ch in zip(part, part[1:]):
            if (prev.islower() and ch.isupper()) or (prev.isdigit() != ch.isdigit()):
                out.append(word.lower())
                word = ""
            word += ch
        out.append(word.lower())
    return out


def vocabulary(*texts: str) -> frozenset[str]:
    """Stems of every word in `texts`."""
    return frozenset(stem(w) for t in texts for w in words(t))


def split_joined(word: str, vocab: frozenset[str]) -> list[str]:
    """`word` itself if its stem is in `vocab`, else the split into the fewest
    pieces (each at least 2 letters) whose stems are all in `vocab`, else
    `word` unsplit."""
    if stem(word) in vocab or len(word) < 4:
        return [word]
    n = len(word)
    best: list[list[str] | None] = [None] * (n + 1)
    best[0] = []
    for end in range(2, n + 1):
        for start in range(0, end - 1):
            prev = best[start]
            piece = word[start:end]
            if (
                prev is not None
                and stem(piece) in vocab
                and (best[end] is None or len(prev) + 1 < len(best[end]))
            ):
                best[end] = prev + [piece]
    return best[n] or [word]


def tag_stems(tag: str, vocab: frozenset[str] = frozenset()) -> list[str]:
    """Stems of a tag's content words (stopwords dropped unless the tag has
    nothing else), joined words split against `vocab`."""
    pieces = [p for w in tag_words(tag) for p in split_joined(w, vocab)]
    content = [p for p in pieces if p not in STOPWORDS] or pieces
    return [stem(p) for p in content]


def jaccard(a: Iterable[str], b: Iterable[str]) -> float | None:
    """|A ∩ B| / |A ∪ B|; None when both are empty."""
    sa, sb = set(a), set(b)
    union = sa | sb
    return len(sa & sb) / len(union) if union else None


def tag_jaccard(tags: Sequence[str], ref: Sequence[str]) -> float | None:
    """Jaccard of the tag sets, compared by key ('#CityLibrary' == 'city-library')."""
    return jaccard(map(tag_key, tags), map(tag_key, ref))


def soft_overlap(
    tags: Sequence[str], ref: Sequence[str], vocab: frozenset[str] = frozenset()
) -> float | None:
    """Jaccard of the word-stem sets of two tag lists."""
    return jaccard(
        (s for t in tags for s in tag_stems(t, vocab)), (s for t in ref for s in tag_stems(t, vocab))
    )


def grounding(tags: Sequence[str], *texts: str) -> float | None:
    """Fraction of tags all of whose content words occur (by stem) in `texts`
    (the document and the summary); None without tags."""
    if not tags:
        return None
    vocab = vocabulary(*texts)
    ok = sum(all(s in vocab for s in tag_stems(t, vocab)) for t in tags)
    return ok / len(tags)


def phrase_keys(text: str, max_words: int = 6) -> frozenset[str]:
    """Keys of every run of 1..max_words consecutive words of `text`."""
    ws = words(text)
    return frozenset(
        "".join(ws[i : i + n]) for i in range(len(ws)) for n in range(1, max_words + 1) if i + n <= len(ws)
    )


def phrase_grounding(tags: Sequence[str], *texts: str) -> float | None:
    """Fraction of tags whose words occur contiguously, in that order, in one
    of `texts` (the document, the summary), case and punctuation aside:
    '#MarketStreet' needs 'market street' (or 'Market-Street', 'marketstreet');
    None without tags."""
    if not tags:
        return None
    keys = frozenset().union(*(phrase_keys(t) for t in texts))
    return sum(tag_key(t) in keys for t in tags) / len(tags)


def duplicate_rate(items: Sequence[str]) -> float | None:
    """Share of items that repeat an earlier item (before deduplication);
    None without items."""
    if not items:
        return None
    return (len(items) - len(set(items))) / len(items)


def mean(values: Iterable[float | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def tfidf_keywords(docs: Sequence[str], k: int = 5) -> list[list[str]]:
    """Top-k content words of each document by TF-IDF over `docs` (words of at
    least 3 letters, stopwords and numbers out, counted by stem; each stem shown
    as its most frequent spelling). Scores tie-break by first occurrence.
    idf = ln((1 + N) / (1 + df)) + 1, the smoothed form."""
    per_doc: list[list[str]] = [
        [w for w in words(d) if len(w) >= 3 and w not in STOPWORDS and not w.isdigit()] for d in docs
    ]
    df = Counter(s for ws in per_doc for s in {stem(w) for w in ws})
    n = len(docs)
    out = []
    for ws in per_doc:
        tf = Counter(stem(w) for w in ws)
        first: dict[str, int] = {}
        spelling: dict[str, Counter] = {}
        for i, w in enumerate(ws):
            s = stem(w)
            first.setdefault(s, i)
            spelling.setdefault(s, Counter())[w] += 1
        score = {s: c / len(ws) * (math.log((1 + n) / (1 + df[s])) + 1) for s, c in tf.items()}
        top = sorted(score, key=lambda s: (-score[s], first[s]))[:k]
        out.append([spelling[s].most_common(1)[0][0] for s in top])
    return out
