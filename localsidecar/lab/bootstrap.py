"""Paired bootstrap over documents for token-weighted means and their differences.

A statistic is Σ_d w_d·sum_d / Σ_d w_d·count_d, where w_d is how often
document d is drawn in a resample (multinomial, D draws). Every statistic of
one resample uses the same draw, so differences of conditions are paired.
The CI is the percentile interval. Invariants: a fixed seed gives the same
interval; documents with count 0 carry no tokens and are left out; with one
document every interval collapses to the point estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from localsidecar.io.formatting import rounded

DIGITS = 6  # decimals of α and its differences in records
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
LEVEL = 0.95
_BLOCK = 256  # resamples drawn at once: bounds the (block, D) weight matrix


@dataclass(frozen=True, kw_only=True)
class Estimate:
    value: float | None
    lo: float | None
    hi: float | None

    def as_dict(self, digits: int = DIGITS) -> dict:
        """{"value", "ci": [lo, hi]}: the shape of --json documents."""
        return {
            "value": rounded(self.value, digits),
            "ci": [rounded(self.lo, digits), rounded(self.hi, digits)],
        }

    def columns(self, name: str, digits: int = DIGITS) -> dict:
        """{name, name_lo, name_hi}: the shape of CSV rows."""
        return {
            name: rounded(self.value, digits),
            f"{name}_lo": rounded(self.lo, digits),
            f"{name}_hi": rounded(self.hi, digits),
        }


def paired_bootstrap(
    sums: Mapping[str, np.ndarray],
    counts: np.ndarray,
    contrasts: Mapping[str, tuple[str, str]] | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> dict[str, Estimate]:
    """Estimates for every key of `sums` (token-weighted mean over documents)
    and every contrast name -> (a, b) meaning mean(a) - mean(b)."""
    contrasts = dict(contrasts or {})
    counts = np.asarray(counts, dtype=np.float64)
    keep = counts > 0
    counts = counts[keep]
    S = {k: np.asarray(v, dtype=np.float64)[keep] for k, v in sums.items()}
    names = list(S) + list(contrasts)
    if counts.size == 0:
        return {k: Estimate(value=None, lo=None, hi=None) for k in names}
    total = counts.sum()
    point = {k: float(v.sum() / total) for k, v in S.items()}
    point.update({c: point[a] - point[b] for c, (a, b) in contrasts.items()})
    D = counts.size
    rng = np.random.default_rng(seed)
    draws = {k: np.empty(n_resamples) for k in names}
    for start in range(0, n_resamples, _BLOCK):
        m = min(_BLOCK, n_resamples - start)
        w = rng.multinomial(D, np.full(D, 1.0 / D), size=m).astype(np.float64)
        tok = w @ counts
        means = {k: (w @ v) / tok for k, v in S.items()}
        for k, v in means.items():
            draws[k][start : start + m] = v
        for c, (a, b) in contrasts.items():
            draws[c][start : start + m] = means[a] - means[b]
    tail = (1.0 - level) / 2 * 100
    out = {}
    for k in names:
        lo, hi = np.percentile(draws[k], [tail, 100 - tail])
        out[k] = Estimate(value=point[k], lo=float(lo), hi=float(hi))
    return out
