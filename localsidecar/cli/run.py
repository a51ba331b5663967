"""`localsidecar run`: summaries + hashtags + acceptance stats per document."""

from __future__ import annotations

import json

import click
from rich.console import Console

from localsidecar.cli import options as opt
from localsidecar.cli.progress import quiet_option
from localsidecar.cli.report import print_run, print_totals
from localsidecar.cli.resumable import scale_options
from localsidecar.decoding.engine import ALL_MODES, EngineConfig
from localsidecar.decoding.layouts import MODE_HELP, REVEALS
from localsidecar.decoding.speculative import SpecConfig


@click.command("run")
@click.argument("docs", nargs=-1, required=True)
@click.option(
    "--mode",
    type=click.Choice(ALL_MODES),
    default="rebased",
    show_default=True,
    help="Draft layout: " + "; ".join(f"{k}: {v}" for k, v in MODE_HELP.items()) + "; target-only: no draft.",
)
@opt.draft_max_option
@opt.numbers_option
@opt.summary_option
@opt.names_option
@opt.unsupported_option
@click.option(
    "--p-min",
    type=opt.FiniteFloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    envvar="LOCALSIDECAR_P_MIN",
    help="Stop drafting when the draft's top probability falls below this.",
)
@click.option(
    "--temperature", type=opt.TemperatureType(), default=0.0, show_default=True, help=opt.TEMPERATURE_HELP
)
@click.option(
    "--seed",
    type=opt.SEED_TYPE,
    default=0,
    show_default=True,
    help=f"Seed for sampling (0 to {opt.MAX_SEED}).",
)
@opt.max_tokens_option("Most summary tokens (a summary cut there is shown up to its last complete sentence).")
@opt.soft_tokens_option
@opt.max_chars_option
@click.option(
    "--reveal",
    type=click.Choice(REVEALS),
    default="shifted",
    show_default=True,
    help="rebased: shift the summary past the suffix before the hashtags (shifted) or leave it overlapping (overlap).",
)
@click.option("--instruction", default=None, help="Summary instruction (after the document).")
@click.option("--suffix", default=None, help="Hidden hashtag instruction appended to the draft's prompt.")
@click.option(
    "--deferred-prompt", default=None, help="Hashtag request used as a new turn in --mode deferred."
)
@opt.prompts_option()
@click.option("--compare", is_flag=True, help="Also run target-only and report the speedup.")
@opt.report_options(json="One JSON object per document on stdout.")
@opt.output_options
@quiet_option
@scale_options
@opt.quant_options
@opt.model_options
def run_cmd(
    docs,
    mode,
    draft_max,
    draft_max_cap,
    numbers,
    summary,
    names,
    unsupported,
    p_min,
    temperature,
    seed,
    max_tokens,
    soft_tokens,
    max_chars,
    reveal,
    instruction,
    suffix,
    deferred_prompt,
    prompts_file,
    compare,
    as_json,
    out,
    overwrite,
    skip_bad,
    replace_errors,
    quiet,
    workers,
    ray_address,
    quant,
    draft_quant,
    pair,
    target,
    draft,
    models_dir,
    n_ctx,
    threads,
    gpu_layers,
    draft_gpu_layers,
    verbose,
):
    """Summarize DOCS (files, folders, .jsonl, or - for stdin) with speculative
    decoding; the draft writes hashtags after the summary."""
    from localsidecar import backend
    from localsidecar.cli.jobs import ModelFiles, RunJob
    from localsidecar.cli.paths import check_distinct
    from localsidecar.cli.resumable import Scale, run_resumable
    from localsidecar.io.results import model_identity
    from localsidecar.summary import modes as summary_modes

    check_distinct(inputs=opt.command_inputs(docs, prompts_file, target, draft), outputs={"--out": out})
    scale = Scale.from_options(workers, ray_address, threads, gpu_layers)
    backend.set_verbose(verbose)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = opt.load_documents_noted(
        err, docs, max_chars=max_chars, skip_bad=skip_bad, replace_errors=replace_errors, outputs=[out]
    )
    prompts = opt.prompt_config(prompts_file, instruction, suffix, deferred_prompt)
    files = ModelFiles.resolve(
        pair,
        target,
        draft,
        models_dir,
        need_draft=mode != "target-only",
        quant=quant,
        draft_quant=draft_quant,
    )
    spec = SpecConfig(
        draft_max=draft_max,
        p_min=p_min,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        draft_max_cap=draft_max_cap,
        numbers=numbers,
        summary=summary_modes.resolve(summary, files.target),  # auto: by the target's size
        unsupported=unsupported,
        names=names,
    )
    config = {
        "target": model_identity(files.target),
        "draft": model_identity(files.draft),
        "mode": mode,
        "reveal": reveal,
        "prompts": vars(prompts),
        "spec": vars(spec),
        "soft_tokens": soft_tokens or None,
        "max_chars": max_chars,
        "compare": compare,
    }
    in_process = not ray_address and (workers or 1) == 1
    engine_cfg = EngineConfig(
        n_ctx=n_ctx,
        threads=threads,
        gpu_layers=gpu_layers,
        draft_gpu_layers=draft_gpu_layers,
        soft_tokens=soft_tokens or None,
        log=err.print if verbose and in_process else None,
    )
    job = RunJob(files, engine_cfg, prompts, verbose, mode=mode, spec=spec, compare=compare, reveal=reveal)
    console = Console(highlight=False)
    records: list[dict] = []
    describe = lambda rec: dict(tokens=rec["summary_tokens"], alpha=rec["alpha"], seconds=rec["wall_s"])  # noqa: E731
    with run_resumable(
        err, out=out, config=config, overwrite=overwrite, quiet=quiet, describe=describe
    ) as run:

        def on_record(doc, rec: dict) -> None:
            run.save(rec)
            records.append(rec)
            if as_json:
                click.echo(json.dumps(rec, ensure_ascii=False))
            else:
                print_run(console, rec, unsupported)

        run.drive(run.pending(loaded.docs), lambda n: scale.executor(job, n), on_record)
        if not as_json and len(records) > 1:
            print_totals(console, records)
