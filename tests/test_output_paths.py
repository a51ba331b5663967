"""Every file a command writes, checked before any model loads against every
file it reads or makes: the pair's model files (a draft still to be derived
into the models folder too), the documents of a folder given as input, and
empty names; a summaries cache that cannot be written fails before the first
summary is generated."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main

from .helpers import EXAMPLES, one_line_error

REPO = Path(__file__).resolve().parents[1]
NOTES = str(EXAMPLES / "notes.txt")
FAST = ["--max-tokens", "2", "--mode", "target-only"]
DRAFT_NAME = "SmolLM2-135M-Instruct.Q4_0.gguf"  # the embedded pair's derived draft
ACC = ["--max-tokens", "2", "--conditions", "baseline", "--resamples", "1000"]


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"LOCALSIDECAR_THREADS": "1"})


def test_an_output_naming_the_draft_to_be_derived_is_refused_before_deriving(tmp_path):
    """Was: the derived draft truncated while mapped (bus error, exit 135)
    and every later run refusing the JSONL it became."""
    models = tmp_path / "md"
    models.mkdir()
    out = models / DRAFT_NAME
    line = one_line_error(invoke(["run", NOTES, *FAST, "--models-dir", models, "--out", out, "--overwrite"]))
    assert line == (
        f"Error: --out {out} is also an input of this command (a model file of the pair); "
        "writing it would destroy it: name another file"
    )
    assert list(models.iterdir()) == []  # refused before the draft was derived


def test_an_output_naming_the_derived_draft_leaves_it_intact(tmp_path, session_models_dir):
    models = tmp_path / "md"
    models.mkdir()
    draft = models / DRAFT_NAME
    shutil.copy2(
        session_models_dir / DRAFT_NAME, draft
    )  # derived already (a copy: a regression must not damage the session's)
    before = draft.stat()
    for args in (
        ["run", NOTES, *FAST, "--out", draft, "--overwrite"],
        ["acceptance", NOTES, *ACC, "--save-tokens", draft],
        ["quant", NOTES, "--quants", "Q8_0", "--csv", draft],
        ["hashtags-eval", NOTES, "--variants", "keywords", "--csv", draft],
        ["sweep", NOTES, *ACC[:2], "--summaries", draft],
    ):
        line = one_line_error(invoke([*args, "--models-dir", models]))
        assert "is also an input of this command (a model file of the pair)" in line, line
    after = draft.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_tag_refuses_a_note_that_is_the_draft_to_be_derived(tmp_path):
    """A note named on the command line is read whatever its extension: one
    where the pair's draft is derived would be overwritten by the derivation
    (and tagged into the draft after). Refused before any model loads."""
    models = tmp_path / "md"
    models.mkdir()
    note = models / DRAFT_NAME
    note.write_text("---\ntitle: x\n---\nThe bakery opens a second shop.\n")
    before = note.read_bytes()
    line = one_line_error(invoke(["tag", note, "--models-dir", models, "--max-tokens", "2"]))
    assert line == f"Error: note {note} is a model file of the pair; writing it would destroy it"
    assert note.read_bytes() == before and sorted(models.iterdir()) == [note]


def test_an_output_naming_a_document_of_an_input_folder_is_refused(tmp_path):
    """Was: `run d --out d/doc1.txt --overwrite` skipped doc1.txt as the output
    and replaced the user's document by the records of the others."""
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "doc1.txt").write_text("The bakery opens a second shop.\n")
    (docs / "doc2.txt").write_text("The river flooded the fields.\n")
    (docs / "more.jsonl").write_text('{"id": "x", "text": "The school roof gets solar panels."}\n')
    originals = {p.name: p.read_bytes() for p in docs.iterdir()}
    for out in ("doc1.txt", "more.jsonl"):
        line = one_line_error(invoke(["run", docs, *FAST, "--out", docs / out, "--overwrite"]))
        assert line == (
            f"Error: --out {docs / out} is a document of {docs}, an input of this command; "
            "writing it would destroy it: name another file"
        )
    assert {p.name: p.read_bytes() for p in docs.iterdir()} == originals


@pytest.mark.parametrize(
    "args",
    [
        ["run", NOTES, *FAST, "--out", ""],
        ["acceptance", NOTES, *ACC, "--save-tokens", ""],
        ["acceptance", NOTES, *ACC, "--summaries", ""],
        ["quant", NOTES, "--quants", "Q8_0", "--csv", ""],
        ["quant", NOTES, "--quants", "Q8_0", "--plot", ""],
        ["hashtags-eval", NOTES, "--variants", "keywords", "--csv", ""],
        ["sweep", NOTES, *ACC[:2], "--out-dir", ""],
        ["run", NOTES, *FAST, "--prompts", ""],
        ["hashtags-eval", NOTES, "--variants", "keywords", "--labels", ""],
    ],
    ids=["out", "save-tokens", "summaries", "quant-csv", "plot", "tags-csv", "out-dir", "prompts", "labels"],
)
def test_an_empty_file_name_is_one_line(args, tmp_path, monkeypatch):
    """Was: exit 0 with nothing written and no word (or the current folder)."""
    monkeypatch.chdir(tmp_path)
    option = args[args.index("") - 1]
    line = one_line_error(invoke(args))
    assert line.startswith(f"Error: {option} needs a ") and line.endswith(" name; got an empty one")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_summaries_cache_fails_before_any_model_loads(tmp_path, pair_paths):
    """Was: the models loaded and a summary was generated first. A read-only
    file system needs user namespaces (skipped without); a fresh probe cache
    stays empty, so no model was loaded."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-Urm", "true"]).returncode != 0:
        pytest.skip("no user namespaces here: a read-only file system is not tested")
    ro, probes = tmp_path / "ro", tmp_path / "probes"
    ro.mkdir()
    script = 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"'
    cmd = [sys.executable, "-m", "localsidecar.cli", "acceptance", NOTES, *ACC, "--summaries", ro / "s.jsonl"]
    p = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script, "sh", ro, *map(str, cmd)],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "LOCALSIDECAR_THREADS": "1",
            "LOCALSIDECAR_PROBE_CACHE": str(probes),
        },
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr == f"Error: cannot write summaries file {ro / 's.jsonl'} (Read-only file system)\n"
    assert not probes.exists()  # no model was loaded (the probe caches each kind it loads)
