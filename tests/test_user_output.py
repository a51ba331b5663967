"""What a user reads. Summaries that end on a sentence, progress on
stderr, stats that add up, tables within 100 columns, the lines that say
what the numbers cannot say, `pull` failing fast, the first derivation's note."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from localsidecar.cli import main
from localsidecar.decoding.sentences import SentenceStop, complete_summary, sentence_ends, tokens_shown
from localsidecar.decoding.speculative import SpecConfig

from .helpers import EXAMPLES

# --- sentences ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, shown, complete",
    [
        ("It cost 3.1 million. The town", "It cost 3.1 million.", True),  # a decimal point is no end
        ("Dr. Vos said so. Then the", "Dr. Vos said so.", True),  # nor an abbreviation
        ("J. Smith and U.S. Army staff left. Both", "J. Smith and U.S. Army staff left.", True),
        ("Steps:\n1. Rinse the lentils. 2. Cook", "Steps:\n1. Rinse the lentils.", True),  # nor a list number
        ('He said "no." Then', 'He said "no."', True),  # quotes close the sentence
        ("approx. five days and", "approx. five days and", False),  # no end at all: shown whole
        ("Ends here.", "Ends here.", True),  # a final stop needs no confirmation
        ("One! Two? Three", "One! Two?", True),
        ("", "", False),
    ],
)
def test_complete_summary(text, shown, complete):
    assert complete_summary(text) == (shown, complete)


def test_sentence_ends_need_confirmation():
    assert sentence_ends("It rained. ") == []  # the next sentence has not begun
    assert sentence_ends("It rained. The") == [10]
    assert sentence_ends("It rained.\n") == [10]  # a line break confirms
    assert sentence_ends("It rained. the") == []  # lowercase next word: not a sentence end


def test_sentence_stop_on_characters():
    """A hook over characters (each 'token' one character): it stops at the
    first end confirmed once soft_tokens characters are written."""
    text = "One two. Three four. Five six. Seven"
    heard: list[int] = []
    stop = SentenceStop(lambda ids: "".join(map(chr, ids)), 12, heard.append)
    ids = [ord(c) for c in text]
    n = next(i for i in range(1, len(ids) + 1) if stop(ids[:i]))
    assert text[:n] == "One two. Three four. F"  # the end after 'two.' came before 12 characters
    assert heard == list(range(1, n + 1))
    assert SentenceStop(lambda ids: "", None)([1, 2]) is None
    assert tokens_shown(lambda ids: "".join(map(chr, ids)), ids[:n], "One two. Three four.") == n - 1


def test_sentence_stop_in_the_real_loop_is_a_prefix_of_the_full_run(engine, example_texts):
    """Stopping at a sentence end only cuts the greedy summary short: the
    tokens are those of the run without the stop, up to the stop."""
    text = example_texts["river"]
    spec = SpecConfig(max_tokens=96)
    full = engine.run("river", text, "rebased", spec)
    heard: list[int] = []
    engine.cfg.soft_tokens = 12
    try:
        short = engine.run("river", text, "rebased", spec, on_tokens=heard.append)
    finally:
        engine.cfg.soft_tokens = None
    n = len(short.gen.tokens)
    assert short.gen.stopped == "sentence" and 12 <= n < len(full.gen.tokens)
    assert short.gen.tokens == full.gen.tokens[:n]
    assert heard == list(range(1, n + 1))  # progress after every token
    assert short.summary_complete and short.summary[-1] in ".!?\"'”)"
    assert full.summary.startswith(short.summary)
    text_short = engine.target.detokenize(short.gen.tokens)
    assert (
        len(sentence_ends(text_short))
        == len(sentence_ends(engine.target.detokenize(short.gen.tokens[:-1]))) + 1
    )


# --- run: records, human stats, progress ------------------------------------------------------


def test_progress_bar_on_a_terminal_shows_the_current_documents_tokens():
    import io

    from localsidecar.cli.progress import Progress

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    with Progress(console, 2) as p:
        assert p.live
        p.start("bakery")
        p.tokens(1)
        p.tokens(57)
        p._bar.refresh()
        assert "bakery: 57 tokens" in buf.getvalue() and "0/2" in buf.getvalue()
        p.done("bakery", tokens=57)
        p._bar.refresh()
        assert "1/2" in buf.getvalue()
    assert not p.live


def test_progress_lines_without_a_terminal_and_quiet():
    import io

    from localsidecar.cli.progress import Progress

    buf = io.StringIO()
    with Progress(Console(file=buf, width=100), 3, what="variants") as p:
        assert not p.live
        p.tokens(5)  # no bar: nothing to draw
        p.done("Q8_0", alpha=0.9661, detail="5.9 tok/s", seconds=31.24)
        p.done("Q4_0", tokens=1, seconds=2.0)
    assert buf.getvalue().splitlines() == [
        "[1/3] Q8_0: α 0.97, 5.9 tok/s, 31.2 s",
        "[2/3] Q4_0: 1 token, 2.0 s",
    ]
    quiet = io.StringIO()
    with Progress(Console(file=quiet, force_terminal=True), 1, quiet=True) as p:
        assert not p.live
        p.done("x", tokens=3)
    assert quiet.getvalue() == ""


def test_progress_stage_lines_without_a_terminal_only_after_a_pause_and_never_quiet(monkeypatch):
    import io

    from localsidecar.cli import progress

    buf = io.StringIO()
    with progress.Progress(Console(file=buf, width=100), 2) as p:
        p.start("bakery")
        p.step("the target's summary")  # the item began just now: no line yet
        monkeypatch.setattr(progress, "STEP_LINE_S", 0.0)
        p.hook().step("baseline")
        p.hook()(5)  # tokens: nothing to draw without a bar
        p.done("bakery", tokens=5, seconds=1.0)
    assert buf.getvalue().splitlines() == ["  bakery: baseline", "[1/2] bakery: 5 tokens, 1.0 s"]
    quiet = io.StringIO()
    with progress.Progress(Console(file=quiet, width=100), 1, quiet=True) as p:
        p.start("x")
        p.step("baseline")
    assert quiet.getvalue() == ""
    bar = io.StringIO()
    with progress.Progress(Console(file=bar, force_terminal=True, width=100), 1) as p:
        p.start("river")
        p.step("--compare pair 3: 5.1 tokens/s speculative, 5.0 target-only")
        p._bar.refresh()
        assert "river: --compare pair 3: 5.1 tokens/s speculative, 5.0 target-only" in bar.getvalue()
        p.step("masked")
        p.tokens(7)  # a stage's summary as it is written
        p._bar.refresh()
        assert "river, masked: 7 tokens" in bar.getvalue()


@pytest.fixture(scope="module")
def run_two_docs():
    from localsidecar.cli import progress

    args = [
        "run",
        str(EXAMPLES / "docs" / "bakery.txt"),
        str(EXAMPLES / "docs" / "river.txt"),
        "--max-tokens",
        "32",
        "--soft-tokens",
        "16",
        "--draft-max",
        "3",
        "--compare",
        "--summary",
        "free",  # the model's own summary: drafting, α and the speedup
    ]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(progress, "STEP_LINE_S", 0.0)  # every stage's line, however fast
        return CliRunner().invoke(main, args)


def test_run_human_output_adds_up_and_reads_right(run_two_docs):
    r = run_two_docs
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "hashtag tokens" in out and "hashtag tokens /" not in out and "Hashtags: #" in out
    for doc in out.split("─ bakery")[1:] + out.split("─ river")[1:]:
        times = dict(
            re.findall(
                r"^(prompt processing time|summary time|hashtags time|other \(tokenizing, checks\) time"
                r"|wall time)\s+([\d.]+) s$",
                doc,
                re.M,
            )
        )
        parts = sum(float(v) for k, v in times.items() if k != "wall time")
        # every document's table has the same rows, "other" included
        assert set(times) == {
            "prompt processing time",
            "summary time",
            "hashtags time",
            "other (tokenizing, checks) time",
            "wall time",
        }
        assert abs(parts - float(times["wall time"])) <= 0.011 * len(times), times
        assert re.search(r"^draft ms/token \(catch-up apart\)\s+[\d.]+", doc, re.M)
        assert re.search(r"^draft catch-up\s+\d+ tokens, [\d.]+ s$", doc, re.M)
        # --compare: the median of an even count of interleaved pairs with its range; the draft ran every round
        assert re.search(
            r"^speedup\s+\d\.\d\d× \(\d\.\d\d-\d\.\d\d over (4|6|8|10|12) pairs\)$", doc, re.M
        ), doc
    assert "summaries ending on a sentence" in out and "2 documents" in out
    overall = re.search(
        r"^overall: ([\d.]+) summary tokens/s; (\d\.\d\d)× target-only \(token-weighted\); "
        r"α (\d\.\d+), acceptance (\d\.\d+)",
        out,
        re.M,
    )
    assert overall, out
    assert 0 < float(overall[3]) <= 1 and 0 <= float(overall[4]) <= 1
    assert out.rstrip().splitlines()[-1].startswith("overall: ")  # the table's last line
    # --compare's pairs as they are timed, one stage line each
    for doc in ("bakery", "river"):
        pairs = int(re.search(rf"─ {doc}.*?over (\d+) pairs", out, re.S)[1])
        stages = [x for x in r.stderr.splitlines() if x.startswith(f"  {doc}: --compare pair ")]
        assert len(stages) == pairs and stages[0].startswith(f"  {doc}: --compare pair 1: "), r.stderr
    # not a terminal: one line per finished document on stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("[")]
    assert len(lines) == 2
    assert re.fullmatch(r"\[1/2\] bakery: \d+ tokens, α \d\.\d\d, \d+\.\d s", lines[0]), lines[0]
    assert lines[1].startswith("[2/2] river: ")


def test_run_json_summary_complete_and_quiet(tmp_path):
    args = [
        "run",
        str(EXAMPLES / "notes.txt"),
        "--json",
        "--max-tokens",
        "64",
        "--soft-tokens",
        "8",
        "--quiet",
        "--threads",
        "1",
        "--summary",
        "free",  # --soft-tokens stops a summary the model writes
    ]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["summary_complete"] is True and rec["stopped"] in ("sentence", "eog")
    assert rec["summary_tokens"] == len(rec["summary_ids"]) and rec["hashtags_note"] is None
    assert all(re.fullmatch(r"#[^\W_]+", t) for t in rec["hashtags"]) and rec["hashtags_raw"].startswith("[")
    assert r.stderr == ""  # --quiet: no progress line


def test_run_document_without_words_says_so(tmp_path):
    doc = tmp_path / "emoji.txt"
    doc.write_text("😀🎉🔥\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["run", str(doc), "--max-tokens", "8", "--threads", "1"])
    assert r.exit_code == 0, r.output
    assert "Hashtags: (none: the document has no words to make hashtags from)" in r.stdout


# --- tables and the lines that say what numbers cannot ------------------------------------------


def _acceptance_result(n_docs: int) -> dict:
    from localsidecar.lab.acceptance import CHECKS, CONDITIONS, DocAlpha
    from localsidecar.lab.acceptance_report import summarize

    rng = np.random.default_rng(0)
    docs = []
    for i in range(n_docs):
        d = DocAlpha(f"a-rather-long-document-name-{i}", 300, 19, list(range(40)))
        d.alpha_t = {c: rng.random(40).astype(np.float32) for c in [*CONDITIONS, *CHECKS]}
        docs.append(d)
    return summarize(docs, CONDITIONS, target="t.gguf", draft="d.gguf", n_resamples=1000, seed=0, checks=True)


@pytest.mark.parametrize("n_docs, warned", [(2, True), (10, False)])
def test_acceptance_tables_fit_100_columns_and_warn_below_10_documents(n_docs, warned):
    from localsidecar.lab.acceptance_report import print_acceptance

    res = _acceptance_result(n_docs)
    wide = Console(width=100, record=True)
    print_acceptance(wide, res)
    text = wide.export_text()
    rows = [ln for ln in text.splitlines() if ln.startswith(" ")]  # table lines
    assert rows and max(len(ln.rstrip()) for ln in rows) <= 100
    assert (res["warnings"] != []) == warned
    assert ("not meaningful below 10 documents" in text) == warned
    if warned:
        assert res["warnings"] == [
            "warning: 2 documents: the 95% intervals are printed but not meaningful below "
            "10 documents (the bootstrap resamples documents)"
        ]


def test_acceptance_tables_use_reader_words_and_never_split_a_legend_item():
    from localsidecar.lab.acceptance_report import print_acceptance

    console = Console(width=100, record=True)
    print_acceptance(console, _acceptance_result(2))
    text = console.export_text()
    for notation in ("T[:-1]", "seq_add", " S ", "real n", "+n"):
        assert notation not in text, notation
    assert "summary tokens" in text and "hidden suffix" in text
    # a wrapped legend item continues in its own column, under its text, not under the names
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("emulated:"))
    column = lines[i].index("llama.cpp")
    assert lines[i + 1][:column].strip() == "" and lines[i + 1][column : column + 1].strip()


def test_quant_says_when_no_variant_beats_target_only():
    from localsidecar.cli.quant import _any_faster, print_quant

    def row(q, speedup):
        return {
            "quant": q,
            "label": q,
            "recommended": q == "Q8_0",
            "within_margin": True,
            "size_bytes": 1e8,
            "bits_per_weight": 8.0,
            "alpha": 0.9,
            "kl": 0.1,
            "top1": 0.9,
            "acceptance_rate": 0.8,
            "mean_tokens_per_call": 2.0,
            "draft_ms_per_token": 20.0,
            "tokens_per_s": 5.0,
            "speedup": speedup,
            "hashtag_jaccard": 1.0,
            "target_only_tokens_per_s": 9.0,
            "drafted": 2 if q == "Q4_0" else 60,
            "few_drafted": q == "Q4_0",
        }

    for speedups, faster in (([0.55, 0.48], False), ([1.3, 0.9], True)):
        rows = [row("Q8_0", speedups[0]), row("Q4_0", speedups[1])]
        res = {
            "vary": "draft",
            "source": "m.gguf",
            "n_docs": 4,
            "max_tokens": 32,
            "alpha_margin": 0.02,
            "best_alpha": 0.9,
            "recommended": "Q8_0",
            "rows": rows,
            "loop_mode": "rebased",
            "variants_dir": "/x",
            "faster_than_target_only": _any_faster(rows),
        }
        assert res["faster_than_target_only"] is faster
        c = Console(width=100, record=True)
        print_quant(c, res)
        text = c.export_text()
        assert ("No variant is faster than target-only on this machine (best 0.55×)" in text) != faster
        # an acceptance rate over 2 drafted tokens is marked, one over 60 is not
        assert "0.800†" in text and text.count("0.800†") == 1
        assert "† accept over fewer than 20 drafted tokens (too few to mean much): Q4_0 2" in text
    assert _any_faster([{"speedup": None}]) is None


# --- install and first use -------------------------------------------------------------------


def test_pull_without_a_reachable_hub_fails_within_5_s(tmp_path, monkeypatch):
    """Nothing listens on loopback port 9: the hub's own retries would take
    about 25 s; the probe gives up at once (timed in-process, imports aside)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", "http://127.0.0.1:9/{repo_id}/resolve/{revision}/{filename}"
    )
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["pull", "small"])
    took = time.perf_counter() - t0
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "the hub is unreachable" in lines[0] and "localsidecar pull small" in lines[0]
    ), lines
    assert took < 5, took


def test_first_derivation_prints_one_line_once(tmp_path):
    folder = tmp_path / "models"
    args = [
        "run",
        str(EXAMPLES / "notes.txt"),
        "--json",
        "--max-tokens",
        "2",
        "--mode",
        "baseline",
        "-q",
        "--threads",
        "1",
    ]
    env = {"LOCALSIDECAR_MODELS_DIR": str(folder)}
    first = CliRunner().invoke(main, args, env=env)
    assert first.exit_code == 0, first.output
    assert first.stderr.splitlines() == [
        f"note: deriving the draft SmolLM2-135M-Instruct.Q4_0.gguf from SmolLM2-135M-Instruct.Q4_1.gguf with "
        f"llama.cpp's quantizer into {folder} (first use only)"
    ]
    again = CliRunner().invoke(main, args, env=env)
    assert again.exit_code == 0 and again.stderr == ""


def test_a_columns_variable_that_is_no_number_keeps_the_tables():
    """Was: COLUMNS=abc did all the work, then exit 1 (an internal error) at
    the table. acceptance, quant, sweep and hashtags-eval print their tables
    through one console (options.table_console); hashtags-eval's keyword
    baseline reaches it without loading a model."""
    for columns in ("abc", "-3", "0", "²"):
        r = CliRunner().invoke(
            main,
            ["hashtags-eval", str(EXAMPLES / "notes.txt"), "--variants", "keywords"],
            env={"COLUMNS": columns},
        )
        assert r.exit_code == 0, (columns, r.output)
        widths = [len(line) for line in r.stdout.splitlines()]
        assert widths and max(widths) <= 100, r.stdout


def test_ids_with_control_characters_are_shown_escaped_and_kept_in_json(tmp_path):
    """Was: an id's newline split the progress line and its ESC reached the
    terminal. People see escapes; --out and --json keep the id itself."""
    raw = "a\nb\x1b[31mRED\x00z"
    docs = tmp_path / "ids.jsonl"
    docs.write_text(json.dumps({"id": raw, "text": "The library will open longer on weekends."}) + "\n")
    out = tmp_path / "out.jsonl"
    args = ["run", str(docs), "--max-tokens", "2", "--mode", "target-only", "--out", str(out)]
    r = CliRunner().invoke(main, args, env={"LOCALSIDECAR_THREADS": "1"})
    assert r.exit_code == 0, r.output
    shown = "a\\nb\\x1b[31mRED\\x00z"
    for text in (r.stdout, r.stderr):
        assert not any(c in text for c in "\x1b\x00"), text
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("[")] == [
        ln for ln in r.stderr.splitlines() if ln.startswith(f"[1/1] {shown}: 2 tokens, ")
    ]
    assert r.stderr.count("\n") == 1 and f" {shown}  (target-only, " in r.stdout
    assert json.loads(out.read_text())["id"] == raw
    again = CliRunner().invoke(main, [*args, "--json"], env={"LOCALSIDECAR_THREADS": "1"})
    assert again.exit_code == 0 and "skipped 1 document already in" in again.stderr  # resumed by its real id
