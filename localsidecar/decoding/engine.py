"""A loaded target/draft pair with reusable contexts, and the per-document run.

Contexts are created once and cleared between documents. With a fixed n_ctx
they are never rebuilt; with n_ctx "auto" (--ctx auto) they start at one
CTX_STEP and are rebuilt, larger, only when a document needs more cells than
they have (Engine.fit_context), up to the models' training context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from localsidecar.backend import Context, Model
from localsidecar.backend.hardware import LoadProbe, ThreadTuner, default_threads, threads_for_free_cores
from localsidecar.decoding.comparing import TimedComparison
from localsidecar.decoding.context_fit import AUTO, CTX_STEP, ContextNeed, auto_size
from localsidecar.decoding.extracting import ExtractSummaries
from localsidecar.decoding.hashtag_phase import HashtagPhase
from localsidecar.decoding.layouts import (
    HASHTAG_MODES,
    MODES,
    REVEALS,
    LazyLayout,
    Mode,
    Reveal,
    prefill_draft,
    prefill_target,
    rewind_target,
)
from localsidecar.decoding.names import DocumentText, document_text
from localsidecar.decoding.numbers import DOCUMENT, DocumentNumbers, piece_table
from localsidecar.decoding.policy import CostModel, DraftPolicy
from localsidecar.decoding.prompts import ChatFormat, PromptConfig, PromptTokens, build_prompt
from localsidecar.decoding.sentences import SentenceStop, complete_summary
from localsidecar.decoding.speculative import (
    Generation,
    Prefill,
    SpecConfig,
    SpeculativeDecoder,
    TokenHook,
    target_only,
)
from localsidecar.decoding.vocab_check import differing_tokens
from localsidecar.errors import ConfigError, LocalsidecarError
from localsidecar.hashtags.generation import (
    HashtagOutput,
    HashtagSettings,
)
from localsidecar.hashtags.sampling import HASHTAG_MAX_TOKENS
from localsidecar.summary.extract import Extract, Options
from localsidecar.summary.modes import EXTRACT, FREE
from localsidecar.summary.scoring import batch_cap
from localsidecar.summary.support import DROP, Unsupported, apply, check_summary

TARGET_ONLY = "target-only"
RunMode = Mode | Literal["target-only"]  # Engine.run's mode: a draft layout, or no draft (TARGET_ONLY)
DEFAULT_CTX_LIMIT = 4096  # --ctx auto's largest context when a model does not say what it was trained on
ALL_MODES = MODES + (TARGET_ONLY,)
# Sequences of each context: an extract summary scores every candidate of a choice point
# in a sequence of its own (summary/scoring.py); llama.cpp allows at most 256.
SCORING_SEQS = 64


@dataclass
class EngineConfig:
    n_ctx: int | str = 4096  # cells of each context, or "auto": what each document needs (Engine.fit_context)
    n_batch: int = 512
    threads: int | None = None  # None: follow the free cores (hardware.LoadProbe, ThreadTuner)
    gpu_layers: int = 0
    draft_gpu_layers: int = 0
    hashtags: HashtagSettings = HashtagSettings()
    log: Callable[[str], None] | None = None  # --verbose: the draft policy's and thread tuner's decisions
    # Engine.run stops a summary at the first sentence end once it holds this
    # many tokens (None: only at the model's end or SpecConfig.max_tokens).
    soft_tokens: int | None = None


def run_mode(value: str) -> RunMode:
    """`value` (a mode's name) as Engine.run's mode: a Mode, or TARGET_ONLY."""
    if value == TARGET_ONLY:
        return TARGET_ONLY
    if value not in MODES:
        raise ConfigError(f"unknown mode {value!r}; choose from {', '.join(ALL_MODES)}")
    return Mode(value)


def check_vocab_compatible(target: Model, draft: Model) -> None:
    """Speculation compares token ids: the vocabularies must be the same
    (type, size, special ids, and the text of every id: vocab_check)."""
    problems = []
    if target.vocab_type != draft.vocab_type:
        problems.append(f"tokenizer types {target.vocab_type} vs {draft.vocab_type}")
    if target.n_vocab != draft.n_vocab:
        problems.append(f"vocab sizes {target.n_vocab} vs {draft.n_vocab}")
    for name in ("bos", "eos", "eot"):
        if getattr(target, name) != getattr(draft, name):
            problems.append(f"{name} ids {getattr(target, name)} vs {getattr(draft, name)}")
    if not problems:
        bad = differing_tokens(target, draft)
        if bad:
            problems.append(f"{len(bad)} of {target.n_vocab} token texts differ (first id {bad[0]})")
    if problems:
        raise LocalsidecarError(
            f"draft {draft.path.name} and target {target.path.name} do not share a vocabulary: "
            + "; ".join(problems)
        )


@dataclass(kw_only=True)
class DocResult:
    """One document's run. Timing: prefill_s prompt processing, gen_s the
    summary loop (tokens_per_s = summary tokens / gen_s), hashtag phase apart.
    summary: the text shown, cut back to its last complete sentence (gen.tokens
    stay as generated); summary_complete: it ends on a sentence."""

    id: str
    mode: RunMode
    prompt: PromptTokens
    gen: Generation
    summary: str
    hashtags: HashtagOutput | None
    wall_s: float
    baseline: Generation | None = None  # target-only run with --compare
    extra: dict = field(default_factory=dict)
    summary_complete: bool = False
    # --compare: (speculative, target-only) summary tokens/s of each timed pair
    compare_pairs: list[tuple[float, float]] = field(default_factory=list)
    threads: dict[str, list[int]] = field(default_factory=dict)  # counts each context decoded at
    cost_table: str | None = None  # --draft-max auto's fixed costs (CostModel.id)
    numbers: str = DOCUMENT  # SpecConfig.numbers the summary was generated under
    no_draft_reason: str | None = None  # a draft that drafted no token: why, with the numbers
    summary_mode: str = FREE  # SpecConfig.summary: extract (the document's sentences) or free
    # free: the sentences the document does not back (summary/support.py); extract: None (not checked)
    unsupported: list[Unsupported] | None = None
    extract: Extract | None = None  # extract: the chosen candidates and the choices' counts


class Engine(ExtractSummaries, HashtagPhase, TimedComparison):
    """Owns the two models and their contexts for a whole run."""

    def __init__(self, target_path: Path, draft_path: Path | None, cfg: EngineConfig, prompts: PromptConfig):
        self.cfg = cfg
        self.prompts = prompts
        self._models: list[Model] = []
        self._contexts: list[Context] = []
        self.notes: list[str] = []  # one line each, for the user (e.g. the plain-prompt fallback)
        self.policy: DraftPolicy | None = None  # --draft-max auto's policy of the last document
        self._moves_logged: dict[int, int] = {}  # id(a context's tuner) -> thread moves logged
        load = LoadProbe() if cfg.threads is None else None  # measured while the models load
        try:
            self.target = self._load(target_path, cfg.gpu_layers)
            self.draft = (
                self.target
                if draft_path is None or Path(draft_path) == Path(target_path)
                else self._load(draft_path, cfg.draft_gpu_layers)
            )
            if self.draft is not self.target:
                check_vocab_compatible(self.target, self.draft)
            self.fmt = ChatFormat.for_model(self.target, prompts.system)
            if not self.fmt.templated:
                self.notes.append(
                    f"{self.target.path.name} has no chat template llama.cpp recognises; "
                    "using a plain prompt (document, instruction, then 'Response:')"
                )
            models = list(dict.fromkeys((self.target, self.draft)))
            train_sizes = [m.n_ctx_train for m in models if m.n_ctx_train > 0]
            # --ctx auto: contexts grow up to what the models were trained on
            self.ctx_limit = min(train_sizes) if train_sizes else DEFAULT_CTX_LIMIT
            self.n_ctx = CTX_STEP if cfg.n_ctx == AUTO else int(cfg.n_ctx)
            short = [m for m in models if cfg.n_ctx != AUTO and 0 < m.n_ctx_train < cfg.n_ctx]
            if short:
                trained = ", ".join(f"{m.path.name} {m.n_ctx_train}" for m in short)
                self.notes.append(
                    f"--ctx {cfg.n_ctx} exceeds the context the models were trained on ({trained} "
                    "tokens); output degrades past that length"
                )
            self._start_threads = self._free_core_threads(load)
            self.t_ctx = self._context(self.target, SCORING_SEQS)
            self.d_ctx = self._context(self.draft, SCORING_SEQS) if draft_path is not None else None
            cfg.hashtags.warm()  # loads the word lists now, not inside the first hashtag phase
        except BaseException:
            self.close()
            raise

    def _load(self, path: Path, gpu_layers: int) -> Model:
        m = Model(path, n_gpu_layers=gpu_layers)
        self._models.append(m)
        return m

    def _free_core_threads(self, load: LoadProbe | None) -> int | None:
        if load is None:
            return None
        n_cpus = len(load.cpus) if load.cpus else 0
        others = load.others_busy()
        start = threads_for_free_cores(default_threads(), others, n_cpus)
        busy = f"{others:.2f}" if others is not None else "unknown"
        self._log(
            f"threads: starting with {start} of {default_threads()} (CPUs busy with other processes: {busy})"
        )
        return start

    def _context(self, model: Model, n_seq: int, tuner: ThreadTuner | None = None) -> Context:
        """Fixed --threads, or a ThreadTuner per context starting from the free
        cores (`tuner`: a rebuilt context keeps its predecessor's)."""
        if tuner is None and not self.cfg.threads:
            tuner = ThreadTuner(self._start_threads, default_threads())
        c = Context(
            model,
            self.n_ctx,
            n_batch=self.cfg.n_batch,
            n_seq_max=n_seq,
            kv_unified=True,
            n_threads=self.cfg.threads,
            tuner=tuner,
        )
        self._contexts.append(c)
        return c

    def fit_context(self, need: ContextNeed) -> None:
        """Make sure a document of `need` fits before anything is decoded for it.
        Fixed n_ctx: ContextTooSmall when it does not (one line with the
        numbers). "auto": DocumentTooLong past the models' training context;
        otherwise the contexts are rebuilt at auto_size(need) when they are
        smaller (emptied: nothing a document left in them is reused)."""
        if self.cfg.n_ctx != AUTO:
            need.check(self.n_ctx)
            return
        names = " and ".join(dict.fromkeys(m.path.name for m in (self.target, self.draft)))
        need.check_trained(self.ctx_limit, names)
        if need.cells <= self.n_ctx:
            return
        t0, was = time.perf_counter(), self.n_ctx
        self.n_ctx = auto_size(need.cells, self.ctx_limit)
        old_t, old_d = self.t_ctx, self.d_ctx
        for c in (old_t, old_d):
            if c is not None:
                self._contexts.remove(c)
                c.close()
        # the same sequences as before: extract summaries and tag scoring use SCORING_SEQS
        self.t_ctx = self._context(self.target, old_t.n_seq_max, old_t.tuner)
        self.d_ctx = self._context(self.draft, old_d.n_seq_max, old_d.tuner) if old_d is not None else None
        self._log(
            f"context: {was} -> {self.n_ctx} cells for {need.doc_id} ({need.cells} needed), "
            f"rebuilt in {time.perf_counter() - t0:.2f} s"
        )

    def _log(self, line: str) -> None:
        if self.cfg.log is not None:
            self.cfg.log(line)

    def threads(self) -> dict[str, int]:
        """The thread count each context uses now."""
        out = {"target": self.t_ctx.threads}
        if self.d_ctx is not None:
            out["draft"] = self.d_ctx.threads
        return out

    def _log_thread_moves(self) -> None:
        for name, c in (("target", self.t_ctx), ("draft", self.d_ctx)):
            if c is None or c.tuner is None:
                continue
            seen = self._moves_logged.get(id(c.tuner), 0)
            for a, b in c.tuner.moves[seen:]:
                self._log(f"threads: {name} {a} -> {b} (faster in a trial)")
            self._moves_logged[id(c.tuner)] = len(c.tuner.moves)

    def cost_model(self) -> CostModel:
        """auto's fixed costs: from the pair's files alone, never from timings."""
        return CostModel.for_pair(self.target.path.stat().st_size, self.draft.path.stat().st_size)

    def draft_policy(self, spec: SpecConfig) -> DraftPolicy:
        """A fresh policy for --draft-max auto (per document: its rounds depend
        on the document's tokens and the fixed cost model only)."""
        self.policy = DraftPolicy(spec.draft_max_cap, costs=self.cost_model())
        return self.policy

    def swap_draft(self, draft_path: Path) -> None:
        """Replace the draft model and its context (e.g. another quantization);
        the target and its context stay. The old draft context is closed before
        its model; a draft equal to the target file shares the target model."""
        if self.d_ctx is not None:
            self._contexts.remove(self.d_ctx)
            self.d_ctx.close()
            self.d_ctx = None
        if self.draft is not self.target:
            self._models.remove(self.draft)
            self.draft.close()
        self.draft = self.target
        self.policy = None  # its costs and acceptance belonged to the old draft
        if self.t_ctx.tuner is not None:
            self._start_threads = self.t_ctx.tuner.current
        if Path(draft_path) != Path(self.target.path):
            self.draft = self._load(draft_path, self.cfg.draft_gpu_layers)
            check_vocab_compatible(self.target, self.draft)
        self.d_ctx = self._context(self.draft, SCORING_SEQS)

    def close(self) -> None:
        for c in self._contexts:
            c.close()
        for m in self._models:
            m.close()
        self._contexts, self._models = [], []

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- per document ------------------------------------------------------------

    def prompt(self, text: str) -> PromptTokens:
        return build_prompt(self.target, self.fmt, text, self.prompts)

    def numbers_for(self, text: str, spec: SpecConfig) -> DocumentNumbers | DocumentText | None:
        """The summary's constraint for document `text`: its numbers (None: --numbers
        free), joined with its names under --names document (decoding/names.py)."""
        numbers = (
            DocumentNumbers.for_text(text, piece_table(self.target)) if spec.numbers == DOCUMENT else None
        )
        return document_text(text, numbers, self.target) if spec.names == DOCUMENT else numbers

    def check_fits(
        self, p: PromptTokens, mode: RunMode, spec: SpecConfig, doc_id: str, opts: Options | None = None
    ) -> None:
        """The draft holds prefix, suffix, tail, summary and the hashtag phase in
        one unified cache; the target holds bare prompt + summary + a draft;
        `opts`: an extract's candidates, scored after the summary so far."""
        extra = (
            max(len(p.hashtag_lead), len(p.deferred_turn)) + HASHTAG_MAX_TOKENS
            if mode in HASHTAG_MODES
            else 0
        )
        if opts is not None:  # a choice's candidates, one scoring batch at a time, after the summary
            extra += min(batch_cap(self.cfg.n_batch, self.target.n_vocab), sum(map(len, opts.later)))
        self.fit_context(
            ContextNeed.of(
                doc_id,
                p,
                summary_tokens=spec.max_tokens,
                reserve=spec.cells_after_prompt,
                hashtag_tokens=extra,
            )
        )

    def run(
        self,
        doc_id: str,
        text: str,
        mode: RunMode | str,
        spec: SpecConfig,
        *,
        compare: bool = False,
        reveal: Reveal | str = Reveal.SHIFTED,
        on_tokens: Callable[[int], None] | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> DocResult:
        """Summary (and hashtags in HASHTAG_MODES) of one document; `on_tokens`
        hears the summary's token count after every token, `on_step` each
        --compare pair as it is timed (progress). `mode`: a Mode, TARGET_ONLY, or
        the name of either; `reveal`: a Reveal or its name (ConfigError for any
        other value of either)."""
        mode = run_mode(mode)
        if reveal not in REVEALS:
            raise ConfigError(f"unknown reveal {reveal!r}; choose from {', '.join(REVEALS)}")
        reveal = Reveal(reveal)
        t0 = time.perf_counter()
        for c in self._contexts:
            c.reset_threads_used()
        p = self.prompt(text)
        opts = self.options_for(text) if spec.summary == EXTRACT else None
        self.check_fits(p, mode, spec, doc_id, opts)
        tags, ex, flags, lay = None, None, None, None
        numbers = self.numbers_for(text, spec) if opts is None else None  # an extract is the document's text
        if mode != TARGET_ONLY and self.d_ctx is None:
            raise LocalsidecarError(f"mode {mode} needs a draft model")
        if opts is not None:
            gen, lay, ex = self._extract(p, opts, None if mode == TARGET_ONLY else mode, spec, on_tokens)
            summary, complete = ex.text, ex.cut is None
        elif mode == TARGET_ONLY:
            gen = self.generate_target_only(p, spec, self.summary_stop(on_tokens), numbers)
        else:
            gen, lay = self._speculative(p, mode, spec, self.summary_stop(on_tokens), numbers)
        if opts is None:
            summary, complete = complete_summary(self.target.detokenize(gen.tokens))
            flags = check_summary(summary, text)
        if mode in HASHTAG_MODES:
            tags = self._hashtags(p, mode, lay, gen, reveal, spec, summary)
        if flags and spec.unsupported == DROP:
            summary = apply(summary, flags, DROP)
        wall = time.perf_counter() - t0
        baseline, pairs = None, []
        if compare and mode != TARGET_ONLY:
            if on_step:
                on_step("--compare: timing speculative and target-only summaries in pairs")
            baseline, pairs = self._compare(p, mode, spec, numbers, opts, on_step)
        self._log_thread_moves()
        threads = {
            name: sorted(c.threads_used)
            for name, c in (("target", self.t_ctx), ("draft", self.d_ctx))
            if c is not None and (name == "target" or mode != TARGET_ONLY)
        }
        costs = (
            self.policy.costs.id
            if spec.auto and mode != TARGET_ONLY and self.policy and self.policy.costs
            else None
        )
        return DocResult(
            id=doc_id,
            mode=mode,
            prompt=p,
            gen=gen,
            summary=summary,
            hashtags=tags,
            wall_s=wall,
            baseline=baseline,
            summary_complete=complete,
            compare_pairs=pairs,
            threads=threads,
            cost_table=costs,
            numbers=spec.numbers,
            no_draft_reason=self._no_draft_reason(spec, gen) if mode != TARGET_ONLY else None,
            summary_mode=spec.summary,
            unsupported=flags,
            extract=ex,
        )

    def _no_draft_reason(self, spec: SpecConfig, gen: Generation) -> str | None:
        """Why the summary's rounds drafted no token (None when some did): the
        policy's reason with its numbers, else what the rounds show."""
        if gen.stats.n_drafted:
            return None
        reason = self.policy.why_idle() if spec.auto and self.policy is not None else None
        if reason is None:
            rounds = gen.stats.rounds
            reason = f"none of its {rounds} round{'s' if rounds != 1 else ''} drafted a token"
            if spec.p_min > 0:
                reason += f" (--p-min {spec.p_min:g} stops a draft at a token the draft is less sure of)"
        return reason

    def summary_stop(self, on_tokens: Callable[[int], None] | None = None) -> TokenHook | None:
        """The summary loop's hook: the sentence stop (cfg.soft_tokens) and progress."""
        if self.cfg.soft_tokens is None and on_tokens is None:
            return None
        return SentenceStop(self.target.detokenize, self.cfg.soft_tokens, on_tokens)

    def _prefill_target(self, p: PromptTokens, reuse_prompt: bool = False) -> Prefill:
        """The target's cache holding bare[:-1]; `reuse_prompt`: trim it back
        to that when it already holds the prompt (rewind_target)."""
        calls, t1 = self.t_ctx.stats.decode_calls, time.perf_counter()
        if not (reuse_prompt and rewind_target(self.t_ctx, p)):
            prefill_target(self.t_ctx, p)
        return Prefill(seconds=time.perf_counter() - t1, target_calls=self.t_ctx.stats.decode_calls - calls)

    def _speculative(
        self,
        p: PromptTokens,
        mode: Mode,
        spec: SpecConfig,
        on_token: TokenHook | None = None,
        numbers: DocumentNumbers | None = None,
        reuse_prompt: bool = False,
    ):
        """Prefill the caches (the target's reused with `reuse_prompt`:
        _prefill_target) and run the loop; returns (Generation, LazyLayout).
        prefill_s covers both prefills when the draft's happened before the
        summary ended. With auto the draft reads the prompt only when a round
        first drafts, or for the hashtag phase (whose wall_s then includes
        it), or never (baseline, every round k = 0)."""
        t1 = time.perf_counter()
        target = self._prefill_target(p, reuse_prompt)
        lay = LazyLayout(lambda: prefill_draft(self.d_ctx, p, mode, reserve=spec.cells_after_prompt))
        if not spec.auto:
            lay.get()
        prefill = Prefill(seconds=time.perf_counter() - t1, target_calls=target.target_calls)
        policy = self.draft_policy(spec) if spec.auto else None
        dec = SpeculativeDecoder(
            self.t_ctx, self.d_ctx, spec, policy=policy, log=self.cfg.log, numbers=numbers
        )
        return dec.generate(p.bare, lay, self.target.is_eog, prefill, on_token), lay

    def generate_target_only(
        self,
        p: PromptTokens,
        spec: SpecConfig,
        on_token: TokenHook | None = None,
        numbers: DocumentNumbers | None = None,
        reuse_prompt: bool = False,
    ) -> Generation:
        """The target alone; `numbers` (Engine.numbers_for) constrains it as
        Engine.run would; `reuse_prompt`: see _prefill_target."""
        prefill = self._prefill_target(p, reuse_prompt)
        return target_only(self.t_ctx, p.bare, spec, self.target.is_eog, prefill, on_token, numbers)
