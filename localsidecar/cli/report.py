"""Records for programs (JSON) and tables for people (rich, stdout)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localsidecar.decoding.engine import TARGET_ONLY, DocResult
from localsidecar.decoding.layouts import Mode
from localsidecar.io.formatting import cell as _fmt
from localsidecar.io.formatting import rounded as _round

NO_HASHTAGS = (Mode.BASELINE, TARGET_ONLY)  # modes whose records have no hashtag phase


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def run_record(r: DocResult, target: str, draft: str | None) -> dict[str, Any]:
    """The `--json` / `--out` record of one document (keys are a public API)."""
    g, s = r.gen, r.gen.stats
    n = len(g.tokens)
    tps = _ratio(n, g.gen_s)
    rec: dict[str, Any] = {
        "id": r.id,
        "mode": r.mode,
        "summary": r.summary,
        "summary_complete": r.summary_complete,
        "hashtags": r.hashtags.tags if r.hashtags else [],
        "hashtags_raw": r.hashtags.raw if r.hashtags else "",
        "hashtags_valid_json": r.hashtags.valid_json if r.hashtags else None,
        "hashtags_note": r.hashtags.note or None if r.hashtags else None,
        "alpha": _round(s.alpha, 6),
        "acceptance_rate": _round(s.acceptance_rate, 6),
        "drafted": s.n_drafted,
        "accepted": s.n_accept,
        "rounds": s.rounds,
        "target_calls": s.target_calls,
        "mean_tokens_per_call": _round(_ratio(n, s.rounds), 4),
        "k_mean": _round(s.k_mean, 4),
        "k_hist": {str(k): c for k, c in sorted(s.k_hist.items())},
        "draft_ms_per_token": _round(s.draft_ms_per_token, 3),
        "verify_ms": {str(b): round(ms, 3) for b, ms in s.verify_ms().items()},
        "summary_tokens": n,
        "stopped": g.stopped,
        "tokens_per_s": _round(tps, 3),
        "prefill_s": _round(g.prefill_s),
        "gen_s": _round(g.gen_s),
        "draft_s": _round(s.draft_s),
        "verify_s": _round(s.verify_s),
        "wall_s": _round(r.wall_s),
        "hashtag_tokens": r.hashtags.tokens if r.hashtags else 0,
        "hashtag_wall_s": _round(r.hashtags.wall_s) if r.hashtags else 0.0,
        "target": target,
        "draft": draft,
        "prompt_tokens": len(r.prompt.bare),
        "suffix_tokens": len(r.prompt.suffix),
        "prompt_ids": r.prompt.bare,
        "summary_ids": g.tokens,
    }
    if r.baseline is not None:
        b = r.baseline
        base_tps = _ratio(len(b.tokens), b.gen_s)
        rec["target_only_tokens_per_s"] = _round(base_tps, 3)
        rec["speedup"] = _round(_ratio(tps or 0.0, base_tps or 0.0), 4)
        rec["target_only_summary_ids"] = b.tokens
    return rec


def _hist(h: dict[str, int]) -> str:
    return " ".join(f"{k}:{n}" for k, n in h.items()) or "-"


STOPPED = {"eog": "the model ended it", "sentence": "stopped at a sentence end", "max_tokens": "cut at --max-tokens"}


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f} s"


def _time_rows(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """Prompt processing, summary, hashtags (and the rest) add up to the wall time."""
    parts = [("prompt processing", rec["prefill_s"] or 0.0), ("summary", rec["gen_s"] or 0.0)]
    if rec["mode"] not in NO_HASHTAGS:
        parts.append(("hashtags", rec["hashtag_wall_s"] or 0.0))
    other = (rec["wall_s"] or 0.0) - sum(x for _, x in parts)
    if other >= 0.005:
        parts.append(("other (tokenizing, checks)", other))
    return [(f"{name} time", _s(x)) for name, x in parts] + [("wall time", _s(rec["wall_s"]))]


def print_run(console: Console, rec: dict[str, Any]) -> None:
    """Summary, hashtags and a small stats table for one document."""
    console.rule(f"[bold]{escape(rec['id'])}[/bold]  ({rec['mode']})")
    console.print(escape(rec["summary"]) or "[dim](empty summary)[/dim]", highlight=False)
    if not rec["summary_complete"] and rec["summary"]:
        console.print("[dim](no complete sentence: shown as written)[/dim]")
    if rec["mode"] not in NO_HASHTAGS:
        none = f"(none: {rec['hashtags_note']})" if rec.get("hashtags_note") else "(none)"
        tags = escape(" ".join(rec["hashtags"])) or f"[dim]{escape(none)}[/dim]"
        console.print(f"\n[bold]Hashtags:[/bold] {tags}", highlight=False)
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="dim")
    t.add_column(justify="right")
    n = rec["summary_tokens"]
    rows = [
        ("online alpha", _fmt(rec["alpha"])),
        ("acceptance rate", _fmt(rec["acceptance_rate"])),
        ("drafted / accepted", f"{rec['drafted']} / {rec['accepted']}"),
        ("tokens per round", _fmt(rec["mean_tokens_per_call"])),
        ("rounds / target calls", f"{rec['rounds']} / {rec['target_calls']}"),
        ("draft length k: mean (rounds by k)", f"{_fmt(rec['k_mean'])} ({_hist(rec['k_hist'])})"),
        ("draft ms/token", _fmt(rec["draft_ms_per_token"])),
        ("verify ms by batch size", " ".join(f"{b}:{ms:.1f}" for b, ms in rec["verify_ms"].items()) or "-"),
        ("summary tokens", f"{n} ({STOPPED.get(rec['stopped'], rec['stopped'])})"),
        ("summary tokens/s", _fmt(rec["tokens_per_s"])),
    ]
    if rec["mode"] not in NO_HASHTAGS:
        rows.append(("hashtag tokens", str(rec["hashtag_tokens"])))
    rows += _time_rows(rec)
    if "speedup" in rec:
        rows += [("target-only tokens/s", _fmt(rec["target_only_tokens_per_s"])), ("speedup", _fmt(rec["speedup"]))]
    for k, v in rows:
        t.add_row(k, v)
    console.print(t)


def print_totals(console: Console, recs: list[dict[str, Any]]) -> None:
    """Token-weighted totals over several documents."""
    drafted = sum(r["drafted"] for r in recs)
    accepted = sum(r["accepted"] for r in recs)
    tokens = sum(r["summary_tokens"] for r in recs)
    gen_s = sum(r["gen_s"] or 0 for r in recs)
    complete = sum(bool(r.get("summary_complete")) for r in recs)
    t = Table(title=f"{len(recs)} documents", show_header=False, box=None)
    t.add_column(style="dim")
    t.add_column(justify="right")
    t.add_row("acceptance rate", _fmt(_ratio(accepted, drafted)))
    t.add_row("summary tokens", str(tokens))
    t.add_row("summary tokens/s", _fmt(_ratio(tokens, gen_s)))
    t.add_row("summaries ending on a sentence", f"{complete} of {len(recs)}")
    console.print(t)
