"""Odd but possible inputs, each with the answer it must get: sentence ends
around quotes and percent signs, folders of links and FIFOs, endless or
oddly cut stdin, output paths, an empty hashtag lead in every mode, thread
counts, variant lists, corrupt --summaries lines, resume after edits, the
vocabulary check, LOCALSIDECAR_* variables with junk, odd options of run,
acceptance and tag, a folder without notes. (They were scripts/fault_catalogue.py, run by hand; most
run below the command line or refuse before a model loads, so they stay
cheap. The costlier cases of the same families are in test_resume_faults.py.)"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.backend import Model
from localsidecar.cli import main
from localsidecar.decoding.engine import check_vocab_compatible
from localsidecar.decoding.sentences import complete_summary, sentence_ends
from localsidecar.errors import LocalsidecarError
from localsidecar.io.documents import STDIN_FLOOR_BYTES, load_many
from localsidecar.lab.acceptance import Lab, SummaryStore

from .helpers import EXAMPLES, one_line_error, token_text_offset

NOTES = str(EXAMPLES / "notes.txt")
FAST = ["--max-tokens", "2", "--mode", "target-only"]


def invoke(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], env={"LOCALSIDECAR_THREADS": "1"}, **kw)


def error_of(fn, *args, **kw) -> str:
    with pytest.raises(LocalsidecarError) as info:
        fn(*args, **kw)
    return str(info.value)


# --- sentence ends ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["76%. The", "(£600m). Then", 'said "no". The', "%.", ").", '".', "x%.\nY", "a]. B", "5 %. A", "…%. B"],
)
def test_sentence_ends_after_closing_marks_and_percent_signs(text):
    shown, complete = complete_summary(text)
    ends = sentence_ends(text, final=True)
    assert text.startswith(shown) and ends == sorted(ends) and all(0 < e <= len(text) for e in ends)
    assert complete == bool(ends) and (not complete or len(shown) == ends[-1])


# --- folders ----------------------------------------------------------------------------------


def test_folders_of_only_a_dangling_link_or_only_a_fifo_have_no_documents(tmp_path):
    dangling, fifo = tmp_path / "dangling", tmp_path / "fifo"
    dangling.mkdir()
    fifo.mkdir()
    (dangling / "x.txt").symlink_to("/nonexistent/x")
    os.mkfifo(fifo / "p")
    for folder in (dangling, fifo):
        assert error_of(load_many, [str(folder)]) == (
            f"{folder}: folder has no documents (hidden files and subfolders are ignored)"
        )


def test_a_two_link_loop_is_skipped_beside_a_document(tmp_path):
    folder = tmp_path / "loops"
    folder.mkdir()
    (folder / "l1").symlink_to(folder / "l2")
    (folder / "l2").symlink_to(folder / "l1")
    (folder / "fine.txt").write_text("Fine text here.\n")
    loaded = load_many([str(folder)])
    assert [d.id for d in loaded.docs] == ["fine"]
    assert [n.split(": skipped, ")[0] for n in loaded.notes] == [str(folder / "l1"), str(folder / "l2")]


def test_three_files_of_one_stem_take_their_file_names_as_ids(tmp_path):
    for ext, text in (("txt", "Text of a dot txt."), ("md", "Text of a dot md."), ("rst", "Third a.")):
        (tmp_path / f"a.{ext}").write_text(text + "\n")
    assert [(d.id, d.text) for d in load_many([str(tmp_path)]).docs] == [
        ("a.md", "Text of a dot md."),
        ("a.rst", "Third a."),
        ("a.txt", "Text of a dot txt."),
    ]


# --- stdin ------------------------------------------------------------------------------------


class Endless(io.RawIOBase):
    """A stream that never ends (`yes`, /dev/zero), counting what is read from it."""

    def __init__(self, pattern: bytes) -> None:
        self.pattern, self.read_bytes = pattern, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = len(buf)
        chunk = (self.pattern * (n // len(self.pattern) + 1))[:n]
        buf[:n] = chunk
        self.read_bytes += n
        return n


def stdin_docs(data: bytes | io.RawIOBase, **kw):
    stream = io.BufferedReader(data) if isinstance(data, io.RawIOBase) else io.BytesIO(data)
    return load_many(["-"], stdin=io.TextIOWrapper(stream, encoding="utf-8"), **kw)


def test_endless_stdin_is_read_only_as_far_as_max_chars_can_use():
    source = Endless(b"spring rain\n")
    loaded = stdin_docs(source, max_chars=1_000_000)
    assert len(loaded.docs[0].text) <= 1_000_000 and source.read_bytes < 5_000_000
    assert loaded.notes == [
        "<stdin>: read the first 4000004 bytes only (--max-chars 1000000); the rest of the input was not read"
    ]


def test_multibyte_stdin_cut_mid_character_keeps_whole_characters():
    loaded = stdin_docs(("é€😀" * 900_000).encode(), max_chars=40)
    assert loaded.docs[0].text == ("é€😀" * 14)[:40] and "read the first" in loaded.notes[0]


@pytest.mark.parametrize(
    "data, max_chars, text, noted",
    [
        (b"word\r\n" * 400_000, 30, ("word\n" * 6).strip(), True),  # CRLF read as LF
        (b"a" * STDIN_FLOOR_BYTES, 5, "aaaaa", False),  # exactly at the floor: all of it was read
        (b"Short text.\n", 5, "Short", False),  # small: no note
    ],
    ids=["crlf", "floor", "small"],
)
def test_stdin_with_max_chars(data, max_chars, text, noted):
    loaded = stdin_docs(data, max_chars=max_chars)
    assert loaded.docs[0].text == text and bool(loaded.notes) is noted


@pytest.mark.parametrize(
    "data, max_chars", [(b"", None), (b" " * (2 << 20) + b"text", 10)], ids=["empty", "blank-then-text"]
)
def test_stdin_without_text_in_reach_is_empty(data, max_chars):
    assert error_of(stdin_docs, data, max_chars=max_chars) == "<stdin>: document is empty"


# --- output paths, hashtag leads, threads, variants: refused before any model loads ----------


def test_output_paths_that_cannot_be_written_are_refused_and_dev_null_is_fine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x")
    assert "Directory 'afile' is a file" in one_line_error(invoke(["sweep", NOTES, "--out-dir", "afile"]))
    line = one_line_error(invoke(["hashtags-eval", NOTES, "--variants", "keywords", "--csv", "new/ok.csv"]))
    assert line == "Error: --csv new/ok.csv: new does not exist"
    r = invoke(["hashtags-eval", NOTES, "--variants", "keywords", "--csv", "/dev/null"])
    assert r.exit_code == 0, r.output
    r = invoke(["hashtags-eval", NOTES, "--variants", ",keywords", "--json"])  # an empty item is no variant
    assert r.exit_code == 0, r.output
    assert [row["variant"] for row in json.loads(r.stdout.splitlines()[0])["rows"]] == ["keywords"]
    assert sorted(os.listdir()) == ["afile"]


@pytest.mark.parametrize("mode", ["deferred", "baseline", "target-only"])
def test_an_empty_hashtag_lead_is_refused_in_every_mode(mode, tmp_path):
    prompts = tmp_path / "p.json"
    prompts.write_text('{"hashtag_lead": ""}')
    line = one_line_error(invoke(["run", NOTES, "--max-tokens", "4", "--mode", mode, "--prompts", prompts]))
    assert "prompt text 'hashtag_lead' is empty" in line, line


def test_thread_counts_beyond_the_cpus_are_capped_and_zero_is_refused(tmp_path):
    cpus = os.cpu_count()
    missing = tmp_path / "missing.txt"
    for args, env in ((["--threads", str(cpus + 1)], {}), ([], {"LOCALSIDECAR_THREADS": "99"})):
        r = CliRunner().invoke(main, ["run", str(missing), *FAST, *args], env=env)
        n = args[1] if args else "99"
        assert r.stderr.splitlines() == [
            f"note: --threads {n} is more than this machine's {cpus} logical CPUs; using {cpus}",
            f"Error: {missing}: no such file or directory",
        ], r.stderr
    assert "--threads" in one_line_error(invoke(["run", NOTES, *FAST, "--threads", "0"]))


@pytest.mark.parametrize("with_out", [True, False], ids=["grows-with-out", "replaced"])
def test_save_tokens_in_a_missing_folder_or_naming_a_folder_is_refused(with_out, tmp_path):
    out = ["--out", tmp_path / "A.jsonl"] if with_out else []
    args = ["acceptance", NOTES, "--max-tokens", "8", "--conditions", "baseline", *out, "--save-tokens"]
    for target, needle in ((tmp_path / "nodir" / "T.jsonl", "No such file or directory"), (tmp_path, "")):
        line = one_line_error(invoke([*args, target]))
        assert str(target) in line and needle in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == (["A.jsonl"] if with_out else [])


# --- --summaries lines ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cached_line(engine, tmp_path_factory) -> tuple[Path, dict]:
    """A summaries file holding the real cached summary of notes.txt at --max-tokens 8."""
    path = tmp_path_factory.mktemp("summaries") / "s.jsonl"
    Lab(engine, max_tokens=8, summaries=SummaryStore(path)).prepare("notes", Path(NOTES).read_text())
    (line,) = path.read_text().splitlines()
    return path, json.loads(line)


def prepare_with(engine, path: Path, line: str):
    path.write_text(line + "\n")
    return Lab(engine, max_tokens=8, summaries=SummaryStore(path)).prepare("notes", Path(NOTES).read_text())


@pytest.mark.slow
@pytest.mark.parametrize(
    "ids, needle",
    [
        ([49152], "holds token id 49152, outside the target's vocabulary (0 to 49151)"),
        ([1] * 9, "has 9 tokens, more than --max-tokens 8"),
    ],
)
def test_a_cached_summary_the_target_cannot_have_made_is_refused_naming_its_line(
    ids, needle, engine, cached_line, tmp_path
):
    _, good = cached_line
    message = error_of(prepare_with, engine, tmp_path / "s.jsonl", json.dumps({**good, "summary_ids": ids}))
    assert message.startswith(f"{tmp_path / 's.jsonl'}:1: the cached summary of notes ") and needle in message


@pytest.mark.slow
@pytest.mark.parametrize("ids", [[49151], [1] * 8, []], ids=["last-id", "max-tokens", "empty"])
def test_a_cached_summary_at_the_edges_is_used(ids, engine, cached_line, tmp_path):
    _, good = cached_line
    prep = prepare_with(engine, tmp_path / "s.jsonl", json.dumps({**good, "summary_ids": ids}))
    assert prep.cached and prep.summary == ids


@pytest.mark.parametrize(
    "line",
    [
        '{"key": "K", "summary_ids": [1.5]}',
        '{"key": "K", "summary_ids": ["x"]}',
        "not json at all",
        '{"key": 5, "summary_ids": [1]}',
        "[" * 100_000 + "]" * 100_000,
    ],
    ids=["float", "string", "not-json", "key-not-text", "deep"],
)
def test_an_unreadable_summaries_line_is_counted_and_skipped(line, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(line + '\n{"key": "other", "summary_ids": [1, 2]}\n')
    store = SummaryStore(path)
    assert store.bad_lines == 1 and store.snapshot() == {"other": [1, 2]}


# --- resume after edits ------------------------------------------------------------------------


def test_resume_after_jsonl_edits(tmp_path):
    docs, out = tmp_path / "d.jsonl", tmp_path / "R.jsonl"

    def lines(*texts) -> None:
        docs.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))

    run = ["run", docs, *FAST, "--out", out]
    lines("One.", "Two.")
    assert invoke(run).exit_code == 0
    r = invoke(run)
    assert r.exit_code == 0 and "skipped 2 documents already in" in r.stderr and "running 0" in r.stderr
    lines("One.", "Two.", "Three.")  # appended: the others keep their ids
    r = invoke(run)
    assert r.exit_code == 0 and "skipped 2 documents already in" in r.stderr and "running 1" in r.stderr
    lines("One.", "Two edited.", "Three.")
    assert f"{docs}:2: id 'd-2' has a record in {out} of another text" in one_line_error(invoke(run))
    lines("  One.  ", "Two.", "Three.")  # outer whitespace: the same normalized text
    r = invoke(run)
    assert r.exit_code == 0 and "skipped 3 documents already in" in r.stderr
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    out.write_text("".join(json.dumps({**x, "text_sha256": 5}) + "\n" for x in recs))  # not a hash
    lines("Changed.", "Two edited.", "Three.")
    r = invoke(run)  # a hash that is no string is no hash: trusted by id, as records of older versions
    assert r.exit_code == 0 and "skipped 3 documents already in" in r.stderr, r.output
    line = one_line_error(invoke([*run, "--max-chars", "3"]))
    assert "holds results of a different configuration (max_chars null in the file, 3 now)" in line, line


def test_resume_after_a_folder_document_was_edited(tmp_path):
    folder, out = tmp_path / "fold", tmp_path / "RF.jsonl"
    folder.mkdir()
    (folder / "a.txt").write_text("A txt.\n")
    (folder / "a.md").write_text("A md.\n")
    assert invoke(["run", folder, *FAST, "--out", out]).exit_code == 0
    (folder / "a.txt").write_text("A txt edited.\n")
    line = one_line_error(invoke(["run", folder, *FAST, "--out", out]))
    assert f"{folder / 'a.txt'}: id 'a.txt' has a record in {out} of another text" in line, line


# --- the vocabulary check ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "token, needle", [(0, "eot ids 0 vs 2"), (30000, "(first id 30000)"), (49151, "(first id 49151)")]
)
def test_a_draft_whose_token_text_changed_is_refused(token, needle, engine, pair_paths, tmp_path):
    data = bytearray(pair_paths[1].read_bytes())
    off, n = token_text_offset(bytes(data), token)
    data[off + n - 1] = ord("Q") if data[off + n - 1] != ord("Q") else ord("Z")  # same length, another text
    changed = tmp_path / "draft.gguf"
    changed.write_bytes(bytes(data))
    draft = Model(changed)
    try:
        assert needle in error_of(check_vocab_compatible, engine.target, draft)
    finally:
        draft.close()


# --- options, variables and tag's inputs refused before any model loads -------------------------


def run_env(args, env: dict[str, str]):
    return CliRunner().invoke(main, [str(a) for a in args], env={"LOCALSIDECAR_THREADS": "1", **env})


@pytest.mark.parametrize(
    "name, value, needle",
    [
        ("LOCALSIDECAR_THREADS", "abc", "--threads"),
        ("LOCALSIDECAR_THREADS", "-2", "--threads"),
        ("LOCALSIDECAR_DRAFT_MAX", "zz", "--draft-max"),
        ("LOCALSIDECAR_DRAFT_MAX_CAP", "99", "--draft-max-cap"),
        ("LOCALSIDECAR_P_MIN", "2", "--p-min"),
        ("LOCALSIDECAR_NUMBERS", "junk", "--numbers"),
        ("LOCALSIDECAR_SUMMARY", "junk", "--summary"),
        ("LOCALSIDECAR_MODELS_DIR", "/dev/null", "cannot create models dir /dev/null"),
        # were: any other value silently meant the default (a typo kept AMX off, the probe on)
        ("LOCALSIDECAR_AMX", "maybe", "LOCALSIDECAR_AMX='maybe': not one of 1, on, true, yes, 0, off"),
        ("LOCALSIDECAR_EXTRA_BUFTS", "ture", "LOCALSIDECAR_EXTRA_BUFTS='ture': not one of 1, on, true"),
        ("LOCALSIDECAR_PROBE", "junk", "LOCALSIDECAR_PROBE='junk': not one of 0, off, no, false, force"),
    ],
)
def test_a_variable_with_junk_is_one_line(name, value, needle, tmp_path):
    out = tmp_path / "o.jsonl"
    line = one_line_error(run_env(["run", NOTES, *FAST, "--out", out], {name: value}))
    assert needle in line, line
    assert not out.exists() or out.read_bytes() == b""  # nothing written but the empty --out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", NOTES, "--ctx", "0"], "--ctx"),
        (["run", NOTES, "--workers", "0"], "--workers"),
        (["run", NOTES, "--ray", "local", "--workers", "0"], "--workers"),
        (["run", NOTES, "--draft-max", "999"], "--draft-max"),
        (["run", NOTES, "--prompts", EXAMPLES], "is a directory"),
        (["acceptance", NOTES, "--out", "x.jsonl", "--save-tokens", "x.jsonl"], "name the same file"),
        (["acceptance", NOTES, "--summaries", NOTES], "is also an input of this command (a document)"),
        (["tag", NOTES, "--max-tags", "0"], "--max-tags"),
        (["tag", NOTES, "--prefix", "#x"], "a tag prefix is letters"),
        (["tag", NOTES, "--summary-key", "tags"], "that key holds the tags"),
        (["tag", EXAMPLES, "--ext", ""], "--ext needs an extension"),  # was: 0 notes, exit 0, no word why
        (["tag", EXAMPLES, "--ext", " . "], "--ext needs an extension"),
    ],
    ids=lambda v: " ".join(map(str, v)) if isinstance(v, list) else None,
)
def test_odd_options_are_one_line(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line_error(invoke(args))
    assert needle in line, line
    assert os.listdir() == []


def test_tag_says_when_a_folder_holds_no_notes(tmp_path):
    """Was: `0 notes tagged, 0 up to date`, exit 0, nothing saying why (a vault of .txt files)."""
    (tmp_path / "a.txt").write_text("A text file, not a note.\n")
    r = invoke(["tag", tmp_path])
    assert r.exit_code == 0 and r.stderr.splitlines() == [
        f"note: no notes found in {tmp_path} (files ending in .md, .markdown; see --ext)",
        "0 notes tagged, 0 up to date",
    ], r.stderr


def test_an_empty_vocabulary_file_is_one_line(tmp_path):
    empty = tmp_path / "v.txt"
    empty.write_text("\n\n")
    line = one_line_error(invoke(["tag", NOTES, "--vocabulary", empty, "--dry-run"]))
    assert line == f"Error: --vocabulary {empty}: no tags in it"
