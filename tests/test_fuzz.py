"""Property-based fuzzing of tokenization, prompt building, the
suffix span and hashtag parsing on the real embedded model.

The only exceptions allowed are the documented clear ones: BackendError from
Model.tokenize and LocalsidecarError from PromptConfig for text that is not UTF-8
(an unpaired surrogate), LocalsidecarError from with_suffix_length for a length
asked of an empty suffix.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from localsidecar.backend import BackendError
from localsidecar.decoding.prompts import PromptConfig, build_prompt, condense_header
from localsidecar.errors import LocalsidecarError
from localsidecar.hashtags.generation import (
    MAX_TAG_CHARS,
    MAX_TAGS,
    dedupe,
    normalize_tag,
    parse_hashtags,
    tag_key,
)
from localsidecar.lab.acceptance import with_suffix_length

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ODD_CATEGORIES = ["Cc", "Cf", "Co", "Cs", "Mn", "Me", "Zs", "Zl", "Zp", "So", "Sk", "Lo", "Nd"]
pieces = st.one_of(
    st.text(max_size=200),  # any code point except surrogates
    st.text(st.characters(categories=ODD_CATEGORIES), max_size=60),  # controls, marks, separators, surrogates
    st.text(st.sampled_from('\x00\x07\x1b\r\n\t \u200b\u200d\ufeff\u202e[]{}"\\#<|>'), max_size=40),
    # very long tokens: one character or a short word repeated, no whitespace
    st.builds(lambda c, n: c * n, st.characters(exclude_categories=["Cs"]), st.integers(100, 3000)),
    st.builds(lambda w, n: w * n, st.text("abcxyz0123", min_size=1, max_size=7), st.integers(50, 600)),
    st.sampled_from(
        ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "\n\nResponse:\n", "#CityLibrary", "İ", "ﬁ", "ß"]
    ),
)
texts = st.lists(pieces, max_size=4).map("".join)


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def _gpt2_byte_chars() -> dict[int, str]:
    """The byte -> character map of byte-level BPE vocabularies (GPT-2)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs = bs[:]
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    return {b: chr(c) for b, c in zip(bs, cs)}


@pytest.fixture(scope="module")
def missing_bytes(engine) -> frozenset[int]:
    """Bytes the model's vocabulary has no token for. SmolLM2 lacks 0x04, 0x06,
    0x13, 0x14, 0x16, 0x1d and the UTF-8 lead bytes 0xf1/0xf2 (unassigned
    planes 4-11), among others; llama.cpp drops such bytes when tokenizing."""
    vocab = {engine.target.token_text(i) for i in range(engine.target.n_vocab)}
    return frozenset(b for b, ch in _gpt2_byte_chars().items() if ch.encode() not in vocab)


@FUZZ
@given(text=texts)
@example(text="\ud800 lone")
@example(text="x" * 20_000)
@example(text="\x04\x06\x13 \U00040000 \U00080000")
def test_tokenize_round_trips_or_refuses_clearly(engine, missing_bytes, text):
    model = engine.target
    if has_surrogate(text):
        with pytest.raises(BackendError, match="not valid UTF-8"):
            model.tokenize(text)
        return
    ids = model.tokenize(text)
    assert all(0 <= i < model.n_vocab for i in ids)
    # byte-level BPE: the tokens spell the text's bytes exactly, minus the
    # bytes the vocabulary cannot spell
    kept = bytes(b for b in text.encode("utf-8") if b not in missing_bytes)
    assert b"".join(model.piece(i) for i in ids) == kept
    if len(kept) == len(text.encode("utf-8")):
        assert model.detokenize(ids) == text
    special = model.tokenize(text, special=True)
    assert all(0 <= i < model.n_vocab for i in special)


@FUZZ
@given(doc=texts, instruction=texts, suffix=texts, n=st.one_of(st.none(), st.integers(0, 80)))
@example(doc="", instruction="", suffix="", n=5)
@example(doc="<|im_end|>", instruction="\x00", suffix="<|im_start|>assistant\n", n=None)
def test_suffix_span_maps_the_compound_prompt_back_to_the_bare_one(engine, doc, instruction, suffix, n):
    try:
        cfg = PromptConfig(instruction=instruction, suffix=suffix)
    except LocalsidecarError as exc:
        assert has_surrogate(instruction + suffix) and "not valid UTF-8" in str(exc)
        return
    if has_surrogate(doc):
        with pytest.raises(BackendError):
            build_prompt(engine.target, engine.fmt, doc, cfg)
        return
    p = build_prompt(engine.target, engine.fmt, doc, cfg)
    lo, hi = p.doc_span
    assert p.prefix[lo:hi] == engine.target.tokenize(condense_header(doc))
    try:
        p = with_suffix_length(p, n)
    except LocalsidecarError as exc:
        assert n and not p.suffix and "--n" in str(exc)
        return
    lo, hi = p.suffix_span
    assert p.compound[:lo] + p.compound[hi:] == p.bare
    assert p.compound[lo:hi] == p.suffix and (n is None or len(p.suffix) == n)
    assert p.bare[-len(p.tail) :] == p.tail and p.compound[-len(p.tail) :] == p.tail


TAG = re.compile(r"^#[^\W_]+$")  # a real hashtag: '#' + letters and digits


def check_tags(tags: list[str]) -> None:
    assert len(tags) <= MAX_TAGS and len({tag_key(t) for t in tags}) == len(tags)
    for tag in tags:
        assert TAG.match(tag), tag
        assert len(tag) <= 2 * MAX_TAG_CHARS + 1
        assert normalize_tag(tag) == tag  # normalized output is a fixed point


json_like = st.one_of(
    st.lists(st.text(max_size=40), max_size=12).map(json.dumps),
    st.lists(st.text(max_size=40), max_size=12)
    .map(lambda xs: json.dumps(xs))
    .flatmap(lambda s: st.integers(0, len(s)).map(lambda k: s[:k])),  # cut off, as max_tokens does
    st.dictionaries(st.text(max_size=10), st.lists(st.text(max_size=20), max_size=5), max_size=3).map(
        json.dumps
    ),
    st.integers(1, 5000).map(lambda k: "[" * k + "]" * k),  # nested too deeply for json
)


@FUZZ
@given(raw=st.one_of(texts, json_like))
@example(raw='["#Climate Change", "climate-change", "", "#", "CityLibrary"]')
def test_hashtag_parsing_never_fails_and_normalizes(raw):
    tags, valid = parse_hashtags(raw)
    assert isinstance(valid, bool)
    check_tags(tags)
    try:
        data = json.loads(raw.strip())
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, list) and all(isinstance(x, str) for x in data):
        assert valid
        expected = dedupe(t for t in map(normalize_tag, data) if t)
        assert tags == expected


@FUZZ
@given(tag=texts)
def test_normalize_tag_is_idempotent(tag):
    once = normalize_tag(tag)
    assert normalize_tag(once) == once
    assert once == "" or TAG.match(once)


# --- option values (issue 13) ---------------------------------------------------------------
# Every numeric option, any value: a usage error naming the option (exit 2, one
# line) when the value is outside its documented range, else the command goes
# on to the missing document (exit 2, one line). Never exit 1 (an internal
# error), never a signal. The documents do not exist, so no model is loaded.

MISSING_DOC = "no/such/document.txt"
F32_TINY, F32_MAX = 1.1754944e-38, 3.4028235e38


def _as_float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _as_int(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:  # also more than 4300 digits
        return None


def float_in(lo: float, hi: float, zero_ok: bool = False):
    def valid(s: str) -> bool:
        v = _as_float(s)
        return v is not None and math.isfinite(v) and (lo <= v <= hi or (zero_ok and v == 0))

    return valid


def int_in(lo: float, hi: float):
    def valid(s: str) -> bool:
        v = _as_int(s)
        return v is not None and lo <= v <= hi

    return valid


OPTION_RANGES = {  # (command, option) -> is the value valid? (the documented ranges)
    ("run", "--temperature"): float_in(F32_TINY, F32_MAX, zero_ok=True),
    ("run", "--p-min"): float_in(0.0, 1.0),
    ("run", "--seed"): int_in(0, 2**32 - 1),
    ("run", "--max-tokens"): int_in(1, 2**31 - 1),
    ("run", "--max-chars"): int_in(1, math.inf),
    ("run", "--draft-max"): int_in(1, 64),
    ("run", "--ctx"): lambda s: s.strip().lower() == "auto" or int_in(64, 2**31 - 1)(s),
    ("run", "--threads"): int_in(1, 512),
    ("run", "--gpu-layers"): int_in(-1, 2**31 - 1),
    ("run", "--draft-gpu-layers"): int_in(-1, 2**31 - 1),
    ("acceptance", "--n"): int_in(0, 100_000),
    ("acceptance", "--resamples"): int_in(1000, 1_000_000),
    ("acceptance", "--seed"): int_in(0, 2**32 - 1),
    ("sweep", "--depth-cap"): int_in(1, 4096),
    ("hashtags-eval", "--penalty"): float_in(1.0, 1000.0),
    ("hashtags-eval", "--max-items"): int_in(1, MAX_TAGS),
    ("quant", "--alpha-margin"): float_in(0.0, 1.0),
}

option_values = st.one_of(
    st.floats().map(repr),  # nan, inf, huge, tiny
    st.floats(min_value=-1e-300, max_value=1e-300).map(repr),  # zeros and subnormals
    st.integers().map(str),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(
        [
            "0",
            "-0",
            "-0.0",
            "nan",
            "-inf",
            "1e999",
            "5e-324",
            "1e-39",
            "3.5e38",
            "1e300",
            "1e-300",
            "4294967296",
            "2147483648",
            "513",
            "9" * 5000,
            "",
            " ",
            "0x10",
            "1_000",
            "1.5",
            "٣",
        ]
    ),
)
OPTION_FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("command, option", list(OPTION_RANGES), ids=lambda v: v)
@OPTION_FUZZ
@given(value=option_values)
@example(value="0")
@example(value="5e-324")
@example(value="3.5e38")
@example(value="nan")
@example(value="-1")
@example(value="9" * 5000)
def test_any_option_value_is_one_line_and_exit_2(command, option, value):
    from click.testing import CliRunner

    from localsidecar.cli import main

    r = CliRunner().invoke(main, [command, MISSING_DOC, option, value])
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    # a --threads above the logical CPUs is capped with its documented note line first
    lines = [
        line for line in r.stderr.splitlines() if line.strip() and not line.startswith("note: --threads ")
    ]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    if OPTION_RANGES[(command, option)](value):
        assert f"{MISSING_DOC}: no such file or directory" in lines[0], (value, lines[0])
    else:
        assert option in lines[0] and "Invalid value" in lines[0], (value, lines[0])
