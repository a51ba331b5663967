"""Click commands for model management: `pull`, `models` and `doctor`.

Tables go to stdout through rich, fitted to the terminal or to 100 columns
in a pipe (io.tables); paths are printed whole on lines of their own, never
broken. `--json` prints one JSON document and nothing else on stdout.
"""

from __future__ import annotations

import json
import os
import platform
from typing import Any

import click

from localsidecar import __version__
from localsidecar.backend.hardware import default_threads, usable_cpus
from localsidecar.cli.errors import UserError
from localsidecar.registry import models as registry_models

# Importing localsidecar.registry.embedded loads llama.cpp: it is imported inside the
# commands only, so `doctor` can still report a broken llama-cpp-python.
_models_dir_option = click.option(
    "--models-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for derived models (default $LOCALSIDECAR_MODELS_DIR or ~/.cache/localsidecar/models).",
)


def _console():
    from localsidecar.cli.options import table_console

    return table_console()


def _size(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


# --- pull ----------------------------------------------------------------------------


@click.command("pull")
@click.argument("pair", metavar="PAIR|REPO:FILE")
@click.option("--quant", default=None, help="Target quantization, e.g. Q4_K_M (default: the pair's).")
@click.option("--draft-quant", default=None, help="Draft quantization (default: the pair's).")
@_models_dir_option
def pull_cmd(pair: str, quant: str | None, draft_quant: str | None, models_dir: str | None) -> None:
    """Download a named pair (or one REPO:FILE) into the hub cache.

    Files already in the cache are not downloaded again; the embedded pair
    needs no download (its draft is derived locally). Prints the paths.
    """
    target, draft = registry_models.pull(pair, quant, draft_quant, models_dir)
    if target == draft:
        click.echo(f"model:  {target}")
    else:
        click.echo(f"target: {target}")
        click.echo(f"draft:  {draft}")


# --- models ----------------------------------------------------------------------------


def _license_id(row: dict[str, Any]) -> str:
    """The licence's short name for the table ("gemma"); its full name is on the licence line."""
    return row["license"].split(" (", 1)[0] if row["license_file"] else row["license"]


def _pair_state(p: dict[str, Any]) -> str:
    if p["ready"]:
        return "ready" + (f" ({p['note']})" if p["note"] else "")
    return f"not downloaded ({len(p['missing'])} files missing)"


def _pairs_table(console, pairs: list[dict[str, Any]]):
    """Each model and its quantization on one line, or when that is too wide
    for the console, the quantization under the name (a name never breaks)."""
    from rich import box
    from rich.table import Table

    from localsidecar.io.tables import needs

    for sep in (" ", "\n"):
        t = Table(
            title="Pairs (default quantizations)", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False
        )
        for col in ("pair", "target", "draft"):
            t.add_column(col, no_wrap=True)
        t.add_column("status", overflow="fold", ratio=1)
        for p in pairs:
            t.add_row(
                p["pair"],
                f"{p['target']}{sep}{p['quant']}",
                f"{p['draft']}{sep}{p['draft_quant']}",
                _pair_state(p),
            )
        if needs(console, t) + len("downloaded") <= console.width:  # the status keeps a word a line
            break
    return t


@click.command("models")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@_models_dir_option
def models_cmd(as_json: bool, models_dir: str | None) -> None:
    """List the named pairs and every quantization, with what is on this machine."""
    reg = registry_models.load_registry()
    pairs = []
    for spec in reg.pairs.values():
        status = registry_models.pair_status(spec, models_dir)
        status.update(description=spec.description, target=spec.target.name, draft=spec.draft.name)
        pairs.append(status)
    rows = registry_models.model_rows(models_dir)
    if as_json:
        _print_json({"hub_cache": str(registry_models.hub_cache_dir()), "pairs": pairs, "models": rows})
        return
    from rich import box
    from rich.markup import escape

    from localsidecar.io.tables import print_fitted

    console = _console()
    console.print(_pairs_table(console, pairs))
    columns = [
        ("model", {"no_wrap": True}),
        ("quant", {"no_wrap": True}),
        ("files", {"no_wrap": True, "justify": "right"}),
        ("size", {"no_wrap": True, "justify": "right"}),
        ("license", {"no_wrap": True}),
        ("local", {"no_wrap": True}),
    ]
    table_rows, paths = [], []
    for r in rows:
        if r["present"]:
            local = "present"
        elif r["quant_variant"]:
            local = "made by `quant`"
        elif r["derived_from"]:
            local = f"derived from {r['derived_from']} on first use"
        elif r["local_size"]:
            local = f"partial ({len(r['files']) - len(r['missing'])}/{len(r['files'])})"
        else:
            local = "-"
        table_rows.append(
            (r["model"], r["quant"], str(len(r["files"])), _size(r["size"]), escape(_license_id(r)), local)
        )
        if r["path"] or r["quant_variant"]:
            paths.append((r, r["path"] or r["quant_variant"]))
    print_fitted(
        console,
        columns,
        table_rows,
        ("files", "license"),
        title=f"Models (hub cache {escape(str(registry_models.hub_cache_dir()))})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    # Paths on lines of their own, whole, so they can be copied and grepped.
    for r, path in paths:
        made = " (made by `quant`; run derives its own copy on use)" if not r["path"] else ""
        click.echo(f"{r['model']} {r['quant']}: {path}{made}")
    # Commands on lines of their own, so they can be copied whole.
    for p in pairs:
        if not p["ready"]:
            verb = "install" if p.get("install") else "download"
            click.echo(f"to {verb} {p['pair']}: {p.get('install') or p['pull']}")
    for model, name, terms in dict.fromkeys(
        (r["model"], r["license"], r["license_file"]) for r in rows if r["license_file"]
    ):
        click.echo(f"licence of {model}, {name}: {terms}")


# --- doctor ----------------------------------------------------------------------------


def _cpu_features(info: str) -> list[str]:
    """Names of the features llama.cpp reports as `NAME = 1` in its system info."""
    out = []
    for part in info.replace("\n", "|").split("|"):
        if "=" in part:
            name, _, value = part.rpartition("=")
            name = name.split(":")[-1].strip()
            if value.strip() == "1" and name:
                out.append(name)
    return out


def _doctor_report(models_dir: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {
        "localsidecar": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "threads": default_threads(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(cpus) if (cpus := usable_cpus()) is not None else None,
        "models_dir": None,
        "pairs": [],
    }
    try:
        import huggingface_hub

        report["huggingface_hub"] = huggingface_hub.__version__
        report["hub_cache"] = str(registry_models.hub_cache_dir())
        report["hub_offline"] = registry_models.hub_offline()
    except ImportError as exc:
        report["huggingface_hub"] = f"not importable: {exc}"
    try:
        from localsidecar import backend
        from localsidecar.registry import embedded

        info = backend.system_info()  # the backend loads llama.cpp on this first use
    except Exception as exc:  # a broken install is exactly what doctor must show
        report["llama_cpp_python"] = f"not importable: {' '.join(str(exc).split()) or type(exc).__name__}"
        report["broken"] = f"llama-cpp-python does not load ({report['llama_cpp_python']})"
        return report
    report["llama_cpp_python"] = backend.llama_cpp_version()
    report["system_info"] = info
    report["cpu_features"] = _cpu_features(info)
    report["gpu_offload"] = backend.supports_gpu_offload()
    report["models_dir"] = str(embedded.models_dir(models_dir))
    reg = registry_models.load_registry()
    report["pairs"] = [registry_models.pair_status(spec, models_dir) for spec in reg.pairs.values()]
    _probe_report(report, models_dir)
    return report


def _probe_report(report: dict[str, Any], models_dir: str | None) -> None:
    """The buffer-type decision, and the guarded probe's verdict and buffer
    types for each model of the embedded pair on disk (docs/cpus.md)."""
    from localsidecar.backend import buffers, probe
    from localsidecar.registry import embedded

    chosen = buffers.plan()
    report["buffers"] = {
        "use_extra_bufts": chosen.use_extra_bufts,
        "amx_offered": chosen.amx_offered,
        "offered": list(chosen.offered) if chosen.offered is not None else None,
        "reason": chosen.reason,
    }
    report["probe"] = []
    try:
        target = embedded.embedded_target_path()
    except Exception as exc:  # the embedded model missing is reported, not fatal here
        report["probe"].append({"model": embedded.EMBEDDED_FILE, "verdict": f"not run: {exc}"})
        return
    draft = embedded.derived_path(target, embedded.EMBEDDED_DRAFT_QUANT, embedded.models_dir(models_dir))
    for path in (target, draft):
        if not path.is_file():
            report["probe"].append({"model": path.name, "verdict": "not run (not derived yet)"})
            continue
        if probe.mode() == "off":
            report["probe"].append({"model": path.name, "verdict": f"off ({probe.PROBE_ENV}=0)"})
            continue
        v = probe.verdict(path, chosen, force=probe.mode() == "force")
        entry = {
            "model": path.name,
            "verdict": "ok"
            if v.ok
            else (f"crashed ({v.signal})" if v.ok is False else f"inconclusive ({v.detail})"),
            "cached": v.cached,
            "seconds": round(v.seconds, 2),
            "buffers": v.buffers,
        }
        if v.ok is False:
            entry["error"] = probe.crash_message(path, v.signal or "a signal", chosen, v.buffers)
            report.setdefault("crashed", entry["error"])
        report["probe"].append(entry)


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@_models_dir_option
def doctor_cmd(as_json: bool, models_dir: str | None) -> None:
    """Print what a bug report needs: versions, llama.cpp system info, threads, models."""
    report = _doctor_report(models_dir)
    if as_json:
        _print_json(report)
    else:
        _print_doctor(report)
    if "broken" in report:
        raise UserError(
            f"{report['broken']}; reinstall it: pip install --force-reinstall --no-cache-dir "
            "'llama-cpp-python>=0.3.36,<0.4'"
        )
    if "crashed" in report:
        raise UserError(report["crashed"])


def _print_doctor(report: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = _console()
    # short names, no borders: a value (a path) has the width for itself, folded only past it
    t = Table(title="localsidecar doctor", title_justify="left", show_header=False, box=None, pad_edge=False)
    t.add_column("what", style="bold", no_wrap=True)
    t.add_column("value", overflow="fold")
    for key in ("localsidecar", "python", "platform", "llama_cpp_python", "huggingface_hub"):
        t.add_row(key, escape(str(report.get(key, "-"))))
    if "cpu_features" in report:
        t.add_row("cpu features", " ".join(report["cpu_features"]) or "-")
        t.add_row("gpu offload", "yes" if report["gpu_offload"] else "no")
        t.add_row("llama.cpp system info", escape(report["system_info"]))
    t.add_row(
        "threads",
        f"{report['threads']} by default (usable cpus: {report.get('usable_cpus', '?')}, "
        f"logical cpus: {report.get('logical_cpus', '?')})",
    )
    t.add_row("models dir", escape(report["models_dir"] or "-"))
    if "hub_cache" in report:
        t.add_row("hub cache", escape(report["hub_cache"]) + (" (offline)" if report["hub_offline"] else ""))
    if "buffers" in report:
        t.add_row("buffer types", escape(report["buffers"]["reason"]))
    for entry in report.get("probe", []):
        sizes = ", ".join(f"{k} {v:.1f} MiB" for k, v in (entry.get("buffers") or {}).items())
        when = (
            " (cached)" if entry.get("cached") else (f" ({entry['seconds']} s)" if "seconds" in entry else "")
        )
        t.add_row(
            "probe",
            escape(
                f"{entry['model']}: " + entry["verdict"] + when + (f"; weights: {sizes}" if sizes else "")
            ),
        )
    for p in report["pairs"]:
        t.add_row("pair", f"{p['pair']} ({p['quant']}/{p['draft_quant']}): {_pair_state(p)}")
    console.print(t)
    for p in report["pairs"]:
        if not p["ready"]:
            click.echo(f"to download {p['pair']}: {p['pull']}")
