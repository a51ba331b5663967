"""`localsidecar run`: summaries + hashtags + acceptance stats per document."""

from __future__ import annotations

import json
import math

import click
from rich.console import Console

from localsidecar.engine import ALL_MODES, EngineConfig
from localsidecar.layouts import MODE_HELP, REVEALS
from localsidecar.prompts import PromptConfig
from localsidecar.cli.progress import quiet_option
from localsidecar.cli.report import print_run, print_totals
from localsidecar.cli.resumable import scale_options
from localsidecar.sentences import DEFAULT_MAX_TOKENS, DEFAULT_SOFT_TOKENS
from localsidecar.speculative import DEFAULT_DRAFT_MAX, DEFAULT_DRAFT_MAX_CAP, SpecConfig


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
            self.fail(f"{value!r} is not 0 or a number from {MIN_TEMPERATURE:.8g} to {MAX_TEMPERATURE:.8g}.", param, ctx)
        return rv


SEED_TYPE = click.IntRange(0, MAX_SEED)
TEMPERATURE_HELP = (f"0: greedy; above 0: rejection sampling. 0 or {MIN_TEMPERATURE:.2g} to {MAX_TEMPERATURE:.2g} "
                    "(float32, the logits' type; outside it the temperature rounds to 0 or infinity).")


def model_options(f):
    """--pair / --target / --draft / --models-dir / GPU and context options."""
    opts = [
        click.option("--pair", default=None, help="Named model pair from the registry (see `localsidecar models`)."),
        click.option("--target", default=None, envvar="LOCALSIDECAR_TARGET", help="Target GGUF: a path or REPO:FILE."),
        click.option("--draft", default=None, envvar="LOCALSIDECAR_DRAFT", help="Draft GGUF: a path or REPO:FILE."),
        click.option("--models-dir", type=click.Path(file_okay=False), default=None, envvar="LOCALSIDECAR_MODELS_DIR",
                     help="Where derived models are cached [default: ~/.cache/localsidecar/models]."),
        click.option("--ctx", "n_ctx", type=click.IntRange(64, MAX_INT32), default=4096, show_default=True, help="Context size of each model."),
        click.option("--threads", type=click.IntRange(1, MAX_THREADS), default=None, envvar="LOCALSIDECAR_THREADS",
                     help="CPU threads [default: adapt: start from the physical cores other processes leave free, "
                          "then follow the decode timings]."),
        click.option("--gpu-layers", type=click.IntRange(-1, MAX_INT32), default=0, show_default=True, help="Target layers offloaded to the GPU (-1: all)."),
        click.option("--draft-gpu-layers", type=click.IntRange(-1, MAX_INT32), default=0, show_default=True, help="Draft layers offloaded to the GPU."),
        click.option("--verbose", is_flag=True, help="Show llama.cpp's own log on stderr (with `run`, also the draft "
                                                      "policy's and the thread counts' decisions now and then)."),
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
    f = click.option("--draft-max-cap", type=click.IntRange(min=0, max=64), default=DEFAULT_DRAFT_MAX_CAP,
                     show_default=True, envvar="LOCALSIDECAR_DRAFT_MAX_CAP",
                     help="Most tokens --draft-max auto drafts in a round (0: never draft; the sidecar still writes hashtags).")(f)
    return click.option(
        "--draft-max", type=DraftMax(), default=DEFAULT_DRAFT_MAX, show_default=True, envvar="LOCALSIDECAR_DRAFT_MAX",
        help="Tokens drafted per round. auto: chosen each round, 0 to the cap, from the pair's measured costs and "
             "acceptance; an integer: that many every round.")(f)


def quant_options(f):
    """--quant / --draft-quant: which quantizations of a registry pair to load (as `pull` takes them)."""
    f = click.option("--draft-quant", default=None,
                     help="Draft quantization of the pair, e.g. Q8_0 (default: the pair's; see `localsidecar models`).")(f)
    return click.option("--quant", default=None,
                        help="Target quantization of the pair, e.g. Q5_K_M (default: the pair's; found in the hub cache, "
                             "never downloaded: `localsidecar pull PAIR --quant Q` first).")(f)


soft_tokens_option = click.option(
    "--soft-tokens", type=click.IntRange(min=0), default=DEFAULT_SOFT_TOKENS, show_default=True,
    help="Stop a summary at its first sentence end once it has this many tokens (0: only at the model's end "
         "or --max-tokens).")


def load_documents_noted(err: Console, docs, *, max_chars, skip_bad, replace_errors, outputs):
    """load_many for a command, its skipped inputs and notes printed on `err`;
    `outputs`: the files the command writes (never read as documents)."""
    from localsidecar.documents import load_many

    loaded = load_many(docs, max_chars=max_chars, skip_bad=skip_bad, replace_errors=replace_errors, outputs=outputs)
    for note in [*loaded.skipped, *loaded.notes]:
        err.print(f"note: {note}")
    return loaded


def command_inputs(docs, prompts_file, target, draft) -> dict[str, list]:
    """What a command reads, for cli.paths.check_distinct (REPO:FILE specs are not paths)."""
    return {"a document": list(docs), "--prompts": [prompts_file], "--target": [target], "--draft": [draft]}


def resolve_pair_paths(pair, target, draft, models_dir, need_draft=True, quant=None, draft_quant=None):
    """(target path, draft path or None); the embedded pair unless told otherwise;
    quant/draft_quant: a registry pair's quantizations (offline, hub cache only)."""
    from localsidecar.registry.models import resolve_models

    t, d = resolve_models(pair=pair, target=target, draft=draft, models_dir=models_dir, require_draft=need_draft,
                          quant=quant, draft_quant=draft_quant)
    return t, d if need_draft else None


def _prompt_config(prompts_file, instruction, suffix, deferred_prompt) -> PromptConfig:
    base = PromptConfig.from_file(prompts_file) if prompts_file else PromptConfig()
    return base.replace(instruction=instruction, suffix=suffix, deferred=deferred_prompt)


@click.command("run")
@click.argument("docs", nargs=-1, required=True)
@click.option("--mode", type=click.Choice(ALL_MODES), default="rebased", show_default=True,
              help="Draft layout: " + "; ".join(f"{k}: {v}" for k, v in MODE_HELP.items()) + "; target-only: no draft.")
@draft_max_option
@click.option("--p-min", type=FiniteFloatRange(0.0, 1.0), default=0.0, show_default=True, envvar="LOCALSIDECAR_P_MIN", help="Stop drafting when the draft's top probability falls below this.")
@click.option("--temperature", type=TemperatureType(), default=0.0, show_default=True, help=TEMPERATURE_HELP)
@click.option("--seed", type=SEED_TYPE, default=0, show_default=True, help=f"Seed for sampling (0 to {MAX_SEED}).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=DEFAULT_MAX_TOKENS, show_default=True,
              help="Most summary tokens (a summary cut there is shown up to its last complete sentence).")
@soft_tokens_option
@click.option("--max-chars", type=click.IntRange(min=1), default=None, help="Truncate each document to this many characters.")
@click.option("--reveal", type=click.Choice(REVEALS), default="shifted", show_default=True,
              help="rebased: shift the summary past the suffix before the hashtags (shifted) or leave it overlapping (overlap).")
@click.option("--instruction", default=None, help="Summary instruction (after the document).")
@click.option("--suffix", default=None, help="Hidden hashtag instruction appended to the draft's prompt.")
@click.option("--deferred-prompt", default=None, help="Hashtag request used as a new turn in --mode deferred.")
@click.option("--prompts", "prompts_file", type=click.Path(dir_okay=False), default=None,
              help="JSON file with any of: instruction, suffix, hashtag_lead, deferred, system.")
@click.option("--compare", is_flag=True, help="Also run target-only and report the speedup.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per document on stdout.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Append records to this JSONL file (resumable).")
@click.option("--overwrite", is_flag=True, help="Start --out over instead of resuming.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed JSONL lines instead of stopping.")
@click.option("--replace-errors", is_flag=True, help="Decode non-UTF-8 documents with replacement characters.")
@quiet_option
@scale_options
@quant_options
@model_options
def run_cmd(docs, mode, draft_max, draft_max_cap, p_min, temperature, seed, max_tokens, soft_tokens, max_chars, reveal,
            instruction, suffix, deferred_prompt, prompts_file, compare, as_json, out, overwrite, skip_bad, replace_errors,
            quiet, workers, ray_address, quant, draft_quant,
            pair, target, draft, models_dir, n_ctx, threads, gpu_layers, draft_gpu_layers, verbose):
    """Summarize DOCS (files, folders, .jsonl, or - for stdin) with speculative
    decoding; the draft writes hashtags after the summary."""
    from localsidecar import backend
    from localsidecar.cli.jobs import ModelFiles, RunJob
    from localsidecar.cli.paths import check_distinct
    from localsidecar.cli.resumable import Scale, run_resumable
    from localsidecar.results import model_identity

    check_distinct(inputs=command_inputs(docs, prompts_file, target, draft), outputs={"--out": out})
    scale = Scale.from_options(workers, ray_address, threads, gpu_layers)
    backend.set_verbose(verbose)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = load_documents_noted(err, docs, max_chars=max_chars, skip_bad=skip_bad, replace_errors=replace_errors,
                                  outputs=[out])
    prompts = _prompt_config(prompts_file, instruction, suffix, deferred_prompt)
    spec = SpecConfig(draft_max=draft_max, p_min=p_min, temperature=temperature, seed=seed, max_tokens=max_tokens,
                      draft_max_cap=draft_max_cap)
    files = ModelFiles.resolve(pair, target, draft, models_dir, need_draft=mode != "target-only", quant=quant,
                               draft_quant=draft_quant)
    config = {
        "target": model_identity(files.target), "draft": model_identity(files.draft), "mode": mode, "reveal": reveal,
        "prompts": vars(prompts), "spec": vars(spec), "soft_tokens": soft_tokens or None, "max_chars": max_chars,
        "compare": compare,
    }
    in_process = not ray_address and (workers or 1) == 1
    engine_cfg = EngineConfig(n_ctx=n_ctx, threads=threads, gpu_layers=gpu_layers, draft_gpu_layers=draft_gpu_layers,
                              soft_tokens=soft_tokens or None, log=err.print if verbose and in_process else None)
    job = RunJob(files, engine_cfg, prompts, verbose, mode=mode, spec=spec, compare=compare, reveal=reveal)
    console = Console(highlight=False)
    records: list[dict] = []
    describe = lambda rec: dict(tokens=rec["summary_tokens"], alpha=rec["alpha"], seconds=rec["wall_s"])  # noqa: E731
    with run_resumable(err, out=out, config=config, overwrite=overwrite, quiet=quiet, describe=describe) as run:

        def on_record(doc, rec: dict) -> None:
            run.save(rec)
            records.append(rec)
            if as_json:
                click.echo(json.dumps(rec, ensure_ascii=False))
            else:
                print_run(console, rec)

        run.drive(run.pending(loaded.docs), lambda n: scale.executor(job, n), on_record)
        if not as_json and len(records) > 1:
            print_totals(console, records)
