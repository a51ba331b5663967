"""A model file whose weights are damaged (4 MB of 0xFF: NaN scales) computes
NaN logits. Wherever a summary reads them (target-only, the speculative
loop's verify batch, the draft's proposals, the acceptance lab), the document
stops with one line, and nothing of it is kept: no --out record, no cached
summary. Was: exit 0 with an empty summary (the argmax of an all-NaN row is
token 0, an end of text) and `"summary_ids": []` cached."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import EXAMPLES, one_line_error

NOTES = str(EXAMPLES / "notes.txt")


@pytest.fixture(scope="module")
def nan_copy(pair_paths, tmp_path_factory):
    """{role: a copy of the target or the draft with 4 MB of 0xFF in its middle}."""
    folder = tmp_path_factory.mktemp("damaged")
    copies = {}
    for role, src in zip(("target", "draft"), pair_paths):
        dst = folder / f"nan-{role}.gguf"
        shutil.copy(src, dst)
        with open(dst, "r+b") as f:
            f.seek(dst.stat().st_size // 2)
            f.write(b"\xff" * (4 << 20))
        copies[role] = dst
    return copies


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"LOCALSIDECAR_THREADS": "1"})


def stopped_line(name: str) -> str:
    return (
        f"Error: llama.cpp computed logits that are not finite numbers (NaN or inf) with {name}: the model "
        "file is damaged, or this llama.cpp build miscomputes it; the document was stopped and nothing of it kept"
    )


@pytest.mark.parametrize(
    "damaged, mode",
    [("target", "target-only"), ("draft", "rebased")],  # logits(); the lab below reads logits_rows()
)
def test_nan_logits_stop_the_document_with_one_line_and_no_record(
    damaged, mode, nan_copy, pair_paths, tmp_path
):
    target = nan_copy["target"] if damaged == "target" else pair_paths[0]
    draft = nan_copy["draft"] if damaged == "draft" else pair_paths[1]
    out = tmp_path / "out.jsonl"
    args = ["run", NOTES, "--mode", mode, "--max-tokens", "8", "--draft-max", "2", "--out", out]
    line = one_line_error(invoke([*args, "--target", target, "--draft", draft]))
    assert line == stopped_line(nan_copy[damaged].name)
    assert out.read_bytes() == b""  # opened, nothing written


def test_acceptance_caches_no_summary_of_a_model_with_nan_logits(nan_copy, pair_paths, tmp_path):
    summaries = tmp_path / "s.jsonl"

    def acceptance(target):
        args = ["acceptance", NOTES, "--max-tokens", "8", "--conditions", "baseline", "--resamples", "1000"]
        return invoke(
            [*args, "--summaries", summaries, "--target", target, "--draft", pair_paths[1], "--json"]
        )

    assert one_line_error(acceptance(nan_copy["target"])) == stopped_line(nan_copy["target"].name)
    assert not summaries.exists() or summaries.read_bytes() == b""  # nothing cached from it
