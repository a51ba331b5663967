"""The option groups the commands share, each a frozen value built once from
Click's values (options.grouped) and passed down whole.

A command shows a group's options where its --help lists them
(`Group.options(*names)`) and takes the group as one parameter annotated
with its class. Every command imports its shared options from here (never
from another command), so one option has one definition everywhere; adding
an option to a group is adding one field.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click
from rich.console import Console

from localsidecar.cli import options as opt
from localsidecar.cli.jobs import ModelFiles
from localsidecar.cli.options import OptionGroup, option
from localsidecar.decoding.defaults import (
    DEFAULT_DRAFT_MAX_CAP,
    DEFAULT_MAX_TOKENS,
    DEFAULT_SOFT_TOKENS,
    EXTRACT_MAX_TOKENS,
)
from localsidecar.decoding.engine import ALL_MODES, TARGET_ONLY, EngineConfig, RunMode, run_mode
from localsidecar.decoding.layouts import MODE_HELP, REVEALS, Mode, Reveal
from localsidecar.decoding.numbers import DOCUMENT, NUMBERS_MODES
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import DEFAULT_DRAFT_MAX, SpecConfig
from localsidecar.hashtags.generation import GRAMMAR_STYLES, MAX_TAGS, PENALTY_SCOPES, HashtagSettings
from localsidecar.summary.modes import AUTO, FREE, SUMMARY_MODES, resolve
from localsidecar.summary.support import MARK, UNSUPPORTED_MODES

if TYPE_CHECKING:
    from localsidecar.cli.resumable import Scale
    from localsidecar.io.documents import LoadedDocuments


GPU_LAYERS = dict(type=click.IntRange(-1, opt.MAX_INT32), default=0, show_default=True)  # -1: all


@dataclass(frozen=True)
class ModelArgs(OptionGroup):
    """Which pair, and how llama.cpp loads it."""

    SHOWN = (
        "pair",
        "target",
        "draft",
        "models_dir",
        "n_ctx",
        "threads",
        "gpu_layers",
        "draft_gpu_layers",
        "verbose",
    )

    pair: str | None = option(
        "--pair", default=None, help="Named model pair from the registry (see `localsidecar models`)."
    )
    target: str | None = option(
        "--target", default=None, envvar="LOCALSIDECAR_TARGET", help="Target GGUF: a path or REPO:FILE."
    )
    draft: str | None = option(
        "--draft", default=None, envvar="LOCALSIDECAR_DRAFT", help="Draft GGUF: a path or REPO:FILE."
    )
    models_dir: str | None = option(
        "--models-dir",
        type=click.Path(file_okay=False),
        default=None,
        envvar="LOCALSIDECAR_MODELS_DIR",
        help="Where derived models are cached [default: ~/.cache/localsidecar/models].",
    )
    n_ctx: int | Literal["auto"] = option(
        "--ctx",
        type=opt.CTX_TYPE,
        default="auto",
        show_default=True,
        help="Context size of each model in tokens, or auto: the smallest that holds each document, its "
        "summary and hashtags, up to the models' training context (a longer document is skipped).",
    )
    threads: int | None = option(
        "--threads",
        type=click.IntRange(1, opt.MAX_THREADS),
        default=None,
        envvar="LOCALSIDECAR_THREADS",
        callback=opt.cap_threads,
        help="CPU threads [default: adapt: start from the physical cores other processes leave free, "
        "then follow the decode timings].",
    )
    gpu_layers: int = option(
        "--gpu-layers", help="Target layers offloaded to the GPU (-1: all).", **GPU_LAYERS
    )
    draft_gpu_layers: int = option(
        "--draft-gpu-layers", help="Draft layers offloaded to the GPU.", **GPU_LAYERS
    )
    verbose: bool = option(
        "--verbose",
        is_flag=True,
        help="Show llama.cpp's own log on stderr (with `run`, also the draft "
        "policy's and the thread counts' decisions now and then).",
    )
    quant: str | None = option(
        "--quant",
        default=None,
        help="Target quantization of the pair, e.g. Q5_K_M (default: the pair's; found in the hub cache, "
        "never downloaded: `localsidecar pull PAIR --quant Q` first).",
    )
    draft_quant: str | None = option(
        "--draft-quant",
        default=None,
        help="Draft quantization of the pair, e.g. Q8_0 (default: the pair's; see `localsidecar models`).",
    )

    def inputs(self) -> dict[str, list]:
        """The model files named by path, for cli.paths.check_distinct (REPO:FILE specs are not paths)."""
        return {"--target": [self.target], "--draft": [self.draft]}

    def planned_files(self) -> list[Path]:
        """Every model file these options resolve to, derived ones included
        (where they will be if not made yet): what no command may write."""
        from localsidecar.registry.planned import planned_files

        return planned_files(
            self.pair, self.target, self.draft, self.models_dir, self.quant, self.draft_quant
        )

    def files(self, *, need_draft: bool = True) -> ModelFiles:
        """The pair resolved on this machine (the embedded pair unless told otherwise)."""
        return ModelFiles.resolve(
            self.pair,
            self.target,
            self.draft,
            self.models_dir,
            need_draft=need_draft,
            quant=self.quant,
            draft_quant=self.draft_quant,
        )

    def engine_config(self, **more) -> EngineConfig:
        """The EngineConfig of these options; `more`: its other fields (hashtags, soft_tokens, log)."""
        return EngineConfig(
            n_ctx=self.n_ctx,
            threads=self.threads,
            gpu_layers=self.gpu_layers,
            draft_gpu_layers=self.draft_gpu_layers,
            **more,
        )


@dataclass(frozen=True)
class SpecArgs(OptionGroup):
    """How a summary is decoded: the draft's lengths, sampling, limits."""

    draft_max: int | Literal["auto"] = option(
        "--draft-max",
        type=opt.DRAFT_MAX_TYPE,
        default=DEFAULT_DRAFT_MAX,
        show_default=True,
        envvar="LOCALSIDECAR_DRAFT_MAX",
        help="Tokens drafted per round. auto: chosen each round, 0 to the cap, from the pair's fixed cost model "
        "(its files' sizes) and the acceptance seen so far; an integer: that many every round.",
    )
    draft_max_cap: int = option(
        "--draft-max-cap",
        type=click.IntRange(min=0, max=64),
        default=DEFAULT_DRAFT_MAX_CAP,
        show_default=True,
        envvar="LOCALSIDECAR_DRAFT_MAX_CAP",
        help="Most tokens --draft-max auto drafts in a round (0: never draft; the sidecar still writes hashtags).",
    )
    numbers: str = option(
        "--numbers",
        type=click.Choice(NUMBERS_MODES),
        default=DOCUMENT,
        show_default=True,
        envvar="LOCALSIDECAR_NUMBERS",
        help="document: a summary writes only numbers its document has (every digit string a prefix of one, "
        "each finished number one of them); free: any number the model chooses.",
    )
    p_min: float = option(
        "--p-min",
        type=opt.FiniteFloatRange(0.0, 1.0),
        default=0.0,
        show_default=True,
        envvar="LOCALSIDECAR_P_MIN",
        help="Stop drafting when the draft's top probability falls below this.",
    )
    temperature: float = option(
        "--temperature",
        type=opt.TemperatureType(),
        default=0.0,
        show_default=True,
        help=opt.TEMPERATURE_HELP,
    )
    seed: int = option(
        "--seed",
        type=opt.SEED_TYPE,
        default=0,
        show_default=True,
        help=f"Seed for sampling (0 to {opt.MAX_SEED}).",
    )
    max_tokens: int | Literal["auto"] = option(
        "--max-tokens",
        type=opt.MAX_TOKENS_TYPE,
        default=AUTO,
        show_default=True,
        help=f"Most summary tokens. auto: {DEFAULT_MAX_TOKENS} for a free summary, {EXTRACT_MAX_TOKENS} for an "
        "extract (whose own settings set its length in sentences and words).",
    )
    soft_tokens: int = option(
        "--soft-tokens",
        type=click.IntRange(min=0),
        default=DEFAULT_SOFT_TOKENS,
        show_default=True,
        help="Stop a summary at its first sentence end once it has this many tokens (0: only at the model's "
        "end or --max-tokens).",
    )

    def config(self, summary: str = FREE) -> SpecConfig:
        """The SpecConfig of a `summary` (free or extract): --max-tokens auto by that mode."""
        return SpecConfig(
            draft_max=self.draft_max,
            p_min=self.p_min,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=None if self.max_tokens == AUTO else self.max_tokens,
            draft_max_cap=self.draft_max_cap,
            numbers=self.numbers,
            summary=summary,
        )

    @property
    def soft_limit(self) -> int | None:
        """EngineConfig.soft_tokens: None for --soft-tokens 0."""
        return self.soft_tokens or None


@dataclass(frozen=True)
class SummaryArgs(OptionGroup):
    """Which summary a command that summarizes as `run` does makes, and what a
    free one may say (docs/summaries.md). Commands without these options keep
    SpecConfig's own: a free summary, names free."""

    summary: str = option(
        "--summary",
        type=click.Choice(SUMMARY_MODES),
        default=AUTO,
        show_default=True,
        envvar="LOCALSIDECAR_SUMMARY",
        help="extract: the summary is the document's own sentences, chosen by the target, in the document's order (its facts "
        "are the document's); free: the model writes it, and each sentence is checked against the document; "
        "auto: extract for a target below 1B parameters (read from its GGUF), free from 1B on.",
    )
    names: str = option(
        "--names",
        type=click.Choice(NUMBERS_MODES),
        default=DOCUMENT,
        show_default=True,
        envvar="LOCALSIDECAR_NAMES",
        help="document: a free summary writes a capitalised word mid-sentence only when the document has it "
        "(a sentence's first word is free); free: any word. An extract summary is the document's text either way.",
    )
    unsupported: str = option(
        "--unsupported",
        type=click.Choice(UNSUPPORTED_MODES),
        default=MARK,
        show_default=True,
        help="A free summary's sentences the document does not back (names, numbers and units, what they are "
        "said with): keep them unmarked, mark them, or drop them. The record lists them either way.",
    )

    def config(self, spec: SpecArgs, target: str | os.PathLike) -> SpecConfig:
        """`spec`'s SpecConfig making this summary; auto resolved by the size of the `target` file."""
        return dataclasses.replace(
            spec.config(resolve(self.summary, target)), names=self.names, unsupported=self.unsupported
        )


@dataclass(frozen=True)
class PromptArgs(OptionGroup):
    """The prompts' wording: a --prompts file, single parts overridden."""

    instruction: str | None = option(
        "--instruction", default=None, help="Summary instruction (after the document)."
    )
    suffix: str | None = option(
        "--suffix", default=None, help="Hidden hashtag instruction appended to the draft's prompt."
    )
    deferred_prompt: str | None = option(
        "--deferred-prompt", default=None, help="Hashtag request used as a new turn in --mode deferred."
    )
    prompts_file: str | None = option(
        "--prompts", type=click.Path(dir_okay=False), default=None, help=opt.PROMPTS_HELP
    )

    def inputs(self) -> dict[str, list]:
        return {"--prompts": [self.prompts_file]}

    def config(self) -> PromptConfig:
        base = PromptConfig.from_file(self.prompts_file) if self.prompts_file else PromptConfig()
        return base.replace(instruction=self.instruction, suffix=self.suffix, deferred=self.deferred_prompt)


@dataclass(frozen=True)
class InputArgs(OptionGroup):
    """How the documents are read."""

    max_chars: int | None = option(
        "--max-chars",
        type=click.IntRange(min=1),
        default=None,
        help="Truncate each document to this many characters.",
    )
    skip_bad: bool = option(
        "--skip-bad",
        is_flag=True,
        help="Skip malformed inputs (unreadable files, bad JSONL lines) instead of stopping.",
    )
    replace_errors: bool = option(
        "--replace-errors", is_flag=True, help="Decode non-UTF-8 documents with replacement characters."
    )

    def load(self, err: Console, docs: Sequence[str], writes: Iterable) -> LoadedDocuments:
        """The documents of `docs`, skipped inputs and notes printed on `err`;
        `writes`: the files the command writes (never read as documents)."""
        from localsidecar.io.documents import load_many

        loaded = load_many(
            docs,
            max_chars=self.max_chars,
            skip_bad=self.skip_bad,
            replace_errors=self.replace_errors,
            outputs=writes,
        )
        for note in [*loaded.skipped, *loaded.notes]:
            err.print(f"note: {note}")
        return loaded


@dataclass(frozen=True)
class OutputArgs(OptionGroup):
    """What a command writes: --json on stdout, the resumable --out file, a
    --csv and a --plot file, and whether progress is shown. --json, --csv and
    --plot take each command's own help."""

    as_json: bool = option("--json", is_flag=True)
    csv_file: str | None = option("--csv", type=click.Path(dir_okay=False), default=None)
    plot_file: str | None = option("--plot", type=click.Path(dir_okay=False), default=None)
    out: str | None = option(
        "--out",
        type=click.Path(dir_okay=False),
        default=None,
        help="Append the records to this JSONL file (resumable: a rerun skips what it holds).",
    )
    overwrite: bool = option("--overwrite", is_flag=True, help="Start --out over instead of resuming.")
    quiet: bool = option(
        "--quiet", "-q", is_flag=True, help="No progress on stderr (notes and errors are still shown)."
    )

    def files(self) -> dict[str, str | None]:
        """option -> the file it writes (None: not given)."""
        return {"--out": self.out, "--csv": self.csv_file, "--plot": self.plot_file}

    def check(
        self,
        docs: Sequence[str],
        model: ModelArgs,
        *reads: Mapping[str, list],
        writes: Mapping[str, str | None] | None = None,
    ) -> None:
        """One line (UserError) before any model loads if an output is also an
        input (a document, a file the pair resolves to, derived or not) or
        another output, or cannot be written. `reads`: label -> paths read
        besides the documents and the models; `writes`: option -> other files
        the command writes."""
        from localsidecar.cli.paths import check_distinct, check_writable

        inputs = {"a document": list(docs), **model.inputs()}
        for more in reads:
            inputs.update(more)
        check_distinct(
            inputs=inputs, outputs={**self.files(), **(writes or {})}, models=model.planned_files()
        )
        check_writable({"--csv": self.csv_file, "--plot": self.plot_file})


@dataclass(frozen=True)
class ScaleArgs(OptionGroup):
    """Where a command's documents run: --workers, --ray."""

    workers: int | None = option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        help="Worker processes, each loading the models once; --threads is per worker "
        "[default: 1; with --ray: one actor per node, or per GPU with --gpu-layers].",
    )
    ray_address: str | None = option(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="Run the workers as Ray actors: auto joins the running cluster (`ray start`), "
        "local starts one for this command, or a cluster address. Needs "
        "pip install 'localsidecar[ray]'.",
    )

    def scale(self, model: ModelArgs) -> Scale:
        """Checked before any document or model is loaded."""
        from localsidecar.cli.resumable import Scale

        return Scale.from_options(self.workers, self.ray_address, model.threads, model.gpu_layers)

    @property
    def in_process(self) -> bool:
        """The documents run in this process (no worker processes, no Ray)."""
        return not self.ray_address and (self.workers or 1) == 1


@dataclass(frozen=True)
class LayoutArgs(OptionGroup):
    """The draft's layout while it drafts the summary and writes the hashtags."""

    mode: RunMode = option(
        "--mode",
        type=click.Choice(ALL_MODES),
        default=Mode.REBASED.value,
        show_default=True,
        help="Draft layout: "
        + "; ".join(f"{k}: {v}" for k, v in MODE_HELP.items())
        + "; target-only: no draft.",
    )
    reveal: Reveal = option(
        "--reveal",
        type=click.Choice(REVEALS),
        default=Reveal.SHIFTED.value,
        show_default=True,
        help="rebased: shift the summary past the suffix before the hashtags (shifted) or leave it "
        "overlapping (overlap).",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", run_mode(self.mode))
        object.__setattr__(self, "reveal", Reveal(self.reveal))

    @property
    def need_draft(self) -> bool:
        return self.mode != TARGET_ONLY


def summary_stack(max_chars: int | None = None) -> Callable[[Callable], Callable]:
    """`run`'s options before its own --compare, for any command that summarizes
    documents as `run` does; `max_chars`: that command's --max-chars default."""
    return opt.stacked(
        LayoutArgs.options("mode"),
        SpecArgs.options("draft_max", "draft_max_cap", "numbers"),
        SummaryArgs.options(),
        SpecArgs.options(
            "p_min",
            "temperature",
            "seed",
            "max_tokens",
            "soft_tokens",
            help={
                "max_tokens": "Most summary tokens (a summary cut there is shown up to its last complete "
                f"sentence). auto: {DEFAULT_MAX_TOKENS} for a free summary, {EXTRACT_MAX_TOKENS} for an extract "
                "(whose own settings set its length in sentences and words)."
            },
        ),
        InputArgs.options("max_chars", defaults={"max_chars": max_chars} if max_chars else None),
        LayoutArgs.options("reveal"),
        PromptArgs.options("instruction", "suffix", "deferred_prompt", "prompts_file"),
    )


# `run`'s options before and after its own --compare.
summary_options = summary_stack()
# where the documents run and which pair: after the outputs in every summarizing command
model_options = opt.stacked(
    ScaleArgs.options(), ModelArgs.options("quant", "draft_quant"), ModelArgs.options()
)
document_options = opt.stacked(
    OutputArgs.options(
        "as_json", "out", "overwrite", help={"as_json": "One JSON object per document on stdout."}
    ),
    InputArgs.options("skip_bad", "replace_errors"),
    OutputArgs.options("quiet"),
    model_options,
)


_H = HashtagSettings()
MAX_PENALTY = 1000.0  # logits divided (or multiplied) by it stay finite in float32


@dataclass(frozen=True)
class TagArgs(OptionGroup):
    """The hashtag phase's grammar and sampling (HashtagSettings)."""

    grammar_style: str = option(
        "--grammar-style",
        type=click.Choice(GRAMMAR_STYLES),
        default=_H.style,
        show_default=True,
        help="Item shape: phrase = '#' + a CamelCase phrase (1-3 consecutive words) of the document or summary; "
        "doc = '#' + CamelCase words of the document or summary in any order; free / camel / hyphen / words: "
        "any words.",
    )
    max_items: int = option(
        "--max-items",
        type=click.IntRange(1, MAX_TAGS),
        default=_H.max_items,
        show_default=True,
        help="Most hashtags.",
    )
    penalty: float = option(
        "--penalty",
        type=opt.FiniteFloatRange(1.0, MAX_PENALTY),
        default=_H.penalty,
        show_default=True,
        help="Repetition penalty in the hashtag phase.",
    )
    penalty_scope: str = option(
        "--penalty-scope",
        type=click.Choice(PENALTY_SCOPES),
        default=_H.penalty_scope,
        show_default=True,
        help="content: penalize repeated word tokens only; all: llama.cpp's penalty over every token (JSON "
        "punctuation too).",
    )
    candidates: int = option(
        "--candidates",
        type=click.IntRange(1, 64),
        default=_H.candidates,
        show_default=True,
        help="Phrase style: how many of the document's ranked candidates the grammar offers.",
    )

    def settings(self) -> HashtagSettings:
        return dataclasses.replace(
            _H,
            style=self.grammar_style,
            max_items=self.max_items,
            min_items=min(_H.min_items, self.max_items),
            penalty=self.penalty,
            penalty_scope=self.penalty_scope,
            candidates=self.candidates,
        )
