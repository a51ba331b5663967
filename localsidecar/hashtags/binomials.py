"""Two lowercase nouns joined by 'and' that name one thing ('foot and mouth',
'research and development'): one phrase candidate, not its halves ('#Foot',
'#MouthCrisis')."""

from __future__ import annotations

from localsidecar.hashtags.document import Document, content_word
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.wordclass import plural
from localsidecar.hashtags.words import parts_of_speech

BINOMIAL_USES = 3  # said together at least this often


def binomials(doc: Document, in_name: set[int]) -> dict[tuple[str, str], list[int]]:
    """(first stem, second stem) -> the token index of each 'X and Y' mention: two
    lowercase singular nouns of the dictionary joined by 'and' at least BINOMIAL_USES
    times, the first said at most once without the pair ('foot and mouth'; not
    'prices and wages', whose 'prices' the story says on its own)."""
    toks = doc.toks
    pairs: dict[tuple[str, str], list[int]] = {}
    for k in range(len(toks) - 2):
        a, conj, b = toks[k], toks[k + 1], toks[k + 2]
        if conj.lower != "and" or a.brk or conj.brk or k in in_name or k + 2 in in_name:
            continue
        if (a.cap and not a.initial) or b.cap:  # a sentence's first word may be capitalised
            continue
        if not all(
            content_word(t) and "NOUN" in parts_of_speech(t.lower) and not plural(t.lower) for t in (a, b)
        ):
            continue
        pairs.setdefault((stem(a.lower), stem(b.lower)), []).append(k)
    return {
        key: ks
        for key, ks in pairs.items()
        if len(ks) >= BINOMIAL_USES and doc.stem_count.get(key[0], 0) <= len(ks) + 1
    }
