"""`localsidecar tag` on the fixture vault with the real embedded pair.

One pass of the models over the vault serves every test of the module: a
first process is interrupted (SIGINT: the note in progress is finished and
written, exit 130), a second one is killed (SIGKILL) mid-run, a third run
finishes. Then every note is either as it was (the skips, each said in one
line) or tagged with every byte outside the owned keys unchanged; a rerun
writes nothing and loads no model; a note whose body changed is redone."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.cli.tagging import diff_name
from localsidecar.notes.split import split_note

from .helpers import ROOT, TEST_THREADS, VAULT, one_line_error, read, second_reader, untag

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

FAST = ["--max-tokens", "16"]
SKIPPED = {  # note -> words of its one line
    "non-utf8.md": "not UTF-8 (byte 0xe9",
    "invalid-yaml.md": "4: YAML front matter does not parse",
    "unclosed.md": "1: front matter opened with '---' is never closed",
    "dots-end.md": "never closed",
    "duplicate-keys.md": "3: YAML front matter does not parse",
    "tags-mapping.md": "2: `tags` is not a list",
    "empty.md": "no text below the front matter",
    "only-front-matter.md": "no text below the front matter",
    "link.md": "a symbolic link; not followed",
    "read-only.md": "read-only",
    "huge.md": "larger than 1 MiB",
}


def make_vault(root: Path) -> dict[str, bytes]:
    """The fixture vault plus what git cannot hold; returns every note's bytes."""
    shutil.copytree(VAULT, root)
    (root / "link.md").symlink_to("block-tags.md")
    ro = root / "read-only.md"
    ro.write_bytes((root / "block-tags.md").read_bytes())
    ro.chmod(0o444)
    (root / "huge.md").write_bytes(b"---\ntitle: huge\n---\n" + b"A line of a very long log.\n" * 50_000)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def env(models_dir) -> dict[str, str]:
    return {
        **os.environ,
        "LOCALSIDECAR_MODELS_DIR": str(models_dir),
        "LOCALSIDECAR_THREADS": str(TEST_THREADS),
    }


def run_until(vault: Path, models_dir, records: int, signum: int) -> tuple[int, list[dict], str]:
    """Start `tag --json` in a process and send `signum` once it printed `records` tagged notes."""
    p = subprocess.Popen(
        [sys.executable, "-m", "localsidecar.cli", "tag", str(vault), "--json", *FAST],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env(models_dir),
    )
    seen = []
    for line in p.stdout:
        seen.append(json.loads(line))
        if sum(r["status"] == "tagged" for r in seen) >= records:
            p.send_signal(signum)
            break
    rest, err = p.communicate(timeout=300)
    seen += [json.loads(line) for line in rest.splitlines()]
    return p.returncode, seen, err


def invoke(args, models_dir) -> tuple[int, list[dict], str]:
    r = CliRunner().invoke(main, ["tag", *args], env={"LOCALSIDECAR_MODELS_DIR": str(models_dir)})
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")], r.stderr


def state(vault: Path, before: dict[str, bytes]) -> dict[str, str]:
    """Each note: 'as-was', 'tagged' (whole and right) or what is wrong with it."""
    out = {}
    for name, old in before.items():
        path = vault / name
        if path.is_symlink() or name.endswith(".txt") or name.startswith(".obsidian"):
            continue
        new = path.read_bytes()
        if new == old:
            out[name] = "as-was"
            continue
        meta, _ = second_reader(new.decode("utf-8"))
        tool = meta["localsidecar"]["tags"]
        key = "summary" if meta["localsidecar"].get("summary") else None
        expected = old.decode("utf-8")
        if name == "scalar-tags.md":
            expected = expected.replace("tags: chess\n", "tags:\n  - chess\n")
        ok = untag(new.decode("utf-8"), tool, key, old.decode("utf-8")) == expected
        tags = [str(t) for t in meta.get("tags", [])]
        out[name] = (
            "tagged"
            if ok and len(tags) == len(set(tags)) and tags[len(tags) - len(tool) :] == tool
            else "bad"
        )
    return out


@pytest.fixture(scope="module")
def tagged(tmp_path_factory, session_models_dir):
    vault = tmp_path_factory.mktemp("tag") / "vault"
    before = make_vault(vault)
    code, first, err1 = run_until(vault, session_models_dir, 1, signal.SIGINT)
    after_int = state(vault, before)
    code2, second, _ = run_until(vault, session_models_dir, 3, signal.SIGKILL)
    after_kill = state(vault, before)
    code3, third, err3 = invoke([str(vault), "--json", *FAST], session_models_dir)
    return dict(
        vault=vault,
        before=before,
        interrupted=(code, first, err1, after_int),
        killed=(code2, second, after_kill),
        finished=(code3, third, err3),
    )


def test_ctrl_c_finishes_the_note_in_progress_and_exits_130(tagged):
    code, records, err, after = tagged["interrupted"]
    assert code == 130, err
    written = [r["path"] for r in records if r["status"] == "tagged"]
    assert 1 <= len(written) <= 2  # the note that triggered the signal, and the one in flight
    assert "interrupted: " in err and " notes completed" in err
    assert sorted(n for n, s in after.items() if s == "tagged") == sorted(
        Path(p).relative_to(tagged["vault"]).as_posix() for p in written
    )
    assert set(after.values()) <= {"as-was", "tagged"}


def test_a_kill_leaves_every_note_as_it_was_or_whole(tagged):
    code, records, after = tagged["killed"]
    assert code == -signal.SIGKILL
    assert set(after.values()) <= {"as-was", "tagged"}, after
    assert sum(s == "tagged" for s in after.values()) >= 4


def test_the_run_finishes_every_note_and_says_each_skip(tagged):
    code, records, err = tagged["finished"]
    assert code == 0, err
    vault, before = tagged["vault"], tagged["before"]
    final = state(vault, before)
    assert {n for n, s in final.items() if s == "as-was"} == set(SKIPPED) - {"link.md"}
    assert set(final.values()) == {"as-was", "tagged"}
    skips = {Path(r["path"]).name: r["skipped"] for r in records if r["status"] == "skipped"}
    assert set(skips) == set(SKIPPED)
    for name, words in SKIPPED.items():
        assert words in skips[name], (name, skips[name])
        assert sum(name in line for line in err.splitlines()) == 1  # one line each
    assert not list(vault.rglob("*.part"))  # the kill's temporary file, if any, is gone
    tagged_now = [r for r in records if r["status"] == "tagged"]
    assert tagged_now and all(r["tags_added"] for r in tagged_now)
    assert f"{len(tagged_now)} notes tagged" in err
    # run's default summary on the embedded pair (--summary auto: extract): the note's own words
    summarized = [r for r in tagged_now if r["summary"]]
    assert summarized
    for r in summarized:
        body = split_note(Path(r["path"]).read_text(encoding="utf-8")).body
        body_words = set(re.findall(r"\w+", body.lower()))
        assert set(re.findall(r"\w+", r["summary"].lower())) <= body_words, (r["path"], r["summary"])


def test_the_users_tags_stay_first_in_their_order(tagged):
    vault = tagged["vault"]
    expect = {
        "comments.md": ["food", "town"],
        "flow-tags.md": ["market", "local"],
        "hash-tags.md": ["#bees", "#garden"],
        "nested-tags.md": ["area/transport", "project/2025-q1"],
        "hugo.md": ["club"],
        "daily/2024-03-01.md": ["daily", "journal"],
    }
    for name, tags in expect.items():
        meta, _ = second_reader(read(vault / name))
        assert [str(t) for t in meta["tags"]][: len(tags)] == tags
        assert len(meta["tags"]) > len(tags)
    assert b"tags: [market,  local, " in (vault / "flow-tags.md").read_bytes()
    crlf = (vault / "crlf.md").read_bytes()
    assert crlf.count(b"\n") == crlf.count(b"\r\n")
    assert (vault / "bom.md").read_bytes().startswith("\ufeff---\n".encode())


def test_a_rerun_writes_nothing_and_loads_no_model(tagged, session_models_dir, monkeypatch):
    from localsidecar.decoding import engine

    def tripwire(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(engine.Engine, "__init__", tripwire)
    vault = tagged["vault"]
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in vault.rglob("*") if p.is_file()}
    code, records, err = invoke([str(vault), "--json", *FAST], session_models_dir)
    assert code == 0, err
    assert {r["status"] for r in records} == {"up-to-date", "skipped"}
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in vault.rglob("*") if p.is_file()} == files
    assert err.strip().endswith("0 notes tagged, 26 up to date, 11 skipped")


def test_a_changed_body_is_redone_and_dry_run_writes_nothing(tagged, session_models_dir, tmp_path):
    vault = tmp_path / "v"
    shutil.copytree(tagged["vault"], vault, symlinks=True)
    note = vault / "no-front-matter.md"
    note.write_bytes(note.read_bytes() + b"\nThe council will meet the operator on Friday.\n")
    changed = note.read_bytes()
    r = CliRunner().invoke(
        main,
        ["tag", str(note), "--dry-run", *FAST],
        env={"LOCALSIDECAR_MODELS_DIR": str(session_models_dir)},
    )
    assert r.exit_code == 0, r.output
    name = str(note.resolve()).lstrip("/")  # tmp_path is outside the working folder
    assert r.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n@@ ") and "a//" not in r.stdout
    assert "+localsidecar: {tags: [" in r.stdout and note.read_bytes() == changed
    assert "1 note would be tagged, 0 up to date" in r.stderr
    code, records, err = invoke([str(vault), "--json", *FAST], session_models_dir)
    assert [Path(r["path"]).name for r in records if r["status"] == "tagged"] == ["no-front-matter.md"]
    body = split_note(note.read_text()).body
    assert body.endswith("The council will meet the operator on Friday.\n")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--prefix", "a b/"], "--prefix 'a b/'"),
        (["--summary-key", "tags"], "--summary-key tags"),
        (["--mode", "baseline"], "--mode baseline writes no hashtags"),
        (["--vocabulary", "existing", "--spelling", "kebab"], "--spelling does not apply with --vocabulary"),
        (["--vocabulary", "/nonexistent/tags.txt"], "--vocabulary /nonexistent/tags.txt: cannot read"),
    ],
)
def test_bad_options_are_one_line(args, words, tmp_path):
    note = tmp_path / "n.md"
    note.write_text("A note about the ferry.\n")
    r = CliRunner().invoke(main, ["tag", str(note), *args])
    assert words in one_line_error(r)
    assert note.read_text() == "A note about the ferry.\n"


def test_diff_names_are_written_as_git_writes_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert diff_name(tmp_path / "vault" / "n.md") == "vault/n.md"
    assert diff_name(Path("vault/n.md")) == "vault/n.md"
    assert diff_name(Path("/etc/notes/n.md")) == "etc/notes/n.md"


def test_notes_in_a_read_only_folder_are_skipped_before_any_summary(tmp_path, session_models_dir):
    """Was: the first summary ran, then `Error: cannot write ro/a.md`, exit 2,
    the notes after it never run. Now each is one skip line and the others
    are tagged. A read-only file system needs user namespaces (skipped without)."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-Urm", "true"]).returncode != 0:
        pytest.skip("no user namespaces here: a read-only file system is not tested")
    vault = tmp_path / "v"
    (vault / "ro").mkdir(parents=True)
    note = "---\ntitle: {0}\n---\nNote {0}: the ferry to the island runs twice a day in summer.\n"
    for name in ("ro/a.md", "ro/b.md", "w.md"):
        (vault / name).write_text(note.format(name))
    before = {name: (vault / name).read_bytes() for name in ("ro/a.md", "ro/b.md")}
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
    cmd = [sys.executable, "-m", "localsidecar.cli", "tag", vault, "--json", "--max-tokens", "4"]
    p = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script, "sh", vault / "ro", *map(str, cmd)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**env(session_models_dir), "PYTHONPATH": str(ROOT)},
    )
    assert p.returncode == 0, p.stderr
    status = {
        Path(r["path"]).relative_to(vault).as_posix(): r["status"]
        for r in map(json.loads, p.stdout.splitlines())
    }
    assert status == {"ro/a.md": "skipped", "ro/b.md": "skipped", "w.md": "tagged"}, p.stdout
    for name in before:
        assert (
            f"skipped: {vault / name}: cannot write in {vault / 'ro'} (Read-only file system); left as it is"
            in p.stderr
        )
        assert (vault / name).read_bytes() == before[name]
    assert "localsidecar:" in (vault / "w.md").read_text()


def test_a_reader_gone_from_stdout_ends_tag_with_141_counting_the_note_it_wrote(tmp_path, session_models_dir):
    """`tag VAULT | head -1`: was `0 notes tagged` on stderr while the note
    had been written (it was counted after its stdout line, which failed)."""
    vault = tmp_path / "v"
    vault.mkdir()
    for name in ("a.md", "b.md"):
        (vault / name).write_text(f"Note {name}: the ferry to the island runs twice a day in summer.\n")
    r, w = os.pipe()
    os.close(r)  # the reader has gone
    try:
        p = subprocess.run(
            [sys.executable, "-m", "localsidecar.cli", "tag", vault, "--max-tokens", "4"],
            stdout=w,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            cwd=ROOT,
            env={**env(session_models_dir), "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(w)
    assert p.returncode == 141, p.stderr
    written = [name for name in ("a.md", "b.md") if "localsidecar:" in (vault / name).read_text()]
    assert written == ["a.md"] and p.stderr.splitlines()[-1] == "1 note tagged, 0 up to date", p.stderr
