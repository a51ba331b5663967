"""The hashtag sidecar: grammar, generation on the draft, parsing, normalization."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

from localsidecar.backend import Context, GrammarSampler, Model
from localsidecar.tag_metrics import STOPWORDS, words

MAX_TAGS = 8
MAX_TAG_CHARS = 32

# Item shapes the grammar can enforce (hashtag_grammar's `style`):
#   free   optional '#', words of letters/digits joined by ' ' or '-'
#   camel  '#' + CamelCase words run together ('#CityLibrary')
#   hyphen lowercase words joined by '-' ('city-library')
#   words  lowercase words joined by spaces ('city library')
#   doc    '#' + CamelCase words, each one a word of the given vocabulary
#          (the document's and summary's words: see doc_vocabulary)
GRAMMAR_STYLES = ("free", "camel", "hyphen", "words", "doc")
DOC_VOCABULARY_MAX = 400


def doc_vocabulary(*texts: str, limit: int = DOC_VOCABULARY_MAX) -> list[str]:
    """Distinct lowercase content words of `texts` in order of first
    occurrence (at least 2 characters, stopwords out), at most `limit`."""
    seen = dict.fromkeys(w for w in words(" ".join(texts)) if len(w) >= 2 and w not in STOPWORDS)
    return list(seen)[:limit]


def hashtag_grammar(style: str = "free", max_items: int = MAX_TAGS, max_words: int = 4,
                    max_word_chars: int = MAX_TAG_CHARS, min_items: int = 1, vocabulary: Sequence[str] = ()) -> str:
    """GBNF for a JSON array of min_items..max_items strings of 1..max_words
    words (of at most max_word_chars; the doc style takes its words whole),
    at most one space around items. A grammar cannot say "unique items":
    repetition is handled by a penalty in the sampler and by deduplication."""
    if style not in GRAMMAR_STYLES or not 1 <= min_items <= max_items or max_words < 1 or max_word_chars < 2:
        raise ValueError(f"bad hashtag grammar: style={style!r} items={min_items}..{max_items} "
                         f"words={max_words} chars={max_word_chars}")
    more = f"{{0,{max_words - 1}}}"
    if style == "doc":
        vocab = [w for w in vocabulary if re.fullmatch(r"[^\W_]+", w)]
        if not vocab:
            raise ValueError("the doc grammar style needs a vocabulary of words")
        item = f'"#" word ( word ){more}'
        word_rule = "word ::= " + " | ".join(f'"{w[:1].upper()}{w[1:]}"' for w in vocab)
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


HASHTAG_GRAMMAR = hashtag_grammar()


@dataclass(frozen=True)
class HashtagSettings:
    """Grammar and sampling of the hashtag phase. The defaults were chosen
    with `localsidecar hashtags-eval` (README, "Hashtag quality")."""

    style: str = "doc"
    max_items: int = 3
    min_items: int = 1
    max_words: int = 3
    max_word_chars: int = 16
    penalty_repeat: float = 1.3
    penalty_scope: str = "content"

    def grammar(self, *texts: str) -> str:
        """The grammar for one document; `texts` (summary, document) feed the
        doc style's vocabulary, which falls back to camel without words."""
        vocab = doc_vocabulary(*texts) if self.style == "doc" else []
        style = "camel" if self.style == "doc" and not vocab else self.style
        return hashtag_grammar(style, self.max_items, self.max_words, self.max_word_chars, self.min_items, vocab)


@dataclass
class HashtagOutput:
    """tags: normalized, deduplicated; raw: the model's text; valid_json: the
    raw text parsed as a JSON array of strings with no repair; tokens: tokens
    generated (lead-in excluded); wall_s: seconds of the whole phase."""

    tags: list[str]
    raw: str
    valid_json: bool
    tokens: int
    wall_s: float
    raw_items: list[str] = field(default_factory=list)  # normalized, before dedup and cap


def normalize_tag(tag: str) -> str:
    """'#Climate Change ' -> 'climate-change': lowercase words joined by '-'."""
    t = unicodedata.normalize("NFKC", tag).strip().lstrip("#")
    t = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", t).lower()
    words = re.findall(r"[^\W_]+", t)
    return "-".join(words)[:MAX_TAG_CHARS * 2].strip("-")


def parse_hashtags(raw: str) -> tuple[list[str], bool]:
    """Tags from model output, normalized and deduplicated in order.

    Returns (tags, valid_json). Malformed output is repaired best-effort:
    quoted strings are taken from a truncated array, else '#words' or
    comma-separated items.
    """
    items, valid = parse_hashtag_items(raw)
    return dedupe(items), valid


def dedupe(items: list[str]) -> list[str]:
    """First occurrences in order, at most MAX_TAGS."""
    return list(dict.fromkeys(items))[:MAX_TAGS]


def parse_hashtag_items(raw: str) -> tuple[list[str], bool]:
    """Every non-empty normalized item in order, duplicates kept (the
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


PENALTY_SCOPES = ("content", "all")


def _is_content(model: Model, token: int) -> bool:
    """A token that spells part of a word (not only JSON punctuation or '#')."""
    return any(ch.isalnum() for ch in model.piece(token).decode("utf-8", "ignore"))


def generate_hashtags(
    ctx: Context,
    model: Model,
    seq: int,
    lead: list[int],
    *,
    max_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 0,
    penalty_repeat: float = 1.3,
    penalty_scope: str = "content",
    grammar: str = HASHTAG_GRAMMAR,
) -> HashtagOutput:
    """Decode `lead` after the end of sequence `seq`, then generate a grammar-
    constrained JSON array with the model alone.

    penalty_scope "content" penalizes only word tokens already generated;
    "all" uses llama.cpp's penalty sampler over every token (last 64)."""
    if penalty_scope not in PENALTY_SCOPES:
        raise ValueError(f"unknown penalty scope {penalty_scope!r}")
    t0 = time.perf_counter()
    on_content = penalty_scope == "content"
    sampler = GrammarSampler(model, grammar, temperature=temperature, seed=seed,
                             penalty_repeat=1.0 if on_content else penalty_repeat)
    out: list[int] = []
    seen: set[int] = set()
    try:
        pos = ctx.pos_max(seq) + 1
        ctx.decode_tokens(lead, pos, (seq,), "last")
        pos += len(lead)
        while len(out) < max_tokens:
            tok = sampler.sample(ctx, -1, seen, penalty_repeat if on_content else 1.0)
            if model.is_eog(tok):
                break
            out.append(tok)
            if on_content and _is_content(model, tok):
                seen.add(tok)
            ctx.decode_tokens([tok], pos, (seq,), "last")
            pos += 1
    finally:
        sampler.free()
    raw = model.detokenize(out)
    items, valid = parse_hashtag_items(raw)
    return HashtagOutput(dedupe(items), raw, valid, len(out), time.perf_counter() - t0, items)
