"""n-sweep and depth profile of the position effect.

Masked α depends on the hidden suffix only through its length n (its cells
are invisible to the summary), so masked(n) is computed with no suffix cells
at all: the tail is moved by +n with seq_add and the summary decoded at the
shifted positions (Lab.evaluate's "masked@<n>"). Nothing is decoded per
filler token; every n costs one pass over T + S.

Rows (CSV columns are a public API):
  nsweep.csv  one row per n of the sweep (plus the real n): masked α, the
              position cost baseline − masked(n), paired bootstrap CIs.
  depth.csv   one row per summary position t < depth cap that some document
              reaches: mean α_t of baseline, masked (real n) and visible over
              the documents whose summary is longer than t, and the effects
              baseline − masked and baseline − visible with bootstrap CIs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from localsidecar.errors import LocalsidecarError
from localsidecar.io import atomic
from localsidecar.io.formatting import rounded
from localsidecar.lab.acceptance import DocAlpha, masked_key
from localsidecar.lab.bootstrap import DIGITS, paired_bootstrap

DEFAULT_N_SWEEP = "25,50,100,200,400"
DEFAULT_DEPTH_CAP = 24
MAX_SWEEP_N = 100_000
NSWEEP_COLUMNS = [
    "suffix_tokens",
    "is_real",
    "alpha_masked",
    "alpha_masked_lo",
    "alpha_masked_hi",
    "alpha_baseline",
    "position_cost",
    "position_cost_lo",
    "position_cost_hi",
    "n_docs",
    "tokens",
]
DEPTH_COLUMNS = [
    "t",
    "n_docs",
    "alpha_baseline",
    "alpha_masked",
    "alpha_visible",
    "position",
    "position_lo",
    "position_hi",
    "total",
    "total_lo",
    "total_hi",
]


def parse_n_list(text: str, option: str = "--n-sweep") -> list[int]:
    """Sorted distinct suffix lengths from "25,50,100"; one-line error otherwise."""
    parts = [s.strip() for s in str(text).split(",")]
    if not text or not text.strip() or any(not s for s in parts):
        raise LocalsidecarError(
            f"{option} needs a comma-separated list of token counts, e.g. {DEFAULT_N_SWEEP} (got {text!r})"
        )
    values = []
    for s in parts:
        if not s.isdigit() or int(s) > MAX_SWEEP_N:
            raise LocalsidecarError(
                f"{option}: {s!r} is not a whole number of tokens between 0 and {MAX_SWEEP_N}"
            )
        values.append(int(s))
    return sorted(set(values))


def nsweep_rows(
    docs: list[DocAlpha], ns: list[int], n_real: int, *, n_resamples: int, seed: int
) -> list[dict[str, Any]]:
    counts = np.array([d.S for d in docs], dtype=np.float64)
    sums = {"baseline": np.array([d.alpha_t["baseline"].sum(dtype=np.float64) for d in docs])}
    for n in ns:
        sums[masked_key(n)] = np.array([d.alpha_t[masked_key(n)].sum(dtype=np.float64) for d in docs])
    contrasts = {f"cost@{n}": ("baseline", masked_key(n)) for n in ns}
    est = paired_bootstrap(sums, counts, contrasts, n_resamples=n_resamples, seed=seed)
    rows = []
    for n in ns:
        rows.append(
            {
                "suffix_tokens": n,
                "is_real": int(n == n_real),
                **est[masked_key(n)].columns("alpha_masked"),
                "alpha_baseline": rounded(est["baseline"].value, DIGITS),
                **est[f"cost@{n}"].columns("position_cost"),
                "n_docs": int((counts > 0).sum()),
                "tokens": int(counts.sum()),
            }
        )
    return rows


def depth_rows(
    docs: list[DocAlpha], n_real: int, depth_cap: int, *, n_resamples: int, seed: int
) -> list[dict[str, Any]]:
    """Per-position means over the documents that reach position t (each
    document weighs 1 at every t it reaches)."""
    rows = []
    mk = masked_key(n_real)
    for t in range(depth_cap):
        reach = [d for d in docs if d.S > t]
        if not reach:
            break
        vals = {
            c: np.array([float(d.alpha_t[k][t]) for d in reach])
            for c, k in (("baseline", "baseline"), ("masked", mk), ("visible", "visible"))
        }
        est = paired_bootstrap(
            vals,
            np.ones(len(reach)),
            {"position": ("baseline", "masked"), "total": ("baseline", "visible")},
            n_resamples=n_resamples,
            seed=seed + t,
        )
        rows.append(
            {
                "t": t,
                "n_docs": len(reach),
                **{f"alpha_{c}": rounded(est[c].value, DIGITS) for c in ("baseline", "masked", "visible")},
                **est["position"].columns("position"),
                **est["total"].columns("total"),
            }
        )
    return rows


def write_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> Path:
    """Replaced atomically (localsidecar.io.atomic); the folder is created if missing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalsidecarError(f"cannot write {path}: {exc.strerror or exc}") from None
    return atomic.write_csv(path, columns, rows)
