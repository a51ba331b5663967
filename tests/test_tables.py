"""Every table fits the width it is printed at: 80 and 100 columns on a
terminal, 100 (or COLUMNS) in a pipe; a column that does not fit is left
out by priority and named, a long text wraps, and no cell is ever cut to an
ellipsis (io/tables.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rich.cells import cell_len
from rich.console import Console

from .helpers import SMALL_Q4, seed_all

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WIDTHS = (80, 100)


def lines_wider_than(text: str, width: int, whole=()) -> list[str]:
    """The lines of `text` wider than `width`, but for those starting with
    one of `whole` (paths and commands, printed whole on lines of their own);
    an ellipsis anywhere fails."""
    assert "…" not in text, text
    plain = [ANSI.sub("", line).rstrip() for line in text.splitlines()]
    return [line for line in plain if cell_len(line) > width and not line.startswith(tuple(whole))]


def cli(*args: str, env: dict[str, str]):
    from click.testing import CliRunner

    from localsidecar.cli import main

    return CliRunner().invoke(main, list(args), env=env)


def terminal(width: int) -> Console:
    return Console(width=width, record=True, force_terminal=True, highlight=False)


# --- models and doctor, as the command prints them ---------------------------------------------

WHOLE_LINES = ("smollm2-", "gemma-", "qwen2.5-", "to download", "to install", "licence of")


@pytest.mark.parametrize("command", ["models", "doctor"])
@pytest.mark.parametrize("env", [{"TTY_COMPATIBLE": "1"}, {}], ids=["terminal", "pipe"])
def test_models_and_doctor_fit_80_and_100_columns_and_a_pipe(hub, command, env, monkeypatch):
    seed_all(hub, SMALL_Q4)
    monkeypatch.delenv("COLUMNS", raising=False)
    for columns in (*WIDTHS, None):  # None: a pipe's default, 100; a terminal's own width
        more = {**env, "COLUMNS": str(columns)} if columns else env
        r = cli(command, env=more)
        assert r.exit_code == 0, r.output
        assert ("\x1b[" in r.stdout) == bool(env)  # the terminal case is one to rich
        assert lines_wider_than(r.stdout, columns or 100, WHOLE_LINES) == [], r.stdout
    if command == "models":  # at 80 columns the least needed columns make room, and say so
        narrow = cli(command, env={"COLUMNS": "80"}).stdout
        assert "left out at 80 columns: files, license (shown by a wider terminal or --json)" in narrow
        assert " license " in cli(command, env={"COLUMNS": "100"}).stdout


# --- the tables of the other commands, from their records ------------------------------------------


def run_record(**changes) -> dict:
    """A `run` record as print_run reads it: one that drafted, with --compare."""
    rec = {
        "id": "bakery",
        "mode": "rebased",
        "summary": "The bakery on Mill Street reopens on Monday after a fire in March. " * 3,
        "summary_complete": True,
        "hashtags": ["#Bakery", "#MillStreet"],
        "hashtags_note": None,
        "alpha": 0.7312,
        "acceptance_rate": 0.6512,
        "drafted": 14,
        "accepted": 9,
        "few_drafted": True,
        "no_draft_reason": None,
        "mean_tokens_per_call": 1.9,
        "rounds": 51,
        "target_calls": 53,
        "k_mean": 2.75,
        "k_hist": {str(k): 3 for k in range(9)},
        "draft_ms_per_token": 12.5,
        "draft_catchup_tokens": 12,
        "draft_catchup_s": 0.31,
        "verify_ms": {str(b): 100.0 + b for b in range(1, 10)},
        "summary_tokens": 97,
        "stopped": "repeat",
        "tokens_per_s": 5.7,
        "hashtag_tokens": 12,
        "prefill_s": 4.3,
        "gen_s": 13.6,
        "hashtag_wall_s": 0.9,
        "wall_s": 19.2,
        "target_only_tokens_per_s": 5.6,
        "speedup": 1.02,
        "speedup_range": [0.98, 1.05],
        "speedup_pairs": 4,
        "speedup_meaningful": False,
    }
    return {**rec, **changes}


def test_run_stats_fit_and_keep_each_row_on_its_line():
    from localsidecar.cli.report import print_run, print_totals

    for width in WIDTHS:
        c = terminal(width)
        print_run(c, run_record())
        print_totals(c, [run_record(), run_record(id="river")])
        text = c.export_text()
        assert lines_wider_than(text, width, ("overall: ",)) == [], text
        assert re.search(r"^summary tokens +97 \(stopped at a repeated sentence, dropped\)$", text, re.M), (
            text
        )
        assert re.search(r"^speedup +not meaningful: the draft hardly ran$", text, re.M), text
        assert re.search(r"^measured anyway +1\.02× \(0\.98-1\.05 over 4 pairs\)$", text, re.M), text


def quant_result() -> dict:
    def row(q, speedup, drafted, meaningful):
        return {
            "quant": q,
            "label": q,
            "recommended": False,
            "within_margin": True,
            "size_bytes": 144.8e6,
            "bits_per_weight": 8.61,
            "alpha": 0.9638,
            "kl": 0.0069,
            "top1": 0.917,
            "acceptance_rate": 0.8,
            "mean_tokens_per_call": 2.0,
            "draft_ms_per_token": 20.0,
            "tokens_per_s": 5.0,
            "speedup": speedup,
            "speedup_meaningful": meaningful,
            "hashtag_jaccard": 1.0,
            "target_only_tokens_per_s": 9.0,
            "drafted": drafted,
            "few_drafted": drafted < 20,
        }

    rows = [row("Q8_0", 1.58, 60, True), row("Q4_0", 0.58, 0, False)]
    rows[0]["recommended"] = True
    return {
        "vary": "draft",
        "source": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "n_docs": 1,
        "max_tokens": 24,
        "alpha_margin": 0.02,
        "best_alpha": 0.9638,
        "recommended": "Q8_0",
        "rows": rows,
        "loop_mode": "rebased",
        "variants_dir": "/x",
        "faster_than_target_only": True,
    }


def test_quant_table_leaves_out_columns_by_priority_and_marks_a_speedup_without_drafting():
    from localsidecar.cli.quant import print_quant

    texts = {}
    for width in WIDTHS:
        c = terminal(width)
        print_quant(c, quant_result())
        texts[width] = text = c.export_text()
        assert lines_wider_than(text, width) == [], text
        assert "0.58×‡" in text and "1.58×‡" not in text
        assert "‡ not meaningful: the draft hardly ran (Q4_0 0 drafted)" in text
    assert "left out at 80 columns: draft t/s (shown by a wider terminal or --json)" in texts[80]
    assert "left out" not in texts[100] and "draft t/s" in texts[100]


def test_hashtags_eval_summary_fits_without_squeezing():
    from localsidecar.cli.hashtags import print_summary_table
    from localsidecar.lab.hashtag_eval import VARIANTS

    summary = [
        {
            "variant": v,
            "valid_json_rate": 1.0,
            "n_tags": 3.0,
            "dup_rate": 0.0,
            "grounded": 1.0,
            "phrase": 1.0,
            "hashtag_jaccard": 0.5,
            "soft": 0.5,
            "extra_s": 0.96,
            "extra_tokens": 18,
            "extra_vs_target": 0.57,
            "total_vs_target": 1.16,
            "good": 0.67,
            "bad": 0.0,
            "recall": 0.33,
        }
        for v in VARIANTS
    ]
    for width in WIDTHS:
        c = terminal(width)
        print_summary_table(c, summary, "hashtags over 1 document")
        text = c.export_text()
        assert lines_wider_than(text, width) == [], text
        assert "rebased-shifted" in text and "tot/tgt" in text and "jacc" in text
    # without --labels (good, bad, rec all "-"), those columns are not shown at all
    c = terminal(100)
    print_summary_table(c, [{**s, "good": None, "bad": None, "recall": None} for s in summary], "t")
    assert " good " not in c.export_text() and "left out" not in c.export_text()


def test_acceptance_and_sweep_tables_fit():
    from localsidecar.cli.acceptance import _print_sweep
    from localsidecar.lab.acceptance import CHECKS, CONDITIONS, DocAlpha
    from localsidecar.lab.acceptance_report import print_acceptance, summarize

    rng = np.random.default_rng(0)
    docs = []
    for i in range(3):
        d = DocAlpha(f"a-rather-long-document-name-{i}", 300, 19, list(range(40)))
        d.alpha_t = {c: rng.random(40).astype(np.float32) for c in [*CONDITIONS, *CHECKS]}
        docs.append(d)
    res = summarize(docs, CONDITIONS, target="t.gguf", draft="d.gguf", n_resamples=1000, seed=0, checks=True)
    point = dict(alpha_masked=0.51, alpha_masked_lo=0.45, alpha_masked_hi=0.6, position_cost=-0.01)
    sweep = {
        "n_docs": 3,
        "suffix_tokens": 19,
        "warnings": [],
        "files": ["nsweep.csv"],
        "nsweep": [
            dict(suffix_tokens=n, is_real=n == 19, position_cost_lo=-0.05, position_cost_hi=0.05, **point)
            for n in (0, 19, 256)
        ],
        "depth": [
            dict(
                t=t,
                n_docs=3,
                position=0.01,
                position_lo=-0.02,
                position_hi=0.05,
                total=-0.011,
                total_lo=-0.06,
                total_hi=0.04,
            )
            for t in range(3)
        ],
    }
    for width in WIDTHS:
        c = terminal(width)
        print_acceptance(c, res)
        _print_sweep(c, sweep)
        text = c.export_text()
        assert lines_wider_than(text, width) == [], text
        assert "a-rather-long-document-name-2" in text and "[-0.0500, +0.0500]" in text


def test_tables_in_a_pipe_take_100_columns_or_COLUMNS(monkeypatch):
    from localsidecar.cli.options import table_console

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert table_console().width == 100 and not table_console().is_terminal  # pytest's stdout is no terminal
    monkeypatch.setenv("COLUMNS", "80")
    assert table_console().width == 80
