"""The Engine's --compare: the same summary timed with and without the draft, in
interleaved pairs. A mixin of decoding.engine.Engine, which owns the contexts and the
summary runs (_speculative, generate_target_only, _extract)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack

from localsidecar.decoding.layouts import Mode
from localsidecar.decoding.numbers import DocumentNumbers
from localsidecar.decoding.prompts import PromptTokens
from localsidecar.decoding.speculative import Generation, SpecConfig
from localsidecar.summary.extract import Options

# --compare: target-only and speculative summaries timed in pairs, alternating
# which of the two runs first (load changes hit both alike): at least
# COMPARE_MIN_PAIRS, then two more at a time until each side has run
# COMPARE_SECONDS of summary or COMPARE_MAX_PAIRS pairs are done. A 0.9 s
# summary varies by +-10% from run to run on an idle 2-core VM: three pairs
# of them gave medians of 0.85-0.98 for a loop measured at 1.00 in-process.
COMPARE_MIN_PAIRS = 4
COMPARE_MAX_PAIRS = 12
COMPARE_SECONDS = 4.0


class TimedComparison:
    """Engine's --compare methods (they use its contexts and summary runs)."""

    def _compare(
        self,
        p: PromptTokens,
        mode: Mode,
        spec: SpecConfig,
        numbers: DocumentNumbers | None = None,
        opts: Options | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> tuple[Generation, list[tuple[float, float]]]:
        """Timed pairs of summaries (speculative, target-only), the first of
        each pair alternating (COMPARE_MIN_PAIRS ...); returns the first
        target-only generation and the pairs' tokens/s (the speculative
        summaries repeat the one shown, which a repeatable run reproduces
        token for token). Every run after the first reuses the target's
        prompt cells (rewind_target): only summaries are timed, so the
        pairs are cheap enough to be many. The thread tuners hold still."""
        with ExitStack() as held:
            for c in self._contexts:
                held.enter_context(c.threads_held())  # both sides at one count
            return self._timed_pairs(p, mode, spec, numbers, opts, on_step or (lambda text: None))

    def _timed_pairs(
        self,
        p: PromptTokens,
        mode: Mode,
        spec: SpecConfig,
        numbers: DocumentNumbers | None,
        opts: Options | None,
        on_step: Callable[[str], None],
    ) -> tuple[Generation, list[tuple[float, float]]]:
        def tps(g: Generation) -> float:
            return len(g.tokens) / g.gen_s if g.gen_s > 0 else 0.0

        first, pairs, spent = None, [], {"spec": 0.0, "base": 0.0}
        # an even count of pairs: each side runs first as often
        while len(pairs) < COMPARE_MIN_PAIRS or (
            len(pairs) < COMPARE_MAX_PAIRS and (min(spent.values()) < COMPARE_SECONDS or len(pairs) % 2)
        ):
            runs = {}
            for which in ("spec", "base") if len(pairs) % 2 else ("base", "spec"):
                if opts is not None:  # extract summaries: target-only and with the draft's proposals
                    side = None if which == "base" else mode
                    runs[which] = self._extract(p, opts, side, spec, reuse_prompt=True)[0]
                elif which == "base":
                    runs[which] = self.generate_target_only(
                        p, spec, self.summary_stop(), numbers, reuse_prompt=True
                    )
                else:
                    runs[which] = self._speculative(
                        p, mode, spec, self.summary_stop(), numbers, reuse_prompt=True
                    )[0]
                spent[which] += runs[which].gen_s
            first = first or runs["base"]
            pairs.append((tps(runs["spec"]), tps(runs["base"])))
            a, b = pairs[-1]
            on_step(f"--compare pair {len(pairs)}: {a:.1f} tokens/s speculative, {b:.1f} target-only")
        return first, pairs
