"""The hashtag sidecar: grammar, generation on the draft, parsing, normalization."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from dataclasses import dataclass

from .backend import Context, GrammarSampler, Model

MAX_TAGS = 8
MAX_TAG_CHARS = 32

# A JSON array of 1..MAX_TAGS short strings, at most one space around items.
# A grammar cannot say "unique items": repetition is handled by a penalty in
# the sampler and by deduplication after parsing.
HASHTAG_GRAMMAR = rf"""
root ::= "[" " "? item ( "," " "? item ){{0,{MAX_TAGS - 1}}} " "? "]"
item ::= "\"" "#"? word ( [ -] word ){{0,3}} "\""
word ::= [A-Za-z0-9] [A-Za-z0-9]{{0,{MAX_TAG_CHARS - 1}}}
"""


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
        items = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
        if not items:
            items = re.findall(r"#(\w[\w-]*)", text)
        if not items:
            items = [x for x in re.split(r"[,\n;]", text.strip("[] ")) if x.strip()]
    seen: set[str] = set()
    tags: list[str] = []
    for item in items:
        tag = normalize_tag(item)
        if tag and tag not in seen:
            seen.add(tag)
            tags.append(tag)
    return tags[:MAX_TAGS], valid


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
) -> HashtagOutput:
    """Decode `lead` after the end of sequence `seq`, then generate a grammar-
    constrained JSON array with the model alone."""
    t0 = time.perf_counter()
    sampler = GrammarSampler(model, HASHTAG_GRAMMAR, temperature=temperature, seed=seed, penalty_repeat=penalty_repeat)
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
    tags, valid = parse_hashtags(raw)
    return HashtagOutput(tags, raw, valid, len(out), time.perf_counter() - t0)
