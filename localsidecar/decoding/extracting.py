"""The Engine's extract summaries (`run --summary extract`): the target picks the
document's sentences (localsidecar.summary.extract) in the engine's contexts, the draft
proposing choices with a fixed --draft-max. A mixin of decoding.engine.Engine, which
owns the contexts (t_ctx, d_ctx), the models and the target's prefill."""

from __future__ import annotations

import time
from collections.abc import Callable

from localsidecar.decoding.layouts import LazyLayout, Mode, Seq, prefill_draft
from localsidecar.decoding.prompts import PromptTokens
from localsidecar.decoding.speculative import Generation, SpecConfig, SpecStats
from localsidecar.summary.candidates import candidates_and_blocks, is_notes
from localsidecar.summary.extract import Extract, Options, extract, settings_for
from localsidecar.summary.outline import topics_line
from localsidecar.summary.scoring import Scorer


class ExtractSummaries:
    """Engine's extract-summary methods (they use its t_ctx, d_ctx, target and _prefill_target)."""

    def options_for(self, text: str) -> Options:
        """The extract summary's candidates of document `text`, tokenized for the target."""
        count = lambda s: len(self.target.tokenize(s))  # noqa: E731
        notes = is_notes(text)
        cands, blocks = candidates_and_blocks(text, count, notes=notes)
        opening = topics_line(cands, blocks) if notes else None
        words = len(text.split())
        return Options(cands, self.target.tokenize, self.target.detokenize, notes, opening, words)

    def _extract(
        self,
        p: PromptTokens,
        opts: Options,
        mode: Mode | None,
        spec: SpecConfig,
        on_tokens: Callable[[int], None] | None = None,
        reuse_prompt: bool = False,
    ) -> tuple[Generation, LazyLayout | None, Extract]:
        """An extract summary: the target chooses; in draft layout `mode` (None: the
        target alone) with a fixed --draft-max k the draft proposes k choices a round
        (auto: none, since the target scores every candidate either way). Returns
        (Generation, the draft's layout, the Extract); the Generation's tokens are the
        summary's, its stats count choices as rounds and the walk's decodes as target
        calls. `reuse_prompt`: Engine._prefill_target."""
        t1 = time.perf_counter()
        target = self._prefill_target(p, reuse_prompt)
        lay, draft, k = None, None, 0
        if mode is not None:
            lay = LazyLayout(lambda: prefill_draft(self.d_ctx, p, mode, reserve=spec.cells_after_prompt))
            k = 0 if spec.auto else spec.draft_max
            if k:
                d = lay.get()
                draft = Scorer(self.d_ctx, d.n_cached + d.shift, p.bare[-1:], first_seq=Seq.SIDECAR + 1)
        prefill_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        heard = (lambda toks: on_tokens(len(toks))) if on_tokens is not None else None
        scorer = Scorer(self.t_ctx, len(p.bare) - 1, p.bare[-1:])
        ex = extract(
            scorer, opts, spec.max_tokens, settings_for(opts), draft=draft, draft_max=k, on_choice=heard
        )
        if draft is not None:
            lay.layout.n_cached = draft.pos - lay.layout.shift  # what the draft's sequence 0 holds
        stats = SpecStats(rounds=ex.stats.choices, target_calls=target.target_calls + ex.stats.decodes)
        stats.k_hist[0] = ex.stats.choices
        stats.draft_s, stats.verify_s = ex.stats.draft_s, ex.stats.verify_s
        gen = Generation(
            tokens=ex.tokens,
            stopped=ex.stopped,
            stats=stats,
            target_argmax=list(ex.tokens),
            prefill_s=prefill_s,
            gen_s=time.perf_counter() - t2,
        )
        return gen, lay, ex
