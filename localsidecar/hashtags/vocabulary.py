"""Tags from a fixed vocabulary: the candidate list the trie picker takes is
made of vocabulary tags only, so no other tag can come out (the picker walks
the tokens of those candidates and nothing else: hashtags.picking).

Which vocabulary tags a document is offered (`vocabulary_candidates`):
- a tag is split into words ('area/public-transport', 'PublicTransport' ->
  public, transport: the last path segment; CamelCase, '-', '_' split);
- it matches a document when every one of its content words occurs in the
  document as the same lemma or stem (lemminflect's lemmas of every part of
  speech, and metrics.stem: 'ferries' and 'ferry', 'repaired' and 'repair'
  match) or when one of the document's own hashtag candidates holds all of
  its word stems ('Western Isles Shipping' for 'shipping'; 'Island' for
  'island-life' does not);
- its score: the best such candidate's score, else (1 + log of its words'
  least count) x their mean specificity; a word common in English
  (COMMON_ZIPF) matches by a candidate only; tags below OFFER_FLOOR of the
  best are dropped, the first `limit` offered.
So "by meaning" goes as far as inflection and the candidates' word stems: no
synonyms (a note about ferries is not offered 'boats'). The model then picks
among the offered tags by reading the note and its summary; with no match
there is no tag at all (fewer tags, never one outside the vocabulary).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from localsidecar.errors import LocalsidecarError
from localsidecar.hashtags.candidates import OFFER_FLOOR, Candidate, candidates
from localsidecar.hashtags.generation import HashtagSettings, TagPlan, hashtag_grammar, normalize_tag
from localsidecar.hashtags.mentions import COMMON_ZIPF
from localsidecar.hashtags.metrics import STOPWORDS, stem, tag_key, tag_words
from localsidecar.hashtags.words import specificity, tokenize, zipf

DOC_CANDIDATES = 20  # the document's own candidates a vocabulary tag may match


def _lemmas(word: str) -> frozenset[str]:
    from lemminflect import getAllLemmas

    forms = {word, stem(word)}
    for lemmas in getAllLemmas(word).values():
        forms.update(lemmas)
        forms.update(stem(x) for x in lemmas)
    return frozenset(forms)


def tag_content_words(tag: str) -> list[str]:
    """The words of a vocabulary tag's last path segment, stopwords out."""
    leaf = tag.strip().lstrip("#").rstrip("/").rsplit("/", 1)[-1]
    return [w for w in tag_words(leaf) if w not in STOPWORDS and not w.isdigit()]


def read_vocabulary(path: str) -> tuple[str, ...]:
    """One tag per line ('#' optional, blank lines and '%' comments skipped), distinct by key."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise LocalsidecarError(f"--vocabulary {path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise LocalsidecarError(f"--vocabulary {path}: not UTF-8 text") from None
    return distinct_tags(
        line.strip().lstrip("#").strip() for line in lines if not line.lstrip().startswith("%")
    )


def distinct_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags with words, first of each key (tag_key) kept, in order."""
    seen: dict[str, str] = {}
    for t in tags:
        if t and tag_key(t) and tag_content_words(t):
            seen.setdefault(tag_key(t), t)
    return tuple(seen.values())


def vocabulary_candidates(
    document: str, summary: str, vocabulary: Sequence[str], limit: int
) -> list[Candidate]:
    """The vocabulary tags to offer for `document`, best first (module docstring)."""
    counts: dict[str, int] = {}
    for t in tokenize(document):
        for form in _lemmas(t.lower):
            counts[form] = counts.get(form, 0) + 1
    own = candidates(document, summary, DOC_CANDIDATES)
    scored: list[Candidate] = []
    for tag in vocabulary:
        words = tag_content_words(tag)
        stems = frozenset(stem(w) for w in words)
        by_candidate = max((c.score for c in own if stems <= c.stems), default=0.0)
        found = [max((counts.get(f, 0) for f in _lemmas(w)), default=0) for w in words]
        score = by_candidate
        if not score and all(found) and not (len(words) == 1 and zipf(words[0]) >= COMMON_ZIPF):
            score = (1 + math.log(min(found))) * sum(map(specificity, words)) / len(words)
        if score > 0:
            text = normalize_tag(tag).lstrip("#")
            scored.append(Candidate(text, tuple(words), "vocabulary", score, min(found) if found else 0))
    scored.sort(key=lambda c: -c.score)
    best = scored[0].score if scored else 0.0
    return [c for c in scored if c.score >= OFFER_FLOOR * best][:limit]


@dataclass(frozen=True)
class VocabularySettings(HashtagSettings):
    """HashtagSettings whose phrase-style plan offers vocabulary tags only."""

    vocabulary: tuple[str, ...] = ()

    @classmethod
    def of(cls, settings: HashtagSettings, vocabulary: Sequence[str]) -> VocabularySettings:
        base = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
        return cls(**{**base, "style": "phrase", "picker": "trie", "vocabulary": tuple(vocabulary)})

    def plan(self, summary: str, document: str) -> TagPlan | None:
        cands = vocabulary_candidates(
            document, summary, self.vocabulary, max(self.candidates, self.max_items)
        )
        if not cands:
            return None
        texts = [c.text for c in cands]
        want = min(self.max_items, len(cands))
        grammar = hashtag_grammar("phrase", self.max_items, self.max_words, self.max_word_chars, want, texts)
        return TagPlan(grammar, frozenset(map(tag_key, texts)), tuple(cands), want)

    def spelled(self, tag: str) -> str:
        """The vocabulary's spelling of a picked tag ('#AreaTransport' -> 'area/transport')."""
        by_key = {tag_key(v): v for v in self.vocabulary}
        return by_key.get(tag_key(tag), tag.lstrip("#"))
