"""Header blocks of notes-style documents (minutes, team notes) are condensed
in the prompt both models read, so that summaries start from the content."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.decoding.prompts import condense_header

from .helpers import BENCHMARKS, EXAMPLES

NOTES_STYLE = BENCHMARKS / "notes-style"
MINUTES = (NOTES_STYLE / "school-board.txt").read_text(encoding="utf-8")
LABELS = ("Minutes:", "Present:", "Attendees:", "Apologies:", "Absent:", "Chair:", "Facilitator:")


def test_a_header_block_becomes_one_line_with_title_and_date():
    out = condense_header(MINUTES)
    first, rest = out.split("\n\n", 1)
    assert first == "Title: Greenfield Primary School, Board of Governors. Date: 14 March 2026."
    assert rest == MINUTES.split("\n\n", 1)[1]  # the content itself is untouched
    standup = condense_header((NOTES_STYLE / "team-standup.txt").read_text(encoding="utf-8"))
    # an unknown label on the first line is the title; "Minutes: NAME" further down is the minute taker
    assert standup.startswith(
        "Title: Team notes: Payments squad weekly sync. Date: 3 February 2026.\n\nMarco said"
    )
    for f in NOTES_STYLE.iterdir():
        head = condense_header(f.read_text(encoding="utf-8")).split("\n\n", 1)[0]
        assert "\n" not in head and not any(label in head for label in LABELS), f.name


def test_documents_without_a_header_block_are_unchanged():
    for f in [
        EXAMPLES / "notes.txt",
        *(EXAMPLES / "docs").iterdir(),
        *(EXAMPLES / "more").iterdir(),
        *(BENCHMARKS / "articles").iterdir(),
    ]:
        text = f.read_text(encoding="utf-8")
        assert condense_header(text) == text, f.name
    for text in (
        "Date: 14 March\n\n",  # nothing after the block
        "Present: everyone\nThe meeting began late because the room was double booked by the choir.\n\nMore.",  # prose
        "Quarterly report\nRevenue rose\n\nThe details follow.",  # no header label at all
        "Present: Ann\n",  # one line, no body
    ):
        assert condense_header(text) == text, text


def test_both_models_read_the_condensed_document(engine):
    p = engine.prompt(MINUTES)
    lo, hi = p.doc_span
    shown = engine.target.detokenize(p.prefix[lo:hi])
    assert shown == condense_header(MINUTES) and "Present:" not in shown
    # the draft's prompt is the target's plus the hidden suffix: the same document tokens
    assert p.compound[lo:hi] == p.bare[lo:hi]


@pytest.mark.slow
def test_the_summary_of_minutes_does_not_copy_the_header(tmp_path):
    r = CliRunner().invoke(
        main,
        ["run", str(NOTES_STYLE / "school-board.txt"), "--json", "--max-tokens", "48", "--summary", "free"],
    )
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    summary = rec["summary"]
    assert summary and not any(label in summary for label in LABELS), summary
    assert "Priya Shah (chair)" not in summary and "Title:" not in summary
