"""The hashtag sidecar: the document's phrases, a grammar over them,
generation on the draft, parsing and the display form.

A hashtag is shown as '#' + CamelCase letters and digits ('#MarketStreetTrial'):
on the platforms people post to, a hyphen or a space ends a tag. Tags are
compared and deduplicated on their key, the lowercase letters and digits
('marketstreettrial').
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from localsidecar.backend import Context, GrammarSampler, Model
from localsidecar.hashtags.candidates import CANDIDATES, RANKED, Candidate, candidates, offer, with_topic
from localsidecar.hashtags.headline import headline_tags, offer_subject, with_object, with_subject
from localsidecar.hashtags.metrics import STOPWORDS, tag_key, words  # noqa: F401  (tag_key: part of this API)
from localsidecar.hashtags.sampling import (  # noqa: F401  (PENALTY_SCOPES: part of this API)
    HASHTAG_MAX_TOKENS,
    PENALTY_SCOPES,
    PenaltyScope,
    TagSampling,
)
from localsidecar.summary.candidates import is_notes

MAX_TAGS = 8
MAX_TAG_CHARS = 32
PHRASES_MAX = 3000
DOC_VOCABULARY_MAX = 400
NO_WORDS = "the document has no words to make hashtags from"

# Item shapes the grammar can enforce (hashtag_grammar's `style`):
#   phrase '#' + one of the document's ranked candidates (tag_candidates)
#   ngram  '#' + CamelCase phrase of 1..max_words words occurring contiguously
#          in the document or summary (see doc_phrases)
#   doc    '#' + CamelCase words of the document or summary, in any order
#   free   optional '#', words of letters/digits joined by ' ' or '-'
#   camel  '#' + CamelCase words run together ('#CityLibrary')
#   hyphen lowercase words joined by '-' ('city-library')
#   words  lowercase words joined by spaces ('city library')
PICKERS = ("score", "trie", "grammar")  # HashtagSettings.picker: how the phrase style's model chooses
GRAMMAR_STYLES = ("phrase", "ngram", "doc", "free", "camel", "hyphen", "words")
WORD_STYLES = ("phrase", "ngram", "doc")  # styles that need the document's words


# --- display form ----------------------------------------------------------------------

_IN_WORD_APOSTROPHE = re.compile(r"(?<=[^\W_])['’](?=[^\W_])")
_WORD = re.compile(r"[^\W_]+")


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def normalize_tag(tag: str) -> str:
    """Display form of any tag text: '#climate change' / 'climate-change' /
    '#ClimateChange' -> '#ClimateChange' ('' when it has no letter or digit).
    Each word gets a capital first letter; the rest of its spelling is kept."""
    t = _IN_WORD_APOSTROPHE.sub("", unicodedata.normalize("NFKC", tag))
    body = "".join(_cap(w) for w in _WORD.findall(t))[: MAX_TAG_CHARS * 2]
    return "#" + body if body else ""


def dedupe(items: Iterable[str]) -> list[str]:
    """First occurrence of each key, in order, at most MAX_TAGS."""
    seen: dict[str, str] = {}
    for t in items:
        seen.setdefault(tag_key(t), t)
    return list(seen.values())[:MAX_TAGS]


# --- the document's phrases ---------------------------------------------------------------

_CHUNK = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)
_COMPOUND = re.compile(r"[^\W_]+(?:[-/][^\W_]+)*")


def segments(text: str) -> list[list[str]]:
    """Runs of words (original spelling) that no punctuation or line break
    separates: a phrase never crosses a comma, a full stop, a bracket or a
    title's end. Hyphenated and
    slashed words split into their parts ('noise-cancelling'); apostrophes
    inside words go ("Queen's" -> 'Queens'); a chunk such as '2.4' or '12,000'
    is no word and ends the run."""
    out: list[list[str]] = []
    cur: list[str] = []

    def close() -> None:
        nonlocal cur
        if cur:
            out.append(cur)
        cur = []

    for line in _IN_WORD_APOSTROPHE.sub("", unicodedata.normalize("NFKC", text)).splitlines():
        for chunk in line.split():
            lead, core, trail = _CHUNK.match(chunk).groups()
            if lead or not _COMPOUND.fullmatch(core):
                close()
            if _COMPOUND.fullmatch(core):
                cur.extend(re.split(r"[-/]", core))
            if trail or not core:
                close()
        close()
    return out


def doc_phrases(
    *texts: str, max_words: int = 3, max_word_chars: int = 16, limit: int = PHRASES_MAX
) -> list[str]:
    """Display forms (without '#') of the phrases a tag may be: 1..max_words
    contiguous words of one segment of `texts`, neither first nor last word a
    stopword, not only digits, a single word of at least 2 characters, every
    word at most max_word_chars. Each word is spelled as where it first
    occurs, with a capital first letter. Distinct by key, in order of first
    occurrence (earlier texts first), at most `limit`."""
    spelling: dict[str, str] = {}
    found: dict[str, str] = {}
    for text in texts:
        for seg in segments(text):
            for w in seg:
                spelling.setdefault(w.lower(), _cap(w))
            for i in range(len(seg)):
                for n in range(1, max_words + 1):
                    ws = [w.lower() for w in seg[i : i + n]]
                    if len(ws) < n or any(len(w) > max_word_chars for w in ws):
                        break
                    if (
                        ws[0] in STOPWORDS
                        or ws[-1] in STOPWORDS
                        or all(w.isdigit() for w in ws)
                        or (n == 1 and len(ws[0]) < 2)
                    ):
                        continue
                    found.setdefault("".join(ws), "".join(spelling[w] for w in ws))
                    if len(found) >= limit:
                        return list(found.values())
    return list(found.values())


def doc_vocabulary(*texts: str, limit: int = DOC_VOCABULARY_MAX) -> list[str]:
    """Distinct lowercase content words of `texts` in order of first
    occurrence (at least 2 characters, stopwords out), at most `limit`."""
    seen = dict.fromkeys(w for w in words(" ".join(texts)) if len(w) >= 2 and w not in STOPWORDS)
    return list(seen)[:limit]


# --- grammars ---------------------------------------------------------------------------


def _literal(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def trie_expression(strings: Iterable[str]) -> str:
    """A GBNF expression matching exactly `strings` (non-empty), written as a
    radix tree: a shared prefix appears once, so at any point llama.cpp's
    grammar follows only the branches still possible."""

    def expr(items: list[str]) -> str:
        terminal = "" in items
        groups: dict[str, list[str]] = {}
        for s in items:
            if s:
                groups.setdefault(s[0], []).append(s)
        alts = []
        for group in groups.values():
            lcp = group[0]
            for s in group[1:]:
                while not s.startswith(lcp):
                    lcp = lcp[:-1]
            sub = expr([s[len(lcp) :] for s in group])
            alts.append(_literal(lcp) + (f" {sub}" if sub else ""))
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 and not terminal else "( " + " | ".join(alts) + " )"
        return body + "?" if terminal else body

    items = sorted(set(strings))
    if not items or "" in items:
        raise ValueError("a trie expression needs non-empty strings")
    return expr(items)


def hashtag_grammar(
    style: str = "phrase",
    max_items: int = MAX_TAGS,
    max_words: int = 4,
    max_word_chars: int = MAX_TAG_CHARS,
    min_items: int = 1,
    vocabulary: Sequence[str] = (),
) -> str:
    """GBNF for a JSON array of min_items..max_items strings, at most one
    space around items. The phrase and ngram styles take their items whole
    from `vocabulary` (display forms: tag_candidates, doc_phrases); the doc style builds items
    of 1..max_words words of `vocabulary` (lowercase words); the others of
    1..max_words words of at most max_word_chars. A grammar cannot say
    "unique items": repetition is handled by a penalty in the sampler and by
    deduplication."""
    if style not in GRAMMAR_STYLES or not 1 <= min_items <= max_items or max_words < 1 or max_word_chars < 2:
        raise ValueError(
            f"bad hashtag grammar: style={style!r} items={min_items}..{max_items} "
            f"words={max_words} chars={max_word_chars}"
        )
    more = f"{{0,{max_words - 1}}}"
    if style in WORD_STYLES:
        vocab = [w for w in vocabulary if re.fullmatch(r"[^\W_]+", w)]
        if not vocab:
            raise ValueError(f"the {style} grammar style needs a vocabulary of words")
        if style in ("phrase", "ngram"):
            item, word_rule = '"#" phrase', f"phrase ::= {trie_expression(vocab)}"
        else:
            item, word_rule = (
                f'"#" word ( word ){more}',
                "word ::= " + " | ".join(_literal(_cap(w)) for w in vocab),
            )
    else:
        item, first, rest = {
            "free": (f'"#"? word ( [ -] word ){more}', "[A-Za-z0-9]", "[A-Za-z0-9]"),
            "camel": (f'"#" word ( word ){more}', "[A-Z0-9]", "[a-z0-9]"),
            "hyphen": (f'word ( "-" word ){more}', "[a-z0-9]", "[a-z0-9]"),
            "words": (f'word ( " " word ){more}', "[a-z0-9]", "[a-z0-9]"),
        }[style]
        word_rule = f"word ::= {first} {rest}{{0,{max_word_chars - 1}}}"
    return (
        f'root ::= "[" " "? item ( "," " "? item ){{{min_items - 1},{max_items - 1}}} " "? "]"\n'
        f'item ::= "\\"" {item} "\\""\n'
        f"{word_rule}\n"
    )


@dataclass(frozen=True)
class TagPlan:
    """One document's grammar, the tag keys it allows (None: any) and, for the
    phrase style, its ranked candidates (best first) and how many tags to give."""

    grammar: str
    allowed: frozenset[str] | None
    candidates: tuple[Candidate, ...] = ()
    want: int = 0
    subject: Candidate | None = None  # the headline's subject (hashtags.headline): every set names it
    event: Candidate | None = None  # the headline's object (headline.headline_tags): every set names it too
    notes: bool = False  # meeting notes (summary.candidates.is_notes): a person by full name is no tag

    def _speaker(self, c: Candidate) -> bool:
        """Of notes, a name shaped as a person's ('JeffEbert') or one the notes list among
        the meeting's people ('DanTurner' of "Attendees"), or one word the text treats as a
        person ('Kirstie joined ...', names.agents): who spoke or was named, not what the meeting was
        about (Candidate.person_shaped, .listed, .person)."""
        return (
            self.notes
            and (c.person_shaped or c.listed or (c.person and len(c.words) == 1))
            and c != self.subject
        )

    def finish(self, items: Sequence[str]) -> list[str]:
        """The tags of the model's `items` (display forms, in order). Without
        candidates: the allowed ones, deduplicated. With them: items that
        repeat an earlier one's meaning (word stems held by or holding it) go,
        and so does a person (Candidate.person, or .surnamed: 'Andy Roddick',
        whom the text calls 'Roddick') ranked below the first `want` unless
        the headline names them;
        the list is topped up to `want` with the best candidates left; when
        no tag is a topic (Candidate.topic) and the offer holds one, the last
        gives way to the topic the model prefers (the first in `items`, else
        the ranking's best): see candidates.with_topic; the headline's
        subject then takes a place (headline.with_subject), and its object
        one other than the subject's."""
        kept = [t for t in items if self.allowed is None or tag_key(t) in self.allowed]
        if not self.candidates:
            return dedupe(kept)
        by_key = {tag_key(c.text): c for c in self.candidates}
        top = self.candidates[: self.want]
        chosen: list[Candidate] = []
        for t in kept:
            c = by_key[tag_key(t)]
            if (c.person or c.surnamed) and c not in top and c != self.subject:
                continue  # a person the ranking does not put first nor the headline names: not the story's
            if self._speaker(c):
                continue
            if len(chosen) < self.want and not any(c.same(o) for o in chosen):
                chosen.append(c)
        for c in self.candidates:
            if len(chosen) >= self.want:
                break
            if not any(c.same(o) for o in chosen) and not self._speaker(c):
                chosen.append(c)
        preferred = [by_key[tag_key(t)] for t in kept]
        chosen = with_topic(chosen, self.candidates, self.want, preferred, self.event, not self.notes)
        chosen = with_subject(chosen, self.subject, self.candidates, self.want)
        chosen = with_object(chosen, self.event, self.subject, self.candidates, self.want)
        return ["#" + c.text for c in chosen]


@dataclass(frozen=True)
class HashtagSettings:
    """Grammar and sampling of the hashtag phase. The defaults were chosen
    with `localsidecar hashtags-eval` (docs/hashtags.md).
    candidates: the phrase style's list length for the trie and the grammar
    (tag_candidates; the score picker reads twice as many); that style asks
    the model for min(max_items, candidates) items and gives as many.
    picker: how the phrase style's model chooses: "score" reads every offered
    candidate whole and ranks by salience and the model's log-probability
    together (hashtags.scoring), "trie" walks the tokens of every possible
    output (hashtags.picking: one decode per choice), "grammar" generates
    under the GBNF grammar one token at a time."""

    style: str = "phrase"
    max_items: int = 3
    min_items: int = 1
    max_words: int = 3
    max_word_chars: int = 16
    penalty: float = 1.3
    penalty_scope: PenaltyScope = "content"
    candidates: int = CANDIDATES
    picker: str = "score"

    def __post_init__(self) -> None:
        if self.picker not in PICKERS:
            raise ValueError(f"unknown hashtag picker {self.picker!r}; choose from {', '.join(PICKERS)}")
        self.sampling()  # the penalty and its scope are checked here, once

    def sampling(
        self, temperature: float = 0.0, seed: int = 0, max_tokens: int = HASHTAG_MAX_TOKENS
    ) -> TagSampling:
        """The phase's sampling: these settings' penalty with the summary's
        temperature and seed."""
        return TagSampling(
            temperature=temperature,
            seed=seed,
            penalty=self.penalty,
            penalty_scope=self.penalty_scope,
            max_tokens=max_tokens,
        )

    def plan(self, summary: str, document: str) -> TagPlan | None:
        """The grammar for one document. The phrase style offers the
        document's ranked candidates (the summary only ranks them); ngram
        and doc take their words from the summary and the document (summary
        first). They give None when the document has nothing to make a tag
        from (a summary of a text without words is the model's invention)."""
        if self.style == "phrase":
            ranked = candidates(document, summary, max(RANKED, 2 * self.candidates))
            subject, event = headline_tags(document, ranked)
            if self.picker == "score":  # the model reads each candidate: a longer list, no floor
                keep = limit = 2 * self.candidates
            else:
                keep, limit = self.max_items, self.candidates
            offered = offer_subject(offer(ranked, keep, limit), subject, limit)
            cands = tuple(offer_subject(offered, event, limit, keep=subject))
            if not cands:
                return None
            vocab = [c.text for c in cands]
            want = min(self.max_items, len(cands))
            # the model is asked for `want` items: finish() tops up what it repeats
            grammar = hashtag_grammar(
                "phrase", self.max_items, self.max_words, self.max_word_chars, want, vocab
            )
            notes = is_notes(document)
            return TagPlan(grammar, frozenset(map(tag_key, vocab)), cands, want, subject, event, notes)
        if self.style == "ngram":
            if not doc_phrases(document, max_words=1, max_word_chars=self.max_word_chars, limit=1):
                return None
            vocab = doc_phrases(
                summary, document, max_words=self.max_words, max_word_chars=self.max_word_chars
            )
            return TagPlan(self._grammar(vocab), frozenset(map(tag_key, vocab)))
        if self.style == "doc":
            if not doc_vocabulary(document, limit=1):
                return None
            return TagPlan(self._grammar(doc_vocabulary(summary, document)), None)
        return TagPlan(self._grammar([]), None)

    def warm(self) -> None:
        """Load what plan() needs once (the phrase style's word lists)."""
        if self.style == "phrase":
            candidates("Warm up the word lists.")

    def grammar(self, summary: str, document: str) -> str | None:
        plan = self.plan(summary, document)
        return plan.grammar if plan else None

    def _grammar(self, vocab: Sequence[str]) -> str:
        return hashtag_grammar(
            self.style, self.max_items, self.max_words, self.max_word_chars, self.min_items, vocab
        )


# --- parsing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HashtagOutput:
    """tags: display forms ('#CityLibrary'), deduplicated on their key;
    raw: the model's text; valid_json: the raw text parsed as a JSON array
    of strings with no repair; tokens: tokens generated (lead-in excluded);
    wall_s: seconds of the whole phase; raw_items: display forms before
    deduplication and cap; note: why there are no tags, when that is known."""

    tags: list[str]
    raw: str
    valid_json: bool
    tokens: int
    wall_s: float
    raw_items: list[str] = field(default_factory=list)
    note: str = ""

    @classmethod
    def none(cls, note: str, wall_s: float = 0.0) -> HashtagOutput:
        """No hashtag phase was run (e.g. no words to make tags from)."""
        return cls([], "", False, 0, wall_s, [], note)


def parse_hashtags(raw: str) -> tuple[list[str], bool]:
    """Tags from model output, in display form and deduplicated in order.

    Returns (tags, valid_json). Malformed output is repaired best-effort:
    quoted strings are taken from a truncated array, else '#words' or
    comma-separated items.
    """
    items, valid = parse_hashtag_items(raw)
    return dedupe(items), valid


def parse_hashtag_items(raw: str) -> tuple[list[str], bool]:
    """Every non-empty item in display form, in order, duplicates kept (the
    duplicate-rate metric needs them), and valid_json as in parse_hashtags."""
    text = raw.strip()
    items: list[str] = []
    valid = False
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError):
        data = None
    if isinstance(data, list) and all(isinstance(x, str) for x in data):
        items, valid = data, True
    elif isinstance(data, dict):
        # {"hashtags": [...]}: take the first list of strings, not the keys
        lists = [v for v in data.values() if isinstance(v, list)]
        items = [x for x in (lists[0] if lists else []) if isinstance(x, str)]
    if not valid and not items:
        items = re.findall(r'"((?:[^"\\]|\\.)*)(?:"|$)', text)  # a truncated last item too
        if not items:
            items = re.findall(r"#(\w[\w-]*)", text)
        if not items:
            items = [x for x in re.split(r"[,\n;]", text.strip("[] ")) if x.strip()]
    return [t for t in map(normalize_tag, items) if t], valid


# --- generation -------------------------------------------------------------------------


@dataclass(frozen=True)
class TagPhase:
    """Where a hashtag phase runs: the model and its context, the sequence
    that ends with the summary, the lead-in decoded after it before any
    choice, and when the phase started (perf_counter: HashtagOutput.wall_s
    counts from there)."""

    ctx: Context
    model: Model
    seq: int
    lead: list[int]
    started: float = field(default_factory=time.perf_counter)


def generate_hashtags(phase: TagPhase, plan: TagPlan, sampling: TagSampling = TagSampling()) -> HashtagOutput:
    """Decode the lead after the end of the phase's sequence, then generate
    a JSON array under plan.grammar with the model alone, at most
    sampling.max_tokens tokens; the tags are plan.finish of the items it
    allows (an item cut off by the budget may be a prefix of a phrase)."""
    ctx, model, seq, lead, t0 = phase.ctx, phase.model, phase.seq, phase.lead, phase.started
    on_content = sampling.penalty_scope == "content"
    counts = sampling.counts(model)
    sampler = GrammarSampler(
        model,
        plan.grammar,
        temperature=sampling.temperature,
        seed=sampling.seed,
        penalty_repeat=1.0 if on_content else sampling.penalty,
    )
    out: list[int] = []
    seen: set[int] = set()
    try:
        pos = ctx.pos_max(seq) + 1
        ctx.decode_tokens(lead, pos, (seq,), "last")
        pos += len(lead)
        while len(out) < sampling.max_tokens:
            tok = sampler.sample(ctx, -1, seen, sampling.penalty if on_content else 1.0)
            if model.is_eog(tok):
                break
            out.append(tok)
            if on_content and counts(tok):
                seen.add(tok)
            ctx.decode_tokens([tok], pos, (seq,), "last")
            pos += 1
    finally:
        sampler.free()
    raw = model.detokenize(out)
    items, valid = parse_hashtag_items(raw)
    kept = [t for t in items if plan.allowed is None or tag_key(t) in plan.allowed]
    return HashtagOutput(plan.finish(kept), raw, valid, len(out), time.perf_counter() - t0, kept)
