"""Aggregates of the acceptance lab: the --json document, --out records, tables.

Keys of `summarize()` and `doc_record()` are a public API (docs/records.md).
α per condition is token-weighted (Σ α_t over all summary tokens ÷ their
number); `mean_doc_alpha` is the plain mean of per-document α. Each effect of
the decomposition is a difference of token-weighted α with a paired
bootstrap CI over documents.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localsidecar.io.formatting import alpha_cell, rounded, shown
from localsidecar.io.schema import upgrade
from localsidecar.io.tables import print_fitted
from localsidecar.lab.acceptance import (
    ALIASES,
    CHECKS,
    EMULATION,
    LAYOUT,
    MASKED_ALT,
    MASKED_EMULATION,
    REBASED_INLINE,
    DocAlpha,
)
from localsidecar.lab.bootstrap import DIGITS, LEVEL, paired_bootstrap

DECOMPOSITION = {
    "position": ("baseline", "masked"),
    "content_leak": ("masked", "visible"),
    "total": ("baseline", "visible"),
    "residual": ("rebased", "baseline"),
}
CHECK_EFFECTS = {
    "emulation_spread": ("masked", MASKED_ALT),
    "layout_noise": (REBASED_INLINE, "baseline"),
}
CHECK_HELP = {
    MASKED_ALT: "masked with the other emulation: " + EMULATION[MASKED_ALT],
    REBASED_INLINE: "rebased with the suffix cells between prefix and summary (a naive KV layout)",
    "emulation_spread": "sensitivity of masked to how the tail's states are emulated",
    "layout_noise": "llama.cpp's dependence on KV cell placement (0 in exact arithmetic)",
}
EFFECT_HELP = {
    "position": "cost of the n-position shift alone",
    "content_leak": "cost of attending the suffix text",
    "total": "cost of the plain compound prompt",
    "residual": "rebased layout vs baseline (0 expected)",
}
MAX_DOC_ROWS = 40


_r = partial(rounded, digits=DIGITS)


def doc_record(d: DocAlpha) -> dict[str, Any]:
    """One --out line: per-document α and every α_t (float32 values, exact in JSON)."""
    return {
        "id": d.id,
        "prompt_tokens": d.prompt_tokens,
        "suffix_tokens": d.n,
        "summary_tokens": d.S,
        "summary_cached": d.summary_cached,
        "alpha": {c: _r(d.alpha(c)) for c in d.alpha_t},
        "alpha_t": {c: [float(x) for x in a] for c, a in d.alpha_t.items()},
        "summary_ids": d.summary_ids,
    }


def doc_from_record(rec: dict[str, Any]) -> DocAlpha:
    """Inverse of doc_record (for resuming an --out file, older key names too)."""
    rec = upgrade("acceptance", rec)
    d = DocAlpha(
        rec["id"], rec["prompt_tokens"], rec["suffix_tokens"], rec["summary_ids"], summary_cached=True
    )
    d.alpha_t = {c: np.asarray(v, dtype=np.float32) for c, v in rec["alpha_t"].items()}
    return d


def summarize(
    docs: list[DocAlpha],
    conditions: Iterable[str],
    *,
    target: str,
    draft: str,
    n_resamples: int,
    seed: int,
    checks: bool = False,
) -> dict[str, Any]:
    """The --json document of `localsidecar acceptance`."""
    conditions = list(conditions)
    keys = conditions + (list(CHECKS) if checks else [])
    counts = np.array([d.S for d in docs], dtype=np.float64)
    sums = {c: np.array([float(d.alpha_t[c].sum(dtype=np.float64)) for d in docs]) for c in keys}
    if checks and "baseline" not in sums:  # layout_noise is measured against baseline
        sums["baseline"] = np.array([float(d.alpha_t["baseline"].sum(dtype=np.float64)) for d in docs])
    effects = {k: ab for k, ab in DECOMPOSITION.items() if set(ab) <= set(conditions)}
    if checks:
        effects.update({k: ab for k, ab in CHECK_EFFECTS.items() if set(ab) <= set(sums)})
    est = paired_bootstrap(sums, counts, effects, n_resamples=n_resamples, seed=seed)
    ns = {d.n for d in docs}
    out: dict[str, Any] = {
        "target": target,
        "draft": draft,
        "n_docs": len(docs),
        "suffix_tokens": ns.pop() if len(ns) == 1 else None,
        "summary_tokens": int(counts.sum()),
        "empty_summaries": [d.id for d in docs if d.S == 0],
        "masked_emulation": MASKED_EMULATION,
        "kv_layout": LAYOUT,
        "bootstrap": {"resamples": n_resamples, "seed": seed, "level": LEVEL, "unit": "document"},
        "conditions": {},
        "decomposition": {},
    }
    if checks:
        out["checks"] = {}
    for c in keys:
        per_doc = [d.alpha(c) for d in docs if d.S]
        entry = {
            "alpha": _r(est[c].value),
            "ci": est[c].as_dict()["ci"],
            "mean_doc_alpha": _r(float(np.mean(per_doc)) if per_doc else None),
            "tokens": int(counts.sum()),
        }
        if c in ALIASES:
            entry["same_as"] = ALIASES[c]
        if c in CHECKS:
            out["checks"][c] = {**entry, "description": CHECK_HELP[c]}
        else:
            out["conditions"][c] = entry
    for k, (a, b) in effects.items():
        item = {**est[k].as_dict(), "definition": f"{a} - {b}"}
        if k in CHECK_EFFECTS:
            diffs = [abs(d.alpha(a) - d.alpha(b)) for d in docs if d.S]
            out["checks"][k] = {
                **item,
                "max_abs_doc_diff": _r(max(diffs) if diffs else None),
                "description": CHECK_HELP[k],
            }
        else:
            out["decomposition"][k] = item
    out["warnings"] = [w] if (w := few_docs_warning(len(docs), LEVEL)) else []
    out["docs"] = [
        {
            "id": d.id,
            "prompt_tokens": d.prompt_tokens,
            "suffix_tokens": d.n,
            "summary_tokens": d.S,
            "alpha": {c: _r(d.alpha(c)) for c in keys},
        }
        for d in docs
    ]
    return out


# --- tables ------------------------------------------------------------------------------


_f = alpha_cell


def _ci(ci: list, signed: bool = False) -> str:
    return "-" if ci[0] is None else f"[{_f(ci[0], signed)}, {_f(ci[1], signed)}]"


MIN_DOCS_FOR_CI = 10
FEW_DOCS = (
    "warning: {n} document{s}: the {pct}% intervals are printed but not meaningful below "
    f"{MIN_DOCS_FOR_CI} documents (the bootstrap resamples documents)"
)


def few_docs_warning(n_docs: int, level: float) -> str | None:
    """The one-line warning for bootstrap intervals over too few documents."""
    if n_docs >= MIN_DOCS_FOR_CI:
        return None
    return FEW_DOCS.format(n=n_docs, s="" if n_docs == 1 else "s", pct=int(level * 100))


TABLE = {"title_justify": "left", "box": box.SIMPLE_HEAD, "pad_edge": False}
NUMBER = {"justify": "right", "no_wrap": True}  # a number is never cut: io.tables


def _table(title: str) -> Table:
    """Compact tables (no vertical rules): text columns wrap, number columns (NUMBER) never do."""
    return Table(title=title, **TABLE)


# Table legends in reader words; the --json documents keep the precise
# descriptions (EMULATION, LAYOUT), which use the notation of docs/DESIGN.md.
READER_EMULATION = {
    "masked": "llama.cpp cannot hide the suffix from the tokens after it, so the chat-template tail is read right "
    "after the document and then moved past the suffix; the summary is read at its true shifted positions",
    MASKED_ALT: "the tail is read after the visible suffix, then the suffix is removed (the tail has seen the suffix)",
}
READER_LAYOUT = (
    "every condition's summary sits in the same cache cells, the hidden suffix after them "
    "(rebased_inline: between document and summary, the layout the speculative loop avoids)"
)


def _legend(console: Console, items: dict[str, str]) -> None:
    """One item per row, its text wrapped in a column of its own (never under the name)."""
    grid = Table.grid(padding=(0, 1), pad_edge=True)
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(style="dim")
    for k, v in items.items():
        grid.add_row(escape(f"{k}:"), escape(v))
    console.print(grid, width=min(console.width, 100))


def print_acceptance(console: Console, res: dict[str, Any]) -> None:
    pct = int(res["bootstrap"]["level"] * 100)
    n_docs = res["n_docs"]
    t = _table(
        f"Teacher-forced α ({n_docs} document{'' if n_docs == 1 else 's'}, {res['summary_tokens']} summary tokens)"
    )
    t.add_column("condition")
    for col in ("α", f"{pct}% CI", "per-doc α"):
        t.add_column(col, **NUMBER)
    t.add_column("note")
    notes: dict[str, str] = {}
    for c, e in res["conditions"].items():
        note = ""
        if "same_as" in e:
            note = f"= {e['same_as']}"
            notes[note] = "the same cache state during the summary"
        elif c == "masked":
            note = "emulated"
            notes[note] = READER_EMULATION["masked"]
        t.add_row(c, _f(e["alpha"]), _ci(e["ci"]), _f(e["mean_doc_alpha"]), note)
    console.print(t)
    if warning := few_docs_warning(n_docs, res["bootstrap"]["level"]):
        console.print(warning, highlight=False, markup=False)
    suffix = (
        {"hidden suffix": f"{res['suffix_tokens']} tokens (the hashtag instruction)"}
        if res["suffix_tokens"] is not None
        else {}
    )
    _legend(
        console,
        {
            "α": "token-weighted over all summary tokens",
            "summary": "the target's own greedy summary (free), whatever `run --summary` makes: "
            "an extract summary is the document's text, chosen by the target, and has no α",
            "per-doc α": "mean of the documents' α",
            **notes,
            **suffix,
        },
    )
    if res["decomposition"]:
        d = _table("Decomposition (differences of α)")
        for col in ("effect", "definition"):
            d.add_column(col)
        for col in ("Δα", f"{pct}% CI"):
            d.add_column(col, **NUMBER)
        for k, e in res["decomposition"].items():
            d.add_row(k, e["definition"], _f(e["value"], True), _ci(e["ci"], True))
        console.print(d)
        boot = res["bootstrap"]
        _legend(
            console,
            {
                **{k: EFFECT_HELP[k] for k in res["decomposition"]},
                f"{pct}% CI": f"paired bootstrap over documents, {boot['resamples']} resamples, seed {boot['seed']}",
            },
        )
    _legend(console, {"cache layout": READER_LAYOUT})
    if "checks" in res:
        _print_checks(console, res["checks"], pct)
    _print_docs(console, res)


def _print_checks(console: Console, checks: dict[str, Any], pct: int) -> None:
    c = _table("Checks (--checks)")
    c.add_column("check")
    for col in ("value", f"{pct}% CI", "max |Δ| per doc"):
        c.add_column(col, **NUMBER)
    for k, e in checks.items():
        if "alpha" in e:
            c.add_row(f"α {k}", _f(e["alpha"]), _ci(e["ci"]), "")
        else:
            c.add_row(
                f"{k} ({e['definition']})",
                _f(e["value"], True),
                _ci(e["ci"], True),
                _f(e["max_abs_doc_diff"]),
            )
    console.print(c)
    reader = {
        MASKED_ALT: "masked with the other emulation: " + READER_EMULATION[MASKED_ALT],
        REBASED_INLINE: "rebased with the hidden suffix's cells between document and summary (the layout "
        "the speculative loop avoids)",
    }
    _legend(console, {k: reader.get(k, e["description"]) for k, e in checks.items()})


def _print_docs(console: Console, res: dict[str, Any]) -> None:
    conds = list(res["conditions"])
    docs = res["docs"]
    rows = [
        (
            escape(shown(r["id"])),
            str(r["prompt_tokens"]),
            str(r["suffix_tokens"]),
            str(r["summary_tokens"]),
            *(_f(r["alpha"][c]) for c in conds),
        )
        for r in docs[:MAX_DOC_ROWS]
    ]
    columns = [
        ("id", {"overflow": "fold"}),
        *((col, NUMBER) for col in ("prompt", "suffix", "summary", *conds)),
    ]
    print_fitted(
        console,
        columns,
        rows,
        ("suffix", "prompt", "summary", *reversed(conds[1:])),
        title="Per document (prompt, hidden suffix and summary in tokens)",
        **TABLE,
    )
    if len(docs) > MAX_DOC_ROWS:
        console.print(f"... {len(docs) - MAX_DOC_ROWS} more documents (all rows in --json and --out)")
    if res["empty_summaries"]:
        console.print(
            f"note: empty canonical summary (no α) for: {escape(', '.join(res['empty_summaries']))}"
        )
