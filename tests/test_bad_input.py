"""Bad input to every command fails with one clear line and leaves
--out alone; odd but valid input works; long runs do not grow.

Everything runs the real CLI (CliRunner) or the real engine on the embedded
SmolLM2 pair. The broken models are real files: a truncated copy of the
target, and GGUFs derived with llama.cpp's quantizer whose metadata is
overridden (an empty chat template; another end-of-sequence id).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.backend import Model, quantize
from localsidecar.cli import main
from localsidecar.decoding import engine as engine_mod
from localsidecar.decoding.engine import Engine, EngineConfig
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.io.formatting import shown

from .helpers import EXAMPLES, TEST_THREADS, one_line_error

NOTES = str(EXAMPLES / "notes.txt")
# A result line of some earlier run: every failing command must leave it byte for byte.
PRIOR = b'{"id": "earlier", "config": "0123456789abcdef", "summary": "keep me"}\n'
ENV = {"LOCALSIDECAR_THREADS": "1"}  # one thread: many times faster on a shared, busy CPU
FAST = ["--max-tokens", "2", "--mode", "target-only"]


def invoke(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV, **kw)


def records(path) -> list[dict]:
    data = Path(path).read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


@pytest.fixture()
def prior(tmp_path) -> Path:
    out = tmp_path / "prior.jsonl"
    out.write_bytes(PRIOR)
    return out


def fails_cleanly(args, out: Path | None, needle: str, code: int = 2) -> None:
    """`args` fails with one line containing `needle`, with --out OUT kept intact,
    also with --overwrite (which must not empty the file before a record is ready)."""
    if out is None:
        assert needle in one_line_error(invoke(args), code)
        return
    line = one_line_error(invoke([*args, "--out", out, "--overwrite"]), code)
    assert needle in line, line
    assert out.read_bytes() == PRIOR
    # Without --overwrite the earlier record of another configuration may be
    # refused first (the file is opened before the models are loaded).
    line = one_line_error(invoke([*args, "--out", out]), code)
    assert needle in line or "holds results of a different configuration" in line, line
    assert out.read_bytes() == PRIOR


# --- derived model files ---------------------------------------------------------


@pytest.fixture(scope="session")
def bad_models(pair_paths, tmp_path_factory) -> dict[str, Path]:
    """Real GGUFs that are wrong in one way each."""
    target = pair_paths[0]
    folder = tmp_path_factory.mktemp("bad-models")
    truncated = folder / "truncated.gguf"
    with open(target, "rb") as f:
        truncated.write_bytes(f.read(1 << 20))
    torn = folder / "torn.gguf"  # header whole, tensor data cut short
    with open(target, "rb") as f:
        torn.write_bytes(f.read(os.path.getsize(target) // 2))
    text = folder / "model.gguf"
    text.write_text("this is not a model\n")
    no_template = folder / "no-template.Q4_0.gguf"
    quantize(target, no_template, "Q4_0", 1, kv_overrides={"tokenizer.chat_template": ""})
    other_eos = folder / "other-eos.Q4_0.gguf"
    quantize(target, other_eos, "Q4_0", 1, kv_overrides={"tokenizer.ggml.eos_token_id": 0})
    return {
        "truncated": truncated,
        "torn": torn,
        "text": text,
        "no_template": no_template,
        "other_eos": other_eos,
    }


# --- documents: every command, every bad input -------------------------------------

COMMANDS_WITH_OUT = ["run", "acceptance", "hashtags-eval", "quant"]
ALL_DOC_COMMANDS = [*COMMANDS_WITH_OUT, "sweep"]


def _make_bad_docs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    (tmp / "empty-folder").mkdir()
    (tmp / "hidden-only").mkdir()
    (tmp / "hidden-only" / ".secret.txt").write_text("not a document")
    (tmp / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    (tmp / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp / "empty.txt").write_bytes(b"")
    (tmp / "blank.txt").write_text(" \n\t\r\n  \u3000\n")
    (tmp / "bad.jsonl").write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": "cut\n')
    (tmp / "dup.jsonl").write_text('{"id": "a", "text": "one"}\n\n{"id": "a", "text": "two"}\n')
    (tmp / "notobj.jsonl").write_text('["text", "in a list"]\n')
    (tmp / "notext.jsonl").write_text('{"id": "a", "body": "wrong key"}\n')
    (tmp / "surrogate.jsonl").write_text('{"id": "s", "text": "half \\ud800 a pair"}\n')
    return {
        "nonexistent": ([str(tmp / "no" / "such.txt")], "no such file or directory"),
        # /proc/self/mem exists but reading it from offset 0 fails (EIO), even as root
        "unreadable": (["/proc/self/mem"], "cannot read"),
        "empty folder": ([str(tmp / "empty-folder")], "folder has no documents"),
        "hidden files only": ([str(tmp / "hidden-only")], "folder has no documents"),
        "binary": ([str(tmp / "binary.txt")], "binary file"),
        "not UTF-8": (
            [str(tmp / "latin1.txt")],
            "not UTF-8 text (byte 0xe9 at offset 3); pass --replace-errors",
        ),
        "empty": ([str(tmp / "empty.txt")], "document is empty"),
        "whitespace only": ([str(tmp / "blank.txt")], "document is empty"),
        "malformed JSONL line": ([str(tmp / "bad.jsonl")], "bad.jsonl:2: malformed JSON"),
        "duplicate ids": ([str(tmp / "dup.jsonl")], "dup.jsonl:3: duplicate id 'a' (first on line 1)"),
        "JSONL array": ([str(tmp / "notobj.jsonl")], "notobj.jsonl:1: expected a JSON object"),
        "JSONL without text": ([str(tmp / "notext.jsonl")], "no 'text' or 'article' field"),
        "lone surrogate": ([str(tmp / "surrogate.jsonl")], "unpaired surrogate"),
        "stdin twice": (["-", "-"], "stdin"),
    }


@pytest.fixture(scope="module")
def bad_docs(tmp_path_factory):
    return _make_bad_docs(tmp_path_factory.mktemp("bad-docs"))


@pytest.mark.parametrize("command", ALL_DOC_COMMANDS)
def test_bad_documents_fail_with_one_line_and_keep_out(command, bad_docs, tmp_path):
    for case, (docs, needle) in bad_docs.items():
        out = tmp_path / f"{command}.jsonl"
        out.write_bytes(PRIOR)
        try:
            fails_cleanly([command, *docs], out if command in COMMANDS_WITH_OUT else None, needle)
        except AssertionError as exc:
            raise AssertionError(f"{command}: {case}: {exc}") from None


def test_permission_denied_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file; /proc/self/mem covers unreadable files")
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    fails_cleanly(["run", locked], None, "permission denied")


def test_empty_stdin_is_an_empty_document():
    assert "<stdin>: document is empty" in one_line_error(invoke(["run", "-"], input=""))


def test_bad_and_odd_documents_go_on_with_skip_bad(tmp_path, pair_paths):
    """--skip-bad drops the bad lines and files (one note each, naming file:line),
    --replace-errors decodes Latin-1, ids stay unique, the rest runs."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "same.txt").write_text("The bakery on Main Street opens at six every morning.")
    (tmp_path / "b" / "same.txt").write_text("The river flooded the lower fields after three days of rain.")
    (tmp_path / "latin1.txt").write_bytes("Le caf\xe9 ferme \xe0 midi le dimanche.".encode("latin-1"))
    (tmp_path / "empty.txt").write_text("   \n")
    jl = tmp_path / "mixed.jsonl"
    jl.write_text(
        "\n".join(
            [
                '{"id": "j1", "text": "Solar panels now cover the school roof."}',
                '{"id": "j2", "text": "unterminated',
                '{"id": "j1", "text": "A second record with the same id."}',
                '{"id": "j3", "article": "The library extends its opening hours in winter."}',
            ]
        )
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    r = invoke(
        [
            "run",
            tmp_path / "a",
            tmp_path / "b",
            tmp_path / "latin1.txt",
            tmp_path / "empty.txt",
            jl,
            "--skip-bad",
            "--replace-errors",
            "--json",
            "--out",
            out,
            *FAST,
        ]
    )
    assert r.exit_code == 0, r.output
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert any("empty.txt: document is empty" in n for n in notes), notes
    assert any("mixed.jsonl:2: malformed JSON" in n for n in notes), notes
    assert any("mixed.jsonl:3: duplicate id 'j1' (first on line 1)" in n for n in notes), notes
    assert any("id 'same' is already used; renamed to 'same-2'" in n for n in notes), notes
    ids = [rec["id"] for rec in records(out)]
    assert ids == ["same", "same-2", "latin1", "j1", "j3"]
    assert [json.loads(line)["id"] for line in r.stdout.splitlines()] == ids


ODD = [
    (
        "ctrl\x01\x1b[31m",
        "Bell \x07, escape \x1b[31mred\x1b[0m, form feed \x0c and a NUL \x00 inside the text.",
    ),
    ("[/oops] [bold]", "Rich markup [bold]is not markup[/bold] here, nor [/oops] or [link=x]this[/link]."),
    ("<|im_end|>", "Special token text <|im_end|><|im_start|>assistant stays plain text in a document."),
    ("rtl-emoji", "שלום עולם مرحبا 👩‍👩‍👧‍👦 🇫🇷 e\u0301\u0301\u0301 Z̸̢̛a̵l̴g̷o \u200b\u200d\ufeff\U0010ffff ﷽"),
]


def test_control_characters_and_odd_unicode_run_and_print(tmp_path, monkeypatch, pair_paths):
    """Odd ids and text go through the real model, the human-readable output
    (rich markup in ids and summaries stays text) and the result file."""
    monkeypatch.setattr(engine_mod, "HASHTAG_MAX_TOKENS", 8)  # a smaller workload, same code path
    jl = tmp_path / "odd.jsonl"
    jl.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in ODD), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    r = invoke(["run", jl, "--max-tokens", "3", "--mode", "rebased", "--out", out])
    assert r.exit_code == 0, (r.output, r.exception)
    for doc_id, _ in ODD[:2]:  # control characters shown as escapes, never sent to the terminal
        assert shown(doc_id) in r.stdout and "\x1b" not in r.stdout
    recs = records(out)
    assert [rec["id"] for rec in recs] == [i for i, _ in ODD]
    assert all(rec["summary_tokens"] > 0 and isinstance(rec["hashtags"], list) for rec in recs)
    # the acceptance tables print the same ids
    r = invoke(["acceptance", jl, "--max-tokens", "3", "--conditions", "baseline,rebased"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "[/oops] [bold]" in r.stdout


# --- models -----------------------------------------------------------------------------


def test_bad_model_files_fail_with_one_line_and_keep_out(bad_models, pair_paths, prior):
    target, draft = map(str, pair_paths)
    cases = [
        (["--target", bad_models["text"], "--draft", draft], "not a GGUF model file"),
        (["--target", bad_models["truncated"], "--draft", draft], "truncated header"),
        (["--target", target, "--draft", bad_models["torn"]], "GGUF file is truncated"),
        (
            ["--target", target, "--draft", bad_models["other_eos"]],
            "do not share a vocabulary: eos ids 2 vs 0",
        ),
        (["--target", target, "--draft", EXAMPLES / "docs"], "not a file"),
    ]
    for model_args, needle in cases:
        fails_cleanly(["run", NOTES, *model_args, *FAST[:2]], prior, needle)
    # the same checks guard every command that loads models
    fails_cleanly(
        ["acceptance", NOTES, "--target", target, "--draft", bad_models["other_eos"]],
        prior,
        "do not share a vocabulary",
    )
    fails_cleanly(
        ["hashtags-eval", NOTES, "--target", bad_models["torn"], "--draft", draft],
        prior,
        "GGUF file is truncated",
    )
    fails_cleanly(["sweep", NOTES, "--target", bad_models["truncated"], "--draft", draft], None, "truncated")
    fails_cleanly(
        ["quant", NOTES, "--target", bad_models["torn"], "--quants", "Q8_0"], prior, "GGUF file is truncated"
    )
    fails_cleanly(
        ["quant", NOTES, "--target", target, "--draft", bad_models["text"], "--quants", "Q8_0"],
        prior,
        "not a GGUF model file",
    )


def test_model_without_chat_template_falls_back_to_a_plain_prompt_and_says_so(bad_models):
    r = invoke(
        [
            "run",
            NOTES,
            "--target",
            bad_models["no_template"],
            "--draft",
            bad_models["no_template"],
            "--json",
            "--max-tokens",
            "3",
            "--mode",
            "baseline",
        ]
    )
    assert r.exit_code == 0, (r.output, r.exception)
    notes = [line for line in r.stderr.splitlines() if "chat template" in line]
    assert len(notes) == 1 and "plain prompt" in notes[0], r.stderr
    rec = json.loads(r.stdout)
    assert rec["summary_tokens"] > 0
    # no ChatML markers: the prompt is the document, the instruction, then "Response:"
    model = Model(bad_models["no_template"])
    try:
        markers = model.tokenize("<|im_start|><|im_end|>", special=True)
        assert len(markers) == 2 and not set(markers) & set(rec["prompt_ids"])
        assert model.detokenize(rec["prompt_ids"]).endswith("\n\nResponse:\n")
    finally:
        model.close()


def test_same_file_as_target_and_draft_gives_alpha_one(pair_paths):
    target = str(pair_paths[0])
    r = invoke(
        [
            "run",
            NOTES,
            "--target",
            target,
            "--draft",
            target,
            "--json",
            "--max-tokens",
            "8",
            "--mode",
            "baseline",
            "--draft-max",
            "2",
            "--summary",
            "free",
        ]
    )
    assert r.exit_code == 0, (r.output, r.exception)
    rec = json.loads(r.stdout)
    assert rec["drafted"] > 0 and rec["accepted"] == rec["drafted"]
    # α is the mean overlap Σ min(p, q) of the target's verify rows (batches
    # of k + 1 tokens) and the draft's rows (one token at a time): one model,
    # but llama.cpp's logits depend on the batch size (DESIGN 'Results depend
    # on the batch size'), so the overlap is 1 only up to that rounding.
    # Measured on this prompt (SmolLM2-135M Q4_1, AVX2, no AMX; 1 and 2
    # threads alike): 1 - α = 0 at --draft-max 1, 5.4e-5 at 2, 5.4e-3 at 4.
    # A verify row compared at the next position gives 1 - α = 0.50.
    assert 1.0 - rec["alpha"] < 1e-3, rec["alpha"]


# --- sizes and options ------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_line(tmp_path_factory) -> Path:
    rng = random.Random(5)
    words = "the council river bakery solar budget meeting report water school library road".split()
    text = " ".join(rng.choice(words) for _ in range(40_000))[:200_000]
    path = tmp_path_factory.mktemp("long") / "long.txt"
    path.write_text(text)
    assert len(text) == 200_000 and "\n" not in text
    return path


def test_a_200000_character_line_fails_with_the_context_numbers_or_works_with_max_chars(
    long_line, prior, pair_paths
):
    # --ctx auto: past the 8192 tokens the models were trained on, skipped; nothing else to do is an error
    r = invoke(["run", long_line, "--out", prior, "--overwrite", "--max-tokens", "16"])
    assert r.exit_code == 2, (r.output, r.exception)
    lines = [x for x in r.stderr.splitlines() if not x.startswith("[1/1] long: skipped")]
    assert len(lines) == 2 and "Traceback" not in r.output, r.stderr
    assert lines[0].startswith("skipped: document 'long': prompt of") and "16 summary tokens" in lines[0]
    assert (
        "needs a context of" in lines[0]
        and "more than the 8192 tokens" in lines[0]
        and "--max-chars" in lines[0]
    )
    assert lines[1] == (
        "Error: 1 of the 1 documents skipped: longer than the models' training context; nothing was run"
    )
    assert prior.read_bytes() == PRIOR
    line = one_line_error(
        invoke(["run", long_line, "--out", prior, "--overwrite", "--max-tokens", "16", "--ctx", "4096"])
    )
    assert "document 'long': prompt of" in line and "16 summary tokens" in line
    assert "needs a context of" in line and "but --ctx is 4096" in line
    assert "raise --ctx" in line and "--max-chars" in line
    assert prior.read_bytes() == PRIOR
    line = one_line_error(
        invoke(["acceptance", long_line, "--out", prior, "--overwrite", "--max-tokens", "4", "--ctx", "4096"])
    )
    assert "needs a context of" in line and "--ctx" in line and "--max-chars" in line
    assert prior.read_bytes() == PRIOR
    r = invoke(["run", long_line, "--max-chars", "1500", "--json", *FAST])
    assert r.exit_code == 0, (r.output, r.exception)
    rec = json.loads(r.stdout)
    assert rec["id"] == "long" and 0 < rec["summary_tokens"] <= 2


OPTION_CASES = [
    (["run", NOTES, "--max-tokens", "0"], "--max-tokens"),
    (["run", NOTES, "--max-tokens", "-5"], "--max-tokens"),
    (["run", NOTES, "--draft-max", "0"], "--draft-max"),
    (["run", NOTES, "--temperature", "-0.5"], "--temperature"),
    (["run", NOTES, "--temperature", "nan"], "--temperature"),
    (["run", NOTES, "--temperature", "inf"], "--temperature"),
    (["run", NOTES, "--p-min", "-0.1"], "--p-min"),
    (["run", NOTES, "--p-min", "1.5"], "--p-min"),
    (["run", NOTES, "--p-min", "nan"], "--p-min"),
    (["run", NOTES, "--max-chars", "0"], "--max-chars"),
    (["run", NOTES, "--ctx", "8"], "--ctx"),
    (["run", NOTES, "--mode", "sideways"], "--mode"),
    (["run", NOTES, "--pair", "nosuch"], "unknown pair 'nosuch'; choose from embedded"),
    (["run", NOTES, "--target", NOTES], "--target needs --draft"),
    (["run", NOTES, "--prompts", EXAMPLES / "docs" / "river.txt"], "is not valid JSON"),
    (["run", NOTES, "--instruction", "bad \udcff byte"], "not valid UTF-8"),
    (["acceptance", NOTES, "--max-tokens", "0"], "--max-tokens"),
    (["acceptance", NOTES, "--conditions", ""], "--conditions"),
    (["acceptance", NOTES, "--conditions", "baseline,sideways"], "choose from baseline,visible"),
    (["acceptance", NOTES, "--pair", "nosuch"], "choose from embedded"),
    (["hashtags-eval", NOTES, "--max-tokens", "-1"], "--max-tokens"),
    (["hashtags-eval", NOTES, "--draft-max", "0"], "--draft-max"),
    (["hashtags-eval", NOTES, "--variants", "nosuch"], "unknown variant 'nosuch'; choose from all"),
    (["hashtags-eval", NOTES, "--pair", "nosuch"], "choose from embedded"),
]
SWEEP_CASES = [
    (["sweep", NOTES, "--n-sweep", ""], "--n-sweep"),
    (["sweep", NOTES, "--n-sweep", " "], "--n-sweep"),
    (["sweep", NOTES, "--n-sweep", "25,,50"], "--n-sweep"),
    (["sweep", NOTES, "--n-sweep", "25,x"], "'x' is not a whole number"),
    (["sweep", NOTES, "--n-sweep", "-5"], "'-5' is not a whole number"),
    (["sweep", NOTES, "--n-sweep", "2.5"], "'2.5' is not a whole number"),
    (["sweep", NOTES, "--depth-cap", "0"], "--depth-cap"),
    (["sweep", NOTES, "--out-dir", NOTES], "--out-dir"),
    (["pull", "nosuch"], "unknown pair 'nosuch'; choose from embedded"),
    (["pull", "embedded", "--quant", "Q9_9"], "choose from Q4_1"),
    (["pull", "embedded", "--draft-quant", ""], "unknown quantization"),
    (["models", "--models-dir", NOTES], "--models-dir"),
    (["doctor", "--models-dir", NOTES], "--models-dir"),
    (["nosuchcommand"], "No such command"),
]
QUANT_CASES = [
    # each names the valid quantizations
    (["quant", NOTES, "--quants", ""], "names from F32,F16,Q4_0"),
    (["quant", NOTES, "--quants", " , "], "names from F32,F16,Q4_0"),
    (["quant", NOTES, "--quants", "Q4_0,,Q8_0"], "names from F32,F16,Q4_0"),
    (["quant", NOTES, "--quants", "Q4_0,Q9_9"], "'Q9_9'"),
    (["quant", NOTES, "--pair", "nosuch"], "unknown pair 'nosuch'; choose from embedded"),
    (["quant", NOTES, "--alpha-margin", "2"], "--alpha-margin"),
    (["quant", NOTES, "--vary", "both"], "--vary"),
]


@pytest.mark.parametrize(
    "args, needle", OPTION_CASES, ids=lambda v: " ".join(map(str, v)) if isinstance(v, list) else None
)
def test_bad_options_are_usage_errors_and_keep_out(args, needle, prior):
    fails_cleanly(args, prior, needle)


@pytest.mark.parametrize(
    "args, needle", SWEEP_CASES, ids=lambda v: " ".join(map(str, v)) if isinstance(v, list) else None
)
def test_bad_options_of_other_commands(args, needle):
    fails_cleanly(args, None, needle)


@pytest.mark.parametrize(
    "args, needle", QUANT_CASES, ids=lambda v: " ".join(map(str, v)) if isinstance(v, list) else None
)
def test_bad_quant_lists_name_the_valid_ones(args, needle, prior):
    fails_cleanly(args, prior, needle)


def test_unexpected_errors_are_one_line_too(monkeypatch):
    """A bug is still one line (exit 1) naming the exception and where it was raised."""
    import localsidecar.cli.models as cm

    def broken(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cm.registry_models, "load_registry", broken)
    line = one_line_error(invoke(["models"]), code=1)
    assert "internal error at test_bad_input.py:" in line and "ZeroDivisionError: a bug" in line


# --- long runs ------------------------------------------------------------------------


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def test_fifty_documents_in_one_engine_do_not_grow_memory(pair_paths, monkeypatch):
    """Contexts are created once and cleared per document: resident memory after
    the 50th document is within 10% of what it was after the 5th."""
    monkeypatch.setattr(engine_mod, "HASHTAG_MAX_TOKENS", 6)
    rng = random.Random(50)
    words = (
        "the a council river bakery solar budget meeting report water school library road "
        "festival museum bridge orchard harbour"
    ).split()
    texts = [
        " ".join(rng.choice(words) for _ in range(rng.randint(6, 30))).capitalize() + "." for _ in range(50)
    ]
    modes = ["baseline", "target-only", "rebased", "baseline", "deferred"]
    spec = SpecConfig(max_tokens=4)
    with Engine(
        pair_paths[0], pair_paths[1], EngineConfig(n_ctx=512, threads=TEST_THREADS), PromptConfig()
    ) as eng:
        contexts = (eng.t_ctx, eng.d_ctx)
        rss = {}
        for i, text in enumerate(texts, start=1):
            res = eng.run(f"doc-{i}", text, modes[i % len(modes)], spec)
            assert res.gen.tokens
            if i in (5, 50):
                rss[i] = _rss_kb()
        assert (eng.t_ctx, eng.d_ctx) == contexts  # reused, never rebuilt
    assert rss[50] <= rss[5] * 1.10, rss


def test_overwrite_empties_the_file_only_when_the_first_record_is_written(tmp_path):
    from localsidecar.io.results import ResultWriter

    out = tmp_path / "out.jsonl"
    with ResultWriter(out, {"v": 1}) as w:
        w.write({"id": "a"})
        w.write({"id": "b"})
        assert [r["id"] for r in w.records()] == ["a", "b"]
    before = out.read_bytes()
    with ResultWriter(out, {"v": 2}, overwrite=True) as w:  # e.g. the model then fails to load
        assert w.done_ids == set() and w.records() == []
    assert out.read_bytes() == before
    with ResultWriter(out, {"v": 2}, overwrite=True) as w:
        w.write({"id": "c"})
        assert [r["id"] for r in w.records()] == ["c"]
    assert [r["id"] for r in records(out)] == ["c"]


# --- issue 13: nothing lost, ever ----------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
ACC = ["--max-tokens", "3", "--conditions", "baseline,rebased"]


def child_env(**extra) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "LOCALSIDECAR_THREADS": "1", **extra}


def run_cli(args, timeout=600, **kw) -> subprocess.CompletedProcess:
    """The real program in a child process (where a hang, an abort or a full
    stdout cannot take pytest down)."""
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "localsidecar.cli", *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        env=child_env(),
        **kw,
    )


@pytest.fixture(scope="module")
def acc_results(tmp_path_factory, pair_paths):
    """A real acceptance run: two documents in acc.jsonl, their tokens saved."""
    folder = tmp_path_factory.mktemp("aliasing")
    docs = folder / "docs"
    docs.mkdir()
    (docs / "a0.txt").write_text("The bakery on Main Street opens a second shop near the station in May.")
    (docs / "a1.txt").write_text(
        "Heavy rain flooded the lower fields; farmers expect a late harvest this year."
    )
    out, tokens = folder / "acc.jsonl", folder / "tokens.jsonl"
    r = invoke(
        ["acceptance", docs, *ACC, "--out", out, "--save-tokens", tokens, "--summaries", folder / "s.jsonl"]
    )
    assert r.exit_code == 0, (r.output, r.exception)
    assert [rec["id"] for rec in records(out)] == ["a0", "a1"]
    return docs, out, tokens


def test_outputs_aliasing_the_results_file_are_refused_before_anything_is_written(acc_results):
    """Cases 1 and 3: --save-tokens or --summaries naming the --out file (by
    the same path, a hard link, a symlink or a relative path) is one line,
    exit 2, and the results stay byte for byte."""
    docs, out, _ = acc_results
    before = out.read_bytes()
    folder = out.parent
    hard, sym = folder / "hard.jsonl", folder / "sym.jsonl"
    if not hard.exists():
        os.link(out, hard)
        sym.symlink_to(out)
    cases = [
        ("--save-tokens", out),
        ("--save-tokens", hard),
        ("--summaries", out),
        ("--summaries", sym),
        ("--summaries", os.path.relpath(out)),
    ]
    for option, path in cases:
        line = one_line_error(invoke(["acceptance", docs, *ACC, "--out", out, option, path]))
        assert f"--out and {option} name the same file ({path}); give each output its own file" in line, line
        assert out.read_bytes() == before, (option, path)
    # written over an input: a document, the model
    line = one_line_error(invoke(["acceptance", docs / "a0.txt", *ACC, "--out", docs / "a0.txt"]))
    assert "--out " in line and "is also an input of this command (a document)" in line
    model = folder / "model.gguf"
    model.write_bytes(b"GGUF not really")
    line = one_line_error(invoke(["run", NOTES, "--target", model, "--draft", model, "--out", model]))
    assert "is also an input of this command (--target)" in line and model.read_bytes() == b"GGUF not really"


def test_distinct_outputs_resume_and_save_tokens_keeps_the_skipped_documents(acc_results):
    """The same files, distinct: the rerun skips both documents, --out is left
    alone, and the rewritten --save-tokens file still holds both documents."""
    docs, out, tokens = acc_results
    before = out.read_bytes()
    r = invoke(["acceptance", docs, *ACC, "--out", out, "--save-tokens", tokens])
    assert r.exit_code == 0, (r.output, r.exception)
    assert f"skipped 2 documents already in {out}" in r.stderr
    assert out.read_bytes() == before
    saved = records(tokens)
    assert [rec["id"] for rec in saved] == ["a0", "a1"]
    assert all(rec["summary_ids"] and rec["bare_ids"] for rec in saved)
    assert not [p for p in tokens.parent.iterdir() if p.name.endswith(".part")]


def test_quant_csv_or_plot_naming_the_results_file_is_refused(prior, tmp_path):
    """Case 2 (and --plot, and sweep's --out-dir files)."""
    for option in ("--csv", "--plot"):
        line = one_line_error(invoke(["quant", NOTES, "--quants", "Q8_0", "--out", prior, option, prior]))
        assert f"--out and {option} name the same file" in line
        assert prior.read_bytes() == PRIOR
    table = tmp_path / "t.csv"
    line = one_line_error(invoke(["quant", NOTES, "--quants", "Q8_0", "--csv", table, "--plot", table]))
    assert "--csv and --plot name the same file" in line and not table.exists()
    line = one_line_error(
        invoke(["sweep", NOTES, "--out-dir", tmp_path, "--summaries", tmp_path / "depth.csv"])
    )
    assert "--summaries and --out-dir (depth.csv) name the same file" in line
    line = one_line_error(invoke(["hashtags-eval", NOTES, "--out", prior, "--csv", prior]))
    assert "--out and --csv name the same file" in line and prior.read_bytes() == PRIOR


def test_check_distinct_compares_identities():
    from localsidecar.cli.errors import UserError
    from localsidecar.cli.paths import check_distinct, identity

    assert identity("/dev/null") is None  # devices never clash: --csv /dev/null --plot /dev/null
    check_distinct(inputs={}, outputs={"--csv": "/dev/null", "--plot": "/dev/null"})
    assert identity("no-such-dir/x.csv") == ("path", os.path.realpath("no-such-dir/x.csv"))
    assert identity("new.csv") == identity(os.path.abspath("new.csv"))  # not yet there: folder + name
    with pytest.raises(UserError, match="--a and --b name the same file"):
        check_distinct(inputs={}, outputs={"--a": "new.csv", "--b": "./new.csv"})
    check_distinct(inputs={"a document": [NOTES, "-"]}, outputs={"--out": "new.csv"})


def test_atomic_writers_leave_the_old_file_on_failure(tmp_path):
    """A CSV whose rows fail half-way, or a write beyond the file size limit (a
    full disk), leaves the previous file; no temporary file stays behind."""
    from localsidecar.errors import LocalsidecarError
    from localsidecar.io import atomic

    table = tmp_path / "t.csv"
    atomic.write_csv(table, ["a", "b"], [{"a": 1, "b": None}, {"a": 2, "b": "x", "extra": 0}])
    good = table.read_bytes()
    assert good == b"a,b\n1,\n2,x\n"

    def rows():
        yield {"a": 3, "b": 4}
        raise LocalsidecarError("failed while computing the rows")

    with pytest.raises(LocalsidecarError):
        atomic.write_csv(table, ["a", "b"], rows())
    assert table.read_bytes() == good and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    atomic.write_csv("/dev/null", ["a"], [{"a": 1}])  # written in place, never renamed over
    assert Path("/dev/null").is_char_device()
    link = tmp_path / "link.csv"
    link.symlink_to(table)
    atomic.write_csv(link, ["a"], [{"a": 5}])
    assert link.is_symlink() and table.read_bytes() == b"a\n5\n"
    good = table.read_bytes()
    script = (
        "import resource, signal, sys\n"
        "from localsidecar.io import atomic\n"
        "from localsidecar.errors import LocalsidecarError\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "try:\n"
        "    atomic.write_csv(sys.argv[1], ['a'], [{'a': 'x' * 100}] * 1000)\n"
        "except LocalsidecarError as exc:\n"
        "    print(exc)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", script, str(table)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert p.stdout.startswith(f"cannot write {table}: File too large; the file was left as it was"), p
    assert table.read_bytes() == good
    assert sorted(x.name for x in tmp_path.iterdir()) == ["link.csv", "t.csv"]


TEMPERATURE_SCRIPT = """
import json, math, sys
from localsidecar.decoding.engine import Engine, EngineConfig
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.io.formatting import shown
with Engine(sys.argv[1], sys.argv[2], EngineConfig(n_ctx=512, threads=1), PromptConfig()) as eng:
    for t in [3.4028235e38, 3.5e38, 1e300, math.inf, 1.1754944e-38, 1e-300, 5e-324]:
        r = eng.run("x", "The council approved the budget for the river bridge on Monday.", "rebased",
                    SpecConfig(max_tokens=3, temperature=t, seed=7))
        print(json.dumps({"t": t, "tags": r.hashtags.tags, "raw": r.hashtags.raw, "tokens": len(r.gen.tokens)}))
"""


def test_extreme_temperatures_are_refused_at_parse_time_and_never_abort(pair_paths):
    """Cases 4 and 6: outside 0 or [1.2e-38, 3.4e38] --temperature is a usage
    error; and the sampling code survives any temperature (the grammar sampler
    used to abort the process at 3.5e38; 1e-300 gave NaN probabilities)."""
    for value in ("3.5e38", "1e300", "1e-300", "5e-324", "1e-39", "-1", "nan", "inf", "-inf"):
        line = one_line_error(invoke(["run", NOTES, "--temperature", value]))
        assert (
            "--temperature" in line and "is not 0 or a number from 1.1754944e-38 to 3.4028235e+38" in line
        ), line
    p = subprocess.run(
        [sys.executable, "-c", TEMPERATURE_SCRIPT, *map(str, pair_paths)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Warning" not in p.stderr, p.stderr  # no overflow / NaN warnings from numpy
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == 7 and all(r["tokens"] > 0 for r in rows)
    assert all(isinstance(r["tags"], list) for r in rows)


def test_non_finite_logits_never_reach_the_grammar_sampler(engine):
    from localsidecar.backend import BackendError, GrammarSampler
    from localsidecar.hashtags.generation import hashtag_grammar

    ctx = engine.t_ctx
    ctx.clear()
    ctx.decode_tokens(engine.target.tokenize("Tags:"), 0, (0,), "last")
    ctx.logits(-1)[7] = np.nan
    for temperature in (0.0, 0.8):
        s = GrammarSampler(engine.target, hashtag_grammar("free"), temperature=temperature)
        try:
            with pytest.raises(BackendError, match="not finite"):
                s.sample(ctx, -1)
        finally:
            s.free()
    ctx.clear()


def test_softmax_has_no_nan_at_any_temperature():
    from localsidecar.decoding.distributions import softmax

    logits = np.array([1.0, 3.0, 3.0, -2.0], dtype=np.float32)
    for t in (1e-300, 5e-324, 1.1754944e-38, 0.7, 3.4028235e38, 1e300):
        with np.errstate(over="raise", divide="raise", invalid="raise"):  # no warning hides in there
            p = softmax(logits, t)
        assert np.isfinite(p).all() and abs(float(p.sum()) - 1) < 1e-6, (t, p)
    assert softmax(logits, 1e-300).tolist() == [0.0, 1.0, 0.0, 0.0]  # float32 0: the argmax
    assert np.allclose(softmax(logits, 1e300), 0.25)


@pytest.mark.parametrize(
    "args",
    [
        ["run", NOTES, "--seed", "-1"],
        ["run", NOTES, "--seed", str(2**32)],
        ["acceptance", NOTES, "--seed", "-5"],
        ["sweep", NOTES, "--seed", "-1"],
    ],
)
def test_seed_out_of_range_is_a_usage_error(args, prior):
    """Case 5: refused while parsing, before any model loads (was an internal error)."""
    assert "--seed" in one_line_error(invoke(args))


def test_a_number_python_refuses_is_a_bad_line_skippable(tmp_path, pair_paths):
    """Case 7: a JSONL integer of more than 4300 digits, as the id or in a field
    nobody reads, is a bad line naming file:line; --skip-bad keeps the rest."""
    jl = tmp_path / "big.jsonl"
    jl.write_text(
        "\n".join(
            [
                '{"id": ' + "7" * 5000 + ', "text": "the id is too long"}',
                '{"id": "good", "text": "The library extends its opening hours in winter."}',
                '{"id": "unused", "text": "a field nobody reads", "n": ' + "9" * 4301 + "}",
            ]
        )
        + "\n"
    )
    line = one_line_error(invoke(["run", jl, *FAST]))
    assert "big.jsonl:1: a number with more than 4300 digits" in line
    r = invoke(["run", jl, "--skip-bad", "--json", *FAST])
    assert r.exit_code == 0, (r.output, r.exception)
    assert [json.loads(x)["id"] for x in r.stdout.splitlines()] == ["good"]
    notes = [x for x in r.stderr.splitlines() if x.startswith("note:")]
    assert len(notes) == 2 and "big.jsonl:3: a number with more than 4300 digits" in notes[1], notes


def test_a_fifo_or_device_named_directly_is_refused(tmp_path):
    """Case 8: refused in one line instead of blocking forever (a child process
    with a timeout: a regression hangs there, not in pytest)."""
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "FIFO (named pipe)"), ("/dev/null", "character device")):
        p = run_cli(["run", path, *FAST], timeout=120)
        assert p.returncode == 2, p.stderr
        assert (
            p.stderr.strip() == f"Error: {path} is a {kind}, not a regular file; give a file or a folder, "
            "or pipe the text to '-' (stdin)"
        )
    # in a folder, the FIFO is not a document: the others are read
    (tmp_path / "a.txt").write_text("only this one")
    from localsidecar.io.documents import load_many

    assert [d.id for d in load_many([str(tmp_path)])] == ["a"]


def test_resume_knows_the_models_by_content_and_a_real_mismatch_says_what_differs(
    tmp_path, pair_paths, monkeypatch
):
    """Case 11: the same model files named by a relative path resume; another
    --max-tokens is refused naming it, offering a new --out first, and saying
    that --overwrite deletes the results."""
    target, draft = pair_paths
    shutil.copyfile(draft, tmp_path / "other-name.gguf")  # the same bytes under another name
    out = tmp_path / "res.jsonl"
    base = ["--mode", "baseline", "--max-tokens", "2"]
    r = invoke(["run", NOTES, "--target", target, "--draft", draft, "--out", out, *base])
    assert r.exit_code == 0, (r.output, r.exception)
    before = out.read_bytes()
    monkeypatch.chdir(tmp_path)
    r = invoke(
        [
            "run",
            NOTES,
            "--target",
            os.path.relpath(target),
            "--draft",
            "other-name.gguf",
            "--out",
            "res.jsonl",
            *base,
        ]
    )
    assert r.exit_code == 0, (r.output, r.exception)
    assert "skipped 1 document already in res.jsonl; running 0" in r.stderr
    assert out.read_bytes() == before
    line = one_line_error(
        invoke(
            [
                "run",
                NOTES,
                "--target",
                target,
                "--draft",
                draft,
                "--out",
                "res.jsonl",
                "--mode",
                "baseline",
                "--max-tokens",
                "3",
            ]
        )
    )
    assert line == (
        "Error: res.jsonl holds results of a different configuration (spec.max_tokens 2 in the file, "
        "3 now); use another --out (e.g. res-2.jsonl), or --overwrite to delete its 1 results and "
        "start over"
    ), line
    assert out.read_bytes() == before


def test_utf16_and_utf32_files_are_named_with_the_conversion(tmp_path):
    """Case 12: was 'a binary file (NUL byte at offset 3)'."""
    cases = {
        "bom16.txt": (
            "Hello there".encode("utf-16"),
            "UTF-16 text (little-endian, with a byte order mark)",
            "iconv -f UTF-16 -t UTF-8",
        ),
        "be16.txt": (
            b"\xfe\xff" + "Hello there".encode("utf-16-be"),
            "UTF-16 text (big-endian, with a byte order mark)",
            "iconv -f UTF-16 -t UTF-8",
        ),
        "bom32.txt": (
            "Hello there".encode("utf-32"),
            "UTF-32 text (little-endian, with a byte order mark)",
            "iconv -f UTF-32 -t UTF-8",
        ),
        "nobom.txt": (
            "Hello there".encode("utf-16-le"),
            "UTF-16 text (little-endian, without a byte order mark)",
            "iconv -f UTF-16LE -t UTF-8",
        ),
    }
    for name, (data, what, how) in cases.items():
        (tmp_path / name).write_bytes(data)
        line = one_line_error(invoke(["run", tmp_path / name]))
        assert what in line and how in line and "not UTF-8" in line, line
    line = one_line_error(invoke(["run", "-"], input="x".encode("utf-16")))
    assert "<stdin> is UTF-16 text" in line and "iconv -f UTF-16 -t UTF-8 - >" in line


def _in_tmpfs(options: str, command: list[str]) -> subprocess.CompletedProcess | None:
    """`command` with a fresh tmpfs mounted (-o options) at its first argument's
    place, in private user and mount namespaces; None where that is not allowed."""
    if not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    mount, *rest = command
    script = f'mount -t tmpfs -o {options} tmpfs "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script, "sh", mount, *rest],
        capture_output=True,
        text=True,
        timeout=600,
        env=child_env(),
    )


def test_quantizing_into_a_full_or_read_only_models_dir_says_so(tmp_path, pair_paths):
    """Case 12: was "llama.cpp could not quantize ... (code 1)". The file size
    limit runs everywhere; a real full and a real read-only file system need
    user namespaces (skipped without)."""
    target = pair_paths[0]
    script = (
        "import resource, signal, sys\n"
        "from localsidecar.registry.embedded import derive\n"
        "from localsidecar.errors import LocalsidecarError\n"
        "from pathlib import Path\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))\n"
        "try:\n"
        "    derive(Path(sys.argv[1]), 'Q8_0', Path(sys.argv[2]), 1)\n"
        "except LocalsidecarError as exc:\n"
        "    print(exc)\n"
    )
    folder = tmp_path / "limited"
    p = subprocess.run(
        [sys.executable, "-c", script, str(target), str(folder)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=600,
    )
    assert "the file size limit (ulimit -f) of 4194304 bytes was reached" in p.stdout, (
        p.stdout,
        p.stderr[-2000:],
    )
    assert list(folder.iterdir()) == []  # the partial file is gone
    models = tmp_path / "mnt"
    models.mkdir()
    prog = [
        sys.executable,
        "-m",
        "localsidecar.cli",
        "run",
        NOTES,
        "--max-tokens",
        "2",
        "--models-dir",
        str(models),
    ]
    full = _in_tmpfs("size=4m", [str(models), *prog])
    if full is None:
        pytest.skip("no user namespaces here: full and read-only file systems not tested")
    assert full.returncode == 2, full.stderr
    assert f"(no space left in {models}: 0.0 MB free after writing" in full.stderr, full.stderr
    ro = _in_tmpfs("ro", [str(models), *prog])
    assert ro.returncode == 2
    assert ro.stderr.strip() == (
        f"Error: cannot write to the models dir {models} (Read-only file system); "
        "choose a writable one with --models-dir or LOCALSIDECAR_MODELS_DIR"
    )


def test_a_full_stdout_is_named(pair_paths):
    """Case 12: `run --json > /dev/full` said only "No space left on device"."""
    with open("/dev/full", "w") as full:
        for args in (["run", NOTES, "--json", *FAST], ["run", NOTES, *FAST], ["--help"], ["run", "--help"]):
            p = run_cli(args, stdout=full)
            assert p.returncode == 2, (args, p.stderr)
            assert p.stderr.strip() == "Error: cannot write to stdout (No space left on device)", (
                args,
                p.stderr,
            )


def test_a_last_record_without_its_newline_is_accepted_and_repaired(tmp_path, pair_paths):
    """Case 12: an --out whose last record is complete but lost its final
    newline (an editor, a copy) is resumed, and the newline is put back."""
    out = tmp_path / "out.jsonl"
    r = invoke(["run", NOTES, "--out", out, *FAST])
    assert r.exit_code == 0, (r.output, r.exception)
    complete = out.read_bytes()
    out.write_bytes(complete[:-1])
    r = invoke(["run", NOTES, "--out", out, *FAST])
    assert r.exit_code == 0, (r.output, r.exception)
    assert f"note: {out}: added the newline missing after its last record" in r.stderr
    assert "skipped 1 document already in" in r.stderr
    assert out.read_bytes() == complete
