"""`localsidecar hashtags-eval`: hashtag quality and cost, sidecar vs target."""

from __future__ import annotations

import json
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localsidecar.cli.args import (
    InputArgs,
    ModelArgs,
    OutputArgs,
    PromptArgs,
    ScaleArgs,
    SpecArgs,
    SummaryArgs,
    TagArgs,
)
from localsidecar.cli.errors import UserError
from localsidecar.cli.options import grouped, table_console
from localsidecar.cli.progress import plural
from localsidecar.io.formatting import cell, shown
from localsidecar.io.schema import upgrade
from localsidecar.io.tables import print_fitted
from localsidecar.lab.hashtag_eval import SIDECAR_VARIANTS, TARGET, VARIANT_HELP, aggregate, parse_variants

CSV_FIELDS = (
    "id",
    "variant",
    "hashtags",
    "valid_json",
    "n_tags",
    "dup_rate",
    "grounded",
    "phrase",
    "hashtag_jaccard",
    "soft",
    "hashtag_tokens",
    "extra_tokens",
    "extra_s",
    "total_s",
    "total_vs_target",
    "summary_tokens",
    "hashtags_raw",
    "good",
    "bad",
    "recall",
)

SUMMARY_COLUMNS = (  # (key, header, format); LEGEND explains the headers
    ("valid_json_rate", "JSON", ".2f"),
    ("n_tags", "tags", ".1f"),
    ("dup_rate", "dup", ".2f"),
    ("grounded", "grnd", ".2f"),
    ("phrase", "phr", ".2f"),
    ("hashtag_jaccard", "jacc", ".2f"),
    ("soft", "soft", ".2f"),
    ("extra_s", "+s", ".2f"),
    ("extra_tokens", "+tok", ".0f"),
    ("extra_vs_target", "+s/tgt", ".2f"),
    ("total_vs_target", "tot/tgt", ".2f"),
    ("good", "good", ".2f"),
    ("bad", "bad", ".2f"),
    ("recall", "rec", ".2f"),
)
LEGEND = (
    "JSON valid-JSON rate before repair; tags per doc; dup duplicate items before dedup; grnd tags whose words "
    "occur in the document or summary; phr tags whose words occur there contiguously, in order (a phrase of "
    "the text); jacc / soft Jaccard of tags / of word stems with the target's tags; "
    "+s / +tok hashtag phase seconds / tokens per doc; +s/tgt and tot/tgt: hashtag phase and whole pipeline "
    "(summary + hashtags) time relative to the target-only pipeline; good / bad / rec (with --labels): share of tags "
    "an editor labelled good / bad (or not in the document, or a date or count), and good entries found of 3."
)


def _fmt(v: Any, spec: str = ".2f") -> str:
    return cell(v, spec)


# the columns a narrow terminal leaves out, first ones first (variant, jacc, soft and tot/tgt stay)
SUMMARY_DROP = ("dup", "+tok", "+s", "JSON", "tags", "phr", "grnd", "rec", "bad", "good", "+s/tgt")


def print_summary_table(console: Console, summary: list[dict[str, Any]], title: str) -> None:
    """The variants' means, one row each; columns without a value in any row
    (good, bad, rec without --labels) are left out."""
    rows = []
    for s in summary:
        cells = [_fmt(s[k], f) for k, _, f in SUMMARY_COLUMNS]
        if s["variant"] == TARGET:  # overlap with itself
            cells = [
                "ref" if k in ("hashtag_jaccard", "soft") else c
                for (k, _, _), c in zip(SUMMARY_COLUMNS, cells)
            ]
        rows.append([s["variant"], *cells])
    empty = {i for i in range(1, len(SUMMARY_COLUMNS) + 1) if rows and all(r[i] == "-" for r in rows)}
    headers = ["variant", *(h for _, h, _ in SUMMARY_COLUMNS)]
    keep = [i for i in range(len(headers)) if i not in empty]
    columns = [(headers[i], {"justify": "left" if i == 0 else "right", "no_wrap": True}) for i in keep]
    print_fitted(
        console,
        columns,
        [[r[i] for i in keep] for r in rows],
        [h for h in SUMMARY_DROP if headers.index(h) in keep],
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )


def doc_table(record: dict[str, Any]) -> Table:
    """One document, its variants side by side."""
    t = Table(title=f"[bold]{escape(shown(record['id']))}[/bold]", title_justify="left", show_lines=False)
    for name, justify in (
        ("variant", "left"),
        ("hashtags", "left"),
        ("JSON", "center"),
        ("dup", "right"),
        ("phrase", "right"),
        ("soft", "right"),
        ("extra s", "right"),
    ):
        t.add_column(name, justify=justify, overflow="fold")
    for r in record["rows"]:
        tags = escape(" ".join(r["hashtags"])) or "[dim](none)[/dim]"
        soft = "ref" if r["variant"] == TARGET else _fmt(r["soft"])
        t.add_row(
            r["variant"],
            tags,
            _fmt(r["valid_json"]),
            _fmt(r["dup_rate"]),
            _fmt(r.get("phrase")),
            soft,
            _fmt(r["extra_s"]),
        )
    return t


def write_csv(path: str, records: list[dict[str, Any]]) -> None:
    from localsidecar.io import atomic

    atomic.write_csv(
        path,
        CSV_FIELDS,
        (
            {**row, "id": rec["id"], "hashtags": " ".join(row["hashtags"])}
            for rec in records
            for row in rec["rows"]
        ),
    )


@click.command("hashtags-eval")
@click.argument("docs", nargs=-1, required=True)
@click.option(
    "--variants",
    default="all",
    show_default=True,
    help="Comma-separated, from: " + "; ".join(f"{k}: {v}" for k, v in VARIANT_HELP.items()) + ".",
)
@SpecArgs.options("draft_max", "draft_max_cap", "numbers", "max_tokens", "soft_tokens")
@SummaryArgs.options("summary")
@InputArgs.options("max_chars")
@PromptArgs.options(
    "prompts_file",
    "suffix",
    "deferred_prompt",
    help={"deferred_prompt": "Hashtag request used as a new turn (deferred and target)."},
)
@TagArgs.options("grammar_style", "max_items", "penalty", "penalty_scope")
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="JSON file of an editor's tags per document id (benchmarks/tagset/labels.json): score every variant "
    "against it (good, bad, rec).",
)
@TagArgs.options("candidates")
@click.option(
    "--per-doc/--no-per-doc",
    default=True,
    show_default=True,
    help="Show each document's variants side by side.",
)
@OutputArgs.options(
    "as_json",
    "csv_file",
    "out",
    "overwrite",
    help={
        "as_json": "One JSON object per document, then one with the summary, on stdout.",
        "csv_file": "Write one row per document and variant to this CSV file.",
    },
)
@InputArgs.options("skip_bad", "replace_errors")
@OutputArgs.options("quiet")
@ScaleArgs.options()
@ModelArgs.options()
@grouped
def hashtags_eval_cmd(
    docs: tuple[str, ...],
    variants: str,
    spec: SpecArgs,
    summary: SummaryArgs,
    inputs: InputArgs,
    prompts: PromptArgs,
    tags: TagArgs,
    labels_path: str | None,
    per_doc: bool,
    output: OutputArgs,
    scale: ScaleArgs,
    model: ModelArgs,
) -> None:
    """Score the hashtags of every sidecar layout, the target and a keyword
    baseline on DOCS: valid JSON, tags, duplicates, grounding, overlap with
    the target's tags, and what they cost in time and tokens."""
    from localsidecar import backend
    from localsidecar.cli.jobs import HashtagsJob
    from localsidecar.cli.resumable import SERIAL, run_resumable
    from localsidecar.io.results import model_identity
    from localsidecar.lab.hashtag_eval import KEYWORDS, NO_MODEL, keyword_index
    from localsidecar.lab.tag_labels import LabelError, add_label_scores, load_labels

    output.check(docs, model, prompts.inputs(), {"--labels": [labels_path]})
    executors = scale.scale(model)
    backend.set_verbose(model.verbose)
    try:
        names = parse_variants(variants)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        labels = load_labels(labels_path) if labels_path else {}
    except LabelError as exc:
        raise UserError(str(exc)) from None
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = inputs.load(err, docs, writes=output.files().values())
    prompt_config = prompts.config()
    need_models = any(n not in NO_MODEL for n in names)
    need_draft = any(n in SIDECAR_VARIANTS for n in names)
    files = model.files(need_draft=need_draft) if need_models else None
    # the summary the tags follow is run's (--summary auto: extract for the embedded pair)
    spec_config = summary.config(spec, files.target) if files else spec.config()
    settings = tags.settings()
    config = {
        "command": "hashtags-eval",
        "target": model_identity(files and files.target),
        "draft": model_identity(files and files.draft),
        "variants": names,
        "prompts": vars(prompt_config),
        "spec": vars(spec_config),
        "soft_tokens": spec.soft_limit,
        "max_chars": inputs.max_chars,
        "hashtags": vars(settings),
    }
    cfg = model.engine_config(hashtags=settings, soft_tokens=spec.soft_limit)
    job = HashtagsJob(files, cfg, prompt_config, model.verbose, variants=names, spec=spec_config)
    console = table_console()
    records: list[dict[str, Any]] = []
    texts = {d.id: d.text for d in loaded.docs}
    describe = lambda rec: dict(detail=f"{len(rec['rows'])} variant{'' if len(rec['rows']) == 1 else 's'}")  # noqa: E731
    with run_resumable(
        err, out=output.out, config=config, overwrite=output.overwrite, quiet=output.quiet, describe=describe
    ) as run:

        def on_doc(item, rec: dict) -> None:
            if labels:
                add_label_scores([rec], labels, texts)
            run.save(rec)
            records.append(rec)
            if output.as_json:
                click.echo(json.dumps({"kind": "document", **rec}, ensure_ascii=False))
            elif per_doc:
                console.print(doc_table(rec))

        todo = run.pending(loaded.docs)
        keywords = (
            keyword_index([d.text for d in todo], [d.text for d in loaded.docs]) if KEYWORDS in names else {}
        )
        run.drive(
            [(d, keywords.get(d.text)) for d in todo],
            lambda n: (executors if need_models else SERIAL).executor(job, n),
            on_doc,
            key=lambda item: item[0].id,
        )
        if output.out:  # the whole file's records of this configuration, resumed ones too
            records = [upgrade("hashtags-eval", r) for r in run.records() if isinstance(r.get("rows"), list)]
        if labels:
            add_label_scores(records, labels, texts)
        _report(records, console, as_json=output.as_json, csv_path=output.csv_file)


def _report(records: list[dict[str, Any]], console: Console, *, as_json: bool, csv_path: str | None) -> None:
    summary = aggregate(records)
    if csv_path:
        write_csv(csv_path, records)
    if as_json:
        click.echo(json.dumps({"kind": "summary", "variants": summary}, ensure_ascii=False))
    else:
        print_summary_table(console, summary, f"hashtags over {plural(len(records), 'document')}")
        console.print(LEGEND, style="dim")
