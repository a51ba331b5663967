"""Tags from a vocabulary (hashtags/vocabulary.py, notes/inline_tags.py): which
vocabulary tags a document is offered, and, on the real engine, that the
picker gives only vocabulary tags (fewer, or none, when few match)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags.metrics import tag_key
from localsidecar.hashtags.vocabulary import VocabularySettings, read_vocabulary, vocabulary_candidates
from localsidecar.notes.inline_tags import inline_tags

from .helpers import ROOT

FERRY = (ROOT / "tests" / "data" / "ferry.txt").read_text(encoding="utf-8")
VOCABULARY = (
    "ferries",
    "area/shipping",
    "island-life",
    "sailing",
    "cooking",
    "Deliveries",
    "school",
    "people",
    "project/2025-q1",
)


def test_vocabulary_tags_match_by_lemma_and_by_the_documents_candidates():
    offered = {c.text: c for c in vocabulary_candidates(FERRY, "", VOCABULARY, 10)}
    assert "Ferries" in offered  # 'ferries' matches the text's 'ferry' (lemma)
    assert "AreaShipping" in offered  # the candidate 'Western Isles Shipping' holds 'shipping'
    assert "Deliveries" in offered  # 'deliveries' in the text
    assert not {"Sailing", "Cooking", "IslandLife", "People", "Project2025Q1"} & set(offered)  # no synonyms
    scores = [c.score for c in offered.values()]
    assert scores == sorted(scores, reverse=True)


def test_no_match_offers_nothing_and_plans_no_tags():
    assert vocabulary_candidates(FERRY, "", ("cooking", "chess"), 5) == []
    assert VocabularySettings.of(VocabularySettings(), ("cooking",)).plan("", FERRY) is None


def test_the_plan_offers_vocabulary_tags_only_and_spells_them_back():
    settings = VocabularySettings.of(VocabularySettings(), VOCABULARY)
    plan = settings.plan("", FERRY)
    keys = {tag_key(v) for v in VOCABULARY}
    assert plan.candidates and {tag_key(c.text) for c in plan.candidates} <= keys
    assert plan.allowed <= keys and plan.want == min(3, len(plan.candidates))
    assert settings.spelled("#AreaShipping") == "area/shipping"


def test_read_vocabulary(tmp_path):
    f = tmp_path / "tags.txt"
    f.write_text(
        "\ufeff#ferry\n\n% a comment\nFerry\narea/transport\n  island-life  \n1234\n", encoding="utf-8"
    )
    assert read_vocabulary(str(f)) == ("ferry", "area/transport", "island-life")


def test_inline_tags_as_obsidian_reads_them():
    body = "# Heading\n#meeting and #team/payments, not a#b or #123.\n`#code`\n```\n#fenced\n```\n#2024-q1 #café\n"
    assert inline_tags(body) == ["meeting", "team/payments", "2024-q1", "café"]


@pytest.fixture
def vocabulary_engine(engine):
    """The session engine with vocabulary settings, restored afterwards."""
    old = engine.cfg
    yield lambda vocab: setattr(
        engine, "cfg", dataclasses.replace(old, hashtags=VocabularySettings.of(old.hashtags, vocab))
    )
    engine.cfg = old


@pytest.mark.slow
def test_the_picker_gives_vocabulary_tags_only(engine, vocabulary_engine, example_texts):
    spec = SpecConfig(max_tokens=16)
    vocab = ("ferries", "area/shipping", "Deliveries", "school", "bread", "rivers", "solar-panels")
    vocabulary_engine(vocab)
    keys = {tag_key(v) for v in vocab}
    seen = []
    for doc_id, text in [("ferry", FERRY), ("bakery", example_texts["bakery"])]:
        res = engine.run(doc_id, text, "rebased", spec)
        assert {tag_key(t) for t in res.hashtags.tags} <= keys, (doc_id, res.hashtags.tags)
        seen.append(len(res.hashtags.tags))
    assert max(seen) >= 2  # the ferry story matches several
    vocabulary_engine(("cooking",))
    res = engine.run("ferry", FERRY, "rebased", spec)
    assert res.hashtags.tags == []  # nothing matches: no tag rather than another one


@pytest.mark.slow
def test_tag_with_a_vocabulary_file_and_existing(tmp_path, session_models_dir):
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "ferry.md").write_text(f"---\ntags: [island-life]\n---\n{FERRY}\n")
    (vault / "other.md").write_text("#deliveries\n\nThe school bus will run later on Mondays.\n")
    vocab = tmp_path / "tags.txt"
    vocab.write_text("ferries\narea/shipping\nschool\n")
    env = {"LOCALSIDECAR_MODELS_DIR": str(session_models_dir)}
    for choice, allowed in ((str(vocab), {"ferries", "area/shipping", "school"}), ("existing", None)):
        r = CliRunner().invoke(
            main,
            ["tag", str(vault), "--json", "--force", "--max-tokens", "16", "--vocabulary", choice],
            env=env,
        )
        assert r.exit_code == 0, r.output
        recs = {
            json.loads(line)["path"].rsplit("/", 1)[1]: json.loads(line) for line in r.stdout.splitlines()
        }
        added = {name: rec["tags_added"] for name, rec in recs.items()}
        if allowed is not None:
            assert all(set(tags) <= allowed for tags in added.values()) and added["ferry.md"]
        else:  # the vault's own tags: its front matter's and its inline ones
            assert all(set(tags) <= {"island-life", "deliveries"} for tags in added.values())
            assert "deliveries" in added["ferry.md"]
