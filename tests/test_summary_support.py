"""The support check of a free summary (summary/support.py): text only, no model."""

from __future__ import annotations

from localsidecar.summary.support import DROP, KEEP, MARK, apply, check_summary

from .helpers import BENCHMARKS

BOARD = (BENCHMARKS / "notes-style" / "school-board.txt").read_text(encoding="utf-8")

FAITHFUL = (
    "The governors discussed a parent survey on school lunches: 64 percent of the 212 families that "
    "replied wanted a hot vegetarian option every day. Anne Moss proposed a second serving hatch, which "
    "would cost 3,800 pounds. A builder quoted 11,500 pounds to repair the library roof, and the board "
    "will apply to the county's maintenance fund before 30 April."
)


def test_a_faithful_paraphrase_passes():
    assert check_summary(FAITHFUL, BOARD) == []


def test_planted_number_name_and_swapped_relation_are_flagged():
    planted = {
        "Of the 212 families who replied, 46 percent asked for a hot vegetarian option.": "46 is not a number",
        "The board asked the Oxford Council to repair the library roof.": "name 'Oxford Council'",
        "David Lin proposed a second serving hatch in the hall.": "never says 'David Lin' with",
        "Anne Moss reported that the roof over the library leaked after the storms.": "never says 'Anne Moss'",
        "A builder has quoted 11,500 euros for a full repair.": "11,500 in euro",
    }
    summary = " ".join([FAITHFUL, *planted])
    flags = check_summary(summary, BOARD)
    assert [f.span for f in flags] == list(planted)
    for f, why in zip(flags, planted.values()):
        assert why in f.why, f
        assert summary[f.start : f.end] == f.span
        assert f.as_record() == {"span": f.span, "why": f.why}


def test_keep_and_mark_leave_the_text_drop_removes_the_flagged_sentences():
    bad = "David Lin proposed a second serving hatch in the hall."
    summary = f"{FAITHFUL} {bad} The next meeting will be held on 21 June 2026."
    flags = check_summary(summary, BOARD)
    assert [f.span for f in flags] == [bad]
    assert apply(summary, flags, KEEP) == summary == apply(summary, flags, MARK)
    assert apply(summary, flags, DROP) == f"{FAITHFUL} The next meeting will be held on 21 June 2026."
