"""Faults an adversarial pass found, each on the real CLI and the embedded
SmolLM2 pair: ids that shift under resume, odd folder entries,
stdin without end, unchecked output paths, an empty hashtag lead, a corrupt
summaries cache, --save-tokens after SIGKILL, the vocabulary check."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import ROOT, one_line_error, token_text_offset

ENV = {"LOCALSIDECAR_THREADS": "1"}
FAST = ["--max-tokens", "2", "--mode", "target-only"]


def invoke(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV, **kw)


def records(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cli(args, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "localsidecar", *map(str, args)],
        env=env,
        capture_output=True,
        timeout=300,
        **kw,
    )


# --- item 4: resume by id and text ---------------------------------------------------------


def test_a_file_added_next_to_a_same_stem_file_does_not_take_its_id(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("The river flooded the town in May.\n")
    out = tmp_path / "s.jsonl"
    r = invoke(["run", folder, *FAST, "--out", out, "--json"])
    assert r.exit_code == 0, r.output
    assert [(x["id"], x["text_sha256"]) for x in records(out)] == [
        ("a", sha("The river flooded the town in May."))
    ]
    (folder / "a.md").write_text("Bakers cut prices after a good harvest.\n")
    r = invoke(["run", folder, *FAST, "--out", out, "--json"])
    assert r.exit_code == 0, r.output
    recs = records(out)
    # the record "a" still stands for a.txt's text; both files now run under their full names
    assert [(x["id"], x["text_sha256"]) for x in recs] == [
        ("a", sha("The river flooded the town in May.")),
        ("a.md", sha("Bakers cut prices after a good harvest.")),
        ("a.txt", sha("The river flooded the town in May.")),
    ]
    r = invoke(["run", folder, *FAST, "--out", out])
    assert r.exit_code == 0 and "skipped 2 documents already in" in r.stderr
    assert len(records(out)) == 3


def test_a_changed_text_under_a_known_id_is_refused_with_one_line(tmp_path):
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"text": "First text about rain."}\n{"text": "Second text about snow."}\n')
    out = tmp_path / "s.jsonl"
    assert invoke(["run", docs, *FAST, "--out", out]).exit_code == 0
    before = out.read_bytes()
    docs.write_text(
        '{"text": "A new first line."}\n{"text": "First text about rain."}\n'
        '{"text": "Second text about snow."}\n'
    )
    line = one_line_error(invoke(["run", docs, *FAST, "--out", out]))
    assert f"{docs}:1: id 'd-1' has a record in {out} of another text" in line and "--overwrite" in line, line
    assert out.read_bytes() == before
    r = invoke(["run", docs, *FAST, "--out", out, "--overwrite"])
    assert r.exit_code == 0 and [x["id"] for x in records(out)] == ["d-1", "d-2", "d-3"]


def test_records_of_older_versions_without_a_text_hash_still_resume(tmp_path):
    doc = tmp_path / "n.txt"
    doc.write_text("A short note on tides.\n")
    out = tmp_path / "s.jsonl"
    assert invoke(["run", doc, *FAST, "--out", out]).exit_code == 0
    old = [{k: v for k, v in rec.items() if k != "text_sha256"} for rec in records(out)]
    out.write_text("".join(json.dumps(rec) + "\n" for rec in old))
    doc.write_text("A short note on tides, edited.\n")  # no hash: the id is trusted as before
    r = invoke(["run", doc, *FAST, "--out", out])
    assert r.exit_code == 0 and "skipped 1 document already in" in r.stderr, r.output
    assert len(records(out)) == 1


# --- item 7: odd folder entries ------------------------------------------------------------


def test_a_symlink_loop_dangling_link_and_fifo_are_skipped_with_a_note_each(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "ok.txt").write_text("Only this file is a document.\n")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "gone.txt").symlink_to(tmp_path / "missing.txt")
    os.mkfifo(folder / "pipe.txt")
    (folder / "zero.txt").symlink_to("/dev/zero")
    (folder / "sub").mkdir()
    for extra in ([], ["--skip-bad"]):
        r = invoke(["run", folder, *FAST, "--json", *extra])
        assert r.exit_code == 0, r.output
        assert [json.loads(x)["id"] for x in r.stdout.splitlines()] == ["ok"]
        notes = [x for x in r.stderr.splitlines() if x.startswith("note: ")]
        assert f"note: {folder / 'loop.txt'}: skipped, a symbolic link that cannot be followed" in "\n".join(
            notes
        )
        assert f"note: {folder / 'gone.txt'}: skipped, a dangling symbolic link" in notes
        assert f"note: {folder / 'pipe.txt'}: skipped, a FIFO (named pipe), not a regular file" in notes
        assert f"note: {folder / 'zero.txt'}: skipped, a character device, not a regular file" in notes
        assert not any("sub" in n for n in notes)


# --- item 9: stdin without end ------------------------------------------------------------


def test_endless_stdin_stops_at_max_chars_or_is_refused_at_the_cap():
    yes = subprocess.Popen(["yes", "spring rain"], stdout=subprocess.PIPE)
    try:
        r = cli(["run", "-", "--max-chars", "100", *FAST, "--json"], stdin=yes.stdout)
    finally:
        yes.kill()
        yes.wait()
    assert r.returncode == 0, r.stderr
    assert "<stdin>: read the first 1048576 bytes only (--max-chars 100)" in r.stderr.decode()
    assert json.loads(r.stdout)["text_sha256"] == sha(("spring rain\n" * 10)[:96].rstrip())
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        r = cli(["run", "-", *FAST], stdin=yes.stdout)
    finally:
        yes.kill()
        yes.wait()
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 2 and lines == [
        "Error: <stdin>: more than 64 MiB; pass --max-chars to read only the "
        "start, or save the text to a file"
    ], lines
    with open("/dev/zero", "rb") as zero:  # endless and binary: called binary, with or without --max-chars
        for extra in ([], ["--max-chars", "100"]):
            r = cli(["run", "-", *FAST, *extra], stdin=zero)
            assert r.returncode == 2 and r.stderr.decode().splitlines() == [
                "Error: <stdin> is a binary file (NUL byte at offset 0), not text"
            ], r.stderr


# --- item 3: --save-tokens after SIGKILL ---------------------------------------------------


def test_save_tokens_stays_consistent_with_out_after_sigkill_and_resume(tmp_path):
    from .helpers import wait_for_lines

    folder = tmp_path / "docs"
    folder.mkdir()
    for i, topic in enumerate(["rain", "snow", "wind", "fog", "hail", "sun"]):
        (folder / f"d{i}.txt").write_text(f"A short report on {topic} in the hills, day {i}.\n")
    acc, tok, summ = tmp_path / "acc.jsonl", tmp_path / "tok.jsonl", tmp_path / "s.jsonl"
    args = [
        sys.executable,
        "-m",
        "localsidecar",
        "acceptance",
        str(folder),
        "--max-tokens",
        "8",
        "--conditions",
        "baseline",
        "--resamples",
        "1000",
        "--out",
        str(acc),
        "--save-tokens",
        str(tok),
        "--summaries",
        str(summ),
    ]
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_lines(acc, 2, p)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    done = [r["id"] for r in records(acc)]
    assert len(done) >= 2
    saved = [r["id"] for r in records(tok)]
    assert saved[: len(done)] == done and len(saved) <= len(done) + 1  # at most the document being saved
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ids = [r["id"] for r in records(acc)]
    assert sorted(ids) == [f"d{i}" for i in range(6)]
    assert [r["id"] for r in records(tok)] == ids
    assert all(rec["summary_ids"] and rec["bare_ids"] for rec in records(tok))
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".part")]


# --- item 5: output paths checked before any work ------------------------------------------


def test_csv_plot_and_out_dir_paths_are_checked_before_any_model_loads(tmp_path):
    notes = ROOT / "examples" / "notes.txt"
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    cases = [
        (
            ["quant", notes, "--quants", "Q8_0", "--plot", "nodir/x.png"],
            "--plot nodir/x.png: nodir does not exist",
        ),
        (
            ["quant", notes, "--quants", "Q8_0", "--csv", "nodir/x.csv"],
            "--csv nodir/x.csv: nodir does not exist",
        ),
        (["quant", notes, "--quants", "Q8_0", "--csv", tmp_path], "is a directory"),  # click's own check
        (
            ["quant", notes, "--quants", "Q8_0", "--csv", "/proc/x.csv"],
            "--csv /proc/x.csv: cannot write in /proc",
        ),
        (
            ["hashtags-eval", notes, "--csv", f"{afile}/x.csv"],
            f"--csv {afile}/x.csv: {afile} is not a folder",
        ),
        (["hashtags-eval", notes, "--csv", "/proc/x.csv"], "--csv /proc/x.csv: cannot write in /proc"),
        (["sweep", notes, "--out-dir", "/proc/new/sub"], "--out-dir /proc/new/sub: cannot write in /proc"),
        (["sweep", notes, "--out-dir", afile / "sub"], f"--out-dir {afile / 'sub'}: {afile} is not a folder"),
    ]
    for args, needle in cases:
        r = invoke(args)
        line = one_line_error(r)
        assert needle in line, (args, line)
    assert not (tmp_path / "nodir").exists() and afile.read_text() == "x"


# --- item 6: an empty hashtag_lead ---------------------------------------------------------


@pytest.mark.parametrize("mode", ["rebased", "masked", "visible"])
def test_an_empty_hashtag_lead_is_refused_at_input_with_one_line(tmp_path, mode):
    prompts = tmp_path / "p.json"
    prompts.write_text('{"hashtag_lead": ""}')
    out = tmp_path / "s.jsonl"
    line = one_line_error(
        invoke(
            [
                "run",
                ROOT / "examples" / "notes.txt",
                "--max-tokens",
                "4",
                "--mode",
                mode,
                "--prompts",
                prompts,
                "--out",
                out,
            ]
        )
    )
    assert "prompt text 'hashtag_lead' is empty" in line, line
    assert not out.exists() or out.read_bytes() == b""
    prompts.write_text('{"hashtag_lead": " "}')  # one token is enough
    r = invoke(
        [
            "run",
            ROOT / "examples" / "notes.txt",
            "--max-tokens",
            "4",
            "--mode",
            mode,
            "--prompts",
            prompts,
            "--json",
        ]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["hashtags_raw"]


# --- item 8: a corrupt --summaries cache ---------------------------------------------------


def test_a_corrupt_summaries_cache_line_is_named_or_skipped_and_counted(tmp_path):
    doc = tmp_path / "n.txt"
    doc.write_text("Rain fell on the valley for three days and the river rose.\n")
    summ = tmp_path / "s.jsonl"
    acc = [
        "acceptance",
        doc,
        "--max-tokens",
        "8",
        "--conditions",
        "baseline",
        "--resamples",
        "1000",
        "--summaries",
        summ,
        "--json",
    ]
    r = invoke(acc)
    assert r.exit_code == 0, r.output
    (good,) = records(summ)
    assert 0 < len(good["summary_ids"]) <= 8

    def with_ids(ids) -> None:
        summ.write_text(json.dumps({**good, "summary_ids": ids}) + "\n")

    for ids, needle in [
        ([60000], "holds token id 60000, outside the target's vocabulary (0 to 49151)"),
        ([1] * 5000, "has 5000 tokens, more than --max-tokens 8"),
    ]:
        with_ids(ids)
        line = one_line_error(invoke(acc))
        assert f"{summ}:1: the cached summary of n " in line and needle in line, line
    for ids in ([-5], [True], "not a list"):  # skipped and counted; the summary is generated again
        with_ids(ids)
        r = invoke(acc)
        assert r.exit_code == 0, r.output
        assert f"note: 1 unreadable line in {summ} ignored" in r.stderr
        assert json.loads(r.stdout)["summaries"] == {"generated": 1, "cached": 0}
        assert records(summ)[-1]["summary_ids"] == good["summary_ids"]


# --- item 10: every token text is compared -------------------------------------------------


def test_a_draft_whose_token_1000_has_another_text_is_refused(pair_paths, tmp_path):
    target, draft = pair_paths
    data = bytearray(draft.read_bytes())
    off, n = token_text_offset(bytes(data), 1000)
    assert n >= 1
    data[off + n - 1] = ord("Q") if data[off + n - 1] != ord("Q") else ord("Z")  # same length, another text
    changed = tmp_path / "draft-token1000.gguf"
    changed.write_bytes(bytes(data))
    line = one_line_error(
        invoke(["run", ROOT / "examples" / "notes.txt", *FAST[:2], "--target", target, "--draft", changed])
    )
    assert "do not share a vocabulary: 1 of 49152 token texts differ (first id 1000)" in line, line


# --- seen, not counted: --threads beyond the CPUs, an empty --variants list -----------------


def test_threads_beyond_the_logical_cpus_are_capped_with_a_note():
    cpus = os.cpu_count()
    r = invoke(["run", ROOT / "examples" / "notes.txt", *FAST, "--threads", 512, "--json"])
    assert r.exit_code == 0, r.output
    assert f"note: --threads 512 is more than this machine's {cpus} logical CPUs; using {cpus}" in r.stderr
    assert json.loads(r.stdout)["summary_tokens"] == 2


@pytest.mark.parametrize("spec", [",", " , ,", " "])
def test_a_variants_list_naming_nothing_is_refused(spec):
    line = one_line_error(invoke(["hashtags-eval", ROOT / "examples" / "notes.txt", "--variants", spec]))
    assert "--variants names no variant" in line and "choose from all, " in line, line


def test_appended_jsonl_keeps_one_line_per_done_id_and_removes_a_stale_part(tmp_path):
    from localsidecar.io.atomic import AppendedJsonl

    tok = tmp_path / "tok.jsonl"
    stale = tmp_path / ".tok.jsonl.k1ll3d.part"
    stale.write_text('{"id": "a"')
    tok.write_text('{"id": "a", "n": 1}\nnot json\n{"id": "b", "n": 2}\n{"id": "a", "n": 3}\n{"id": "c", "n"')
    with AppendedJsonl(tok, keep_ids=["a", "b"]) as f:
        assert f.notes == [f"removed {stale}, left by an interrupted run"]
        f.write({"id": "d", "n": 4})
    assert records(tok) == [{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "d", "n": 4}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.jsonl"]
    before = tok.read_bytes()
    with AppendedJsonl(tok, keep_ids=["a", "b", "d"]):  # nothing to drop: the file is not rewritten
        pass
    assert tok.read_bytes() == before
