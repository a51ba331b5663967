"""`localsidecar quant`: compare quantizations of the draft (or the target).

A rich table on stdout for people; --json (one document on stdout), --csv FILE
and --out FILE (resumable JSONL, one record per variant) for programs; --plot
FILE.png (matplotlib, optional) of α against file size. Progress on stderr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import click
from rich.console import Console

from localsidecar.cli import options as opt
from localsidecar.cli.args import InputArgs, ModelArgs, OutputArgs, PromptArgs, SpecArgs
from localsidecar.cli.errors import UserError
from localsidecar.cli.options import grouped
from localsidecar.cli.progress import Progress, plural
from localsidecar.decoding.defaults import DEFAULT_MAX_TOKENS
from localsidecar.lab.quant import (
    DEFAULT_ALPHA_MARGIN,
    DEFAULT_QUANTS,
    LOOP_MODE,
    finish_rows,
    parse_quants,
    upgrade_row,
)

Vary = Literal["draft", "target"]  # which model of the pair has the variants
VARIES = get_args(Vary)
CSV_COLUMNS = (
    "rank",
    "recommended",
    "quant",
    "label",
    "fell_back",
    "size_bytes",
    "bits_per_weight",
    "alpha",
    "kl",
    "top1",
    "acceptance_rate",
    "mean_tokens_per_call",
    "draft_ms_per_token",
    "tokens_per_s",
    "target_only_tokens_per_s",
    "speedup",
    "hashtag_jaccard",
    "within_margin",
    "summary_tokens",
    "path",
)


def plan_models(model: ModelArgs, vary: Vary) -> tuple[Path, Path | None, Path]:
    """(target, fixed draft or None, source of the variants).

    --vary draft: variants of the draft given with --draft (or the pair's
    draft), derived from the target when the draft is the target model itself
    (the embedded pair, or --target alone). --vary target: variants of the
    target, the draft fixed (required)."""
    from localsidecar.registry.models import DEFAULT_PAIR, load_registry, resolve_models

    t, d = resolve_models(
        pair=model.pair,
        target=model.target,
        draft=model.draft,
        models_dir=model.models_dir,
        require_draft=False,
    )
    if vary == "target":
        if d is None:
            raise UserError("--vary target needs a fixed draft: give --draft (or --pair NAME)")
        return t, d, t
    if model.draft is None:
        name = model.pair or (DEFAULT_PAIR if model.target is None else None)
        if name is None:
            return t, None, t
        spec = load_registry().pair(name)
        if spec.draft.name == spec.target.name:
            return t, None, t
    return t, None, d


@click.command("quant")
@click.argument("docs", nargs=-1, required=True)
@click.option(
    "--quants",
    default=DEFAULT_QUANTS,
    show_default=True,
    help="Comma-separated llama.cpp quantizations to compare.",
)
@click.option(
    "--vary",
    type=click.Choice(VARIES),
    default="draft",
    show_default=True,
    help="draft: target fixed, one row per draft quantization; target: draft fixed, one row per target "
    "quantization (α then compares each variant target, with its own canonical summaries, to the fixed draft).",
)
@click.option(
    "--alpha-margin",
    type=opt.FiniteFloatRange(0.0, 1.0),
    default=DEFAULT_ALPHA_MARGIN,
    show_default=True,
    help="Recommend the fastest variant whose α is at least (best α - margin).",
)
@SpecArgs.options(
    "max_tokens",
    help={"max_tokens": f"Most summary tokens (free summaries; auto: {DEFAULT_MAX_TOKENS})."},
    defaults={"max_tokens": DEFAULT_MAX_TOKENS},
)
@InputArgs.options("max_chars")
@SpecArgs.options("draft_max", "draft_max_cap", "numbers")
@click.option(
    "--no-loop",
    is_flag=True,
    help="Teacher-forced α/KL/top-1 only: skip the real speculative loop (speed, acceptance, hashtags).",
)
@PromptArgs.options("prompts_file", help={"prompts_file": "JSON file with prompt wording."})
@OutputArgs.options(
    "as_json",
    "csv_file",
    "plot_file",
    "out",
    "overwrite",
    help={
        "as_json": "Print one JSON document on stdout instead of the table.",
        "csv_file": "Write the rows, in table order, to this CSV file.",
        "plot_file": "Write a PNG of α against file size (needs matplotlib).",
    },
)
@InputArgs.options("skip_bad", "replace_errors")
@OutputArgs.options("quiet")
@ModelArgs.options()
@grouped
def quant_cmd(
    docs: tuple[str, ...],
    quants: str,
    vary: Vary,
    alpha_margin: float,
    spec: SpecArgs,
    inputs: InputArgs,
    no_loop: bool,
    prompts: PromptArgs,
    output: OutputArgs,
    model: ModelArgs,
) -> None:
    """Compare quantizations of the draft (or target) on DOCS: α, KL and top-1
    agreement with the target, acceptance and speed in the real loop, hashtag
    agreement. Variants are derived with llama.cpp's quantizer and cached in
    MODELS_DIR/quant/<source>-<hash>/."""
    from localsidecar import backend
    from localsidecar.cli.resumable import run_resumable, skipped_line

    output.check(docs, model, prompts.inputs())
    names = parse_quants(quants)  # bad --quants fail before anything is loaded
    if output.plot_file:
        from localsidecar.lab import plots

        if not plots.available():
            raise UserError(
                "--plot needs matplotlib: pip install 'localsidecar[plot]' (in a clone: pip install '.[plot]')"
            )
    backend.set_verbose(model.verbose)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    loaded = inputs.load(err, docs, writes=output.files().values())
    plan = QuantPlan.make(model, vary)
    prompt_config = prompts.config()
    config = {
        **plan.identity(),
        "docs": [d.id for d in loaded.docs],
        "max_chars": inputs.max_chars,
        "max_tokens": spec.config().max_tokens,
        "draft_max": spec.draft_max,
        "draft_max_cap": spec.draft_max_cap,
        "numbers": spec.numbers,
        "loop": not no_loop,
        "mode": LOOP_MODE,
        "prompts": vars(prompt_config),
    }
    with run_resumable(
        err, out=output.out, config=config, overwrite=output.overwrite, what="variants"
    ) as run:
        done = {r["id"]: upgrade_row(r) for r in run.records() if r.get("quant") == r["id"] and "alpha" in r}
        todo = run.pending(names, done_ids=done, key=str, verb="reusing")
        rows = plan.measure(
            run,
            todo,
            loaded.docs,
            model.engine_config(),
            prompt_config,
            spec.config(),
            loop=not no_loop,
            threads=model.threads,
            quiet=output.quiet,
        )
    by_quant = {r["quant"]: r for r in rows} | {
        q: {k: v for k, v in r.items() if k not in ("id", "config")} for q, r in done.items()
    }
    ordered = finish_rows([by_quant[q] for q in names if q in by_quant], alpha_margin)
    if plan.skipped:
        err.print(skipped_line(len(plan.skipped), len(loaded.docs)))
    res = plan.result(
        ordered,
        n_docs=len(loaded.docs) - len(plan.skipped),
        max_tokens=spec.config().max_tokens,
        alpha_margin=alpha_margin,
        loop=not no_loop,
        numbers=spec.numbers,
    )
    if output.csv_file:
        write_csv(Path(output.csv_file), ordered)
    if output.plot_file:
        plot_alpha_size(
            ordered,
            Path(output.plot_file),
            f"{vary} variants of {plan.source.name} ({plural(len(loaded.docs), 'document')})",
        )
    if output.as_json:
        click.echo(json.dumps(res, ensure_ascii=False))
    else:
        print_quant(opt.table_console(), res)


def _any_faster(rows: list[dict]) -> bool | None:
    """Does any variant beat target-only end to end? None when the loop did not
    run or no variant drafted enough for its speedup to mean something."""
    from localsidecar.lab.quant import speed_meaningful

    speedups = [r["speedup"] for r in rows if r.get("speedup") is not None and speed_meaningful(r)]
    return any(x > 1 for x in speedups) if speedups else None


@dataclass
class QuantPlan:
    """Which model is varied, which stays, where the variants are cached."""

    vary: Vary
    target: Path
    fixed_draft: Path | None
    source: Path
    models_dir: Path
    folder: Path
    skipped: list[str] = field(default_factory=list)  # ids of documents past the models' context

    @classmethod
    def make(cls, model: ModelArgs, vary: Vary) -> QuantPlan:
        from localsidecar.lab.quant import variants_dir
        from localsidecar.registry.embedded import models_dir as resolve_models_dir

        t_path, d_fixed, source = plan_models(model, vary)
        mdir = resolve_models_dir(model.models_dir)
        return cls(vary, t_path, d_fixed, source, mdir, variants_dir(source, mdir))

    def identity(self) -> dict:
        from localsidecar.lab.acceptance import file_identity

        return {
            "vary": self.vary,
            "target": file_identity(self.target),
            "draft": file_identity(self.fixed_draft) if self.fixed_draft else None,
            "source": file_identity(self.source),
        }

    def measure(
        self,
        run,
        todo: list[str],
        docs,
        engine_cfg,
        prompts,
        spec,
        *,
        loop: bool,
        threads,
        quiet: bool = False,
    ) -> list[dict]:
        """Derive the variants left to do and score them; each row is saved as it comes."""
        from localsidecar.backend.gguf import gguf_info
        from localsidecar.lab.acceptance import SummaryStore
        from localsidecar.lab.quant import compare, make_variant

        if not todo:
            return []
        for p in dict.fromkeys([self.target, self.source, *([self.fixed_draft] if self.fixed_draft else [])]):
            gguf_info(p)  # a broken model file fails here with one line, before any progress
        run.err.print(f"{self.vary} variants of {self.source.name}, cached in {self.folder}")
        variants = []
        for q in todo:
            run.guard.check()
            v = make_variant(self.source, q, self.folder, threads)
            how = (
                "the source file itself"
                if v.from_source
                else (f"derived in {v.derive_s:.1f}s" if v.derive_s else "cached")
            )
            run.err.print(
                f"  {v.label}: {v.size_bytes / 1e6:.1f} MB, {v.bits_per_weight:.2f} bits/weight ({how})"
            )
            variants.append(v)

        progress = Progress(run.err, len(variants), quiet=quiet, what="variants")

        def on_row(r: dict) -> None:
            run.save({**r, "id": r["quant"]})
            run.mark_completed()
            tps = r["tokens_per_s"]
            progress.done(r["label"], alpha=r["alpha"], detail=f"{tps:.1f} tok/s" if tps is not None else "")
            run.guard.check()  # Ctrl-C / SIGTERM: stop after the variant just finished

        store = SummaryStore(
            self.models_dir
            / "summaries"
            / f"{self.source.stem if self.vary == 'target' else self.target.stem}.jsonl"
        )
        with progress:
            return compare(
                self.vary,
                self.target,
                self.fixed_draft,
                variants,
                docs,
                engine_cfg,
                prompts,
                spec=spec,
                loop=loop,
                summaries=store,
                spill_dir=self.models_dir / "quant",
                log=run.err.print,
                on_row=on_row,
                on_skip=self._skip(run.err, len(docs)),
            )

    def _skip(self, err: Console, total: int):
        from localsidecar.cli.resumable import skipped_line

        def on_skip(doc_id: str, reason: str) -> None:
            self.skipped.append(doc_id)
            err.print(f"skipped: {reason}")
            if len(self.skipped) == total:
                raise UserError(f"{skipped_line(total, total)}; nothing was run")

        return on_skip

    def result(
        self,
        ordered: list[dict],
        *,
        n_docs: int,
        max_tokens: int,
        alpha_margin: float,
        loop: bool,
        numbers: str,
    ) -> dict:
        """The --json document."""
        return {
            "vary": self.vary,
            "target": str(self.target),
            "draft": str(self.fixed_draft) if self.fixed_draft else None,
            "source": str(self.source),
            "variants_dir": str(self.folder),
            "n_docs": n_docs,
            "max_tokens": max_tokens,
            "numbers": numbers,
            "alpha_margin": alpha_margin,
            "loop_mode": LOOP_MODE if loop else None,
            "best_alpha": max((r["alpha"] for r in ordered if r["alpha"] is not None), default=None),
            "recommended": next((r["quant"] for r in ordered if r["recommended"]), None),
            "rows": ordered,
            "faster_than_target_only": _any_faster(ordered),
        }


def write_csv(path: Path, rows: list[dict]) -> Path:
    from localsidecar.io import atomic

    return atomic.write_csv(path, CSV_COLUMNS, ({**r, "rank": i} for i, r in enumerate(rows, 1)))


def plot_alpha_size(rows: list[dict], path: Path, title: str) -> Path:
    from localsidecar.lab import plots
    from localsidecar.lab.plots import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    for r in rows:
        if r["alpha"] is None:
            continue
        x = r["size_bytes"] / 1e6
        ax.plot(
            x,
            r["alpha"],
            "*" if r["recommended"] else "o",
            ms=14 if r["recommended"] else 7,
            color="tab:green" if r["within_margin"] else "tab:gray",
        )
        ax.annotate(" " + r["label"], (x, r["alpha"]), fontsize=8)
    ax.margins(x=0.2, y=0.1)  # room for the labels
    ax.set_xlabel("file size (MB)")
    ax.set_ylabel("teacher-forced α vs the target")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    try:
        plots.save(fig, path)
    finally:
        plt.close(fig)
    return path


# the columns a narrow terminal leaves out, first ones first (the ★, quant, α and speedup stay)
QUANT_DROP = ("draft t/s", "bits/w", "top-1", "tok/call", "KL", "tags J", "MB", "accept", "tok/s")


def print_quant(console: Console, res: dict) -> None:
    from rich import box
    from rich.markup import escape

    from localsidecar.decoding.speculative import FEW_DRAFTED
    from localsidecar.io.formatting import cell
    from localsidecar.io.tables import print_fitted
    from localsidecar.lab.quant import speed_meaningful

    role = "draft" if res["vary"] == "draft" else "target"
    headers = ("", "quant", "MB", "bits/w", "α", "KL", "top-1", "accept", "tok/call", "draft t/s", "tok/s")
    columns = [
        (h, {"justify": "left" if h in ("", "quant") else "right", "no_wrap": True})
        for h in (*headers, "speedup", "tags J")
    ]
    fell_back = {}
    noise = [r for r in res["rows"] if r["speedup"] is not None and not speed_meaningful(r)]
    rows = []
    for r in res["rows"]:
        name = r["quant"] if r["label"] == r["quant"] else f"{r['quant']}*"
        if name != r["label"]:
            fell_back[name] = r["label"]
        rows.append(
            (
                "★" if r["recommended"] else ("" if r["within_margin"] else "·"),
                name,
                cell(r["size_bytes"] / 1e6, ".1f"),
                cell(r["bits_per_weight"], ".2f"),
                cell(r["alpha"], ".4f"),
                cell(r["kl"], ".4f"),
                cell(r["top1"], ".3f"),
                cell(r["acceptance_rate"], ".3f")
                + ("†" if r.get("few_drafted") and r["acceptance_rate"] is not None else ""),
                cell(r["mean_tokens_per_call"], ".2f"),
                cell(1000 / r["draft_ms_per_token"] if r["draft_ms_per_token"] else None, ".1f"),
                cell(r["tokens_per_s"], ".1f"),
                cell(r["speedup"], ".2f", unit="×") + ("‡" if r in noise else ""),
                cell(r["hashtag_jaccard"], ".2f"),
            )
        )
    print_fitted(
        console,
        columns,
        rows,
        QUANT_DROP,
        title=f"{role.capitalize()} quantizations of {escape(Path(res['source']).name)} "
        f"({plural(res['n_docs'], 'document')}, up to {res['max_tokens']} summary tokens)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=0,
    )
    few = [
        f"{r['label']} {r['drafted']}"
        for r in res["rows"]
        if r.get("few_drafted") and r["acceptance_rate"] is not None
    ]
    if few:
        console.print(
            f"† accept over fewer than {FEW_DRAFTED} drafted tokens (too few to mean much): "
            + ", ".join(few),
            highlight=False,
            markup=False,
        )
    if noise:
        console.print(
            "‡ not meaningful: the draft hardly ran ("
            + ", ".join(f"{r['label']} {r.get('drafted', 0)} drafted" for r in noise)
            + "), so the loop and target-only did the same work and the speedup is load noise",
            highlight=False,
            markup=False,
        )
    for name, label in fell_back.items():
        console.print(f"{name} {label[len(name) - 1 :].strip()}", highlight=False, markup=False)
    base = res["rows"][0]["target_only_tokens_per_s"] if res["rows"] else None
    target_only = f". Target-only: {base:.1f} tok/s." if base else ". (--no-loop: ranked by file size)"
    if res["recommended"] is None and noise:
        console.print(
            f"★ none: no variant with α ≥ best α ({cell(res['best_alpha'], '.4f')}) − {res['alpha_margin']} "
            f"drafted enough for its speed to mean something (ranked by file size); · outside that margin"
            f"{target_only}",
            highlight=False,
        )
    else:
        console.print(
            f"★ recommended: {res['recommended']} — the fastest end to end among variants with α ≥ best α "
            f"({cell(res['best_alpha'], '.4f')}) − {res['alpha_margin']}; · outside that margin{target_only}",
            highlight=False,
        )
    if res.get("faster_than_target_only") is False:
        best = max(r["speedup"] for r in res["rows"] if r["speedup"] is not None and speed_meaningful(r))
        console.print(
            f"No variant is faster than target-only on this machine (best {best:.2f}×): speculation with "
            f"these drafts costs time here, so ★ only marks the least slow one; summarize without a draft "
            f"(run --mode target-only) unless the target runs where verifying a batch is cheap (a GPU).",
            highlight=False,
            markup=False,
        )
    console.print(
        f"α, KL(p‖q) in nats, top-1: teacher-forced along the target's greedy summaries; accept, tok/call, tok/s: "
        f"the real loop ({res['loop_mode'] or 'not run'}); tags J: hashtag Jaccard vs the best-α variant. "
        f"Variants cached in {res['variants_dir']}",
        highlight=False,
    )
