"""`localsidecar hashtags-eval`: hashtag quality and cost, sidecar vs target."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localsidecar.cli import options as opt
from localsidecar.cli.errors import UserError
from localsidecar.cli.progress import plural, quiet_option
from localsidecar.cli.resumable import scale_options
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags.generation import GRAMMAR_STYLES, MAX_TAGS, PENALTY_SCOPES, HashtagSettings
from localsidecar.io.formatting import cell, shown
from localsidecar.io.schema import upgrade
from localsidecar.lab.hashtag_eval import SIDECAR_VARIANTS, TARGET, VARIANT_HELP, aggregate, parse_variants

_H = HashtagSettings()
MAX_PENALTY = 1000.0  # logits divided (or multiplied) by it stay finite in float32
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


def summary_table(summary: list[dict[str, Any]], title: str) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=0)
    t.add_column("variant", no_wrap=True)
    for _, header, _ in SUMMARY_COLUMNS:
        t.add_column(header, justify="right", no_wrap=True)
    for s in summary:
        cells = [_fmt(s[k], f) for k, _, f in SUMMARY_COLUMNS]
        if s["variant"] == TARGET:  # overlap with itself
            cells = [
                "ref" if k in ("hashtag_jaccard", "soft") else c
                for (k, _, _), c in zip(SUMMARY_COLUMNS, cells)
            ]
        t.add_row(s["variant"], *cells)
    return t


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
@opt.draft_max_option
@opt.numbers_option
@opt.max_tokens_option()
@opt.soft_tokens_option
@opt.max_chars_option
@opt.prompts_option()
@click.option("--suffix", default=None, help="Hidden hashtag instruction appended to the draft's prompt.")
@click.option(
    "--deferred-prompt", default=None, help="Hashtag request used as a new turn (deferred and target)."
)
@click.option(
    "--grammar-style",
    type=click.Choice(GRAMMAR_STYLES),
    default=_H.style,
    show_default=True,
    help="Item shape: phrase = '#' + a CamelCase phrase (1-3 consecutive words) of the document or summary; "
    "doc = '#' + CamelCase words of the document or summary in any order; free / camel / hyphen / words: "
    "any words.",
)
@click.option(
    "--max-items",
    type=click.IntRange(1, MAX_TAGS),
    default=_H.max_items,
    show_default=True,
    help="Most hashtags.",
)
@click.option(
    "--penalty",
    type=opt.FiniteFloatRange(1.0, MAX_PENALTY),
    default=_H.penalty_repeat,
    show_default=True,
    help="Repetition penalty in the hashtag phase.",
)
@click.option(
    "--penalty-scope",
    type=click.Choice(PENALTY_SCOPES),
    default=_H.penalty_scope,
    show_default=True,
    help="content: penalize repeated word tokens only; all: llama.cpp's penalty over every token (JSON punctuation too).",
)
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="JSON file of an editor's tags per document id (examples/tagset/labels.json): score every variant "
    "against it (good, bad, rec).",
)
@click.option(
    "--candidates",
    type=click.IntRange(1, 64),
    default=_H.candidates,
    show_default=True,
    help="Phrase style: how many of the document's ranked candidates the grammar offers.",
)
@click.option(
    "--per-doc/--no-per-doc",
    default=True,
    show_default=True,
    help="Show each document's variants side by side.",
)
@opt.report_options(
    json="One JSON object per document, then one with the summary, on stdout.",
    csv=("csv_path", "Write one row per document and variant to this CSV file."),
)
@opt.output_options
@quiet_option
@scale_options
@opt.model_options
def hashtags_eval_cmd(
    docs,
    variants,
    draft_max,
    draft_max_cap,
    numbers,
    max_tokens,
    soft_tokens,
    max_chars,
    prompts_file,
    suffix,
    deferred_prompt,
    grammar_style,
    max_items,
    penalty,
    penalty_scope,
    labels_path,
    candidates,
    per_doc,
    as_json,
    out,
    overwrite,
    csv_path,
    skip_bad,
    replace_errors,
    quiet,
    workers,
    ray_address,
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
    """Score the hashtags of every sidecar layout, the target and a keyword
    baseline on DOCS: valid JSON, tags, duplicates, grounding, overlap with
    the target's tags, and what they cost in time and tokens."""
    from localsidecar import backend
    from localsidecar.cli.jobs import HashtagsJob, ModelFiles
    from localsidecar.cli.paths import check_distinct, check_writable, model_files
    from localsidecar.cli.resumable import SERIAL, Scale, run_resumable
    from localsidecar.decoding.engine import EngineConfig
    from localsidecar.io.results import model_identity
    from localsidecar.lab.hashtag_eval import KEYWORDS, NO_MODEL, keyword_index
    from localsidecar.lab.tag_labels import LabelError, add_label_scores, load_labels

    check_distinct(
        inputs={**opt.command_inputs(docs, prompts_file, target, draft), "--labels": [labels_path]},
        outputs={"--out": out, "--csv": csv_path},
        models=model_files(pair, target, draft, models_dir),
    )
    check_writable({"--csv": csv_path})
    scale = Scale.from_options(workers, ray_address, threads, gpu_layers)
    backend.set_verbose(verbose)
    try:
        names = parse_variants(variants)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        labels = load_labels(labels_path) if labels_path else {}
    except LabelError as exc:
        raise UserError(str(exc)) from None
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = opt.load_documents_noted(
        err,
        docs,
        max_chars=max_chars,
        skip_bad=skip_bad,
        replace_errors=replace_errors,
        outputs=[out, csv_path],
    )
    prompts = opt.prompt_config(prompts_file, None, suffix, deferred_prompt)
    spec = SpecConfig(
        draft_max=draft_max, max_tokens=max_tokens, draft_max_cap=draft_max_cap, numbers=numbers
    )
    need_models = any(n not in NO_MODEL for n in names)
    need_draft = any(n in SIDECAR_VARIANTS for n in names)
    files = (
        ModelFiles.resolve(pair, target, draft, models_dir, need_draft=need_draft) if need_models else None
    )
    settings = dataclasses.replace(
        _H,
        style=grammar_style,
        max_items=max_items,
        min_items=min(_H.min_items, max_items),
        penalty_repeat=penalty,
        penalty_scope=penalty_scope,
        candidates=candidates,
    )
    config = {
        "command": "hashtags-eval",
        "target": model_identity(files and files.target),
        "draft": model_identity(files and files.draft),
        "variants": names,
        "prompts": vars(prompts),
        "spec": vars(spec),
        "soft_tokens": soft_tokens or None,
        "max_chars": max_chars,
        "hashtags": vars(settings),
    }
    cfg = EngineConfig(
        n_ctx=n_ctx,
        threads=threads,
        gpu_layers=gpu_layers,
        draft_gpu_layers=draft_gpu_layers,
        hashtags=settings,
        soft_tokens=soft_tokens or None,
    )
    job = HashtagsJob(files, cfg, prompts, verbose, variants=names, spec=spec)
    console = Console(highlight=False)
    records: list[dict[str, Any]] = []
    texts = {d.id: d.text for d in loaded.docs}
    describe = lambda rec: dict(detail=f"{len(rec['rows'])} variant{'' if len(rec['rows']) == 1 else 's'}")  # noqa: E731
    with run_resumable(
        err, out=out, config=config, overwrite=overwrite, quiet=quiet, describe=describe
    ) as run:

        def on_doc(item, rec: dict) -> None:
            if labels:
                add_label_scores([rec], labels, texts)
            run.save(rec)
            records.append(rec)
            if as_json:
                click.echo(json.dumps({"kind": "document", **rec}, ensure_ascii=False))
            elif per_doc:
                console.print(doc_table(rec))

        todo = run.pending(loaded.docs)
        keywords = (
            keyword_index([d.text for d in todo], [d.text for d in loaded.docs]) if KEYWORDS in names else {}
        )
        run.drive(
            [(d, keywords.get(d.text)) for d in todo],
            lambda n: (scale if need_models else SERIAL).executor(job, n),
            on_doc,
            key=lambda item: item[0].id,
        )
        if out:  # the whole file's records of this configuration, resumed ones too
            records = [upgrade("hashtags-eval", r) for r in run.records() if isinstance(r.get("rows"), list)]
        if labels:
            add_label_scores(records, labels, texts)
        _report(records, console, as_json=as_json, csv_path=csv_path)


def _report(records: list[dict[str, Any]], console: Console, *, as_json: bool, csv_path: str | None) -> None:
    summary = aggregate(records)
    if csv_path:
        write_csv(csv_path, records)
    if as_json:
        click.echo(json.dumps({"kind": "summary", "variants": summary}, ensure_ascii=False))
    else:
        console.print(summary_table(summary, f"hashtags over {plural(len(records), 'document')}"))
        console.print(LEGEND, style="dim")
