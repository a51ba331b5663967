"""hashtags-eval: metrics on hand-made tag lists, then every variant on the
real embedded pair and the command through Click."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.backend import GrammarSampler
from localsidecar.cli import main
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags import metrics as M
from localsidecar.hashtags.generation import (
    GRAMMAR_STYLES,
    HashtagSettings,
    TagPhase,
    TagPlan,
    doc_phrases,
    doc_vocabulary,
    generate_hashtags,
    hashtag_grammar,
    parse_hashtag_items,
    parse_hashtags,
)
from localsidecar.lab.hashtag_eval import (
    KEYWORDS,
    SIDECAR_VARIANTS,
    TARGET,
    VARIANTS,
    VariantRun,
    aggregate,
    evaluate,
    parse_variants,
    score,
)

from .helpers import EXAMPLES

NOTES = (EXAMPLES / "notes.txt").read_text(encoding="utf-8")


# --- metrics on hand-made lists ------------------------------------------------------


@pytest.mark.parametrize(
    "word, expected",
    [
        ("libraries", "library"),
        ("library", "library"),
        ("closing", "clos"),
        ("closed", "clos"),
        ("close", "clos"),
        ("planned", "plan"),
        ("running", "run"),
        ("glasses", "glass"),
        ("bus", "bus"),
        ("this", "this"),
        ("Hours", "hour"),
        ("string", "string"),
        ("seed", "seed"),
    ],
)
def test_stem(word, expected):
    assert M.stem(word) == expected


def test_split_joined_words_against_a_vocabulary():
    vocab = M.vocabulary("The city library opens on Sundays")
    assert M.split_joined("citylibraries", vocab) == ["city", "libraries"]
    assert M.split_joined("thecitylibrary", vocab) == ["the", "city", "library"]
    assert M.split_joined("library", vocab) == ["library"]
    assert M.split_joined("dorfineslaw", vocab) == ["dorfineslaw"]
    assert M.tag_stems("the-city-libraries", vocab) == ["city", "library"]  # stopword dropped
    assert M.tag_stems("#TheCityLibraries", vocab) == ["city", "library"]  # CamelCase words
    assert M.tag_stems("#Citylibraries", vocab) == ["city", "library"]  # joined words split
    assert M.tag_stems("the", vocab) == ["the"]  # ... unless it is all there is
    assert M.tag_words("#MarketStreet2024") == ["market", "street", "2024"]


def test_jaccard_soft_overlap_grounding_duplicates():
    assert (
        M.tag_jaccard(
            ["#CityLibrary", "#Books", "#OpeningHours"], ["citylibrary", "opening-hours", "#Reading"]
        )
        == 0.5
    )
    assert M.tag_jaccard([], []) is None
    assert M.tag_jaccard(["a"], []) == 0.0
    # stems {library, evening, hour} vs {city, library, hour}
    assert M.soft_overlap(["libraries", "evening-hours"], ["city-library", "hours"]) == 0.5
    # staffmembers splits into two words of the notes; the council name is invented
    assert M.grounding(["city-library", "staffmembers", "council-of-dorfineslaw"], NOTES) == pytest.approx(
        2 / 3
    )
    assert M.grounding(["solar"], NOTES, "Solar panels were fitted.") == 1.0
    # contiguous, in order, case and punctuation aside: 'library' + 'van' never stand together in the notes
    assert (
        M.phrase_grounding(["#CityLibrary", "#MobileLibraryVan", "#LibraryVan", "#VanLibrary"], NOTES) == 0.75
    )
    assert M.phrase_grounding(["#Readingclub", "#ReadingClubVolunteers"], NOTES) == 0.5
    assert M.phrase_grounding(["#SolarPanels"], NOTES, "Solar panels were fitted.") == 1.0
    assert M.phrase_grounding([], NOTES) is None
    assert M.grounding([], NOTES) is None
    assert M.duplicate_rate(["a", "b", "a", "a"]) == 0.5
    assert M.duplicate_rate(["a", "b"]) == 0.0
    assert M.duplicate_rate([]) is None
    assert M.mean([1.0, None, 0.0]) == 0.5 and M.mean([None]) is None


def test_tfidf_keywords_by_hand():
    docs = ["apple apple banana the 2024", "banana cherry", "cherry cherry cherry date"]
    # idf(df=1) = ln(4/2) + 1, idf(df=2) = ln(4/3) + 1; banana and cherry tie in doc 2: first one wins
    assert M.tfidf_keywords(docs, 2) == [["apple", "banana"], ["banana", "cherry"], ["cherry", "date"]]
    assert M.tfidf_keywords(docs, 1) == [["apple"], ["banana"], ["cherry"]]
    assert M.tfidf_keywords(["Trams, trams and the tram."], 3) == [
        ["trams"]
    ]  # one stem, most frequent spelling


def test_parse_items_keep_duplicates_for_the_duplicate_rate():
    raw = '["#Reading", "reading", "#Books", "#reading-club"]'
    assert parse_hashtag_items(raw) == (["#Reading", "#Reading", "#Books", "#ReadingClub"], True)
    assert parse_hashtags(raw) == (["#Reading", "#Books", "#ReadingClub"], True)
    assert parse_hashtag_items('["#library", "#comm') == (["#Library", "#Comm"], False)


def test_hashtag_grammar_shapes():
    g = hashtag_grammar("camel", max_items=5, max_words=3, max_word_chars=12, min_items=3)
    assert g == (
        'root ::= "[" " "? item ( "," " "? item ){2,4} " "? "]"\n'
        'item ::= "\\"" "#" word ( word ){0,2} "\\""\n'
        "word ::= [A-Z0-9] [a-z0-9]{0,11}\n"
    )
    for bad in [dict(style="emoji"), dict(min_items=0), dict(min_items=9, max_items=8), dict(max_words=0)]:
        with pytest.raises(ValueError):
            hashtag_grammar(**bad)


def test_doc_vocabulary_and_settings_grammar():
    assert doc_vocabulary("The city library", "Library hours in the city, 9 pm") == [
        "city",
        "library",
        "hours",
        "pm",
    ]
    assert doc_vocabulary("one two three four", limit=2) == ["one", "two"]
    g = HashtagSettings(style="doc").grammar("Solar panels", "The school roof")
    assert g.splitlines()[-1] == 'word ::= "Solar" | "Panels" | "School" | "Roof"'
    assert "{0,2}" in g.splitlines()[0]  # at most three tags
    g = HashtagSettings(style="ngram").grammar("Solar panels", "The school roof")  # every n-gram
    assert (
        g.splitlines()[-1]
        == 'phrase ::= ( "Panels" | "Roof" | "S" ( "chool" ( "Roof" )? | "olar" ( "Panels" )? ) )'
    )
    g = HashtagSettings().grammar("Solar panels", "The school roof")  # the default: the document's candidates
    assert g.splitlines()[-1] == 'phrase ::= "Roof"'  # 'school' only modifies it, 'solar' is the summary's
    for style in ("phrase", "ngram", "doc"):  # no words in the document: no grammar
        assert HashtagSettings(style=style).grammar("Solar panels", "!!! ???") is None
    assert HashtagSettings(style="camel").grammar("", "!!! ???") == hashtag_grammar("camel", 3, 3, 16)


def _run(variant, tags, items, *, summary="", extra=0.0, total=None, valid=True, gen=0, lead=0):
    return VariantRun(
        variant=variant,
        tags=tags,
        raw=json.dumps(tags),
        items=items,
        valid_json=valid,
        summary=summary,
        summary_tokens=0,
        hashtag_tokens=gen,
        lead_tokens=lead,
        extra_s=extra,
        total_s=total,
    )


def test_score_one_row_by_hand():
    text = "The city library will extend its opening hours."
    ref = _run(
        TARGET,
        ["#Library", "#OpeningHours"],
        ["#Library", "#OpeningHours"],
        extra=2.0,
        total=6.0,
        gen=9,
        lead=20,
    )
    run = _run(
        "rebased-shifted",
        ["#CityLibrary", "#Books"],
        ["#CityLibrary", "#Books", "#Books"],
        summary="The library opens later.",
        extra=0.5,
        total=3.0,
        gen=10,
        lead=4,
    )
    row = score(run, text, ref)
    assert row["dup_rate"] == pytest.approx(1 / 3)
    assert row["grounded"] == 0.5  # 'books' is in neither text
    assert row["phrase"] == 0.5  # 'city library' is a phrase of the text
    assert row["hashtag_jaccard"] == 0.0
    assert row["soft"] == pytest.approx(1 / 5)  # {city, library, book} vs {library, open, hour}
    assert row["extra_tokens"] == 14 and row["total_vs_target"] == 0.5
    ref_row = score(ref, text, ref)
    assert (
        ref_row["soft"] is None and ref_row["hashtag_jaccard"] is None and ref_row["total_vs_target"] == 1.0
    )


def _row(variant, **kw):
    base = dict(
        variant=variant,
        valid_json=True,
        n_tags=2,
        dup_rate=0.0,
        grounded=1.0,
        phrase=0.5,
        hashtag_jaccard=None,
        soft=None,
        extra_s=1.0,
        extra_tokens=10,
        total_s=5.0,
    )
    return {**base, **kw}


def test_aggregate_by_hand():
    records = [
        {
            "id": "a",
            "rows": [
                _row(TARGET, extra_s=2.0, total_s=6.0),
                _row(
                    "masked",
                    dup_rate=1 / 3,
                    grounded=0.5,
                    hashtag_jaccard=0.0,
                    soft=0.2,
                    extra_s=0.5,
                    total_s=3.0,
                ),
                _row(KEYWORDS, extra_s=0.0, extra_tokens=0, total_s=None, n_tags=5),
            ],
        },
        {
            "id": "b",
            "rows": [
                _row(TARGET, extra_s=1.0, total_s=4.0),
                _row(
                    "masked",
                    valid_json=False,
                    n_tags=1,
                    dup_rate=None,
                    grounded=None,
                    hashtag_jaccard=1.0,
                    soft=0.6,
                    extra_s=0.5,
                    total_s=5.0,
                ),
            ],
        },
    ]
    by = {s["variant"]: s for s in aggregate(records)}
    m = by["masked"]
    assert m["n_docs"] == 2 and m["valid_json_rate"] == 0.5 and m["n_tags"] == 1.5
    assert m["dup_rate"] == pytest.approx(1 / 3) and m["grounded"] == 0.5
    assert m["hashtag_jaccard"] == 0.5 and m["soft"] == pytest.approx(0.4)
    assert m["total_s"] == 8.0 and m["total_vs_target"] == pytest.approx(0.8)  # (3 + 5) / (6 + 4)
    assert m["extra_vs_target"] == pytest.approx(1 / 3)  # (0.5 + 0.5) / (2 + 1)
    assert by[TARGET]["total_vs_target"] == 1.0
    assert (
        by[KEYWORDS]["n_docs"] == 1
        and by[KEYWORDS]["total_s"] is None
        and by[KEYWORDS]["total_vs_target"] is None
    )


def test_summary_table_marks_the_reference():
    from rich.console import Console

    from localsidecar.cli.hashtags import print_summary_table

    by = aggregate([{"id": "a", "rows": [_row(TARGET), _row("masked", hashtag_jaccard=0.25, soft=0.5)]}])
    console = Console(record=True, width=120)
    print_summary_table(console, by, "t")
    lines = {
        ln.split()[0]: ln.split()[1:]
        for ln in console.export_text().splitlines()
        if ln.strip().startswith(("target", "masked"))
    }
    assert lines["target"][:7] == ["1.00", "2.0", "0.00", "1.00", "0.50", "ref", "ref"]
    assert lines["masked"][:7] == ["1.00", "2.0", "0.00", "1.00", "0.50", "0.25", "0.50"]


def test_parse_variants():
    assert parse_variants("all") == list(VARIANTS)
    assert parse_variants("target, masked,target") == ["target", "masked"]
    with pytest.raises(ValueError, match="unknown variant 'rebased'"):
        parse_variants("rebased")


# --- the real embedded pair --------------------------------------------------------------


@pytest.fixture(scope="module")
def engine1(pair_paths):
    """One thread: on a shared 2-core machine this runs several times faster
    than two threads competing with other processes."""
    from localsidecar.decoding.engine import Engine, EngineConfig
    from localsidecar.decoding.prompts import PromptConfig

    with Engine(pair_paths[0], pair_paths[1], EngineConfig(n_ctx=2048, threads=1), PromptConfig()) as eng:
        yield eng


def _prefill(engine, text):
    ctx, model = engine.t_ctx, engine.target
    ctx.clear()
    ctx.decode_tokens(model.tokenize(text), 0, (0,), "last")
    return ctx, model


@pytest.mark.slow
def test_content_penalty_edits_only_the_chosen_logits(engine1):
    ctx, model = _prefill(engine1, "Tags for a story about the city library:")
    before = ctx.logits(-1).copy()
    ids = [int(before.argmax()), int(before.argmin())]
    s = GrammarSampler(model, hashtag_grammar("free"))
    try:
        s.sample(ctx, -1, ids, 2.0)
    finally:
        s.free()
    after = ctx.logits(-1)
    assert after[ids[0]] == (before[ids[0]] / 2 if before[ids[0]] > 0 else before[ids[0]] * 2)
    assert after[ids[1]] == before[ids[1]] * 2  # the lowest logit is negative
    others = np.setdiff1d(np.arange(len(before)), ids)
    assert (after[others] == before[others]).all()


@pytest.mark.slow
@pytest.mark.parametrize("style", ["free", "doc", "phrase"])
def test_fast_greedy_path_matches_the_full_grammar(engine1, style):
    """Checking the argmax against a copy of the grammar gives token for token
    what filtering the whole vocabulary gives, and mostly skips that filter."""
    vocab = doc_phrases(NOTES) if style == "phrase" else doc_vocabulary(NOTES)
    grammar = hashtag_grammar(style, 5, 3, 16, 3, vocab)
    outs, stats = [], []
    for fast in (True, False):
        ctx, model = _prefill(engine1, NOTES + "\n\nHashtags: ")
        pos, out, seen, n = ctx.pos_max(0) + 1, [], set(), 0
        s = GrammarSampler(model, grammar, fast=fast)
        try:
            while len(out) < 64:
                tok = s.sample(ctx, -1, seen, 1.3)
                n += 1
                if model.is_eog(tok):
                    break
                out.append(tok)
                seen.add(tok)
                ctx.decode_tokens([tok], pos, (0,), "last")
                pos += 1
        finally:
            s.free()
        outs.append(out)
        stats.append((s.fast_hits, s.full_runs, n))
    assert outs[0] == outs[1] and json.loads(engine1.target.detokenize(outs[0]))
    fast, full = stats
    assert fast[0] > 0 and fast[0] + fast[1] == fast[2]
    assert full[:2] == (0, full[2])


@pytest.mark.slow
@pytest.mark.parametrize(
    "style, item_re",
    [
        ("free", r"#?[A-Za-z0-9]+([ -][A-Za-z0-9]+)*"),
        ("camel", r"#([A-Z0-9][a-z0-9]*)+"),
        ("hyphen", r"[a-z0-9]+(-[a-z0-9]+)*"),
        ("words", r"[a-z0-9]+( [a-z0-9]+)*"),
        ("doc", None),
        ("phrase", None),
    ],
)
def test_every_grammar_style_constrains_the_model(engine1, style, item_re):
    assert style in GRAMMAR_STYLES
    vocab = doc_vocabulary(NOTES[:300])
    if style == "doc":
        item_re = "#(" + "|".join(w.capitalize() for w in vocab) + ")+"
    if style == "phrase":
        vocab = doc_phrases(NOTES[:300], max_words=2)
        item_re = "#(" + "|".join(vocab) + ")"
    ctx, model = _prefill(engine1, NOTES[:300] + "\n\nHashtags:")
    h = generate_hashtags(
        TagPhase(ctx, model, 0, model.tokenize(" ")),
        TagPlan(hashtag_grammar(style, 4, 2, 12, 2, vocab), None),
    )
    items = json.loads(h.raw)
    assert h.valid_json and 2 <= len(items) <= 4, h.raw
    assert all(re.fullmatch(item_re, x) for x in items), h.raw


@pytest.fixture(scope="module")
def evaluated(engine1, example_texts):
    docs = list(example_texts.items())[:2]  # every variant on two documents
    return evaluate(engine1, docs, list(VARIANTS), SpecConfig(draft_max=4, max_tokens=16))


@pytest.mark.slow
def test_every_variant_yields_a_row_per_example_doc(evaluated, example_texts):
    assert [e.id for e in evaluated] == list(example_texts)[:2]
    for ev in evaluated:
        assert [r["variant"] for r in ev.rows] == list(VARIANTS)
        for r in ev.rows:
            assert r["hashtags_raw"].startswith("[") and r["hashtags_raw"].endswith("]"), r
            assert r["valid_json"] and 1 <= r["n_tags"] <= 8
            assert 0 <= r["grounded"] <= 1 and 0 <= r["dup_rate"] <= 1
            if r["variant"] != KEYWORDS:  # the grammar: phrases of the document or summary
                assert r["phrase"] == 1.0 and r["grounded"] == 1.0, r
            if r["variant"] in SIDECAR_VARIANTS:
                assert 0 <= r["hashtag_jaccard"] <= 1 and 0 <= r["soft"] <= 1
                assert r["summary_tokens"] > 0 and r["hashtag_tokens"] > 0


@pytest.mark.slow
def test_target_reference_yields_tags_and_timings_are_positive(evaluated):
    for ev in evaluated:
        rows = {r["variant"]: r for r in ev.rows}
        ref = rows[TARGET]
        assert ref["hashtags"] and ref["hashtag_tokens"] > 0 and ref["summary_tokens"] > 0
        for name in (*SIDECAR_VARIANTS, TARGET):
            r = rows[name]
            assert r["extra_s"] > 0 and r["total_s"] > r["extra_s"] and r["total_vs_target"] > 0
            assert r["extra_tokens"] > r["hashtag_tokens"]  # a lead-in was decoded first
        assert rows[KEYWORDS]["total_s"] is None and rows[KEYWORDS]["extra_tokens"] == 0


@pytest.mark.slow
def test_sidecar_extra_time_is_below_the_targets(evaluated):
    """Summed over the examples: the default layout's hashtag phase on the
    draft costs less than the target's own hashtag phase."""
    by = {s["variant"]: s for s in aggregate(e.record() for e in evaluated)}
    assert 0 < by["rebased-shifted"]["extra_vs_target"] < 1, by["rebased-shifted"]
    assert by[TARGET]["extra_vs_target"] == 1.0


# --- the command -----------------------------------------------------------------------


def test_cli_keywords_only_needs_no_model(tmp_path):
    r = CliRunner().invoke(
        main, ["hashtags-eval", str(EXAMPLES / "docs"), "--variants", "keywords", "--json"]
    )
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["kind"] for x in lines] == ["document"] * 3 + ["summary"]
    assert lines[0]["rows"][0]["hashtags"] == ["#Bakery", "#Close", "#Owners", "#Prices", "#Keep"]
    assert lines[-1]["variants"][0]["grounded"] == 1.0 and lines[-1]["variants"][0]["phrase"] == 1.0
    # not a terminal: one progress line per document on stderr, none with --quiet
    assert [x.split(":")[0] for x in r.stderr.splitlines()] == ["[1/3] bakery", "[2/3] river", "[3/3] solar"]
    q = CliRunner().invoke(
        main, ["hashtags-eval", str(EXAMPLES / "docs"), "--variants", "keywords", "--json", "-q"]
    )
    assert q.exit_code == 0 and q.stderr == "" and len(q.stdout.splitlines()) == 4


@pytest.mark.slow
def test_cli_json_out_csv_and_resume(tmp_path):
    out, csv_path = tmp_path / "eval.jsonl", tmp_path / "eval.csv"
    args = [
        "hashtags-eval",
        str(EXAMPLES / "docs" / "river.txt"),
        "--variants",
        "rebased-shifted,target",
        "--max-tokens",
        "16",
        "--threads",
        "1",
        "--out",
        str(out),
        "--csv",
        str(csv_path),
    ]
    r = CliRunner().invoke(main, args + ["--json"])
    assert r.exit_code == 0, r.output
    doc, summary = [json.loads(x) for x in r.stdout.splitlines()]
    assert doc["id"] == "river" and [x["variant"] for x in doc["rows"]] == ["rebased-shifted", "target"]
    assert {s["variant"] for s in summary["variants"]} == {"rebased-shifted", "target"}
    assert len(csv_path.read_text().splitlines()) == 3  # header + 2 rows
    again = CliRunner().invoke(main, args)  # resumes: nothing to run
    assert again.exit_code == 0, again.output
    assert "skipped 1 document already" in again.stderr and "hashtags over 1 document " in again.stdout
    assert len(out.read_text().splitlines()) == 1
    bad = CliRunner().invoke(main, ["hashtags-eval", str(EXAMPLES / "notes.txt"), "--variants", "nope"])
    assert bad.exit_code == 2 and "unknown variant 'nope'" in bad.stderr


@pytest.mark.slow
def test_cli_sidecar_tags_follow_runs_summary():
    """The default summary is run's (extract on the embedded pair): the sidecar
    variant writes the tags `run` prints, and the target's after the same extract."""
    doc = str(EXAMPLES / "docs" / "river.txt")
    ran = CliRunner().invoke(main, ["run", doc, "--threads", "1", "--json"])
    assert ran.exit_code == 0, ran.output
    rec = json.loads(ran.stdout.splitlines()[0])
    assert rec["summary_mode"] == "extract"
    args = ["hashtags-eval", doc, "--variants", "rebased-shifted,target", "--threads", "1", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rows = {x["variant"]: x for x in json.loads(r.stdout.splitlines()[0])["rows"]}
    assert rows["rebased-shifted"]["hashtags"] == rec["hashtags"], (rows["rebased-shifted"], rec["hashtags"])
    assert rows["rebased-shifted"]["summary"] == rows["target"]["summary"] == rec["summary"]
    assert 0 < rows["target"]["extra_s"] < rows["target"]["total_s"]  # the phase, without the re-decode
    free = CliRunner().invoke(main, [*args, "--summary", "free"])
    assert free.exit_code == 0, free.output
    assert json.loads(free.stdout.splitlines()[0])["rows"][0]["summary"] != rec["summary"]
