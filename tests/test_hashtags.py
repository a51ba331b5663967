"""Hashtag parsing, normalization, and the sidecar on the real draft."""

from __future__ import annotations

import pytest

from localsidecar.hashtags import MAX_TAGS, normalize_tag, parse_hashtags
from localsidecar.layouts import HASHTAG_MODES
from localsidecar.speculative import SpecConfig


@pytest.mark.parametrize(
    "raw, tag",
    [
        ("#ClimateChange", "climate-change"),
        ("  climate change ", "climate-change"),
        ("#AI", "ai"),
        ("solar_power!!", "solar-power"),
        ("Énergie Solaire", "énergie-solaire"),
        ("###", ""),
        ("river-clean-up", "river-clean-up"),
    ],
)
def test_normalize_tag(raw, tag):
    assert normalize_tag(raw) == tag


def test_parse_valid_json_dedupes_in_order():
    tags, valid = parse_hashtags('["#Solar", "solar", "#SchoolRoof", "energy", "Energy "]')
    assert valid is True
    assert tags == ["solar", "school-roof", "energy"]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('["#library", "#opening-hours", "#comm', ["library", "opening-hours", "comm"]),  # truncated array
        ("#library #books #library", ["library", "books"]),                                # plain hashtags
        ("library, books, reading club", ["library", "books", "reading-club"]),            # comma list
        ("[]", []),
        ("", []),
        ('{"tags": ["a"]}', ["a"]),
        ("[1, 2, 3]", ["1", "2", "3"]),
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


@pytest.mark.parametrize("mode", HASHTAG_MODES)
def test_sidecar_yields_hashtags_on_examples(engine, example_texts, mode):
    for doc_id, text in example_texts.items():
        res = engine.run(doc_id, text, mode, SpecConfig(draft_max=4, max_tokens=64))
        h = res.hashtags
        assert h is not None and h.tokens > 0 and h.wall_s > 0
        assert h.raw.startswith("[") and h.raw.endswith("]"), h.raw   # the grammar holds
        assert h.valid_json
        assert 1 <= len(h.tags) <= MAX_TAGS, (doc_id, h.raw)
        assert len(set(h.tags)) == len(h.tags)
        assert all(t == normalize_tag(t) for t in h.tags)


def test_baseline_and_target_only_have_no_hashtags(engine, example_texts):
    text = example_texts["notes"]
    for mode in ("baseline", "target-only"):
        res = engine.run("notes", text, mode, SpecConfig(max_tokens=16))
        assert res.hashtags is None and len(res.gen.tokens) > 0
