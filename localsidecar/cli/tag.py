"""`localsidecar tag PATH...`: summaries and hashtags written into Markdown
notes' front matter (docs/tag.md).

Each note's body is a document of run's pipeline (same options, same jobs,
same executors: --workers, --ray); the driver alone edits notes, each as its
result comes in (localsidecar.notes: only the keys the tool owns change, and a
note changed since it was read is not written). A note whose record holds its
body's and the settings' hashes is up to date: when every note is, no model
is loaded. Ctrl-C finishes the notes in progress, writes them and exits 130.
"""

from __future__ import annotations

import click

from localsidecar.cli.args import (
    InputArgs,
    LayoutArgs,
    ModelArgs,
    OutputArgs,
    PromptArgs,
    ScaleArgs,
    SpecArgs,
    SummaryArgs,
    model_options,
    summary_stack,
)
from localsidecar.cli.options import grouped
from localsidecar.cli.pipeline import Pipeline
from localsidecar.cli.tagging import MAX_TAGS, TAG_MAX_CHARS, TagOptions, tag_notes
from localsidecar.notes.merge import SPELLINGS
from localsidecar.notes.vault import NOTE_EXTENSIONS


@click.command("tag")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--ext",
    "extensions",
    multiple=True,
    default=NOTE_EXTENSIONS,
    show_default=True,
    help="Extensions of the notes in folders (repeat it; a file named on the command line is always read).",
)
@click.option("--summary-key", default="summary", show_default=True, help="Front matter key of the summary.")
@click.option(
    "--no-summary", is_flag=True, help="Write tags only (a summary the tool wrote before is removed)."
)
@click.option(
    "--prefix", default="", help="Before every tag the tool writes, e.g. ai/ for nested tags (ai/Ferry)."
)
@click.option(
    "--max-tags",
    type=click.IntRange(1, MAX_TAGS),
    default=3,
    show_default=True,
    help="Most tags the tool adds to a note.",
)
@click.option(
    "--spelling",
    type=click.Choice(SPELLINGS),
    default="camel",
    show_default=True,
    help="camel: MarketStreet; kebab: market-street; lower: marketstreet.",
)
@click.option(
    "--vocabulary",
    metavar="FILE|existing",
    default=None,
    help="Only these tags: a file of one tag per line, or 'existing' (the tags the notes already use).",
)
@click.option("--force", is_flag=True, help="Redo notes that are up to date.")
@click.option("--dry-run", is_flag=True, help="Print a unified diff per note; write nothing.")
@summary_stack(max_chars=TAG_MAX_CHARS)
@OutputArgs.options("as_json", "quiet", help={"as_json": "One JSON record per note on stdout."})
@model_options
@grouped
def tag_cmd(
    paths: tuple[str, ...],
    layout: LayoutArgs,
    spec: SpecArgs,
    summary: SummaryArgs,
    inputs: InputArgs,
    prompts: PromptArgs,
    output: OutputArgs,
    scale: ScaleArgs,
    model: ModelArgs,
    **params,
) -> None:
    """Write a summary and hashtags into the front matter of the Markdown notes
    in PATHS (files and folders, recursively)."""
    params["as_json"] = output.as_json
    options = TagOptions.take(params, click.get_current_context())
    tag_notes(paths, options, Pipeline(layout, spec, summary, inputs, prompts, output, scale, model))
