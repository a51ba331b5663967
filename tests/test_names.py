"""Names from the document (decoding/names.py): the rule on text and pieces, its masks,
and a free summary under it on the real engine (lossless: speculative == constrained
target-only)."""

from __future__ import annotations

import numpy as np
import pytest

from localsidecar.decoding.names import START, DocumentNames, DocumentText, capitalised_words, name_table
from localsidecar.decoding.numbers import DocumentNumbers, piece_table
from localsidecar.decoding.speculative import SpecConfig

from .helpers import BENCHMARKS, EXAMPLES, check_equal_or_near_tie, one_at_a_time_logits

BOARD = (BENCHMARKS / "notes-style" / "school-board.txt").read_text(encoding="utf-8")


def allowed_text(names: DocumentNames, text: str) -> bool:
    ok, state = True, START
    for piece in text.split("|"):  # pieces as a model might write them
        good, state = names.scan(state, piece)
        ok = ok and good
    return ok


@pytest.fixture(scope="module")
def names(engine) -> DocumentNames:
    return DocumentNames.for_text(BOARD, name_table(engine.target))


def test_the_rule_on_text(names):
    assert {"David", "Lin", "Moss", "Greenfield", "Easter", "The"} <= capitalised_words(BOARD)
    assert allowed_text(names, "The board met. David| Lin spoke on 14 March.")
    assert allowed_text(names, "Anne Moss's hatch costs 3,800 pounds. Oxford is far.")  # first word: free
    assert allowed_text(names, 'He said: "Yes." Oxford wins.')
    assert not allowed_text(names, "The board asked the Oxford council.")
    assert not allowed_text(names, "The board asked| Dav|ies.")  # a prefix of David, then not a document word
    assert not allowed_text(names, "In 2026 Oxford grew.")  # after a number: mid-sentence
    assert allowed_text(names, "the roof leaked| again| in February")


def test_masks_equal_the_rule_piece_by_piece(engine, names):
    pieces = engine.target.pieces()
    states = [START, (False, False, None), (False, True, None), (False, True, "Da"), (False, True, "Lin")]
    for state in states:
        mask = names.allowed(state)
        slow = np.array([names.scan(state, p)[0] for p in pieces])
        assert np.array_equal(mask, slow), state
        assert mask.any()  # never a state without a token to take
    assert not names.allowed((False, False, None))[engine.target.tokenize(" Oxford")[0]]


def test_a_refused_name_gives_way_to_words_not_another_name(engine, names):
    both = DocumentText(DocumentNumbers.for_text(BOARD, piece_table(engine.target)), names)
    tok = engine.target.tokenize
    oxford, david, the = tok(" Oxford")[0], tok(" David")[0], tok(" the")[0]
    logits = np.zeros(engine.target.n_vocab, dtype=np.float32)
    logits[[oxford, david, the]] = [9.0, 8.0, 7.0]
    state = both.advance(None, tok("The board asked")[0])
    for t in tok(" board asked"):
        state = both.advance(state, t)
    assert both.choose(logits, state) == the  # not " David", the best document name
    assert both.choose(logits, None) == oxford  # the first word of a sentence is free
    assert np.isneginf(both.masked(logits, state)[oxford]) and both.masked(logits, state)[david] == 8.0


@pytest.mark.slow
def test_names_on_the_engine_are_lossless(engine):
    text = (EXAMPLES / "docs" / "river.txt").read_text(encoding="utf-8")
    spec = SpecConfig(names="document", draft_max=3, max_tokens=48)
    ref = engine.run("river", text, "target-only", spec)
    res = engine.run("river", text, "masked", spec)
    assert res.gen.stats.n_drafted > 0
    rule_both = engine.numbers_for(text, spec)
    p = engine.prompt(text)

    def constrained_logits_after(prefix):
        state = None
        for t in prefix:
            state = rule_both.advance(state, t)
        return rule_both.masked(one_at_a_time_logits(engine, p, prefix), state)

    # equal, or apart first at a near-tie of the constrained target (docs/DESIGN.md, Batch shape changes results)
    check_equal_or_near_tie(res.gen.tokens, ref.gen.tokens, constrained_logits_after, spec.max_tokens)
    rule = DocumentNames.for_text(text, name_table(engine.target))
    state, pieces = START, engine.target.pieces()
    for t in res.gen.tokens:  # the rule held at every token
        ok, state = rule.scan(state, pieces[t])
        assert ok, engine.target.detokenize(res.gen.tokens)
