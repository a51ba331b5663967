"""A full stop right after a non-word character ("76%.",
"(£600m).", '"no".') ends a sentence and never crashes the sentence rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localsidecar.decoding.sentences import _is_abbreviation, complete_summary, sentence_ends

CASES = [  # (text, the first sentence it must find)
    ("Profits rose 76%. The shares fell.", "Profits rose 76%."),
    ("It cost (£600m). Then it grew.", "It cost (£600m)."),
    ('He said "no". The talks ended.', 'He said "no".'),
    ("Up 3%. 2024 was better.", "Up 3%."),
    ("A [ref]. B followed.", "A [ref]."),
    ("Margins hit 12.5%.\nNext line.", "Margins hit 12.5%."),
    ("%. Then", "%."),
    (". The end", "."),
]


@pytest.mark.parametrize("text,first", CASES)
def test_a_dot_after_a_non_word_character_ends_the_sentence(text, first):
    ends = sentence_ends(text)
    assert ends and text[: ends[0]] == first


@pytest.mark.parametrize("text", ["76%.", "(£600m).", 'said "no".', "x).", "%."])
def test_a_final_dot_after_a_non_word_character_completes_the_summary(text):
    assert complete_summary(text) == (text, True)
    assert _is_abbreviation(text, len(text) - 1) is False


def test_abbreviations_initials_and_list_numbers_still_do_not_end_sentences():
    assert sentence_ends("Dr. Vos met J. Smith. They talked.") == [len("Dr. Vos met J. Smith.")]
    assert sentence_ends("1. Rinse the lentils") == []
    assert sentence_ends("It rose 5 %. The rest") == [len("It rose 5 %.")]


def test_letters_with_dots_are_one_abbreviation_not_a_sentence_end():
    text = "Cars highlight the L.A. Auto Show this week. COLUMBIA, S.C. (AP) — It opens."
    assert sentence_ends(text) == [len("Cars highlight the L.A. Auto Show this week.")]
    assert sentence_ends("He moved to Washington, D.C. The job began.") == []  # ambiguous: kept whole


_PIECES = st.sampled_from(
    [
        ".",
        "%",
        ")",
        "(",
        '"',
        "'",
        "”",
        "]",
        " ",
        "\n",
        "A",
        "The",
        "76",
        "£",
        "m",
        "Dr",
        "e.g",
        "!",
        "?",
        "…",
        "1",
        "-",
        "•",
        "\t",
        "é",
        "Ü",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_any_text_gets_sentence_ends_in_order_within_the_text(text):
    ends = sentence_ends(text, final=True)
    assert ends == sorted(ends) and all(0 < e <= len(text) for e in ends)
    shown, complete = complete_summary(text)
    assert len(shown) <= len(text.strip())
    assert complete == bool(ends)


@pytest.mark.slow
@pytest.mark.parametrize("text,first", CASES[:3])
def test_the_summary_loops_stop_rule_on_real_tokens_stops_after_the_full_stop(engine, text, first):
    """SentenceStop as the summary loop calls it: on the real tokenizer's
    tokens of the text, growing one token at a time, it stops once the
    first sentence ("... 76%.") is confirmed, and the shown summary of the
    whole text ends on a sentence."""
    from localsidecar.decoding.sentences import SentenceStop, tokens_shown

    tokens = engine.target.tokenize(text)
    stop = SentenceStop(engine.target.detokenize, soft_tokens=1)
    at = next(k for k in range(1, len(tokens) + 1) if stop(tokens[:k]) == "sentence")
    assert engine.target.detokenize(tokens[:at]).strip().startswith(first)
    assert len(engine.target.detokenize(tokens[: at - 1]).strip()) <= len(first) + 1
    shown, complete = complete_summary(engine.target.detokenize(tokens))
    assert complete and shown == text
    assert tokens_shown(engine.target.detokenize, tokens, shown) == len(tokens)


LOOP = (
    "The company has implemented a new security measure to reduce search latency. "
    "The company has implemented a new security measure to reduce search latency. "
    "The company has also implemented a new security measure."
)


def test_a_repeated_sentence_stops_the_summary_and_is_dropped(engine):
    """A looping summary (seen on on-call notes): the hook stops once the
    second, identical sentence is confirmed, at any length, and the shown
    summary keeps the first only; a sentence that differs by a word is no repeat."""
    from localsidecar.decoding.sentences import SentenceStop, first_repeat, sentence_ends, tokens_shown

    assert first_repeat(LOOP, sentence_ends(LOOP, final=True)) == 1
    assert complete_summary(LOOP) == (LOOP.split(". ")[0] + ".", True)
    other = LOOP.replace("new security", "new caching", 1)
    assert first_repeat(other, sentence_ends(other, final=True)) is None
    assert complete_summary(other) == (other, True)
    tokens = engine.target.tokenize(LOOP)
    stop = SentenceStop(engine.target.detokenize, soft_tokens=10_000)
    reasons = [stop(tokens[:k]) for k in range(1, len(tokens) + 1)]
    at = reasons.index("repeat") + 1
    assert set(reasons[: at - 1]) == {None}
    assert engine.target.detokenize(tokens[:at]).count("latency.") == 2  # stopped right after the repeat
    shown, _ = complete_summary(engine.target.detokenize(tokens[:at]))
    assert tokens_shown(engine.target.detokenize, tokens[:at], shown) < at
