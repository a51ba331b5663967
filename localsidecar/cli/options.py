"""The options, parameter types and input helpers the commands share.

Every command imports its shared options from here (never from another
command), so one option has one help text everywhere.
"""

from __future__ import annotations

import math
import os
import sys

import click
from rich.console import Console

from localsidecar.decoding.defaults import DEFAULT_DRAFT_MAX_CAP, DEFAULT_MAX_TOKENS, DEFAULT_SOFT_TOKENS
from localsidecar.decoding.numbers import DOCUMENT, NUMBERS_MODES
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import DEFAULT_DRAFT_MAX
from localsidecar.summary.modes import AUTO, SUMMARY_MODES
from localsidecar.summary.support import MARK, UNSUPPORTED_MODES


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan and inf (which pass every range check)."""

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


# Logits are float32: outside float32's normal range a temperature rounds to 0
# or to infinity, where logits / T overflows to NaN (1e-300) or is NaN for the
# grammar's -inf (3.5e38: llama.cpp's grammar sampler aborted the process).
# The sampling code is guarded against both (distributions.softmax,
# backend.GrammarSampler); the option keeps the values meaningful.
MIN_TEMPERATURE = 1.1754944e-38  # numpy.finfo(numpy.float32).tiny
MAX_TEMPERATURE = 3.4028235e38  # numpy.finfo(numpy.float32).max
MAX_SEED = 2**32 - 1  # llama.cpp's samplers take a uint32 seed
MAX_THREADS = 512  # GGML_MAX_N_THREADS; far more threads crash inside ggml
MAX_INT32 = 2**31 - 1  # llama.cpp's n_ctx, n_gpu_layers


class TemperatureType(click.ParamType):
    """0 (greedy) or a float in [MIN_TEMPERATURE, MAX_TEMPERATURE]."""

    name = "float"

    def convert(self, value, param, ctx):
        rv = click.FLOAT.convert(value, param, ctx)
        if rv != 0 and not MIN_TEMPERATURE <= rv <= MAX_TEMPERATURE:  # nan fails both comparisons
            self.fail(
                f"{value!r} is not 0 or a number from {MIN_TEMPERATURE:.8g} to {MAX_TEMPERATURE:.8g}.",
                param,
                ctx,
            )
        return rv


SEED_TYPE = click.IntRange(0, MAX_SEED)
TEMPERATURE_HELP = (
    f"0: greedy; above 0: rejection sampling. 0 or {MIN_TEMPERATURE:.2g} to {MAX_TEMPERATURE:.2g} "
    "(float32, the logits' type; outside it the temperature rounds to 0 or infinity)."
)


def _cap_threads(ctx, param, value: int | None) -> int | None:
    """More threads than logical CPUs only make the threads wait for each other
    (--threads 512 took 88 s for 24 tokens on 2 CPUs): capped, with a note."""
    cpus = os.cpu_count()
    if value is not None and cpus and value > cpus:
        click.echo(
            f"note: --threads {value} is more than this machine's {cpus} logical CPUs; using {cpus}", err=True
        )
        return cpus
    return value


def model_options(f):
    """--pair / --target / --draft / --models-dir / GPU and context options."""
    opts = [
        click.option(
            "--pair", default=None, help="Named model pair from the registry (see `localsidecar models`)."
        ),
        click.option(
            "--target", default=None, envvar="LOCALSIDECAR_TARGET", help="Target GGUF: a path or REPO:FILE."
        ),
        click.option(
            "--draft", default=None, envvar="LOCALSIDECAR_DRAFT", help="Draft GGUF: a path or REPO:FILE."
        ),
        click.option(
            "--models-dir",
            type=click.Path(file_okay=False),
            default=None,
            envvar="LOCALSIDECAR_MODELS_DIR",
            help="Where derived models are cached [default: ~/.cache/localsidecar/models].",
        ),
        click.option(
            "--ctx",
            "n_ctx",
            type=click.IntRange(64, MAX_INT32),
            default=4096,
            show_default=True,
            help="Context size of each model.",
        ),
        click.option(
            "--threads",
            type=click.IntRange(1, MAX_THREADS),
            default=None,
            envvar="LOCALSIDECAR_THREADS",
            callback=_cap_threads,
            help="CPU threads [default: adapt: start from the physical cores other processes leave free, "
            "then follow the decode timings].",
        ),
        click.option(
            "--gpu-layers",
            type=click.IntRange(-1, MAX_INT32),
            default=0,
            show_default=True,
            help="Target layers offloaded to the GPU (-1: all).",
        ),
        click.option(
            "--draft-gpu-layers",
            type=click.IntRange(-1, MAX_INT32),
            default=0,
            show_default=True,
            help="Draft layers offloaded to the GPU.",
        ),
        click.option(
            "--verbose",
            is_flag=True,
            help="Show llama.cpp's own log on stderr (with `run`, also the draft "
            "policy's and the thread counts' decisions now and then).",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


class DraftMax(click.ParamType):
    """'auto' or an integer 1..64."""

    name = "auto|1..64"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or str(value).strip().lower() != "auto":
            try:
                k = int(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is neither 'auto' nor an integer.", param, ctx)
            if not 1 <= k <= 64:
                self.fail(f"{value!r} is not 'auto' or in the range 1<=x<=64.", param, ctx)
            return k
        return "auto"


def draft_max_option(f):
    """--draft-max (auto or a fixed length) and --draft-max-cap (bounds auto)."""
    f = click.option(
        "--draft-max-cap",
        type=click.IntRange(min=0, max=64),
        default=DEFAULT_DRAFT_MAX_CAP,
        show_default=True,
        envvar="LOCALSIDECAR_DRAFT_MAX_CAP",
        help="Most tokens --draft-max auto drafts in a round (0: never draft; the sidecar still writes hashtags).",
    )(f)
    return click.option(
        "--draft-max",
        type=DraftMax(),
        default=DEFAULT_DRAFT_MAX,
        show_default=True,
        envvar="LOCALSIDECAR_DRAFT_MAX",
        help="Tokens drafted per round. auto: chosen each round, 0 to the cap, from the pair's fixed cost model "
        "(its files' sizes) and the acceptance seen so far; an integer: that many every round.",
    )(f)


def quant_options(f):
    """--quant / --draft-quant: which quantizations of a registry pair to load (as `pull` takes them)."""
    f = click.option(
        "--draft-quant",
        default=None,
        help="Draft quantization of the pair, e.g. Q8_0 (default: the pair's; see `localsidecar models`).",
    )(f)
    return click.option(
        "--quant",
        default=None,
        help="Target quantization of the pair, e.g. Q5_K_M (default: the pair's; found in the hub cache, "
        "never downloaded: `localsidecar pull PAIR --quant Q` first).",
    )(f)


numbers_option = click.option(
    "--numbers",
    type=click.Choice(NUMBERS_MODES),
    default=DOCUMENT,
    show_default=True,
    envvar="LOCALSIDECAR_NUMBERS",
    help="document: a summary writes only numbers its document has (every digit string a prefix of one, "
    "each finished number one of them); free: any number the model chooses.",
)


summary_option = click.option(
    "--summary",
    type=click.Choice(SUMMARY_MODES),
    default=AUTO,
    show_default=True,
    envvar="LOCALSIDECAR_SUMMARY",
    help="extract: the summary is the document's own sentences, chosen and ordered by the target (its facts "
    "are the document's); free: the model writes it, and each sentence is checked against the document; "
    "auto: extract for a target below 1B parameters (read from its GGUF), free from 1B on.",
)

names_option = click.option(
    "--names",
    type=click.Choice(NUMBERS_MODES),
    default=DOCUMENT,
    show_default=True,
    envvar="LOCALSIDECAR_NAMES",
    help="document: a free summary writes a capitalised word mid-sentence only when the document has it "
    "(a sentence's first word is free); free: any word. An extract summary is the document's text either way.",
)

unsupported_option = click.option(
    "--unsupported",
    type=click.Choice(UNSUPPORTED_MODES),
    default=MARK,
    show_default=True,
    help="A free summary's sentences the document does not back (names, numbers and units, what they are "
    "said with): keep them unmarked, mark them, or drop them. The record lists them either way.",
)


soft_tokens_option = click.option(
    "--soft-tokens",
    type=click.IntRange(min=0),
    default=DEFAULT_SOFT_TOKENS,
    show_default=True,
    help="Stop a summary at its first sentence end once it has this many tokens (0: only at the model's end "
    "or --max-tokens).",
)


def load_documents_noted(err: Console, docs, *, max_chars, skip_bad, replace_errors, outputs):
    """load_many for a command, its skipped inputs and notes printed on `err`;
    `outputs`: the files the command writes (never read as documents)."""
    from localsidecar.io.documents import load_many

    loaded = load_many(
        docs, max_chars=max_chars, skip_bad=skip_bad, replace_errors=replace_errors, outputs=outputs
    )
    for note in [*loaded.skipped, *loaded.notes]:
        err.print(f"note: {note}")
    return loaded


def command_inputs(docs, prompts_file, target, draft) -> dict[str, list]:
    """What a command reads, for cli.paths.check_distinct (REPO:FILE specs are not paths)."""
    return {"a document": list(docs), "--prompts": [prompts_file], "--target": [target], "--draft": [draft]}


def prompt_config(prompts_file, instruction, suffix, deferred_prompt) -> PromptConfig:
    base = PromptConfig.from_file(prompts_file) if prompts_file else PromptConfig()
    return base.replace(instruction=instruction, suffix=suffix, deferred=deferred_prompt)


def table_console() -> Console:
    """Tables on stdout; without a terminal: no colours, 100 columns (every table fits)."""
    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(width=int(os.environ.get("COLUMNS", "100")), no_color=True, highlight=False)


def input_options(f):
    """--skip-bad and --replace-errors: how bad documents are read."""
    f = click.option(
        "--replace-errors", is_flag=True, help="Decode non-UTF-8 documents with replacement characters."
    )(f)
    return click.option(
        "--skip-bad",
        is_flag=True,
        help="Skip malformed inputs (unreadable files, bad JSONL lines) instead of stopping.",
    )(f)


def out_options(f):
    """--out and --overwrite: the resumable JSONL file of a command's records."""
    f = click.option("--overwrite", is_flag=True, help="Start --out over instead of resuming.")(f)
    return click.option(
        "--out",
        type=click.Path(dir_okay=False),
        default=None,
        help="Append the records to this JSONL file (resumable: a rerun skips what it holds).",
    )(f)


def output_options(f):
    """--out, --overwrite, --skip-bad, --replace-errors: what a command that
    writes --out from documents takes (acceptance splits them: sweep has no --out)."""
    return out_options(input_options(f))


PROMPTS_HELP = "JSON file with any of: instruction, suffix, hashtag_lead, deferred, system."


def max_tokens_option(help: str = "Most summary tokens."):
    """--max-tokens, each command saying what its summaries are."""
    return click.option(
        "--max-tokens", type=click.IntRange(min=1), default=DEFAULT_MAX_TOKENS, show_default=True, help=help
    )


max_chars_option = click.option(
    "--max-chars",
    type=click.IntRange(min=1),
    default=None,
    help="Truncate each document to this many characters.",
)


def prompts_option(help: str = PROMPTS_HELP):
    """--prompts FILE (stored as prompts_file)."""
    return click.option("--prompts", "prompts_file", type=click.Path(dir_okay=False), default=None, help=help)


def report_options(json: str, csv: tuple[str, str] | None = None, plot: str | None = None):
    """The report a command prints or writes: --json (as_json) with its help;
    `csv`: (the parameter name, help) of --csv FILE; `plot`: help of --plot FILE
    (stored as plot_file). Options in that order in --help."""

    def decorate(f):
        if plot is not None:
            f = click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None, help=plot)(
                f
            )
        if csv is not None:
            f = click.option("--csv", csv[0], type=click.Path(dir_okay=False), default=None, help=csv[1])(f)
        return click.option("--json", "as_json", is_flag=True, help=json)(f)

    return decorate
