"""Hashtags: display form, parsing, the document's phrases and their grammar,
and the sidecar on the real draft."""

from __future__ import annotations

import re

import pytest

from localsidecar.decoding.layouts import HASHTAG_MODES
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags.generation import (
    MAX_TAGS,
    NO_WORDS,
    HashtagSettings,
    TagPhase,
    TagPlan,
    TagSampling,
    doc_phrases,
    generate_hashtags,
    hashtag_grammar,
    normalize_tag,
    parse_hashtags,
    segments,
    tag_key,
    trie_expression,
)
from localsidecar.hashtags.metrics import phrase_grounding

HASHTAG = re.compile(r"^#[^\W_]+$")


@pytest.mark.parametrize(
    "raw, tag",
    [
        ("#ClimateChange", "#ClimateChange"),
        ("  climate change ", "#ClimateChange"),
        ("#AI", "#AI"),
        ("solar_power!!", "#SolarPower"),
        ("Énergie Solaire", "#ÉnergieSolaire"),
        ("###", ""),
        ("river-clean-up", "#RiverCleanUp"),
        ("Queen's Bridge", "#QueensBridge"),
        ("#market-street-trial", "#MarketStreetTrial"),
    ],
)
def test_normalize_tag_gives_a_real_hashtag(raw, tag):
    assert normalize_tag(raw) == tag


def test_tags_compare_and_dedupe_on_their_lowercase_key():
    assert tag_key("#MarketStreetTrial") == tag_key("market-street trial") == "marketstreettrial"
    tags, valid = parse_hashtags('["#Solar", "solar", "#SchoolRoof", "energy", "Energy ", "#school-roof"]')
    assert valid is True
    assert tags == ["#Solar", "#SchoolRoof", "#Energy"]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('["#library", "#opening-hours", "#comm', ["#Library", "#OpeningHours", "#Comm"]),  # truncated array
        ("#library #books #library", ["#Library", "#Books"]),  # plain hashtags
        ("library, books, reading club", ["#Library", "#Books", "#ReadingClub"]),  # comma list
        ("[]", []),
        ("", []),
        ('{"tags": ["a"]}', ["#A"]),
        ("[1, 2, 3]", ["#1", "#2", "#3"]),
    ],
)
def test_parse_malformed_output(raw, expected):
    tags, valid = parse_hashtags(raw)
    assert valid is False or raw == "[]"
    assert tags == expected


def test_parse_caps_the_number_of_tags():
    raw = "[" + ", ".join(f'"tag{i}"' for i in range(20)) + "]"
    tags, valid = parse_hashtags(raw)
    assert valid and len(tags) == MAX_TAGS


# --- the document's phrases --------------------------------------------------------------


def test_segments_stop_at_punctuation_and_line_breaks():
    text = "Council votes to close pool\n\nThe 2.4 million-pound plan (approved) uses USB-C, Queen's Bridge; 12,000 fans."
    assert segments(text) == [
        ["Council", "votes", "to", "close", "pool"],
        ["The"],
        ["million", "pound", "plan"],
        ["approved"],
        ["uses", "USB", "C"],
        ["Queens", "Bridge"],
        ["fans"],
    ]


def test_doc_phrases_by_hand():
    # summary first; a stopword never starts or ends a phrase; digit-only phrases and 1-letter words are out
    assert doc_phrases(
        "The city library opens.", "Opening hours of the City Library: 9 to 5, from 2024 on."
    ) == [
        "City",
        "CityLibrary",
        "CityLibraryOpens",
        "Library",
        "LibraryOpens",
        "Opens",
        "Opening",
        "OpeningHours",
        "Hours",
        "9To5",
    ]
    assert doc_phrases("one two three four", max_words=2, limit=3) == ["One", "OneTwo", "Two"]


def test_trie_expression_shares_prefixes():
    assert (
        trie_expression(["Hartley", "HartleyRoad", "Harbour", "Pool"])
        == '( "Har" ( "bour" | "tley" ( "Road" )? ) | "Pool" )'
    )
    with pytest.raises(ValueError):
        trie_expression([])


def test_phrase_grammar_and_no_words_plan():
    g = hashtag_grammar("phrase", 3, 3, 16, 1, ["Pool", "SwimmingPool"])
    assert g == (
        'root ::= "[" " "? item ( "," " "? item ){0,2} " "? "]"\n'
        'item ::= "\\"" "#" phrase "\\""\n'
        'phrase ::= ( "Pool" | "SwimmingPool" )\n'
    )
    plan = HashtagSettings(style="ngram").plan("The pool closes.", "Hartley Road pool will close.")
    assert plan.allowed == {
        "pool",
        "poolcloses",
        "closes",
        "hartley",
        "hartleyroad",
        "hartleyroadpool",
        "road",
        "roadpool",
        "poolwillclose",
        "close",
    }  # a stopword may stand inside a phrase
    # no usable word in the document (a summary of it would be invented): no grammar at all
    for doc in ("😀🎉🔥", "x", "The 2024 of", ""):
        assert HashtagSettings(style="ngram").plan("A summary about cats.", doc) is None, doc


# --- the real draft ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mode", HASHTAG_MODES)
def test_sidecar_tags_are_phrases_of_the_document_or_summary(engine, example_texts, mode):
    for doc_id, text in example_texts.items():
        res = engine.run(doc_id, text, mode, SpecConfig(draft_max=4, max_tokens=32))
        h = res.hashtags
        assert h is not None and h.tokens > 0 and h.wall_s > 0
        assert h.raw.startswith("[") and h.raw.endswith("]"), h.raw  # the grammar holds
        assert h.valid_json
        assert 1 <= len(h.tags) <= MAX_TAGS, (doc_id, h.raw)
        assert len({tag_key(t) for t in h.tags}) == len(h.tags)
        assert all(HASHTAG.match(t) and t == normalize_tag(t) for t in h.tags), h.tags
        assert phrase_grounding(h.tags, text, res.summary) == 1.0, (h.tags, res.summary)


def test_phrase_grammar_keeps_the_model_to_the_phrases(engine):
    """Greedy under the phrase grammar: every item is one of the phrases, whole."""
    text = "The Hartley Road swimming pool will close in September after sixty years, the town council said."
    phrases = doc_phrases(text)
    ctx, model = engine.t_ctx, engine.target
    ctx.clear()
    ctx.decode_tokens(model.tokenize(text + "\n\nHashtags:"), 0, (0,), "last")
    h = generate_hashtags(
        TagPhase(ctx, model, 0, model.tokenize(" ")),
        TagPlan(hashtag_grammar("phrase", 3, 3, 16, 3, phrases), None),
    )
    assert h.valid_json and len(h.raw_items) == 3, h.raw
    assert all(t[1:] in phrases for t in h.raw_items), h.raw


def test_hashtag_phase_holds_its_token_budget(engine):
    """Cut off by max_tokens, the array is not valid JSON, and an item cut
    mid-phrase is dropped: every tag kept is still one of the phrases."""
    text = "The Hartley Road swimming pool will close in September after sixty years, the town council said."
    phrases = doc_phrases(text)
    keys = frozenset(map(tag_key, phrases))
    ctx, model = engine.t_ctx, engine.target
    ctx.clear()
    ctx.decode_tokens(model.tokenize(text + "\n\nHashtags:"), 0, (0,), "last")
    h = generate_hashtags(
        TagPhase(ctx, model, 0, model.tokenize(" ")),
        TagPlan(hashtag_grammar("phrase", 3, 3, 16, 3, phrases), keys),
        TagSampling(max_tokens=6),
    )
    assert h.tokens == 6 and not h.valid_json, h.raw
    assert all(tag_key(t) in keys for t in h.tags) and len(h.raw_items) <= 2


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["x", "😀🎉🔥 🙂"])
def test_a_document_without_words_gets_no_tags_and_says_so(engine, doc):
    res = engine.run("odd", doc, "rebased", SpecConfig(max_tokens=8))
    h = res.hashtags
    # no hashtag phase at all (no lead-in, no token): not the camel fallback that named '#facebook'
    assert h.tags == [] and h.tokens == 0 and h.raw == "" and h.raw_items == [] and h.note == NO_WORDS


@pytest.mark.slow
def test_baseline_and_target_only_have_no_hashtags(engine, example_texts):
    text = example_texts["notes"]
    for mode in ("baseline", "target-only"):
        res = engine.run("notes", text, mode, SpecConfig(max_tokens=16))
        assert res.hashtags is None and len(res.gen.tokens) > 0
