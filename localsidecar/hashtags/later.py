"""Later mentions of a name by its last word ('Mr Greaves', a headline's 'Henin-Hardenne'),
read once per document for the candidate ranking (hashtags.candidates)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from localsidecar.hashtags.document import Document
from localsidecar.hashtags.mentions import Found
from localsidecar.hashtags.names import named_numbers, strip_titles
from localsidecar.hashtags.words import Token

APART_MENTIONS = 2  # an 'X of Y' name's 'Y' said alone this often is another thing (LastWords.apart)


@dataclass(frozen=True)
class LastWords:
    """The capitalised words of a document as later mentions of a name by its
    last word ('Mr Greaves', 'Moya', a headline's 'Henin-Hardenne')."""

    ends: Counter[str]  # last word -> names of several words ending in it
    own_ends: Counter[str]  # ... of those its later mentions belong to (not apart)
    said: dict[str, list[tuple[Token, frozenset[str]]]]  # word -> (token, words of the name holding it)

    @staticmethod
    def of(found: Found, doc: Document) -> LastWords:
        holder: dict[int, frozenset[str]] = {}
        numbers = named_numbers(doc.toks)
        for r in doc.runs:
            name = strip_titles(r.words, numbers, doc.said_alone)
            if len(name) > 1:
                for k in range(r.end - len(name) + 1, r.end + 1):
                    holder[k] = frozenset(t.lower for t in name)
        said: dict[str, list[tuple[Token, frozenset[str]]]] = {}
        for k, t in enumerate(doc.toks):
            if t.cap:
                said.setdefault(t.lower, []).append((t, holder.get(k, frozenset())))
        names = [
            [w.lower() for w in e.first] for e in found.values() if e.kind == "name" and len(e.first) > 1
        ]
        own = Counter(w[-1] for w in names if not _apart(said, w))
        return LastWords(Counter(w[-1] for w in names), own, said)

    def apart(self, words: Sequence[str]) -> bool:
        """A name 'X of Y' whose 'Y' is said outside any name at least APART_MENTIONS times: another
        thing ('Thailand' of a story naming the 'Tourism Authority of Thailand' once), not a
        later mention of it (one may be: a headline's 'Glasgow trial' of the 'University of
        Glasgow')."""
        return _apart(self.said, words)

    def later(self, words: Sequence[str]) -> list[Token]:
        """Mentions of the name `words` by its last word: never inside a
        mention of it or of a longer name holding it ('Bank' of 'South Bank
        Awards' is no mention of 'South Bank')."""
        return [t for t, held in self.said.get(words[-1], []) if not set(words) <= held]

    def lone(self, words: Sequence[str]) -> list[Token]:
        """The last word said outside any name of several words, when it ends
        only this one: 'Glasgow' of a headline is neither 'University of
        Glasgow' nor 'NHS Greater Glasgow'."""
        if self.ends[words[-1]] != 1:
            return []
        return [t for t, held in self.said.get(words[-1], []) if not held]


def _apart(said: dict[str, list[tuple[Token, frozenset[str]]]], words: Sequence[str]) -> bool:
    """LastWords.apart of the capitalised words `said`."""
    if len(words) < 3 or words[-2] != "of":
        return False
    return sum(not held for _, held in said.get(words[-1], [])) >= APART_MENTIONS
