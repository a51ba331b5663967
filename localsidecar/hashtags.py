"""The hashtag sidecar: grammar, generation on the draft, parsing, normalization."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from dataclasses import dataclass, field

from .backend import Context, GrammarSampler, Model

MAX_TAGS = 8
MAX_TAG_CHARS = 32

# Item shapes the grammar can enforce (hashtag_grammar's `style`):
#   free   optional '#', words of letters/digits joined by ' ' or '-'
#   camel  '#' + CamelCase words run together ('#CityLibrary')
#   hyphen lowercase words joined by '-' ('city-library')
#   words  lowercase words joined by spaces ('city library')
GRAMMAR_STYLES = ("free", "camel", "hyphen", "words")


def hashtag_grammar(style: str = "free", max_items: int = MAX_TAGS, max_words: int = 4, max_word_chars: int = MAX_TAG_CHARS) -> str:
    """GBNF for a JSON array of 1..max_items strings of 1..max_words words, at
    most one space around items. A grammar cannot say "unique items":
    repetition is handled by a penalty in the sampler and by deduplication."""
    if style not in GRAMMAR_STYLES or max_items < 1 or max_words < 1 or max_word_chars < 2:
        raise ValueError(f"bad hashtag grammar: style={style!r} items={max_items} words={max_words} chars={max_word_chars}")
    more = f"{{0,{max_words - 1}}}"
    item, first, rest = {
        "free": (f'"#"? word ( [ -] word ){more}', "[A-Za-z0-9]", "[A-Za-z0-9]"),
        "camel": (f'"#" word ( word ){more}', "[A-Z0-9]", "[a-z0-9]"),
        "hyphen": (f'word ( "-" word ){more}', "[a-z0-9]", "[a-z0-9]"),
        "words": (f'word ( " " word ){more}', "[a-z0-9]", "[a-z0-9]"),
    }[style]
    return (
        f'root ::= "[" " "? item ( "," " "? item ){{0,{max_items - 1}}} " "? "]"\n'
        f'item ::= "\\"" {item} "\\""\n'
        f"word ::= {first} {rest}{{0,{max_word_chars - 1}}}\n"
    )


HASHTAG_GRAMMAR = hashtag_grammar()


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
    grammar: str = HASHTAG_GRAMMAR,
) -> HashtagOutput:
    """Decode `lead` after the end of sequence `seq`, then generate a grammar-
    constrained JSON array with the model alone."""
    t0 = time.perf_counter()
    sampler = GrammarSampler(model, grammar, temperature=temperature, seed=seed, penalty_repeat=penalty_repeat)
    out: list[int] = []
    try:
        pos = ctx.pos_max(seq) + 1
        ctx.decode_tokens(lead, pos, (seq,), "last")
        pos += len(lead)
        while len(out) < max_tokens:
            tok = sampler.sample(ctx, -1)
            if model.is_eog(tok):
                break
            out.append(tok)
            ctx.decode_tokens([tok], pos, (seq,), "last")
            pos += 1
    finally:
        sampler.free()
    raw = model.detokenize(out)
    items, valid = parse_hashtag_items(raw)
    return HashtagOutput(dedupe(items), raw, valid, len(out), time.perf_counter() - t0, items)
