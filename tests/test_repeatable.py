"""Same command, same answer: greedy `run` and `acceptance` give identical
records on a rerun, at other thread counts, and with a busy process competing
(docs/DESIGN.md, Batch shape changes results). Real engine, embedded pair."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import BENCHMARKS

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

# articles: prompts of 500+ tokens, so every summary decode attends to more
# than 256 cells, where flash attention's results would depend on the thread count
DOCS = [str(BENCHMARKS / "articles" / "birds.txt")]  # one document: each test runs it 2-3 times
MAX_TOKENS = 40
# what a rerun may change: timings, and (at other thread counts) the counts used
TIMING = {
    "tokens_per_s",
    "draft_ms_per_token",
    "verify_ms",
    "target_only_tokens_per_s",
    "speedup",
    "speedup_range",
}


def _outputs(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if not k.endswith("_s") and k not in TIMING | {"threads"}}


def _run(args: list[str], env: dict | None = None) -> list[dict]:
    r = CliRunner().invoke(main, ["run", *DOCS, "--json", "--max-tokens", str(MAX_TOKENS), *args], env=env)
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_default_run_twice_gives_identical_records(monkeypatch):
    monkeypatch.delenv("LOCALSIDECAR_THREADS")  # the default: threads follow the load
    first, second = _run([]), _run([])
    assert [_outputs(r) for r in first] == [_outputs(r) for r in second]
    for rec in first:
        assert rec["prompt_tokens"] > 256 and rec["summary_ids"] and rec["hashtags"]
        # --draft-max auto's cost table decides a free summary's draft lengths; an extract's
        # choices are drafted at a fixed length
        assert (rec["cost_table"] or rec["summary_mode"] == "extract") and set(rec["threads"]) == {
            "target",
            "draft",
        }


@pytest.mark.parametrize(
    "args",
    [
        ["--mode", "masked", "--draft-max", "3", "--summary", "free"],
        ["--mode", "visible", "--draft-max", "auto"],  # the default extract summary
    ],
)
def test_the_thread_count_changes_no_output(args):
    one, two = _run([*args, "--threads", "1"]), _run([*args, "--threads", "2"])
    assert [r["threads"] for r in one] == [{"target": [1], "draft": [1]}] * len(DOCS)
    assert [r["threads"] for r in two] == [{"target": [2], "draft": [2]}] * len(DOCS)
    assert [_outputs(r) for r in one] == [_outputs(r) for r in two]
    if args[-1] != "auto":
        assert all(r["drafted"] > r["rounds"] for r in one)  # batches of several tokens, verified


def test_a_busy_process_changes_no_output(monkeypatch):
    """Threads adapt to the load (the tuner may move mid-document): the output does not."""
    monkeypatch.delenv("LOCALSIDECAR_THREADS")
    idle = _run(["--draft-max", "3"])
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        loaded = _run(["--draft-max", "3"])
    finally:
        busy.kill()
        busy.wait()
    assert [_outputs(r) for r in idle] == [_outputs(r) for r in loaded]


def test_acceptance_alpha_is_identical_across_runs(monkeypatch, tmp_path):
    monkeypatch.delenv("LOCALSIDECAR_THREADS")
    alphas = []
    for i, threads in enumerate(([], ["--threads", "1"])):
        # a summaries file of its own each time: the target's summaries are generated again
        args = [
            "acceptance",
            DOCS[0],
            "--max-tokens",
            "32",
            "--json",
            "--summaries",
            str(tmp_path / f"s{i}.jsonl"),
            *threads,
        ]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
        res = json.loads(r.stdout)
        assert res["summaries"]["generated"] == 1
        alphas.append((res["docs"], {c: e["alpha"] for c, e in res["conditions"].items()}))
    assert alphas[0] == alphas[1]
