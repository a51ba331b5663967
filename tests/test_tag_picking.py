"""The trie picker (hashtags.picking) on the real embedded model: every
choice is the model's best child, forced tokens are decoded in batches and
the tail after the last choice not at all."""

from __future__ import annotations

import json

import numpy as np
import pytest

from localsidecar.hashtags.candidates import Candidate
from localsidecar.hashtags.generation import HashtagSettings, TagPhase, TagPlan, tag_key
from localsidecar.hashtags.metrics import tag_words
from localsidecar.hashtags.picking import TrieNode, output_text, pick_hashtags, token_trie, walk
from localsidecar.hashtags.sampling import TagSampling
from localsidecar.hashtags.scoring import MODEL_WEIGHT, first_item_tokens, pick_by_score, score_candidates
from tests.helpers import BATCH_NOISE

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

TEXT = (
    "The Hartley Road swimming pool will close in September after sixty years, the town council said. "
    "Swimmers from Millbrook will have to travel to the new leisure centre in Riverton."
)
CANDS = ["HartleyRoad", "SwimmingPool", "Millbrook", "Riverton", "LeisureCentre"]


def _leaves(node: TrieNode, path: tuple[int, ...] = ()):
    if node.items is not None:
        yield path, node.items
    for tok, child in node.children.items():
        yield from _leaves(child, (*path, tok))


def _prefill(engine, text: str) -> tuple:
    ctx, model = engine.t_ctx, engine.target
    ctx.clear()
    ctx.decode_tokens(model.tokenize(text + "\n\nHashtags:"), 0, (0,), "last")
    return ctx, model


def test_the_trie_holds_every_ordered_choice_of_distinct_candidates_once(engine):
    model = engine.target
    leaves = list(_leaves(token_trie(model, CANDS[:3], 2, 64)))
    assert sorted(items for _, items in leaves) == sorted(
        (a, b) for a in CANDS[:3] for b in CANDS[:3] if a != b
    )
    for path, items in leaves:
        assert model.detokenize(list(path)) == output_text(items)
        assert json.loads(output_text(items)) == ["#" + t for t in items]
    # a budget too small for any output leaves no branch at all
    shortest = min(len(p) for p, _ in leaves)
    assert not token_trie(model, CANDS[:3], 2, shortest - 1).children
    with pytest.raises(ValueError):
        token_trie(model, CANDS[:2], 3, 64)


def test_every_choice_is_the_models_best_child_and_the_last_tail_is_not_decoded(engine):
    ctx, model = _prefill(engine, TEXT)
    pos0 = ctx.pos_max(0) + 1
    lead = model.tokenize(" ")
    root = token_trie(model, CANDS, 3, 64)
    pick = walk(ctx, 0, lead, root)
    assert pick.items in {items for _, items in _leaves(root)} and len(set(pick.items)) == 3
    assert model.detokenize(pick.tokens) == output_text(pick.items)
    # replay one token at a time: at each node with several children the pick
    # took the best of them (or one within batch noise of it)
    ctx, _ = _prefill(engine, TEXT)
    node, seq, done, choices, last_choice = root, list(lead), 0, 0, -1
    for i, tok in enumerate(pick.tokens):
        if len(node.children) > 1:
            for t in seq[done:]:
                ctx.decode_tokens([t], pos0 + done, (0,), "last")
                done += 1
            ids = sorted(node.children)
            x = np.array(ctx.logits(-1))[ids]
            best = ids[int(np.argmax(x))]
            assert tok == best or x.max() - x[ids.index(tok)] <= BATCH_NOISE, (i, tok, best)
            choices, last_choice = choices + 1, i
        seq.append(tok)
        node = node.children[tok]
    assert node.items == pick.items and choices == pick.choices >= 2
    # a fresh walk leaves the cache ending just before the last chosen token
    ctx, _ = _prefill(engine, TEXT)
    again = walk(ctx, 0, lead, root)
    assert again == pick
    assert ctx.pos_max(0) == pos0 + len(lead) + last_choice - 1


def test_a_tempered_pick_is_seeded_and_stays_in_the_trie(engine):
    picks = []
    for seed in (7, 7, 8, 9, 10, 11):
        ctx, model = _prefill(engine, TEXT)
        pick, _ = pick_hashtags(
            ctx, model, 0, model.tokenize(" "), CANDS, 3, TagSampling(temperature=1.5, seed=seed)
        )
        assert len(set(pick.items)) == 3 and set(pick.items) <= set(CANDS)
        assert model.detokenize(pick.tokens) == output_text(pick.items)
        picks.append(pick.items)
    assert picks[0] == picks[1]  # the same seed, the same draw


def test_the_token_budget_gives_fewer_items_and_nothing_decoded_when_none_fits(engine):
    ctx, model = _prefill(engine, TEXT)
    three = len(model.tokenize(output_text(CANDS[:3])))
    one = min(len(model.tokenize(output_text([c]))) for c in CANDS)
    pick, _ = pick_hashtags(ctx, model, 0, model.tokenize(" "), CANDS, 3, TagSampling(max_tokens=three - 4))
    assert 1 <= len(pick.items) < 3 and len(pick.tokens) <= three - 4
    ctx, model = _prefill(engine, TEXT)
    end = ctx.pos_max(0)
    pick, _ = pick_hashtags(ctx, model, 0, model.tokenize(" "), CANDS, 3, TagSampling(max_tokens=one - 1))
    assert pick.items == () and pick.tokens == [] and ctx.pos_max(0) == end


def test_an_unknown_picker_is_refused():
    with pytest.raises(ValueError, match="unknown hashtag picker"):
        HashtagSettings(picker="beam")


def test_the_sampling_settings_are_checked_once_when_made():
    with pytest.raises(ValueError, match="unknown penalty scope 'words'"):
        HashtagSettings(penalty_scope="words")
    with pytest.raises(ValueError, match="at least 1.0"):
        HashtagSettings(penalty=0.5)
    for bad in ({"temperature": -0.1}, {"max_tokens": 0}, {"temperature": float("nan")}):
        with pytest.raises(ValueError):
            TagSampling(**bad)
    s = HashtagSettings(penalty=1.5, penalty_scope="all").sampling(0.7, 3, 12)
    assert s == TagSampling(temperature=0.7, seed=3, penalty=1.5, penalty_scope="all", max_tokens=12)


# --- the score picker (hashtags.scoring) -----------------------------------------------------


def _cands(texts, scores=None):
    scores = scores or [3.0 - 0.2 * k for k in range(len(texts))]
    return [Candidate(t, tuple(tag_words("#" + t)), "term", s, 2) for t, s in zip(texts, scores)]


def test_every_candidate_is_read_whole_in_the_same_context(engine):
    ctx, model = _prefill(engine, TEXT)
    pos0 = ctx.pos_max(0) + 1
    lead = model.tokenize(" ")
    cands = _cands(CANDS)
    scored = score_candidates(ctx, model, 0, lead, cands)
    toks = [first_item_tokens(model, c) for c in CANDS]
    shared = next(k for k in range(len(toks[0])) if len({t[k] for t in toks}) > 1)
    assert ctx.pos_max(0) == pos0 + len(lead) + shared - 1  # the candidates' own tokens were removed
    # each log-probability again, one candidate at a time in a fresh context
    for c, t, s in zip(CANDS, toks, scored):
        ctx, _ = _prefill(engine, TEXT)
        ctx.decode_tokens([*lead, *t[:shared]], pos0, (0,), "last")
        want = 0.0
        for j, tok in enumerate(t[shared:]):
            x = np.array(ctx.logits(-1), dtype=np.float64)
            want += x[tok] - x.max() - np.log(np.exp(x - x.max()).sum())
            ctx.decode_tokens([tok], pos0 + len(lead) + shared + j, (0,), "last")
        assert s.candidate.text == c and abs(s.logprob - want) <= BATCH_NOISE, (c, s.logprob, want)
        assert s.tokens == len(t) - shared  # the mean is over the candidate's own tokens
        assert s.score == pytest.approx(np.log(s.candidate.score) + MODEL_WEIGHT * s.logprob / s.tokens)


def test_the_score_picker_keeps_the_best_scores_and_a_seeded_draw_repeats(engine):
    cands = _cands(CANDS)
    plan = TagPlan("", frozenset(tag_key(t) for t in CANDS), tuple(cands), 3)
    ctx, model = _prefill(engine, TEXT)
    scored = score_candidates(ctx, model, 0, model.tokenize(" "), cands)
    best = [s.candidate.text for s in sorted(scored, key=lambda s: -s.score)][:3]
    ctx, model = _prefill(engine, TEXT)
    h = pick_by_score(TagPhase(ctx, model, 0, model.tokenize(" ")), plan)
    assert h.tags == ["#" + t for t in best] and h.valid_json and json.loads(h.raw) == h.tags
    assert h.tokens == len(model.tokenize(h.raw))
    draws = []
    for seed in (5, 5, 6):
        ctx, model = _prefill(engine, TEXT)
        draws.append(
            pick_by_score(
                TagPhase(ctx, model, 0, model.tokenize(" ")), plan, TagSampling(temperature=2.0, seed=seed)
            ).tags
        )
    assert draws[0] == draws[1] and all(len(d) == 3 and set(d) <= {"#" + t for t in CANDS} for d in draws)
    ctx, model = _prefill(engine, TEXT)
    small = pick_by_score(
        TagPhase(ctx, model, 0, model.tokenize(" ")), plan, TagSampling(max_tokens=h.tokens - 1)
    )
    assert len(small.tags) < 3 and small.tokens <= h.tokens - 1


def test_the_score_picker_weighs_the_models_log_probability_per_token(engine):
    """A long name is not punished for its length: the mean per token decides,
    so the pick differs from what the summed log-probability would give."""
    text = (
        "Celtic manager Martin O'Neill met Juninho's agent on Monday. Martin O'Neill said the Brazilian "
        "midfielder wants to stay, and Martin O'Neill will offer a new deal. The agent asked for talks."
    )
    names = ["MartinONeill", "Agent"]
    cands = _cands(names, [2.0, 2.0])
    plan = TagPlan("", frozenset(tag_key(t) for t in names), tuple(cands), 1)
    ctx, model = _prefill(engine, text)
    scored = score_candidates(ctx, model, 0, model.tokenize(" "), cands)
    by_mean = max(scored, key=lambda s: s.logprob / s.tokens).candidate.text
    by_sum = max(scored, key=lambda s: s.logprob).candidate.text
    assert by_mean != by_sum, [(s.candidate.text, s.logprob, s.tokens) for s in scored]
    ctx, model = _prefill(engine, text)
    h = pick_by_score(TagPhase(ctx, model, 0, model.tokenize(" ")), plan)
    assert h.tags == ["#" + by_mean]
