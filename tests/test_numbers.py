"""Numbers from the document (decoding/numbers.py): the rule on strings and
pieces, then the real engine on a story whose free summary invents figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.decoding.layouts import prefill_target
from localsidecar.decoding.numbers import DocumentNumbers, PieceTable, document_numbers, numbers_in
from localsidecar.decoding.speculative import SpecConfig
from tests.helpers import check_equal_or_near_tie, one_at_a_time_logits, speculative_from_scratch

from .helpers import one_line_error

FERRY = Path(__file__).parent / "data" / "ferry.txt"  # its numbers: "3" and "40,000"
MAX_TOKENS = 48


def test_document_numbers_are_maximal_runs():
    text = "On 14:30, 1,000 people paid 3.5 pounds; the 95th run of 2024/03/14. Sections 3,4."
    assert document_numbers(text) == {"14:30", "1,000", "3.5", "95", "2024/03/14", "3,4"}
    assert numbers_in("a 20-ton ship, 1,000 passengers.") == ["20", "1,000"]


def _rule(doc: str, pieces: list[str]) -> DocumentNumbers:
    return DocumentNumbers.for_text(doc, PieceTable(pieces))


def _writes(num: DocumentNumbers, text_pieces: list[str]) -> bool:
    """Whether the rule lets `text_pieces` be written one after another."""
    run = None
    for piece in text_pieces:
        ok, run = num.scan(run, piece)
        if not ok:
            return False
    return True


def test_the_rule_on_pieces():
    num = _rule("It costs 1,000 pounds, or 20. Then 3.5 more.", [])
    assert _writes(num, [" 1", ",", "0", "00", " pounds"])  # every step a prefix, then complete
    assert not _writes(num, [" 1", " pounds"])  # "1" is not a number of the document
    assert not _writes(num, [" 1", ",", " pounds"])  # "1," left unfinished
    assert _writes(num, [" costs", " 20", ".", " Then"])  # a full stop after a complete number
    assert _writes(num, [" 3", ".", "5", "."])
    assert not _writes(num, [" 2", "5"])  # "25": not a prefix of any number
    assert _writes(num, [" 20", "-ton"]) and not _writes(num, [" 2", "-ton"])  # "2" alone is not one
    assert not _writes(num, [" 1,0", "0 "])  # "1,00" ends: not a number
    assert _writes(num, ["x", ",", ".", " no digits"])  # separators without a run are text


def test_masks_and_choice_over_a_vocabulary():
    pieces = [" the", " 1", ",", "000", " 2", "0", ".", " 9", "", "20", " pounds"]
    num = _rule("It costs 1,000 pounds, or 20.", pieces)
    none_open = num.allowed(None)
    assert none_open.tolist() == [True, True, True, False, True, False, True, False, True, True, True]
    # after " 1": only a way on to "1,000" (the separator, not "000" directly nor a word)
    after_one = num.advance(None, 1)
    assert after_one == "1"
    assert np.flatnonzero(num.allowed(after_one)).tolist() == [2]
    assert num.advance("1", 2) == "1," and np.flatnonzero(num.allowed("1,")).tolist() == [3, 5]
    # after "20": complete, so words, separators, an empty (end) piece or a new number may
    # follow; no digit extends it
    assert np.flatnonzero(num.allowed("20")).tolist() == [0, 1, 2, 4, 6, 8, 10]
    logits = np.zeros(len(pieces), dtype=np.float32)
    logits[7], logits[4], logits[1] = 5.0, 3.0, 3.0  # " 9" refused; " 2" / " 1" allowed numbers
    # no forced numbers: a refused digit gives way to the best token without one (a tie at 0: " the")
    assert num.choose(logits, None) == 0
    logits[0] = -1.0
    assert num.choose(logits, None) == 2  # the next best without a digit, never " 1" or " 2"
    logits[9] = 9.0  # "20" wanted after "1,": an unfinished run goes on with digits ("0", not "000")
    logits[5], logits[3] = 2.0, 1.0
    assert num.choose(logits, "1,") == 5
    logits[:] = 0.0
    logits[1], logits[4] = 3.0, 2.0  # an allowed digit start is taken as it is
    assert num.choose(logits, None) == 1
    logits[7] = 5.0
    assert np.isneginf(num.masked(logits, None)[7]) and num.masked(logits, None)[4] == 2.0


def test_a_document_without_numbers_allows_no_digit():
    pieces = [" a", " 1", "2", "x3", ".", ""]
    num = _rule("No figures here at all.", pieces)
    assert num.numbers == frozenset()
    assert num.allowed(None).tolist() == [True, False, False, False, True, True]


# --- the real engine -------------------------------------------------------------------------


def _greedy_free(engine, p) -> list[int]:
    """The unconstrained greedy summary, one token per call: what decoding did before --numbers."""
    ctx = engine.t_ctx
    prefill_target(ctx, p)
    pos, last, out = len(p.bare) - 1, p.bare[-1], []
    while len(out) < MAX_TOKENS:
        ctx.decode_tokens([last], pos, (0,), "last")
        tok = int(np.argmax(ctx.logits(-1)))
        if engine.target.is_eog(tok):
            break
        out.append(tok)
        pos, last = pos + 1, tok
    return out


def _speculative(engine, p, spec: SpecConfig, numbers):
    return speculative_from_scratch(engine, p, "masked", spec, numbers=numbers)[0]


@pytest.mark.slow
def test_document_numbers_on_the_engine_are_lossless(engine):
    text = FERRY.read_text(encoding="utf-8")
    doc = document_numbers(text)
    p = engine.prompt(text)
    spec_free = SpecConfig(draft_max=3, max_tokens=MAX_TOKENS, numbers="free")
    spec_doc = SpecConfig(draft_max=3, max_tokens=MAX_TOKENS)
    assert spec_doc.numbers == "document"  # the default
    # free: the old output, figures the story does not have among them
    old = _greedy_free(engine, p)
    assert set(numbers_in(engine.target.detokenize(old))) - doc
    free = _speculative(engine, p, spec_free, engine.numbers_for(text, spec_free))
    assert engine.numbers_for(text, spec_free) is None
    # docs/DESIGN.md, Batch shape changes results: batched verification may flip a near-tie
    check_equal_or_near_tie(
        free.tokens, old, lambda prefix: one_at_a_time_logits(engine, p, prefix), MAX_TOKENS
    )
    # document: speculative (masked, --draft-max 3) == constrained target-only, token for token
    numbers = engine.numbers_for(text, spec_doc)
    gen = _speculative(engine, p, spec_doc, numbers)
    ref = engine.generate_target_only(p, spec_doc, numbers=numbers)
    assert gen.tokens == gen.target_argmax
    check_equal_or_near_tie(
        gen.tokens, ref.tokens, lambda prefix: one_at_a_time_logits(engine, p, prefix), MAX_TOKENS
    )
    assert gen.stats.n_drafted > gen.stats.rounds  # batches of several drafted tokens were verified
    summary = engine.target.detokenize(gen.tokens)
    nums = numbers_in(summary)
    if gen.stopped == "max_tokens" and summary[-1:].isdigit():  # cut inside a number: a prefix of one
        cut = nums.pop()
        assert any(n.startswith(cut) for n in doc)
    assert gen.tokens != old and nums and set(nums) <= doc
    # the rule held at every step (not just for the finished text)
    run = None
    for tok in gen.tokens:
        ok, run = numbers.scan(run, numbers.table.pieces[tok])
        assert ok


@pytest.mark.slow
def test_run_records_numbers_and_takes_the_env_default():
    r = CliRunner().invoke(
        main,
        ["run", str(FERRY), "--json", "--max-tokens", "40", "--mode", "target-only", "--summary", "free"],
        env={"LOCALSIDECAR_NUMBERS": "free"},
    )
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout.splitlines()[0])
    assert rec["numbers"] == "free"
    assert set(numbers_in(rec["summary"])) - document_numbers(FERRY.read_text(encoding="utf-8"))


@pytest.mark.parametrize("command", ["run", "quant", "hashtags-eval"])
def test_a_bad_numbers_value_is_one_error_line(command):
    r = CliRunner().invoke(main, [command, str(FERRY), "--numbers", "invented"])
    assert "--numbers" in one_line_error(r)
