"""`localsidecar run`: summaries + hashtags + acceptance stats per document."""

from __future__ import annotations

import json

import click
from rich.console import Console

from localsidecar.cli.args import (
    InputArgs,
    LayoutArgs,
    ModelArgs,
    OutputArgs,
    PromptArgs,
    ScaleArgs,
    SpecArgs,
    SummaryArgs,
    document_options,
    summary_options,
)
from localsidecar.cli.options import grouped, table_console
from localsidecar.cli.report import print_run, print_totals


@click.command("run")
@click.argument("docs", nargs=-1, required=True)
@summary_options
@click.option("--compare", is_flag=True, help="Also run target-only and report the speedup.")
@document_options
@grouped
def run_cmd(
    docs: tuple[str, ...],
    layout: LayoutArgs,
    spec: SpecArgs,
    summary: SummaryArgs,
    inputs: InputArgs,
    prompts: PromptArgs,
    compare: bool,
    output: OutputArgs,
    scale: ScaleArgs,
    model: ModelArgs,
) -> None:
    """Summarize DOCS (files, folders, .jsonl, or - for stdin) with speculative
    decoding; the draft writes hashtags after the summary. Without --pair,
    --target or --draft the pair is the embedded one: SmolLM2-135M-Instruct
    Q4_1 as the target and its Q4_0 as the draft (derived on first use).

    \b
    Examples:
      localsidecar run examples/notes.txt
      localsidecar run notes/ --json --out notes.jsonl
      localsidecar run report.md --pair small --compare

    The first summarizes one document with the embedded pair; the second
    every document of a folder, one JSON line each, resumable; the third
    uses another pair (`localsidecar pull small` first) and also times the
    target alone for the speedup."""
    from localsidecar import backend
    from localsidecar.cli.pipeline import Pipeline
    from localsidecar.cli.resumable import run_resumable

    output.check(docs, model, prompts.inputs())
    pipeline = Pipeline(layout, spec, summary, inputs, prompts, output, scale, model)
    executors = pipeline.executors()
    backend.set_verbose(model.verbose)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = inputs.load(err, docs, writes=output.files().values())
    files = pipeline.files()
    config = {**pipeline.identity(files), "compare": compare}
    job = pipeline.job(files, err.print, compare=compare)
    console = table_console()
    records: list[dict] = []
    describe = lambda rec: dict(tokens=rec["summary_tokens"], alpha=rec["alpha"], seconds=rec["wall_s"])  # noqa: E731
    with run_resumable(
        err, out=output.out, config=config, overwrite=output.overwrite, quiet=output.quiet, describe=describe
    ) as run:

        def on_record(doc, rec: dict) -> None:
            run.save(rec)
            records.append(rec)
            if output.as_json:
                click.echo(json.dumps(rec, ensure_ascii=False))
            else:
                print_run(console, rec, summary.unsupported, verbose=model.verbose)

        run.drive(run.pending(loaded.docs), lambda n: executors.executor(job, n), on_record)
        if not output.as_json and len(records) > 1:
            print_totals(console, records, verbose=model.verbose)
