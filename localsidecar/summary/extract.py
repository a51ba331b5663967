"""The extract summary: the target picks the document's own sentences, one choice at a time.

At each choice point the candidates (summary.candidates) still offered are scored by the
target as the summary's next sentence after the prompt and the sentences chosen so far
(summary.scoring: one decode for all of them): the mean log-probability of their first
`score_tokens` tokens, less `position_prior` times ln(1 + the candidate's place in the
document) (a lead sentence is a summary's usual start), less `reference_penalty` when it
opens with a pronoun or a connective ("It", "They", "But"), is a quotation alone, or has a
pronoun early and before any name ("In a letter, he said") or "these" and a noun ("these
goals"), and the document's sentence before it is not in the summary (its antecedent would
be missing), or when it names someone by title and surname ("Ms Tan") or by a surname the
document gave in full before ("Greenspan") whom the summary has not named yet
(summary.references); with `hold_back_references` (the default) such a candidate is offered
only when no other is. Less
`same_part_penalty` when the summary already has a sentence of its paragraph (or of its
section's list): after a chosen sentence the model's likeliest next one is the document's
next sentence, whatever it says, so without it a summary of minutes covers one item. The
best one is chosen (ties: the first in the document). After the first choice
only its `shortlist` best candidates and the sentence after each chosen one are offered.
The summary stops (ExtractSettings.stop) after `max_sentences`, or once it has
`min_sentences` and `min_tokens` tokens, or after one sentence of `enough_tokens`; a
candidate that would take it past max_tokens is not offered. The figures behind the
defaults: docs/summaries.md.

Speculative (a draft): the draft proposes up to k choices ahead with its own scoring, and
the target scores every choice point itself, exactly as without a draft, so the output is
the target-only output token for token at any k; a proposal is accepted when the target
chose the same candidate. The target scores every candidate either way, so a drafted
choice saves no target work: `--draft-max auto` drafts no choices (k = 0). The
invariant and its cache plan: docs/DESIGN.md, Extract summaries.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from localsidecar.summary.candidates import Candidate
from localsidecar.summary.references import (
    introduced_surnames,
    leans_back,
    names_a_stranger,
    opens_on_someone,
)
from localsidecar.summary.scoring import Scorer

_WORD = re.compile(r"\w+")
REPEATED_WORDS = 0.8  # the share of its words a notes unit may not have of a chosen one


@dataclass(frozen=True)
class ExtractSettings:
    """How the target chooses and when the summary stops (see the module docstring)."""

    score_tokens: int | None = 12  # None: every token of the candidate
    reference_penalty: float = 1.0
    position_prior: float = 0.6  # times ln(1 + the candidate's place in the document), subtracted
    # subtracted from a candidate of a paragraph the summary already took a sentence from
    # (or of a list of a section, in a document of several sections, when it took a list
    # item of it): after a chosen sentence the document's next one is the model's likeliest
    # continuation, whatever it says
    same_part_penalty: float = 1.0
    min_sentences: int = 4
    min_tokens: int = 0
    max_sentences: int = 4
    enough_tokens: int = 10**9
    shortlist: int | None = 6  # choices after the first: its best few (and the next sentences)
    # notes (NOTES_SETTINGS): the penalty of a candidate of a section the summary already has
    # a unit of, the bonus of one that says what was decided or is to be done (Candidate.cue),
    # and the summary's length in words: a unit that would take it past max_words is not
    # offered, and it may stop once it has min_words
    section_penalty: float = 0.0
    cue_bonus: float = 0.0
    decision_bonus: float = 0.0  # besides cue_bonus, for a decision or a task given to someone
    unvoiced_penalty: float = 0.0  # a unit in the first person that names no speaker
    max_words: int | None = None
    min_words: int = 0
    # the chosen units shown in the document's order (the summary's tokens follow it: the
    # cells of the choices' order are dropped, and the draft catches up on the new order)
    document_order: bool = True
    # a candidate that leans on a sentence the summary leaves out, or names someone it has not
    # introduced, is offered only when no other candidate is, the shortlist's or any open one
    # (reference_penalty then ranks it)
    hold_back_references: bool = True

    def stop(self, sentences: int, tokens: int, words: int = 0) -> bool:
        return (
            sentences >= self.max_sentences
            or (sentences >= self.min_sentences and tokens >= self.min_tokens and words >= self.min_words)
            or (sentences == 1 and tokens >= self.enough_tokens)
        )


# Meeting notes, minutes, retros and structured reports (candidates.is_notes): what a
# reader needs is spread over the document's sections (decisions, outcomes, actions), so
# the summary takes more, shorter units, one per topic and preferably one per section,
# preferring decisions and actions, up to a length in words; notes of LONG_NOTES_WORDS
# words or more take more of them (LONG_NOTES_SETTINGS). Figures: docs/summaries.md.
NOTES_SETTINGS = ExtractSettings(
    position_prior=0.1,
    same_part_penalty=1.5,
    section_penalty=0.5,
    cue_bonus=0.5,
    decision_bonus=2.0,
    unvoiced_penalty=1.0,
    min_sentences=3,
    max_sentences=5,
    min_tokens=0,
    enough_tokens=10**9,
    min_words=90,
    max_words=130,
    shortlist=10,
    document_order=True,
)
LONG_NOTES_WORDS = 500
LONG_NOTES_SETTINGS = replace(NOTES_SETTINGS, min_words=140, max_words=200, max_sentences=10)


# An article (no notes): the summary takes whole sentences up to a share of the document's
# words, NEWS_WORDS at the least and the most; it may stop once it is within NEWS_SLACK
# words of that. Four sentences (about 90 words) left out what blind judges missed most,
# the story's second half: docs/summaries.md, Length.
NEWS_SETTINGS = ExtractSettings(min_sentences=1, max_sentences=10)
NEWS_SHARE = 0.5
NEWS_WORDS = (110, 200)
NEWS_SLACK = 30


def settings_for(opts: Options) -> ExtractSettings:
    """The defaults of a document of opts' shape and length."""
    if not opts.notes:
        most = round(min(NEWS_WORDS[1], max(NEWS_WORDS[0], NEWS_SHARE * opts.doc_words)))
        return replace(NEWS_SETTINGS, max_words=most, min_words=most - NEWS_SLACK)
    return LONG_NOTES_SETTINGS if opts.doc_words >= LONG_NOTES_WORDS else NOTES_SETTINGS


@dataclass
class ChoiceStats:
    """choices: sentences chosen; drafted / accepted: choices the draft proposed / the
    target chose too; decodes: target decode calls of the walk; scored_tokens: candidate
    tokens the target decoded to score them."""

    choices: int = 0
    drafted: int = 0
    accepted: int = 0
    decodes: int = 0
    draft_decodes: int = 0
    scored_tokens: int = 0
    draft_s: float = 0.0
    verify_s: float = 0.0


@dataclass
class Extract:
    """tokens: the summary's tokens (the chosen candidates' own, a space before each but
    the first); chosen: the candidates in summary order; stopped: why it ended;
    scores: each choice's best score."""

    tokens: list[int]
    chosen: list[Candidate]
    stopped: str
    stats: ChoiceStats
    scores: list[float] = field(default_factory=list)
    cut: str | None = None  # the text shown of a sentence cut at max_tokens (the only one then)

    @property
    def text(self) -> str:
        return self.cut if self.cut is not None else " ".join(c.text for c in self.chosen)

    @property
    def shown(self) -> list[int]:
        """Characters shown of each chosen candidate."""
        return [len(self.cut)] if self.cut is not None else [len(c.text) for c in self.chosen]


class Options:
    """The candidates' tokens at the first choice and after a sentence (with its space);
    notes: the document is notes-shaped (candidates.is_notes); opening: the line every
    summary opens with, no choice (summary.outline.topics_line), or None; doc_words: the
    document's length in words (settings_for)."""

    def __init__(
        self,
        cands: Sequence[Candidate],
        tokenize: Callable[[str], list[int]],
        detokenize: Callable[[Sequence[int]], str],
        notes: bool = False,
        opening: Candidate | None = None,
        doc_words: int = 0,
    ):
        self.cands = list(cands)
        self.doc_words = doc_words
        self.opening = opening
        self.opening_tokens = tokenize(opening.text) if opening is not None else []
        self.detokenize = detokenize
        self.notes = notes
        self.sectioned = len({c.section for c in self.cands}) > 1
        self.first = [tokenize(c.text) for c in self.cands]
        self.later = [tokenize(" " + c.text) for c in self.cands]
        self.words = [len(c.text.split()) for c in self.cands]
        # tokens of a candidate's topic title and speaker (Candidate.lead), at the first choice and after
        leads = [c.text[: c.lead].rstrip() for c in self.cands]
        self.lead_first = [len(tokenize(t)) if t else 0 for t in leads]
        self.lead_later = [len(tokenize(" " + t)) if t else 0 for t in leads]
        self.spans = [c.spans for c in self.cands]
        self.unit_words = [frozenset(_WORD.findall(c.text[c.lead :].lower())) for c in self.cands]
        # names_a_stranger; notes call people by first name, and title-case their topics ("Engagement Plan")
        self.surnames = {} if notes else introduced_surnames(self.cands)
        self.first_sentence = min((c.sentence for c in self.cands), default=0)

    def tokens(self, i: int, position: int) -> list[int]:
        return self.first[i] if position == 0 and self.opening is None else self.later[i]

    def lead(self, i: int, position: int) -> int:
        """Tokens of candidate i before its unit (its topic title and speaker)."""
        return self.lead_first[i] if position == 0 and self.opening is None else self.lead_later[i]

    def repeats(self, i: int, chosen: Sequence[int]) -> bool:
        """Candidate i repeats a chosen one: document text of it (a topic title they share),
        or most of its words (minutes that give an action item where it was discussed and
        again in their list of actions)."""
        if any(a < d and c < b for j in chosen for a, b in self.spans[j] for c, d in self.spans[i]):
            return True
        mine = self.unit_words[i]
        return any(
            len(mine & self.unit_words[j]) >= REPEATED_WORDS * min(len(mine), len(self.unit_words[j]))
            for j in chosen
        )

    def open(self, chosen: Sequence[int], budget: int, max_words: int | None = None) -> list[int]:
        """Candidates still allowed: not chosen, not the same sentence as a chosen one
        (a clause cut and its whole sentence), fitting the token budget (and the words
        left of max_words)."""
        taken = {self.cands[i].sentence for i in chosen}
        position = len(chosen)
        words_left = 10**9 if max_words is None else max_words - sum(self.words[i] for i in chosen)
        return [
            i
            for i, c in enumerate(self.cands)
            if c.sentence not in taken
            and 0 < len(self.tokens(i, position)) <= budget
            and self.words[i] <= words_left
            and not (self.notes and self.repeats(i, chosen))
        ]


class Picker:
    """The choices of one model (its Scorer): every open candidate at the first choice;
    after it, the `shortlist` best of the first choice's scores and the sentence right
    after each chosen one (a summary that goes on with the document's next sentence)."""

    def __init__(self, scorer: Scorer, opts: Options, settings: ExtractSettings):
        self.scorer, self.opts, self.settings = scorer, opts, settings
        self.first: list[int] | None = None  # candidates by the first choice's scores, best first

    def offered(
        self, chosen: Sequence[int], budget: int, fit_words: bool = True, shortlist: bool = True
    ) -> list[int]:
        open_ = self.opts.open(chosen, budget, self.settings.max_words if fit_words else None)
        if not open_ and not chosen:
            open_ = self.opts.open(chosen, budget)  # no sentence is that short: the first may be longer
        if self.first is None or self.settings.shortlist is None or not shortlist:
            return open_
        # of notes, the best of those still open (units that repeat a chosen one's topic title are not)
        still = set(open_) if self.opts.notes else None
        keep = {i for i in self.first if i not in chosen and (still is None or i in still)}
        keep = set(sorted(keep, key=self.first.index)[: self.settings.shortlist])
        cands = self.opts.cands
        for i in chosen:
            after = next((j for j in range(i + 1, len(cands)) if cands[j].sentence > cands[i].sentence), None)
            if after is not None:
                keep.add(after)
        return [i for i in open_ if i in keep]

    def _leans(self, c: Candidate, have: set[int], said: str) -> bool:
        """`c` leans on a sentence the summary (its sentences `have`, its text `said`) leaves
        out, or names someone it has not introduced (summary.references)."""
        # the first sentence offered has nothing before it to lean on, unless it opens on
        # someone ("Her work involved ...": the line that names her gave no candidate)
        if c.sentence == self.opts.first_sentence and not opens_on_someone(c.text[c.lead :]):
            return False
        return leans_back(c, have) or names_a_stranger(c.text, said, self.opts.surnames, c.sentence)

    def choose(self, chosen: Sequence[int], budget: int, cut: bool = False) -> tuple[int, float, int] | None:
        """Score the offered candidates, commit the best; (index, score, scored tokens).
        cut: offer every open candidate, cut to its first `budget` tokens."""
        reach = 10**9 if cut else budget
        offered = self.offered(chosen, reach, fit_words=not cut)
        if not offered:
            return None
        settings, opts = self.settings, self.opts
        taken = [opts.cands[i] for i in chosen]
        have = {c.sentence for c in taken}
        said = " ".join(c.text for c in taken)
        leaning = {i for i in offered if self._leans(opts.cands[i], have, said)}
        if settings.hold_back_references and leaning:
            if len(leaning) == len(offered) and self.first is not None:
                # the shortlist is spent and only sentences that lean are left: the best of the rest
                rest = self.offered(chosen, reach, fit_words=not cut, shortlist=False)
                rest = [i for i in rest if not self._leans(opts.cands[i], have, said)]
                if rest:
                    offered, leaning = rest, set()
            offered = [i for i in offered if i not in leaning] or offered  # all lean: all stay
        position = len(chosen)
        toks = [opts.tokens(i, position)[: budget if cut else None] for i in offered]
        # a unit is scored after its topic title and speaker: its first score_tokens tokens
        leads = [min(opts.lead(i, position), len(t) - 1) for i, t in zip(offered, toks)]
        n = [
            len(t) if settings.score_tokens is None else min(len(t), lead + settings.score_tokens)
            for t, lead in zip(toks, leads)
        ]
        got = self.scorer.score(toks, n)
        n = got.scored
        blocks = {c.block for c in taken} | {c.topic for c in taken}
        lists = {c.section for c in taken if c.listed} if opts.sectioned else set()
        sections = {c.section for c in taken}
        scores = []
        for k, i in enumerate(offered):
            c = opts.cands[i]
            s = float(got.log_probs[k][leads[k] :].mean()) - settings.position_prior * math.log1p(c.index)
            if i in leaning:
                s -= settings.reference_penalty
            # a decision or a task of a list (minutes' action items) is a point of its own: only
            # its own item or topic pays when the summary has one of its list or section
            spread = not (settings.decision_bonus and c.decision)
            if c.block in blocks or c.topic in blocks or (spread and c.listed and c.section in lists):
                s -= settings.same_part_penalty
            if spread and c.section in sections:
                s -= settings.section_penalty
            if c.cue:
                s += settings.cue_bonus
            if c.decision:
                s += settings.decision_bonus
            if c.unvoiced:
                s -= settings.unvoiced_penalty
            scores.append(s)
        best = int(np.argmax(scores))  # ties: the first in the document
        if self.first is None:
            self.first = [offered[k] for k in sorted(range(len(offered)), key=lambda k: -scores[k])]
        self.scorer.commit(best, toks[best], n[best])
        return offered[best], scores[best], sum(n)


def extract(
    target: Scorer,
    opts: Options,
    max_tokens: int,
    settings: ExtractSettings = ExtractSettings(),
    *,
    draft: Scorer | None = None,
    draft_max: int = 0,
    on_choice: Callable[[list[int]], None] | None = None,
) -> Extract:
    """Choose sentences with `target` (and proposals of `draft`, up to draft_max choices a
    round) until settings.stop. Both scorers must stand right after the prompt, and are
    left holding the summary in sequence 0 (finish). on_choice hears the summary's tokens
    after every choice (progress)."""
    stats = ChoiceStats()
    t_pick = Picker(target, opts, settings)
    d_pick = Picker(draft, opts, settings) if draft is not None else None
    chosen: list[int] = []
    pieces: list[list[int]] = []  # the tokens each choice added
    # the opening line is no choice: both models take it as a forced run, decoded with the
    # first choice's batch
    opening = opts.opening_tokens if len(opts.opening_tokens) < max_tokens else []  # whole, or none
    for scorer in (target, draft) if draft is not None else (target,):
        if opening:
            scorer.commit(None, opening)
    tokens: list[int] = list(opening)
    scores: list[float] = []
    stopped: str | None = None
    while stopped is None:
        c0 = len(chosen)
        proposals: list[int] = []
        marks: list[int] = []  # the draft's end before each proposal
        if draft is not None and draft_max > 0:
            t0, calls = time.perf_counter(), draft.decodes
            d_chosen, d_used = list(chosen), len(tokens)
            for _ in range(draft_max):
                mark = draft.end
                got = d_pick.choose(d_chosen, max_tokens - d_used)
                if got is None:
                    break
                marks.append(mark)
                proposals.append(got[0])
                d_used += len(opts.tokens(got[0], len(d_chosen)))
                d_chosen.append(got[0])
                if settings.stop(len(d_chosen), d_used, sum(opts.words[i] for i in d_chosen)):
                    break
            stats.drafted += len(proposals)
            stats.draft_decodes += draft.decodes - calls
            stats.draft_s += time.perf_counter() - t0
        for k in range(len(proposals) + 1):  # the target's choices: while they agree, and one more
            t0, calls = time.perf_counter(), target.decodes
            got = t_pick.choose(chosen, max_tokens - len(tokens))
            stats.decodes += target.decodes - calls
            stats.verify_s += time.perf_counter() - t0
            cut = None
            if got is None and not chosen and not opening and t_pick.offered(chosen, 10**9):
                got = t_pick.choose(chosen, max_tokens, cut=True)  # no sentence fits: the best one, cut
                stats.decodes += target.decodes - calls
                cut = _whole_words(
                    opts.detokenize(opts.tokens(got[0], 0)[:max_tokens]).strip(),
                    opts.detokenize(opts.tokens(got[0], 0)).strip(),
                )
                stopped = "max_tokens"
            if got is None:
                stopped = "max_tokens" if t_pick.offered(chosen, 10**9) else "candidates"
                break
            i, score, n_scored = got
            stats.scored_tokens += n_scored
            pieces.append(opts.tokens(i, len(chosen))[: max_tokens - len(tokens)])
            tokens += pieces[-1]
            chosen.append(i)
            scores.append(score)
            stats.choices += 1
            if on_choice is not None:
                on_choice(tokens)
            if stopped is None and settings.stop(
                len(chosen), len(tokens), sum(opts.words[i] for i in chosen)
            ):
                stopped = "sentences" if len(chosen) >= settings.max_sentences else "length"
            if k == len(proposals) or proposals[k] != i or stopped:
                break
        agreed = 0
        while (
            agreed < len(proposals) and c0 + agreed < len(chosen) and proposals[agreed] == chosen[c0 + agreed]
        ):
            agreed += 1
        stats.accepted += agreed
        if (
            draft is not None
        ):  # the draft keeps the agreed proposals and takes the target's choices after them
            if agreed < len(proposals):
                draft.rewind(marks[agreed])
            for j in range(c0 + agreed, len(chosen)):  # the target's choices the draft lacks
                draft.commit(None, pieces[j])
    if settings.document_order and cut is None and chosen != sorted(chosen):
        ordered = sorted(chosen)
        again = opening + [t for k, i in enumerate(ordered) for t in opts.tokens(i, k)]
        if len(again) <= max_tokens:  # (a unit's first form may take a token more than its later one)
            for scorer in (target, draft) if draft is not None else (target,):
                scorer.rewind(scorer.start + 1)  # the summary's cells go: it follows in its new order
                scorer.commit(None, again)
            scores = [scores[chosen.index(i)] for i in ordered]
            chosen, tokens = ordered, again
    target.finish()
    if draft is not None:
        draft.finish()
    head = [opts.opening] if opening else []
    return Extract(tokens, head + [opts.cands[i] for i in chosen], stopped, stats, scores, cut)


def _whole_words(cut: str, whole: str) -> str:
    """`cut` (a prefix of `whole` at a token boundary) without a word cut in two:
    a shown summary holds only the document's own words."""
    if len(cut) < len(whole) and cut[-1:].isalnum() and whole[len(cut)].isalnum():
        cut = cut[: max(cut.rfind(" "), 0)]
    return cut.rstrip(" ,;:-")
