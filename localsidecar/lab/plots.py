"""PNG plots of the sweep (optional extra: matplotlib, imported lazily).

Both plots draw point estimates as lines with markers and the 95% bootstrap
intervals as shaded bands, label every axis with its unit, and mark zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    """The figure as a PNG at `path`, replaced atomically (localsidecar.io.atomic)."""
    from localsidecar.io import atomic

    with atomic.atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110)
    return path


def _col(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [float("nan") if r[key] is None else float(r[key]) for r in rows]


def _spaced_ticks(rows: list[dict[str, Any]]) -> list[int]:
    """Tick values that do not collide on a log axis (the real n, marked by its
    own line, gives way to a sweep value next to it)."""
    ticks: list[int] = []
    for r in sorted(rows, key=lambda r: (r["is_real"], r["suffix_tokens"])):
        n = r["suffix_tokens"]
        if all(n == 0 or t == 0 or max(n, t) / min(n, t) >= 1.4 for t in ticks):
            ticks.append(n)
    return sorted(ticks)


def _warn(fig, warning: str | None) -> None:
    """The few-documents warning, on the figure itself (a PNG travels without its table)."""
    if warning:  # supxlabel: constrained_layout keeps room for it below the axes
        fig.supxlabel(warning, fontsize=8, color="tab:red")


def plot_nsweep(rows: list[dict[str, Any]], path: Path, title: str, warning: str | None = None) -> Path:
    plt = _pyplot()
    ns = [r["suffix_tokens"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    left.fill_between(
        ns,
        _col(rows, "alpha_masked_lo"),
        _col(rows, "alpha_masked_hi"),
        color="tab:blue",
        alpha=0.2,
        label="95% CI",
    )
    left.plot(
        ns,
        _col(rows, "alpha_masked"),
        "o-",
        color="tab:blue",
        label="masked (suffix hidden, summary shifted by n)",
    )
    left.axhline(rows[0]["alpha_baseline"], color="black", ls="--", lw=1, label="baseline (no suffix)")
    left.set_ylabel("teacher-forced α")
    left.set_title("Acceptance vs hidden suffix length")
    right.fill_between(
        ns,
        _col(rows, "position_cost_lo"),
        _col(rows, "position_cost_hi"),
        color="tab:red",
        alpha=0.2,
        label="95% CI",
    )
    right.plot(ns, _col(rows, "position_cost"), "o-", color="tab:red", label="α(baseline) − α(masked)")
    right.axhline(0, color="black", lw=0.8)
    right.set_ylabel("position cost Δα (positive = draft worse)")
    right.set_title("Cost of the position shift")
    for ax in (left, right):
        positive = [n for n in ns if n > 0]
        if positive and max(ns) / min(positive) >= 8:
            # spread lengths evenly (25, 50, 100, ...); linear below the smallest
            # positive n so that n = 0 (the baseline) still has a place
            if min(ns) > 0:
                ax.set_xscale("log")
            else:
                ax.set_xscale("symlog", linthresh=min(positive), linscale=0.5)
            ax.set_xticks(_spaced_ticks(rows))
            ax.set_xticklabels([str(t) for t in _spaced_ticks(rows)])
            ax.minorticks_off()
        for r in rows:
            if r["is_real"]:  # named in the legend: a label beside the line covered the next sweep point
                ax.axvline(
                    r["suffix_tokens"],
                    color="gray",
                    ls=":",
                    lw=1,
                    label=f"the prompt's own suffix (n = {r['suffix_tokens']})",
                )
        ax.set_xlabel("hidden suffix length n (tokens)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    fig.suptitle(title, fontsize=10)
    _warn(fig, warning)
    try:
        save(fig, path)
    finally:
        plt.close(fig)
    return path


def plot_depth(rows: list[dict[str, Any]], path: Path, title: str, warning: str | None = None) -> Path:
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    ts = [r["t"] for r in rows]
    fig, (ax, docs) = plt.subplots(
        2, 1, figsize=(8, 5.2), sharex=True, height_ratios=[4, 1], constrained_layout=True
    )
    for key, color, label in (
        ("position", "tab:red", "position effect: baseline − masked"),
        ("total", "tab:purple", "total effect: baseline − visible"),
    ):
        ax.fill_between(ts, _col(rows, f"{key}_lo"), _col(rows, f"{key}_hi"), color=color, alpha=0.15)
        ax.plot(ts, _col(rows, key), "o-", ms=3, color=color, label=f"{label} (band: 95% CI)")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel("Δα at position t\n(positive = draft worse)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title("Depth profile of the effects along the summary", fontsize=11)
    docs.bar(ts, [r["n_docs"] for r in rows], width=0.8, color="gray", alpha=0.6)
    docs.set_ylabel("documents\nreaching t", fontsize=8)
    docs.set_ylim(0, max(r["n_docs"] for r in rows) * 1.15)
    docs.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    docs.set_xlabel("summary position t (tokens into the summary)")
    docs.grid(alpha=0.3, axis="y")
    fig.suptitle(title, fontsize=9)
    _warn(fig, warning)
    try:
        save(fig, path)
    finally:
        plt.close(fig)
    return path
