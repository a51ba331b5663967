"""`localsidecar run` through Click's CliRunner on the real embedded pair."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import EXAMPLES, one_line_error

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

REQUIRED_KEYS = {
    "id",
    "mode",
    "summary",
    "hashtags",
    "hashtags_raw",
    "alpha",
    "acceptance_rate",
    "drafted",
    "accepted",
    "rounds",
    "target_calls",
    "summary_tokens",
    "tokens_per_s",
    "wall_s",
    "hashtag_tokens",
    "hashtag_wall_s",
    "target",
    "draft",
    "prompt_ids",
    "summary_ids",
    "k_mean",
    "k_hist",
    "draft_ms_per_token",
    "verify_ms",
    "summary_complete",
    "hashtags_note",
    "stopped",
    "prefill_s",
    "gen_s",
    "summary_mode",
    "unsupported",
}


@pytest.fixture()
def runner():
    return CliRunner()


def test_run_json_has_every_key(runner, tmp_path):
    out = tmp_path / "res.jsonl"
    r = runner.invoke(
        main,
        ["run", str(EXAMPLES / "docs"), "--json", "--max-tokens", "16", "--compare", "--out", str(out)]
        + ["--summary", "free"],  # the model's own summary: drafted tokens, rounds, α
    )
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["id"] for x in recs] == ["bakery", "river", "solar"]
    for rec in recs:
        assert REQUIRED_KEYS | {"speedup", "target_only_tokens_per_s"} <= set(rec)
        assert rec["mode"] == "rebased" and rec["summary_mode"] == "free"
        assert isinstance(rec["unsupported"], list)
        if rec["drafted"]:  # auto may leave whole documents to the target alone
            assert 0 < rec["alpha"] <= 1 and 0 <= rec["acceptance_rate"] <= 1
        else:
            assert rec["alpha"] is None and rec["acceptance_rate"] is None
        assert rec["accepted"] <= rec["drafted"] <= 8 * rec["rounds"]  # default --draft-max auto, cap 8
        assert rec["summary_tokens"] == len(rec["summary_ids"]) > 0
        assert 0 < rec["rounds"] < rec["target_calls"]  # target calls: the rounds + the prompt's batches
        assert sum(rec["k_hist"].values()) == rec["rounds"]
        assert rec["k_mean"] == round(rec["drafted"] / rec["rounds"], 4)
        assert set(rec["verify_ms"]) == {str(int(k) + 1) for k in rec["k_hist"]}
        assert all(ms > 0 for ms in rec["verify_ms"].values())
        assert rec["hashtags"] and rec["hashtag_tokens"] > 0
        assert rec["speedup"] > 0
    # auto's fixed costs for the embedded pair (a draft of 0.93 of its target's bytes): drafting never pays
    assert all(r["drafted"] == 0 and r["cost_table"].startswith("bytes-ratio 0.93") for r in recs)
    assert {r["no_draft_reason"] for r in recs} == {no_draft_reason()}
    for rec in recs:  # --compare: interleaved pairs; with nothing drafted, not a meaningful speedup
        assert rec["speedup_pairs"] in (4, 6, 8, 10, 12) and rec["speedup_meaningful"] is False
        lo, hi = rec["speedup_range"]
        assert lo <= rec["speedup"] <= hi
        assert (
            rec["few_drafted"] is True and rec["draft_catchup_s"] == 0.0 and rec["draft_catchup_tokens"] == 0
        )
    file_recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["id"] for x in file_recs] == ["bakery", "river", "solar"]
    assert file_recs[0]["summary_ids"] == recs[0]["summary_ids"]


def test_draft_max_and_p_min_read_their_environment_variables(runner):
    args = ["run", str(EXAMPLES / "notes.txt"), "--json", "--max-tokens", "24", "--mode", "baseline"]
    args += ["--summary", "free"]  # drafted tokens
    r = runner.invoke(main, args, env={"LOCALSIDECAR_DRAFT_MAX": "3"})
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["rounds"] < rec["drafted"] <= 3 * rec["rounds"]
    r = runner.invoke(main, args, env={"LOCALSIDECAR_DRAFT_MAX": "3", "LOCALSIDECAR_P_MIN": "1"})
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["drafted"] < rec["rounds"]  # p-min 1: a draft stops at its first uncertain token
    r = runner.invoke(main, args, env={"LOCALSIDECAR_DRAFT_MAX": "auto", "LOCALSIDECAR_DRAFT_MAX_CAP": "0"})
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["drafted"] == 0 and rec["k_hist"] == {"0": rec["rounds"]} and rec["draft_ms_per_token"] is None
    r = runner.invoke(main, args, env={"LOCALSIDECAR_DRAFT_MAX": "0"})
    assert r.exit_code == 2 and "--draft-max" in r.stderr and "Traceback" not in r.output


def test_ctx_beyond_the_trained_context_is_noted_once(runner):
    r = runner.invoke(
        main, ["run", str(EXAMPLES / "notes.txt"), "--json", "--max-tokens", "2", "--ctx", "8193"]
    )
    assert r.exit_code == 0, r.output
    notes = [line for line in r.stderr.splitlines() if "trained on" in line]
    assert notes == [
        "note: --ctx 8193 exceeds the context the models were trained on (SmolLM2-135M-Instruct.Q4_1.gguf "
        "8192, SmolLM2-135M-Instruct.Q4_0.gguf 8192 tokens); output degrades past that length"
    ]
    assert json.loads(r.stdout)["summary_tokens"] == 2


def no_draft_reason() -> str:
    """Why auto never drafts on the embedded pair, from the files' sizes and
    the cost model's formula: the best k if the target accepted every drafted
    token, (k + 1) / (k * c_d + 1 + slope * k) against 1 for the target alone."""
    from localsidecar.decoding.policy import VERIFY_SLOPE
    from localsidecar.registry.embedded import embedded_pair

    target, draft = embedded_pair()
    c_d = round(draft.stat().st_size / target.stat().st_size, 4)
    rate = {k: (k + 1) / (k * c_d + 1 + VERIFY_SLOPE * k) for k in range(1, 9)}  # --draft-max-cap 8
    k = max(rate, key=rate.get)
    assert rate[k] < 1
    return (
        f"a drafted token costs {c_d:.2f} of a target token and verifying {k + 1} tokens costs "
        f"{1 + VERIFY_SLOPE * k:.1f}× one, so even with every drafted token accepted speculation would run "
        f"at ≈{rate[k]:.2f}× the target alone"
    )


DRAFT_ROWS = ("online alpha", "acceptance rate", "drafted / accepted", "tokens per round", "draft ms/token")


def test_run_that_drafted_nothing_says_why_in_one_line_and_leaves_out_the_draft_rows(runner):
    args = [
        "run",
        str(EXAMPLES / "notes.txt"),
        "--max-tokens",
        "24",
        "--mode",
        "deferred",
        "--summary",
        "free",
    ]
    r = runner.invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "notes" in r.stdout and "Hashtags:" in r.stdout and "summary tokens/s" in r.stdout
    assert "free summary" in r.stdout and "rounds / target calls" in r.stdout
    line = f"the draft did not draft: {no_draft_reason()} — the draft wrote the hashtags"
    assert [x for x in r.stdout.splitlines() if "did not draft" in x] == [line]
    assert not [row for row in DRAFT_ROWS if row in r.stdout] and " 0 / 0" not in r.stdout
    short = [*args[:2], "--max-tokens", "8", *args[4:]]  # the rows, not the summary: a short one
    # --verbose keeps every row
    r = runner.invoke(main, [*short, "--verbose"])
    assert r.exit_code == 0, r.output
    assert [row for row in DRAFT_ROWS if row in r.stdout] == list(DRAFT_ROWS) and line in r.stdout
    # a fixed --draft-max drafts: no such line, every row
    r = runner.invoke(main, [*short, "--draft-max", "2"])
    assert r.exit_code == 0, r.output
    assert "did not draft" not in r.stdout and [row for row in DRAFT_ROWS if row in r.stdout] == list(
        DRAFT_ROWS
    )


@pytest.mark.parametrize(
    # free: test_run_that_drafted_nothing_says_why_in_one_line_and_leaves_out_the_draft_rows
    ("summary", "row"),
    [("extract", "sentences chosen")],
)
def test_run_human_output(runner, summary, row):
    r = runner.invoke(
        main,
        [
            "run",
            str(EXAMPLES / "notes.txt"),
            "--max-tokens",
            "24",
            "--mode",
            "deferred",
            "--summary",
            summary,
        ],
    )
    assert r.exit_code == 0, r.output
    assert "notes" in r.stdout and "Hashtags:" in r.stdout and f"{summary} summary" in r.stdout
    assert row in r.stdout and "tokens/s" in r.stdout


def test_run_target_only_from_stdin(runner):
    r = runner.invoke(
        main,
        ["run", "-", "--mode", "target-only", "--json", "--max-tokens", "8"],
        input="The cat sat on the mat all afternoon, watching birds in the garden.",
    )
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["id"] == "stdin" and rec["drafted"] == 0 and rec["hashtags"] == []
    assert 0 < rec["summary_tokens"] <= 8


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "no/such/file.txt"], "no/such/file.txt"),
        (["run", "EXAMPLE", "--max-tokens", "0"], "--max-tokens"),
        (["run", "EXAMPLE", "--draft-max", "0"], "--draft-max"),
        (["run", "EXAMPLE", "--draft-max", "often"], "--draft-max"),
        (["run", "EXAMPLE", "--draft-max-cap", "-1"], "--draft-max-cap"),
        (["run", "EXAMPLE", "--temperature", "-1"], "--temperature"),
        (["run", "EXAMPLE", "--p-min", "1.5"], "--p-min"),
        (["run", "EXAMPLE", "--mode", "sideways"], "--mode"),
        (["run", "EXAMPLE", "--target", "EXAMPLE", "--draft", "EXAMPLE"], "not a GGUF"),
        (["run", "EXAMPLE", "--target", "EXAMPLE"], "--target needs --draft"),
        (["run", "EXAMPLE", "--ctx", "256"], "--max-chars"),
    ],
)
def test_bad_input_one_line_exit_2(runner, args, needle):
    args = [str(EXAMPLES / "notes.txt") if a == "EXAMPLE" else a for a in args]
    assert needle in one_line_error(runner.invoke(main, args))


def test_bad_input_keeps_out_file(runner, tmp_path):
    out = tmp_path / "res.jsonl"
    r = runner.invoke(
        main, ["run", str(EXAMPLES / "notes.txt"), "--json", "--max-tokens", "8", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    before = out.read_bytes()
    r = runner.invoke(
        main,
        ["run", str(EXAMPLES / "notes.txt"), "--target", str(out), "--draft", str(out), "--out", str(out)],
    )
    assert r.exit_code == 2
    assert out.read_bytes() == before
