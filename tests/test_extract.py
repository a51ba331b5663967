"""Extract summaries on the real embedded pair: the target picks the document's own
sentences (summary/extract.py, summary/scoring.py), `run --summary`, resume by mode."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.decoding.defaults import EXTRACT_MAX_TOKENS
from localsidecar.decoding.layouts import prefill_target
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.summary.candidates import document_candidates, summary_spans
from localsidecar.summary.extract import (
    NEWS_SHARE,
    NEWS_SLACK,
    NEWS_WORDS,
    NOTES_SETTINGS,
    ExtractSettings,
    Picker,
)
from localsidecar.summary.references import introduced_surnames, leans_back, names_a_stranger
from localsidecar.summary.scoring import Scorer

from .helpers import BENCHMARKS, EXAMPLES, one_line_error, rebuilt

NOTES_STYLE = sorted((BENCHMARKS / "notes-style").iterdir())
# minutes as many projects write them: headings, bullets nested under their topic
MARKDOWN_MINUTES = """# Platform team meeting 2026-03-04

## Present

* Ana Lima, Ben Okafor, Chen Wu

## Announcements

* Ben was elected as the new release manager for the spring cycle.

## Storage

* The nightly backups failed twice last week because the disk was full.
  * The team agreed to move the backups to the new cluster by Friday.
  * Chen to write a runbook for restoring a backup from the new cluster.

## Hiring

* Two candidates reached the final round for the support engineer role.
* Ana will make an offer to one of them before the end of the month.

## Upcoming Meetings

* Calendar: https://example.org/calendar
"""


def extract_spec(**kw) -> SpecConfig:
    return SpecConfig(summary="extract", **kw)


@pytest.fixture(scope="module")
def target_only_extracts(engine) -> dict:
    """The target-only extract of every notes-style example."""
    out = {}
    for path in NOTES_STYLE:
        text = path.read_text(encoding="utf-8")
        out[path.name] = (text, engine.run(path.stem, text, "target-only", extract_spec()))
    out["minutes.md"] = (
        MARKDOWN_MINUTES,
        engine.run("minutes", MARKDOWN_MINUTES, "target-only", extract_spec()),
    )
    return out


def units_of(ex) -> list:
    """The chosen units, without the opening line of topics (summary.outline)."""
    return [c for c in ex.chosen if c.kind != "topics"]


def test_an_extract_is_the_documents_text_and_never_its_header(engine, target_only_extracts):
    for name, (text, res) in target_only_extracts.items():
        ex = res.extract
        units = units_of(ex)
        assert res.summary_mode == "extract" and res.unsupported is None
        assert 3 <= len(units) <= NOTES_SETTINGS.max_sentences  # notes
        assert res.summary == " ".join(c.text for c in ex.chosen)
        assert sum(len(c.text.split()) for c in units) <= NOTES_SETTINGS.max_words
        assert engine.target.detokenize(res.gen.tokens) == res.summary  # the tokens are the candidates'
        for c in units:  # every character from the document (a cut clause adds its '.')
            assert rebuilt(c.text, text, c.spans) in ("", "."), (name, c.text)
        for c in ex.chosen[: len(ex.chosen) - len(units)]:  # the opening: "Topics: ", "; " and "." added
            assert rebuilt(c.text, text, c.spans) == ".", c.text
        header_end = text.index("\n\n")
        if name == "minutes.md":
            header_end = text.index("## Announcements")  # the title and the Present section
            headings = [m.span() for m in re.finditer(r"^#.*$", text, re.MULTILINE)]
            shown = [a for c in units for a in c.at[c.lead :] if a >= 0]  # a heading is at most a title
            assert not any(h0 <= a < h1 for a in shown for h0, h1 in headings)
            assert ex.chosen[0].text == "Topics: Storage; Hiring."  # the headings of what it covered
        assert all(a > header_end for c in ex.chosen for a, _ in c.spans), name  # no header line chosen
        assert len(res.gen.tokens) <= extract_spec().max_tokens == EXTRACT_MAX_TOKENS
        assert res.hashtags is None  # target-only: no hashtag phase


def test_a_notes_summary_covers_more_than_the_first_section(target_only_extracts):
    """Minutes: several short units (items, cut clauses), across the document's sections,
    decisions and actions among them; every unit is the document's own text."""
    for name, (_, res) in target_only_extracts.items():
        chosen = res.extract.chosen
        assert len({c.block for c in chosen}) >= 2, name  # not one paragraph's sentences
        assert any(c.cue for c in chosen), name  # a decision, an outcome or an action
    text, res = target_only_extracts["minutes.md"]
    chosen = units_of(res.extract)
    assert len({c.section for c in chosen}) >= 3  # Announcements, Storage, Hiring
    assert all(c.listed for c in chosen)  # list items, in a budget
    assert sum(len(c.text.split()) for c in chosen) <= NOTES_SETTINGS.max_words
    assert [c.index for c in chosen] == sorted(c.index for c in chosen)  # shown in the document's order
    for c in chosen:
        assert rebuilt(c.text, text, c.spans) in ("", ".")


def test_a_notes_unit_is_shown_with_its_topic_title(target_only_extracts):
    """Markdown minutes: a unit under "Storage" or "Hiring" shows that heading (the joining
    ': ' is the only character added); the record's spans give each piece's place in the
    document; no two units share a title or repeat each other's text."""
    text, res = target_only_extracts["minutes.md"]
    chosen = res.extract.chosen
    titled = [c for c in chosen if c.lead]
    assert titled and all(c.text.startswith(("Storage: ", "Hiring: ")) for c in titled)
    assert not any(c.text.startswith("Announcements") for c in chosen)  # a generic label
    spans = summary_spans(chosen, res.extract.shown)
    at = 0
    for a, b in spans:  # the summary walked along its spans: between them only what the extract adds
        found = res.summary.index(text[a:b], at)
        assert res.summary[at:found] in ("", " ", ": ", ".", ". ", "Topics: ", "; "), res.summary[at:found]
        at = found + b - a
    assert res.summary[at:] in ("", ".")
    taken = [(a, b) for c in units_of(res.extract) for a, b in c.spans]  # the opening repeats titles
    assert all(b <= c for (_, b), (c, _) in zip(sorted(taken), sorted(taken)[1:]))  # no text twice


@pytest.mark.parametrize(
    ("name", "mode", "draft_max"),
    [
        ("school-board.txt", "rebased", 1),
        ("team-standup.txt", "masked", 3),
        ("school-board.txt", "deferred", "auto"),
        ("minutes.md", "rebased", 1),
        ("minutes.md", "masked", 3),
    ],
)
def test_speculative_extract_is_the_target_only_extract(engine, target_only_extracts, name, mode, draft_max):
    text, ref = target_only_extracts[name]
    res = engine.run(name, text, mode, extract_spec(draft_max=draft_max))
    assert res.gen.tokens == ref.gen.tokens  # token for token, at any draft size
    st = res.extract.stats
    if draft_max == "auto":
        assert st.drafted == 0  # the target scores every candidate anyway: nothing to draft
    else:
        assert 0 < st.drafted and 0 <= st.accepted <= st.drafted
    assert st.choices == len(units_of(ref.extract))
    assert res.hashtags is not None and res.hashtags.tags  # the draft writes the tags after the summary
    # the draft's cache ends at the summary (what the hashtag phase caught up from)
    assert engine.d_ctx.pos_max(2) == -1 and engine.t_ctx.pos_max(1) == -1  # no candidate sequence left


NEWS = [BENCHMARKS / "heldout" / "docs" / n for n in ("fresh_library_cyberattack.txt", "tram_extension.txt")]


@pytest.mark.slow
@pytest.mark.parametrize("path", NEWS, ids=lambda p: p.stem)
def test_a_news_extract_is_whole_sentences_up_to_half_its_words_in_the_documents_order(engine, path):
    """A news article: whole sentences up to NEWS_SHARE of its words (within NEWS_WORDS),
    stopping within NEWS_SLACK of that, its lead among them, shown in the document's order
    (re-laid after the choices); the speculative extract is the same token for token."""
    text = path.read_text(encoding="utf-8")
    ref = engine.run(path.stem, text, "target-only", extract_spec())
    chosen = ref.extract.chosen
    most = min(NEWS_WORDS[1], max(NEWS_WORDS[0], round(NEWS_SHARE * len(text.split()))))
    words = sum(len(c.text.split()) for c in chosen)
    assert most - NEWS_SLACK <= words <= most and ref.extract.stopped == "length", (words, most)
    assert [c.index for c in chosen] == sorted(c.index for c in chosen) and chosen[0].index == 0
    assert engine.target.detokenize(ref.gen.tokens) == ref.summary == " ".join(c.text for c in chosen)
    for c in chosen:
        assert rebuilt(c.text, text, c.spans) == ""  # whole sentences of the document
    # none leans on a sentence left out or names someone not yet introduced (hold_back_references)
    have, surnames = {c.sentence for c in chosen}, introduced_surnames(document_candidates(text))
    for k, c in enumerate(chosen[1:], 1):  # the lead leans on nothing
        said = " ".join(o.text for o in chosen[:k])
        assert not leans_back(c, have) and not names_a_stranger(c.text, said, surnames, c.sentence), c.text
    res = engine.run(path.stem, text, "rebased", extract_spec(draft_max=2))
    assert res.gen.tokens == ref.gen.tokens and res.extract.stats.drafted > 0
    assert res.hashtags is not None and res.hashtags.tags


def test_batched_scores_match_one_candidate_at_a_time_within_noise(engine):
    """Every candidate in its own sequence, one decode for all, against each alone after
    a fresh prefill. Not bit-identical here: a candidate's rows depend on its cells and
    its place in the batch (docs/DESIGN.md, Mixed-sequence batches), so the design never
    needs them equal; the difference is noise, far below the gaps choices are made on."""
    text = (EXAMPLES / "notes.txt").read_text(encoding="utf-8")
    p, opts = engine.prompt(text), engine.options_for(text)
    toks = [opts.tokens(i, 0) for i in range(len(opts.cands))]

    def scores(cands):
        prefill_target(engine.t_ctx, p)
        sc = Scorer(engine.t_ctx, len(p.bare) - 1, p.bare[-1:])
        got = sc.score(cands, [len(t) for t in cands])
        sc.finish()
        return got

    together = scores(toks)
    assert together.decodes == 1
    alone = [scores([t]).log_probs[0] for t in toks]
    assert [len(a) for a in alone] == [len(t) for t in toks]
    token_diff = max(float(np.abs(a - b).max()) for a, b in zip(alone, together.log_probs))
    mean_diff = max(abs(float(a.mean() - b.mean())) for a, b in zip(alone, together.log_probs))
    assert token_diff < 0.5 and mean_diff < 0.05, (token_diff, mean_diff)
    # the first candidate sits where it sits alone: the same cells and rows, bit for bit
    assert np.array_equal(alone[0], together.log_probs[0])
    means_alone = np.array([a.mean() for a in alone])
    means_together = np.array([b.mean() for b in together.log_probs])
    gap = np.sort(means_alone)[-1] - np.sort(means_alone)[-2]
    assert np.argmax(means_alone) == np.argmax(means_together) or gap < 2 * mean_diff


@pytest.fixture()
def runner():
    return CliRunner()


def test_run_records_the_summary_mode_and_resume_keeps_to_it(runner, tmp_path):
    doc = str(EXAMPLES / "docs" / "bakery.txt")
    out = tmp_path / "res.jsonl"
    r = runner.invoke(main, ["run", doc, "--json", "--out", str(out), "--mode", "target-only"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["summary_mode"] == "extract"  # auto: the embedded target has 135M parameters
    assert rec["unsupported"] is None and rec["choices"] >= 2 and rec["choices_drafted"] == 0
    text = (EXAMPLES / "docs" / "bakery.txt").read_text(encoding="utf-8")
    at = 0
    for a, b in rec["summary_spans"]:  # the document's text, in the summary's order
        at = rec["summary"].index(text[a:b], at) + b - a
    assert at >= len(rec["summary"]) - 1
    # the same mode resumes (nothing left to do); another mode is refused, the file kept
    again = runner.invoke(
        main, ["run", doc, "--json", "--out", str(out), "--mode", "target-only", "--summary", "extract"]
    )
    assert again.exit_code == 0 and again.stdout == ""
    before = out.read_bytes()
    free = runner.invoke(main, ["run", doc, "--out", str(out), "--mode", "target-only", "--summary", "free"])
    line = one_line_error(free)
    assert "spec.summary" in line and '"extract" in the file, "free" now' in line
    assert out.read_bytes() == before
    free_out = tmp_path / "free.jsonl"
    r = runner.invoke(
        main,
        ["run", doc, "--json", "--out", str(free_out), "--summary", "free", "--max-tokens", "48"],
        env={"LOCALSIDECAR_SUMMARY": "extract"},  # the option wins over the environment
    )
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["summary_mode"] == "free" and isinstance(rec["unsupported"], list)
    assert all(set(u) == {"span", "why"} and u["span"] in rec["summary"] for u in rec["unsupported"])
    assert "summary_spans" not in rec


SPEAKER_NOTES = """# Community council general meeting, February 2023

## Speakers

b)  **Susan Burn** -- Community Engagement Officer, Govan Housing
    Association, attended to describe her role. Her work involved liaison with all tenants
    of the Association across the Greater Govan Area.
    The next community litterpick is on 24 February at 2.30 p.m. at the library.

## Litter

The council agreed to write to the City Council about litter in the streets around the park.
"""


def test_the_first_sentence_offered_leans_back_when_it_opens_on_someone(engine):
    """The line that names Susan Burn gives no candidate, so "Her work involved ..." is the
    first sentence offered: it still leans (no one knows who "her" is), so the extract holds
    it back; the next, which opens on no one, does not lean."""
    opts = engine.options_for(SPEAKER_NOTES)
    picker = Picker(None, opts, ExtractSettings())
    first, second = opts.cands[0], opts.cands[1]
    assert first.text.endswith(
        "Her work involved liaison with all tenants of the Association across the Greater Govan Area."
    )
    assert first.sentence == opts.first_sentence and picker._leans(first, set(), "")
    assert not picker._leans(second, set(), "")
