"""Records for programs (JSON) and tables for people (rich, stdout)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localsidecar.decoding.engine import TARGET_ONLY, DocResult
from localsidecar.decoding.layouts import Mode
from localsidecar.decoding.speculative import FEW_DRAFTED
from localsidecar.io.formatting import cell as _fmt
from localsidecar.io.formatting import rounded as _round
from localsidecar.io.formatting import shown

NO_HASHTAGS = (Mode.BASELINE, TARGET_ONLY)  # modes whose records have no hashtag phase


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def _compare_fields(r: DocResult) -> dict[str, Any]:
    """Speedup of the paired, interleaved --compare runs: the median of the
    pairs' ratios, their range and count; meaningful only when the draft ran."""
    s = r.gen.stats
    ratios = [a / b for a, b in r.compare_pairs if b > 0]
    return {
        "target_only_tokens_per_s": _round(
            _median([b for _, b in r.compare_pairs]) if r.compare_pairs else None, 3
        ),
        "speedup": _round(_median(ratios) if ratios else None, 4),
        "speedup_range": [_round(min(ratios), 4), _round(max(ratios), 4)] if ratios else None,
        "speedup_pairs": len(ratios),
        "speedup_meaningful": bool(ratios) and s.speedup_meaningful,
    }


def _extract_fields(r: DocResult) -> dict[str, Any]:
    """An extract summary: where its text is in the document, and the choices made."""
    from localsidecar.summary.candidates import summary_spans

    ex = r.extract
    return {
        "summary_spans": summary_spans(ex.chosen, ex.shown),
        "choices": ex.stats.choices,
        "choices_drafted": ex.stats.drafted,
        "choices_accepted": ex.stats.accepted,
        "candidate_tokens": ex.stats.scored_tokens,
    }


def run_record(r: DocResult, target: str, draft: str | None) -> dict[str, Any]:
    """The `--json` / `--out` record of one document (keys are a public API)."""
    g, s = r.gen, r.gen.stats
    n = len(g.tokens)
    tps = _ratio(n, g.gen_s)
    rec: dict[str, Any] = {
        "id": r.id,
        "mode": r.mode,
        "summary_mode": r.summary_mode,
        "summary": r.summary,
        "summary_complete": r.summary_complete,
        "unsupported": [u.as_record() for u in r.unsupported] if r.unsupported is not None else None,
        "numbers": r.numbers,
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
        "draft_catchup_s": _round(s.catchup_s),
        "draft_catchup_tokens": s.catchup_tokens,
        "few_drafted": s.few_drafted,
        "no_draft_reason": r.no_draft_reason,
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
        "threads": r.threads,
        "cost_table": r.cost_table,
    }
    if r.extract is not None:
        rec.update(_extract_fields(r))
    if r.baseline is not None:
        rec.update(_compare_fields(r))
        rec["target_only_summary_ids"] = r.baseline.tokens
    return rec


def _hist(h: dict[str, int]) -> str:
    return " ".join(f"{k}:{n}" for k, n in h.items()) or "-"


STOPPED = {
    "eog": "the model ended it",
    "sentence": "stopped at a sentence end",
    "repeat": "stopped at a repeated sentence, dropped",
    "max_tokens": "cut at --max-tokens",
    "length": "long enough",
    "sentences": "the most sentences an extract takes",
    "candidates": "no sentence of the document left to choose",
}


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f} s"


def _time_rows(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """Prompt processing, summary, hashtags (and the rest) add up to the wall time."""
    parts = [("prompt processing", rec["prefill_s"] or 0.0), ("summary", rec["gen_s"] or 0.0)]
    if rec["mode"] not in NO_HASHTAGS:
        parts.append(("hashtags", rec["hashtag_wall_s"] or 0.0))
    parts.append(("other (tokenizing, checks)", max(0.0, (rec["wall_s"] or 0.0) - sum(x for _, x in parts))))
    return [(f"{name} time", _s(x)) for name, x in parts] + [("wall time", _s(rec["wall_s"]))]


def _few(rec: dict[str, Any], value: str) -> str:
    """A rate over drafted tokens, marked when there were too few of them."""
    few = rec.get("few_drafted", rec["drafted"] < FEW_DRAFTED)
    return f"{value} (over {rec['drafted']} drafted tokens: too few)" if few and value != "-" else value


def speedup_text(rec: dict[str, Any]) -> str:
    """`1.02× (0.98-1.05 over 3 pairs)`: the measured speedup, meaningful or not."""
    sp = rec.get("speedup")
    if sp is None:
        return "-"
    lo, hi = rec.get("speedup_range") or (sp, sp)
    n = rec.get("speedup_pairs", 1)
    return f"{sp:.2f}× ({lo:.2f}-{hi:.2f} over {n} pair{'s' if n != 1 else ''})"


def _speedup_rows(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """--compare's rows; a speedup the draft hardly ran for is said to be not meaningful first."""
    rows = [("target-only tokens/s", _fmt(rec["target_only_tokens_per_s"]))]
    if rec.get("speedup_meaningful", True) or rec.get("speedup") is None:
        return rows + [("speedup", speedup_text(rec))]
    return rows + [
        ("speedup", "not meaningful: the draft hardly ran"),
        ("measured anyway", speedup_text(rec)),
    ]


def no_draft_line(rec: dict[str, Any]) -> str | None:
    """One line saying why a draft drafted nothing (None when it drafted, or without a draft)."""
    reason = rec.get("no_draft_reason")
    if not reason or rec["drafted"]:
        return None
    tail = " — the draft wrote the hashtags" if rec["mode"] not in NO_HASHTAGS else ""
    return f"the draft did not draft: {reason}{tail}"


def _draft_rows(rec: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        ("online alpha", _few(rec, _fmt(rec["alpha"]))),
        ("acceptance rate", _few(rec, _fmt(rec["acceptance_rate"]))),
        ("drafted / accepted", f"{rec['drafted']} / {rec['accepted']}"),
        ("tokens per round", _fmt(rec["mean_tokens_per_call"])),
    ]


SUMMARY_MODE_TEXT = {
    "extract": "extract: the document's own sentences, chosen by the target, in the document's order",
    "free": "free: written by the model, each sentence checked against the document",
}


def _marked_summary(rec: dict[str, Any], unsupported: str) -> tuple[str, list[str]]:
    """The summary as shown (rich markup) and the lines that explain its marks."""
    text, flags = rec["summary"], rec.get("unsupported") or []
    if unsupported == "drop":
        notes = [
            f"dropped, not backed by the document: {escape(f['span'])} ({escape(f['why'])})" for f in flags
        ]
        return escape(text), notes
    if unsupported != "mark" or not flags:
        return escape(text), []
    out, notes, last = [], [], 0
    for k, f in enumerate(flags, start=1):
        at = text.find(f["span"], last)
        if at < 0:
            continue
        end = at + len(f["span"])
        out.append(
            escape(text[last:at])
            + f"[yellow]{escape(text[at:end])}[/yellow] [bold yellow]\\[?{k}][/bold yellow]"
        )
        notes.append(f"[bold yellow]\\[?{k}][/bold yellow] not backed by the document: {escape(f['why'])}")
        last = end
    return "".join(out) + escape(text[last:]), notes


def print_run(
    console: Console, rec: dict[str, Any], unsupported: str = "mark", *, verbose: bool = False
) -> None:
    """Summary, hashtags and a small stats table for one document; `unsupported`
    (--unsupported): how a free summary's unbacked sentences show (keep: unmarked).
    Without `verbose`, a run that drafted nothing leaves out the rows about
    drafting (they would read "-" and 0) and says why in one line instead."""
    extract = rec.get("summary_mode") == "extract"
    console.rule(
        f"[bold]{escape(shown(rec['id']))}[/bold]  ({rec['mode']}, {rec.get('summary_mode', 'free')} summary)"
    )
    console.print(f"[dim]summary {SUMMARY_MODE_TEXT.get(rec.get('summary_mode', 'free'), '')}[/dim]")
    text, notes = _marked_summary(rec, unsupported)
    console.print(text or "[dim](empty summary)[/dim]", highlight=False)
    for line in notes:
        console.print(line, highlight=False)
    if not rec["summary_complete"] and rec["summary"]:
        console.print("[dim](no complete sentence: shown as written)[/dim]")
    if rec["mode"] not in NO_HASHTAGS:
        none = f"(none: {rec['hashtags_note']})" if rec.get("hashtags_note") else "(none)"
        tags = escape(" ".join(rec["hashtags"])) or f"[dim]{escape(none)}[/dim]"
        console.print(f"\n[bold]Hashtags:[/bold] {tags}", highlight=False)
    if extract:
        _print_extract_stats(console, rec)
        return
    drafted = verbose or rec["drafted"] > 0
    n = rec["summary_tokens"]
    rows = _draft_rows(rec) if drafted else []
    rows.append(("rounds / target calls", f"{rec['rounds']} / {rec['target_calls']}"))
    if drafted:
        rows += [
            ("draft length k: mean (rounds by k)", f"{_fmt(rec['k_mean'])} ({_hist(rec['k_hist'])})"),
            ("draft ms/token (catch-up apart)", _few(rec, _fmt(rec["draft_ms_per_token"]))),
        ]
    if drafted or rec.get("draft_catchup_tokens"):
        rows.append(
            (
                "draft catch-up",
                f"{rec.get('draft_catchup_tokens', 0)} tokens, {_s(rec.get('draft_catchup_s'))}",
            )
        )
    rows += [
        ("verify ms by batch size", " ".join(f"{b}:{ms:.1f}" for b, ms in rec["verify_ms"].items()) or "-"),
        ("summary tokens", f"{n} ({STOPPED.get(rec['stopped'], rec['stopped'])})"),
        ("summary tokens/s", _fmt(rec["tokens_per_s"])),
    ]
    _print_stats(console, rec, rows)


def _print_stats(console: Console, rec: dict[str, Any], rows: list[tuple[str, str]]) -> None:
    """`rows`, then the hashtag tokens, the times and a --compare speedup, as one table."""
    if rec["mode"] not in NO_HASHTAGS:
        rows.append(("hashtag tokens", str(rec["hashtag_tokens"])))
    rows += _time_rows(rec)
    if "speedup" in rec:
        rows += _speedup_rows(rec)
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="dim", no_wrap=True)
    t.add_column(justify="right", overflow="fold")
    for k, v in rows:
        t.add_row(k, v)
    line = no_draft_line(rec) if rec.get("summary_mode") != "extract" else None
    if line:  # one line however wide: a terminal wraps it, a log keeps it whole
        console.print(f"[dim]{escape(line)}[/dim]", highlight=False, soft_wrap=True)
    console.print(t)


def _print_extract_stats(console: Console, rec: dict[str, Any]) -> None:
    drafted = rec.get("choices_drafted", 0)
    rows = [
        ("sentences chosen", str(rec.get("choices", 0))),
        (
            "choices drafted / accepted",
            f"{drafted} / {rec.get('choices_accepted', 0)}" if drafted else "0 (the target chose alone)",
        ),
        ("candidate tokens scored", str(rec.get("candidate_tokens", 0))),
        ("target calls", str(rec["target_calls"])),
        ("summary tokens", f"{rec['summary_tokens']} ({STOPPED.get(rec['stopped'], rec['stopped'])})"),
        ("summary tokens/s", _fmt(rec["tokens_per_s"])),
    ]
    _print_stats(console, rec, rows)


def totals(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """Over several documents: summary tokens/s (all tokens over all summary
    time), α and acceptance weighted by drafted tokens, and with --compare
    the documents' speedups weighted by their summary tokens."""
    drafted = sum(r["drafted"] for r in recs)
    tokens = sum(r["summary_tokens"] for r in recs)
    gen_s = sum(r["gen_s"] or 0 for r in recs)
    alpha = sum((r["alpha"] or 0.0) * r["drafted"] for r in recs)
    out = {
        "documents": len(recs),
        "summary_tokens": tokens,
        "tokens_per_s": _ratio(tokens, gen_s),
        "drafted": drafted,
        "accepted": sum(r["accepted"] for r in recs),
        "few_drafted": drafted < FEW_DRAFTED,
        "alpha": _ratio(alpha, drafted),
        "acceptance_rate": _ratio(sum(r["accepted"] for r in recs), drafted),
        "complete": sum(bool(r.get("summary_complete")) for r in recs),
        "speedup": None,
    }
    compared = [r for r in recs if r.get("speedup") is not None and r.get("target_only_tokens_per_s")]
    if compared and len(compared) == len(recs):
        n = sum(r["summary_tokens"] for r in compared)
        out["speedup"] = _ratio(sum(r["summary_tokens"] * r["speedup"] for r in compared), n)
        out["speedup_meaningful"] = all(r.get("speedup_meaningful", True) for r in compared)
    return out


def print_totals(console: Console, recs: list[dict[str, Any]], *, verbose: bool = False) -> None:
    """The multi-document table; its last line is the overall one. Without
    `verbose`, nothing drafted in any document: no drafting figures."""
    tot = totals(recs)
    drafted = verbose or tot["drafted"] > 0
    t = Table(title=f"{len(recs)} documents", show_header=False, box=None)
    t.add_column(style="dim", no_wrap=True)
    t.add_column(justify="right", overflow="fold")
    t.add_row("summary tokens", str(tot["summary_tokens"]))
    t.add_row("summaries ending on a sentence", f"{tot['complete']} of {len(recs)}")
    if drafted:
        t.add_row("drafted / accepted", f"{tot['drafted']} / {tot['accepted']}")
    few = f" (over {tot['drafted']} drafted tokens: too few)" if tot["few_drafted"] and tot["drafted"] else ""
    line = [f"{_fmt(tot['tokens_per_s'], '.1f')} summary tokens/s"]
    if tot["speedup"] is not None:
        sp = f"{tot['speedup']:.2f}× target-only (token-weighted)"
        line.append(sp if tot["speedup_meaningful"] else f"{sp} (not meaningful: the draft hardly ran)")
    if drafted:
        line.append(f"α {_fmt(tot['alpha'])}, acceptance {_fmt(tot['acceptance_rate'])}{few}")
    else:
        line.append("the draft drafted nothing")
    console.print(t)
    console.print("overall: " + "; ".join(line), soft_wrap=True)
