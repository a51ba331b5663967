"""Document loading: every rule and every bad-input case, on real files."""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localsidecar.errors import LocalsidecarError
from localsidecar.io.documents import (
    Document,
    LoadedDocuments,
    load_documents,
    load_many,
    normalize_text,
    truncate,
)


def write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def jsonl(path, *rows):
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    return write(path, "\n".join(lines) + "\n")


def error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(LocalsidecarError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message
    return message


# --- files, folders, stdin -------------------------------------------------


def test_text_file_is_one_document_named_by_stem(tmp_path):
    path = write(tmp_path / "notes.md", "# Title\r\n\r\nBody text.\n\n")
    loaded = load_documents(path)
    assert isinstance(loaded, LoadedDocuments)
    assert loaded.docs == [Document("notes", "# Title\n\nBody text.", path)]
    assert loaded.skipped == [] and loaded.notes == []


def test_folder_sorted_non_recursive_without_hidden(tmp_path):
    write(tmp_path / "b.txt", "bee")
    write(tmp_path / "a.md", "ay")
    write(tmp_path / ".hidden.txt", "secret")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "c.txt", "nested")
    loaded = load_documents(str(tmp_path))
    assert [(d.id, d.text) for d in loaded] == [("a", "ay"), ("b", "bee")]


def test_folder_with_no_documents(tmp_path):
    write(tmp_path / ".only-hidden", "x")
    (tmp_path / "sub").mkdir()
    message = error_of(load_documents, str(tmp_path))
    assert str(tmp_path) in message and "no documents" in message


def test_output_files_are_never_read_as_documents(tmp_path, monkeypatch):
    write(tmp_path / "a.txt", "ay")
    out = jsonl(tmp_path / "results.jsonl", {"id": "a", "summary": "s"})
    monkeypatch.chdir(tmp_path)
    # in a folder: skipped with a note, whatever spelling names it
    loaded = load_many([str(tmp_path)], outputs=["results.jsonl", None])
    assert [d.id for d in loaded.docs] == ["a"]
    assert loaded.notes == [f"{out}: skipped, it is this command's output file"]
    # named as a document: refused
    message = error_of(load_many, ["results.jsonl"], outputs=[out])
    assert message == "results.jsonl is also an output file of this command; name another document or output"
    # without outputs the results file is a (bad) JSONL document
    assert "results.jsonl:1" in error_of(load_many, [str(tmp_path)])


def test_colliding_ids_renamed_deterministically_with_note(tmp_path):
    write(tmp_path / "a.md", "markdown")
    write(tmp_path / "a.txt", "text")
    other = tmp_path / "other"
    other.mkdir()
    third = write(other / "a.txt", "third")
    fourth = write(tmp_path / "b.txt", "fourth")
    fifth = write(other / "b.txt", "fifth")
    loaded = load_many([str(tmp_path), third, fifth])
    # stems colliding inside one folder: the file names (issue 18: adding a.md
    # next to a.txt must not hand a.md the id a.txt had); across inputs: -2, -3
    assert [d.id for d in loaded] == ["a.md", "a.txt", "b", "a", "b-2"]
    assert [d.text for d in loaded] == ["markdown", "text", "fourth", "third", "fifth"]
    assert len(loaded.notes) == 1 and "'b-2'" in loaded.notes[0] and fifth in loaded.notes[0]
    assert fourth != fifth


def test_stdin_text_and_bytes():
    assert load_documents("-", stdin=io.StringIO("  from stdin \n")).docs == [
        Document("stdin", "from stdin", "-")
    ]
    binary = io.TextIOWrapper(io.BytesIO("caf\u00e9".encode()), encoding="utf-8")
    assert load_documents("-", stdin=binary).docs[0].text == "caf\u00e9"
    bad = io.TextIOWrapper(io.BytesIO(b"caf\xe9"), encoding="utf-8")
    assert "<stdin> is not UTF-8" in error_of(load_documents, "-", stdin=bad)


def test_stdin_only_once(tmp_path):
    assert "only once" in error_of(load_many, ["-", "-"], stdin=io.StringIO("x"))


# --- bad paths and bad files -----------------------------------------------


def test_nonexistent_path(tmp_path):
    missing = str(tmp_path / "nope.txt")
    assert error_of(load_documents, missing) == f"{missing}: no such file or directory"


def _load_error_as_nobody(path: str) -> str:
    """Root reads any file, so a forked child drops to uid 'nobody' first."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        try:
            os.setgid(65534)
            os.setuid(65534)
            load_documents(path)
            message = "no error"
        except LocalsidecarError as exc:
            message = str(exc)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            message = f"unexpected {exc!r}"
        finally:  # whatever happens, the child (now uid nobody) never returns into pytest
            os.write(write_end, message.encode() if "message" in locals() else b"child failed")
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    return message


def test_unreadable_file(tmp_path):
    folder = tempfile.mkdtemp(prefix="unreadable-")  # traversable by any user
    try:
        os.chmod(folder, 0o755)
        path = write(Path(folder) / "locked.txt", "secret")
        os.chmod(path, 0)
        if os.geteuid() == 0:
            message = _load_error_as_nobody(path)
        else:
            message = error_of(load_documents, path)
        assert message == f"{path}: permission denied"
    finally:
        shutil.rmtree(folder)


def test_binary_file(tmp_path):
    path = write(tmp_path / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    message = error_of(load_documents, path)
    assert message.startswith(f"{path} is a binary file") and "offset 8" in message


def test_not_utf8_refused_then_replaced_on_request(tmp_path):
    path = write(tmp_path / "latin1.txt", "na\u00efve caf\u00e9".encode("latin-1"))
    message = error_of(load_documents, path)
    assert message == (
        f"{path} is not UTF-8 text (byte 0xef at offset 2); pass --replace-errors to decode with replacement"
    )
    text = load_documents(path, replace_errors=True).docs[0].text
    assert text == "na\ufffdve caf\ufffd"


def test_utf8_bom_is_not_text(tmp_path):
    path = write(tmp_path / "bom.txt", b"\xef\xbb\xbfhello")
    assert load_documents(path).docs[0].text == "hello"


@pytest.mark.parametrize("content", ["", "   \n\t\r\n  ", "\u3000\u2028"])
def test_empty_or_whitespace_only_document(tmp_path, content):
    path = write(tmp_path / "blank.txt", content)
    assert error_of(load_documents, path) == f"{path}: document is empty"


def test_long_single_line_and_odd_text_preserved(tmp_path):
    long_line = ("word" * 50_000)[:200_000]
    path = write(tmp_path / "long.txt", long_line)
    assert load_documents(path).docs[0].text == long_line
    odd = "a\x01\x07\x1b[31mred\x7f \u200b\u202e\ufeff\U0001f600 e\u0301 \ufffd\ud7ff z"
    path = write(tmp_path / "odd.txt", odd)
    assert load_documents(path).docs[0].text == odd


# --- JSONL -----------------------------------------------------------------


def test_jsonl_text_article_missing_ids_and_blank_lines(tmp_path):
    path = jsonl(
        tmp_path / "cnn.jsonl",
        {"id": "abc123", "article": "An article.", "highlights": "ignored"},
        "",
        {"text": "No id here."},
        "   ",
        {"id": 7, "text": "Numeric id.", "article": "not used"},
        {"id": "ctl", "text": "tab\there \x01 \u0085 \U0001f600"},
    )
    loaded = load_documents(path)
    assert [(d.id, d.text, d.source) for d in loaded] == [
        ("abc123", "An article.", f"{path}:1"),
        ("cnn-3", "No id here.", f"{path}:3"),
        ("7", "Numeric id.", f"{path}:5"),
        ("ctl", "tab\there \x01 \u0085 \U0001f600", f"{path}:6"),
    ]


def test_jsonl_raw_control_characters_inside_strings_are_text(tmp_path):
    path = write(tmp_path / "raw.jsonl", '{"id": "r", "text": "a\tb\x01c"}\n')
    assert load_documents(path).docs[0].text == "a\tb\x01c"


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"id": "x", "text": "unterminated', "malformed JSON"),
        ('["a", "list"]', "expected a JSON object, got an array"),
        ('"just a string"', "expected a JSON object, got a string"),
        ('{"id": "x", "summary": "no text"}', "no 'text' or 'article' field"),
        ('{"id": "x", "text": 42}', "'text' must be a string, got a number"),
        ('{"id": ["x"], "text": "t"}', "'id' must be a string or an integer"),
        ('{"id": "x", "text": "   "}', "document is empty"),
        ('{"id": "x", "text": "lone \\ud800 surrogate"}', "unpaired surrogate"),
        ("[" * 100_000, "malformed JSON"),
    ],
)
def test_jsonl_bad_line_names_file_and_line(tmp_path, line, problem):
    path = jsonl(tmp_path / "docs.jsonl", {"id": "ok", "text": "fine"}, "", line)
    message = error_of(load_documents, path)
    assert message.startswith(f"{path}:3: ") and problem in message
    loaded = load_documents(path, skip_bad=True)
    assert [d.id for d in loaded] == ["ok"]
    assert len(loaded.skipped) == 1 and loaded.skipped[0].startswith(f"{path}:3: ")


def test_jsonl_bad_utf8_only_loses_its_line_with_skip_bad(tmp_path):
    path = write(
        tmp_path / "mixed.jsonl",
        b'{"id": "a", "text": "one"}\n{"id": "b", "text": "caf\xe9"}\n{"id": "c", "text": "three"}\n',
    )
    message = error_of(load_documents, path)
    assert message.startswith(f"{path}:2: not UTF-8 text (byte 0xe9 at offset 51)")
    loaded = load_documents(path, skip_bad=True)
    assert [d.id for d in loaded] == ["a", "c"] and len(loaded.skipped) == 1


def test_jsonl_duplicate_ids(tmp_path):
    path = jsonl(
        tmp_path / "dup.jsonl",
        {"id": "a", "text": "first"},
        {"id": "b", "text": "other"},
        {"id": "a", "text": "second"},
    )
    message = error_of(load_documents, path)
    assert message == f"{path}:3: duplicate id 'a' (first on line 1)"
    loaded = load_documents(path, skip_bad=True)
    assert [(d.id, d.text) for d in loaded] == [("a", "first"), ("b", "other")]
    assert loaded.skipped == [message]


def test_skip_bad_counts_every_skipped_line(tmp_path):
    path = jsonl(
        tmp_path / "many.jsonl", "{", {"id": "a", "text": "x"}, "[]", "{}", {"id": "b", "text": "y"}, "nope"
    )
    loaded = load_documents(path, skip_bad=True)
    assert [d.id for d in loaded] == ["a", "b"]
    assert [s.split(":")[1] for s in loaded.skipped] == ["1", "3", "4", "6"]


def test_everything_skipped_is_still_an_error(tmp_path):
    path = jsonl(tmp_path / "bad.jsonl", "{", "[]")
    assert "no documents to process" in error_of(load_documents, path, skip_bad=True)
    empty = write(tmp_path / "empty.jsonl", "\n\n")
    assert error_of(load_documents, empty) == f"{empty}: document is empty"


def test_skip_bad_also_skips_bad_files_in_a_folder(tmp_path):
    write(tmp_path / "a.txt", "good")
    write(tmp_path / "b.bin", b"\x00\x01")
    write(tmp_path / "c.txt", "  ")
    loaded = load_documents(str(tmp_path), skip_bad=True)
    assert [d.id for d in loaded] == ["a"] and len(loaded.skipped) == 2


# --- max_chars ---------------------------------------------------------------


def test_max_chars_cuts_at_whitespace_in_last_ten_percent(tmp_path):
    text = " ".join(["abcdefghi"] * 30)  # words of 9 + a space: spaces at 9, 19, ...
    path = write(tmp_path / "t.txt", text)
    assert load_documents(path, max_chars=105).docs[0].text == text[:99]
    assert load_documents(path, max_chars=100).docs[0].text == text[:99]
    assert load_documents(path, max_chars=1000).docs[0].text == text
    unbroken = write(tmp_path / "u.txt", "x" * 500 + " tail")
    assert load_documents(unbroken, max_chars=200).docs[0].text == "x" * 200


def test_max_chars_must_be_positive(tmp_path):
    path = write(tmp_path / "t.txt", "text")
    assert "--max-chars" in error_of(load_documents, path, max_chars=0)


@given(st.text(min_size=1, max_size=300), st.integers(min_value=1, max_value=400))
def test_truncate_bounds(text, max_chars):
    text = normalize_text(text) or "x"
    cut = truncate(text, max_chars)
    assert text.startswith(cut) and 0 < len(cut) <= max_chars
    if len(text) <= max_chars:
        assert cut == text
    elif any(
        text[i].isspace() or text[i - 1].isspace() for i in range(int(max_chars * 0.9) + 1, max_chars + 1)
    ):
        assert text[len(cut)].isspace()
    else:
        assert cut == text[:max_chars]


# --- property: round trip through .txt and .jsonl ----------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=2000))
def test_random_text_round_trips_or_fails_cleanly(tmp_path, text):
    txt = tmp_path / "doc.txt"
    txt.write_bytes(text.encode("utf-8"))
    line = json.dumps({"id": "r", "text": text}, ensure_ascii=False)
    jl = tmp_path / "doc.jsonl"
    jl.write_bytes(line.encode("utf-8") + b"\n")
    for path in (txt, jl):
        # A leading U+FEFF in a file is a byte-order mark, not text.
        expected = normalize_text(text.removeprefix("\ufeff") if path == txt else text)
        try:
            docs = load_documents(str(path)).docs
        except LocalsidecarError as exc:
            message = str(exc)
            assert "\n" not in message
            assert not expected or (path == txt and "\x00" in text)
            continue
        assert len(docs) == 1 and docs[0].text == expected
