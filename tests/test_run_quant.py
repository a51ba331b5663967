"""`run --quant` / `--draft-quant`: a registry pair's quantizations, resolved offline.

The hub cache is built by hand in the hub's own layout (tests/test_models.py);
for the runs that load models, its blobs are links to the embedded model file,
so the real engine runs a "small" pair made of SmolLM2 files. Nothing downloads:
socket connects and DNS look-ups are refused and recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import EXAMPLES, one_line_error, seed_hub_file

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

NOTES = str(EXAMPLES / "notes.txt")
SMALL_TARGET = "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
SMALL_DRAFT = "Qwen/Qwen2.5-0.5B-Instruct-GGUF"


def seed_real_model(cache: Path, repo: str, filename: str) -> Path:
    """A hub-cache entry whose blob links to the embedded GGUF (a loadable model)."""
    from localsidecar.registry.embedded import embedded_target_path

    return seed_hub_file(cache, repo, filename, link_to=embedded_target_path())


def run(*args: str):
    return CliRunner().invoke(main, ["run", NOTES, *args])


def test_run_quant_loads_that_quantization_from_the_hub_cache(hub, network_attempts):
    target = seed_real_model(hub, SMALL_TARGET, "qwen2.5-1.5b-instruct-q5_k_m.gguf")
    draft = seed_real_model(hub, SMALL_DRAFT, "qwen2.5-0.5b-instruct-q4_k_m.gguf")
    r = run("--pair", "small", "--quant", "Q5_K_M", "--json", "--max-tokens", "8")
    assert r.exit_code == 0, (r.output, r.stderr)
    rec = json.loads(r.stdout)
    assert rec["target"] == str(target) and rec["draft"] == str(draft)
    assert 0 < rec["summary_tokens"] == len(rec["summary_ids"]) <= 8
    # the quantization names are case-insensitive, as in `pull`
    r2 = run("--pair", "small", "--quant", "q5_k_m", "--draft-quant", "Q4_K_M", "--json", "--max-tokens", "8")
    assert r2.exit_code == 0, r2.output
    assert json.loads(r2.stdout)["summary_ids"] == rec["summary_ids"]
    assert network_attempts == []


def test_run_quant_not_in_the_cache_is_one_line_naming_the_pull(hub, network_attempts):
    seed_real_model(hub, SMALL_TARGET, "qwen2.5-1.5b-instruct-q4_k_m.gguf")
    seed_real_model(hub, SMALL_DRAFT, "qwen2.5-0.5b-instruct-q4_k_m.gguf")
    line = one_line_error(run("--pair", "small", "--quant", "Q5_K_M"))
    assert "qwen2.5-1.5b-instruct-q5_k_m.gguf missing from the hub cache" in line
    assert "qwen2.5-0.5b-instruct" not in line.split("missing")[0]  # the cached draft is not reported
    assert line.endswith(
        "on a connected machine run: localsidecar pull small --quant Q5_K_M --draft-quant Q4_K_M"
    )
    line = one_line_error(run("--pair", "small", "--draft-quant", "Q8_0"))
    assert "(qwen2.5-0.5b-instruct-q8_0.gguf missing" in line
    assert line.endswith("localsidecar pull small --quant Q4_K_M --draft-quant Q8_0")
    assert network_attempts == []


def test_run_quant_bad_combinations_are_one_line(hub, network_attempts):
    line = one_line_error(run("--pair", "small", "--quant", "Q9_9"))
    assert "unknown quantization 'Q9_9' for qwen2.5-1.5b-instruct; choose from FP16, Q8_0" in line
    line = one_line_error(run("--target", NOTES, "--draft", NOTES, "--quant", "Q8_0"))
    assert "add --pair NAME" in line
    line = one_line_error(run("--pair", "small", "--target", NOTES, "--quant", "Q8_0"))
    assert "--quant chooses the pair's own file, which --target replaces" in line
    assert network_attempts == []


def test_run_draft_quant_of_the_embedded_pair_is_derived_offline(tmp_path, network_attempts):
    models = tmp_path / "models"
    r = run(
        "--draft-quant",
        "Q5_0",
        "--models-dir",
        str(models),
        "--json",
        "--max-tokens",
        "8",
        "--mode",
        "baseline",
        "--draft-max",
        "2",
        "--summary",
        "free",
    )
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert rec["draft"] == str(models / "SmolLM2-135M-Instruct.Q5_0.gguf")
    assert rec["target"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert rec["drafted"] > 0 and rec["summary_tokens"] > 0
    assert "deriving the draft SmolLM2-135M-Instruct.Q5_0.gguf" in r.stderr
    assert network_attempts == []


def test_run_help_names_the_quant_options_and_reads_right():
    text = " ".join(CliRunner().invoke(main, ["run", "--help"]).output.split())
    assert "--quant TEXT Target quantization of the pair" in text and "--draft-quant TEXT" in text
    assert (
        "--verbose Show llama.cpp's own log on stderr (with `run`, also the draft policy's and the thread "
        "counts' decisions now and then)."
    ) in text
