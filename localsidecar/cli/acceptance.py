"""`localsidecar acceptance` and `localsidecar sweep`: the acceptance lab.

Tables go to stdout (rich), progress and notes to stderr; --json prints one
JSON document and nothing else on stdout. Bad input is a UserError (one line,
exit 2) raised before any model is loaded where possible.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console

from localsidecar.cli import options as opt
from localsidecar.cli.args import InputArgs, ModelArgs, OutputArgs, PromptArgs, ScaleArgs, SpecArgs
from localsidecar.cli.errors import UserError
from localsidecar.cli.options import OptionGroup, grouped, option, stacked
from localsidecar.cli.paths import check_writable
from localsidecar.cli.progress import plural
from localsidecar.decoding.defaults import DEFAULT_MAX_TOKENS
from localsidecar.lab.acceptance import CONDITIONS, MASKED_EMULATION, DocAlpha, SummaryStore
from localsidecar.lab.acceptance_report import few_docs_warning
from localsidecar.lab.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL
from localsidecar.lab.sweep import DEFAULT_DEPTH_CAP, DEFAULT_N_SWEEP, MAX_SWEEP_N, parse_n_list

MAX_RESAMPLES = 1_000_000

COND_HELP = (
    "Comma-separated draft conditions: baseline (no suffix), visible (suffix attended), masked (suffix hidden, "
    "summary shifted by n), rebased (suffix hidden, summary at the target's positions), deferred (= baseline "
    "during the summary)."
)


@dataclass(frozen=True)
class LabArgs(OptionGroup):
    """The teacher-forced measurement of acceptance and sweep: the suffix
    length, the canonical summaries, the bootstrap."""

    n: int | None = option(
        "--n",
        type=click.IntRange(0, MAX_SWEEP_N),
        default=None,
        help="Suffix length in tokens: the hashtag suffix cut or repeated to N tokens [default: its natural length].",
    )
    max_tokens: int = SpecArgs.option_like(
        "max_tokens",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_TOKENS,
        help="Most canonical summary tokens.",
    )
    summaries: str | None = option(
        "--summaries",
        type=click.Path(dir_okay=False),
        default=None,
        help="Canonical summaries cache (JSONL, keyed by target file, prompt tokens and --max-tokens) "
        "[default: MODELS_DIR/summaries/TARGET.jsonl].",
    )
    resamples: int = option(
        "--resamples",
        type=click.IntRange(1000, MAX_RESAMPLES),
        default=DEFAULT_RESAMPLES,
        show_default=True,
        help="Bootstrap resamples over documents.",
    )
    seed: int = SpecArgs.option_like(
        "seed", default=DEFAULT_SEED, help=f"Bootstrap seed (0 to {opt.MAX_SEED})."
    )


# the options of acceptance and sweep, after each one's own
lab_options = stacked(
    ModelArgs.options(),
    LabArgs.options("n"),
    InputArgs.options("max_chars"),
    LabArgs.options("max_tokens", "summaries", "resamples", "seed"),
    PromptArgs.options(
        "instruction", "suffix", "prompts_file", help={"prompts_file": "JSON file with prompt wording."}
    ),
    OutputArgs.options("as_json", help={"as_json": "Print one JSON document on stdout instead of tables."}),
    InputArgs.options("skip_bad", "replace_errors"),
    OutputArgs.options("quiet"),
)


def parse_conditions(text: str) -> list[str]:
    names = [s.strip() for s in str(text).split(",") if s.strip()]
    bad = [s for s in names if s not in CONDITIONS]
    if not names or bad:
        raise UserError(
            f"--conditions: unknown condition {', '.join(map(repr, bad)) or '(none given)'}; choose from {','.join(CONDITIONS)}"
        )
    return [c for c in CONDITIONS if c in names]


class _Setup:
    """Documents, prompts, the model pair and the summaries file of one command run
    (the models themselves are loaded by the workers, only if a document is left)."""

    def __init__(
        self,
        err: Console,
        docs: tuple[str, ...],
        lab: LabArgs,
        model: ModelArgs,
        prompts: PromptArgs,
        inputs: InputArgs,
        writes: list,
    ):
        from localsidecar import backend
        from localsidecar.registry.embedded import models_dir

        backend.set_verbose(model.verbose)
        self.lab = lab
        self.model = model
        self.docs = inputs.load(err, docs, writes=[*writes, lab.summaries]).docs
        self.prompts = prompts.config()
        self.files = model.files()
        self.t_path, self.d_path = self.files.target, self.files.draft
        path = (
            Path(lab.summaries)
            if lab.summaries
            else models_dir(model.models_dir) / "summaries" / f"{self.t_path.stem}.jsonl"
        )
        self.store = SummaryStore(path)
        if self.store.bad_lines:
            err.print(f"note: {plural(self.store.bad_lines, 'unreadable line')} in {path} ignored")

    def job(self, **kw):
        """The per-document LabJob; the workers read the summaries file as it is now."""
        from localsidecar.cli.jobs import LabJob

        return LabJob(
            self.files,
            self.model.engine_config(),
            self.prompts,
            self.model.verbose,
            max_tokens=self.lab.max_tokens,
            n=self.lab.n,
            summaries=self.store.snapshot(),
            summary_origins=self.store.origins(),
            **kw,
        )

    def keep_summaries(self, new) -> None:
        """The driver appends the canonical summaries the workers generated."""
        for key, doc_id, ids, stopped in new:
            self.store.put(key, doc_id, ids, stopped)


@click.command("acceptance")
@click.argument("docs", nargs=-1, required=True)
@click.option("--conditions", default=",".join(CONDITIONS), show_default=True, help=COND_HELP)
@click.option(
    "--save-tokens",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write per document one JSON line with bare_ids, compound_ids, suffix_span, summary_ids.",
)
@click.option(
    "--checks",
    is_flag=True,
    help="Also measure the masked emulation's sensitivity (other emulation: suffix-removed) and llama.cpp's "
    "KV-layout noise (rebased with the suffix cells between prefix and summary): two more draft passes.",
)
@OutputArgs.options("out", "overwrite")
@ScaleArgs.options()
@lab_options
@grouped
def acceptance_cmd(
    docs: tuple[str, ...],
    conditions: str,
    save_tokens: str | None,
    checks: bool,
    output: OutputArgs,
    scale: ScaleArgs,
    model: ModelArgs,
    lab: LabArgs,
    inputs: InputArgs,
    prompts: PromptArgs,
) -> None:
    """Teacher-forced acceptance rate α of the draft under each condition, along
    the target's greedy summary of DOCS, with the decomposition into position
    effect and content leak (bootstrap CIs over documents)."""
    from localsidecar.cli.resumable import run_resumable
    from localsidecar.io.atomic import AppendedJsonl, ReplacedJsonl
    from localsidecar.io.results import model_identity
    from localsidecar.lab.acceptance_report import doc_from_record

    output.check(
        docs,
        model,
        prompts.inputs(),
        writes={"--save-tokens": save_tokens, "--summaries": lab.summaries},
    )
    names = parse_conditions(conditions)
    executors = scale.scale(model)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    s = _Setup(err, docs, lab, model, prompts, inputs, writes=[output.out, save_tokens])
    config = {
        "target": model_identity(s.t_path),
        "draft": model_identity(s.d_path),
        "conditions": names,
        "n": lab.n,
        "prompts": vars(s.prompts),
        "max_chars": inputs.max_chars,
        "max_tokens": lab.max_tokens,
        "checks": checks,
    }
    new: list[dict] = []  # records of the documents evaluated now
    with run_resumable(
        err,
        out=output.out,
        config=config,
        overwrite=output.overwrite,
        quiet=output.quiet,
        describe=_describe_record,
    ) as run:
        done = _done_records(run.records(), doc_from_record)
        todo = run.pending(s.docs, done_ids=done)
        # with --out, --save-tokens grows with it (consistent after any kill); without, it is replaced whole
        tokens_cls = AppendedJsonl if output.out else ReplacedJsonl
        with tokens_cls(save_tokens, keep_ids=done) if save_tokens else nullcontext() as tokens_file:
            for note in getattr(tokens_file, "notes", []):
                err.print(f"note: {note}")

            def on_doc(doc, res: dict) -> None:
                if tokens_file:
                    tokens_file.write(res["tokens"])
                s.keep_summaries(res["summaries"])
                run.save(res["doc"])
                new.append(res["doc"])

            job = s.job(conditions=names, checks=checks, save_tokens=tokens_file is not None)
            run.drive(todo, lambda n: executors.executor(job, n), on_doc)
        _print_acceptance(s, names, done, new, checks=checks, as_json=output.as_json)


def _describe_record(res: dict) -> dict:
    """Progress details of one document: summary tokens and its first condition's α."""
    rec = res["doc"]
    first = next(iter(rec["alpha"]), None)  # baseline unless --conditions leaves it out
    alpha = rec["alpha"].get(first) if first else None
    return dict(tokens=rec["summary_tokens"], detail=f"α {first} {alpha:.2f}" if alpha is not None else "")


def _print_acceptance(
    s: _Setup,
    conditions: list[str],
    done: dict[str, DocAlpha],
    new: list[dict],
    *,
    checks: bool,
    as_json: bool,
) -> None:
    """Aggregate the resumed and the new records over the documents, in input order."""
    from localsidecar.lab.acceptance_report import doc_from_record, print_acceptance, summarize

    by_id = {r["id"]: doc_from_record(r) for r in new} | done
    docs = [by_id[d.id] for d in s.docs if d.id in by_id]
    res = summarize(
        docs,
        conditions,
        target=str(s.t_path),
        draft=str(s.d_path),
        n_resamples=s.lab.resamples,
        seed=s.lab.seed,
        checks=checks,
    )
    generated = sum(not r["summary_cached"] for r in new)
    res["summaries"] = {"generated": generated, "cached": len(new) - generated}
    if as_json:
        click.echo(json.dumps(res, ensure_ascii=False))
    else:
        print_acceptance(opt.table_console(), res)


def _done_records(records: list[dict], parse) -> dict[str, DocAlpha]:
    """Documents already in --out under this configuration (none after --overwrite)."""
    out = {}
    for rec in records:
        try:
            out[rec["id"]] = parse(rec)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a record this version cannot read: the document is run again
    return out


@click.command("sweep")
@click.argument("docs", nargs=-1, required=True)
@click.option(
    "--n-sweep",
    default=DEFAULT_N_SWEEP,
    show_default=True,
    help="Hidden suffix lengths (tokens) to measure masked α at.",
)
@click.option(
    "--depth-cap",
    type=click.IntRange(min=1, max=4096),
    default=DEFAULT_DEPTH_CAP,
    show_default=True,
    help="Depth profile over the first this many summary positions.",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="Folder for nsweep.csv, depth.csv and the plots.",
)
@click.option("--no-plots", is_flag=True, help="Write the CSVs only, even if matplotlib is installed.")
@lab_options
@grouped
def sweep_cmd(
    docs: tuple[str, ...],
    n_sweep: str,
    depth_cap: int,
    out_dir: str,
    no_plots: bool,
    model: ModelArgs,
    lab: LabArgs,
    inputs: InputArgs,
    prompts: PromptArgs,
    output: OutputArgs,
) -> None:
    """Masked α as a function of the hidden suffix length n (no filler tokens are
    decoded: only n matters), and the depth profile of the position and total
    effects along the summary. Writes nsweep.csv and depth.csv (+ PNGs)."""
    from localsidecar.cli.resumable import SERIAL, run_resumable
    from localsidecar.lab import plots
    from localsidecar.lab.sweep import DEPTH_COLUMNS, NSWEEP_COLUMNS, depth_rows, nsweep_rows, write_csv

    ns = parse_n_list(n_sweep)
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out-dir {folder} is not a folder")
    out_files = {f"--out-dir ({name})": folder / name for name in SWEEP_FILES}
    output.check(docs, model, prompts.inputs(), writes={"--summaries": lab.summaries, **out_files})
    check_writable({}, folders={"--out-dir": out_dir})  # the name as given: Path("") would be "."
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    s = _Setup(err, docs, lab, model, prompts, inputs, writes=list(out_files.values()))
    results: list[DocAlpha] = []
    n_real: list[int] = []
    with run_resumable(err, quiet=output.quiet, describe=lambda res: dict(tokens=res["doc"].S)) as run:

        def on_doc(doc, res: dict) -> None:
            s.keep_summaries(res["summaries"])
            results.append(res["doc"])
            n_real.append(res["n"])

        job = s.job(sweep_ns=ns)
        run.drive(s.docs, lambda n: SERIAL.executor(job, n), on_doc)
    real = n_real[0]
    all_ns = sorted(set(ns) | {real})
    kw = {"n_resamples": lab.resamples, "seed": lab.seed}
    nrows = nsweep_rows(results, all_ns, real, **kw)
    drows = depth_rows(results, real, depth_cap, **kw)
    files = [
        write_csv(folder / "nsweep.csv", nrows, NSWEEP_COLUMNS),
        write_csv(folder / "depth.csv", drows, DEPTH_COLUMNS),
    ]
    if not no_plots and plots.available() and drows:
        title = f"target {s.t_path.name}, draft {s.d_path.name}: {plural(len(results), 'document')}, {nrows[0]['tokens']} summary tokens"
        warning = few_docs_warning(len(results), LEVEL)
        files += [
            plots.plot_nsweep(nrows, folder / "nsweep.png", title, warning),
            plots.plot_depth(drows, folder / "depth.png", title, warning),
        ]
    elif not no_plots and not plots.available():
        err.print(
            "note: matplotlib is not installed (pip install 'localsidecar[plot]', in a clone "
            "pip install '.[plot]'): CSVs only"
        )
    res = {
        "target": str(s.t_path),
        "draft": str(s.d_path),
        "n_docs": len(results),
        "suffix_tokens": real,
        "masked_emulation": MASKED_EMULATION,
        "nsweep": nrows,
        "depth": drows,
        "files": [str(f) for f in files],
        "warnings": [w] if (w := few_docs_warning(len(results), LEVEL)) else [],
    }
    if output.as_json:
        click.echo(json.dumps(res, ensure_ascii=False))
        return
    _print_sweep(opt.table_console(), res)


SWEEP_FILES = ("nsweep.csv", "depth.csv", "nsweep.png", "depth.png")


def _print_sweep(console: Console, res: dict) -> None:
    from rich import box
    from rich.table import Table

    from localsidecar.io.formatting import alpha_cell as f

    def table(title: str) -> Table:
        return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)

    docs = f"{res['n_docs']} document{'' if res['n_docs'] == 1 else 's'}"
    t = table(
        f"Masked α vs hidden suffix length ({docs}; the prompt's own suffix: n = {res['suffix_tokens']})"
    )
    for col in ("n", "α masked", "95% CI", "α baseline − α masked", "95% CI "):
        t.add_column(col, justify="right", no_wrap=col != "α baseline − α masked")  # numbers whole
    for r in res["nsweep"]:
        t.add_row(
            f"{r['suffix_tokens']}{' (real)' if r['is_real'] else ''}",
            f(r["alpha_masked"]),
            f"[{f(r['alpha_masked_lo'])}, {f(r['alpha_masked_hi'])}]",
            f(r["position_cost"], True),
            f"[{f(r['position_cost_lo'], True)}, {f(r['position_cost_hi'], True)}]",
        )
    console.print(t)
    for w in res["warnings"]:
        console.print(w, highlight=False, markup=False)
    d = table("Depth profile (Δα at summary position t, mean over documents reaching t)")
    for col in ("t", "docs", "baseline − masked", "95% CI", "baseline − visible", "95% CI "):
        d.add_column(col, justify="right", no_wrap=not col.startswith("baseline"))  # numbers whole
    for r in res["depth"]:
        d.add_row(
            str(r["t"]),
            str(r["n_docs"]),
            f(r["position"], True),
            f"[{f(r['position_lo'], True)}, {f(r['position_hi'], True)}]",
            f(r["total"], True),
            f"[{f(r['total_lo'], True)}, {f(r['total_hi'], True)}]",
        )
    console.print(d)
    console.print("wrote " + ", ".join(res["files"]), highlight=False, markup=False)
