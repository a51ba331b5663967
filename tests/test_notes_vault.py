"""Notes found, read and replaced (localsidecar.notes.vault), without a model:
each policy's one-line skip, a replace that keeps mode and owner, and a note
changed between read and write left as the user wrote it."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from localsidecar.notes.vault import MAX_NOTE_BYTES, NoteChanged, Skip, find_notes, read_note, write_note

from .helpers import VAULT


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    shutil.copytree(VAULT, root)
    return root


def test_find_notes_walks_folders_and_reports_links(vault):
    (vault / "link.md").symlink_to(vault / "block-tags.md")
    (vault / "linked-folder").symlink_to(vault / "daily")
    found = find_notes([str(vault)])
    names = [p.relative_to(vault).as_posix() for p in found.notes]
    assert names[:2] == ["block-scalar.md", "block-tags.md"] and len(names) == len(set(names))
    assert "daily/2024-03-01.md" in names and "projects/bridge.markdown" in names
    assert "projects/readme.txt" not in names and not any(n.startswith(".obsidian") for n in names)
    assert "link.md" not in names
    skipped = {p.name: why for p, why in found.skipped}
    assert skipped["link.md"] == "a symbolic link; not followed"
    assert "linked-folder" in skipped
    assert find_notes([str(vault)], [".txt"]).notes == [vault / "projects" / "readme.txt"]
    assert find_notes([str(vault / "projects" / "readme.txt")]).notes == [vault / "projects" / "readme.txt"]


@pytest.mark.parametrize(
    "name, make, words",
    [
        ("non-utf8.md", None, "not UTF-8 (byte 0xe9 at offset"),
        ("invalid-yaml.md", None, "4: YAML front matter does not parse"),
        ("unclosed.md", None, "1: front matter opened with '---' is never closed"),
        ("block-tags.md", lambda p: p.chmod(0o444), "read-only"),
        ("block-tags.md", lambda p: os.link(p, p.with_name("hard.md")), "has 2 hard links"),
        ("huge.md", lambda p: p.write_bytes(b"word " * (MAX_NOTE_BYTES // 5 + 1)), "larger than 1 MiB"),
        ("nul.md", lambda p: p.write_bytes(b"text\0more"), "NUL byte at offset 4"),
        ("link.md", lambda p: p.symlink_to(p.with_name("block-tags.md")), "symbolic link"),
    ],
)
def test_each_policy_is_one_line_and_the_note_stays(vault, name, make, words):
    path = vault / name
    if make:
        make(path)
    before = path.read_bytes() if path.exists() else None
    with pytest.raises(Skip) as exc:
        read_note(path)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert (path.read_bytes() if path.exists() else None) == before


def test_a_replace_keeps_mode_and_owner(vault):
    path = vault / "block-tags.md"
    path.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(path, 4321, 4321)
    note = read_note(path)
    write_note(note, note.text + "more\n")
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o640 and path.read_text().endswith("more\n")
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (4321, 4321)
    assert not list(vault.glob(".block-tags.md.*.part"))


@pytest.mark.parametrize("change", ["content", "touch", "replace"])
def test_a_note_changed_after_it_was_read_is_not_overwritten(vault, change):
    path = vault / "block-tags.md"
    note = read_note(path)
    if change == "content":
        path.write_bytes(path.read_bytes().replace(b"weather", b"climate"))
    elif change == "touch":  # same bytes, new mtime: an editor saved it
        os.utime(path, ns=(note.mtime_ns + 10**9, note.mtime_ns + 10**9))
    else:  # a sync tool replaced it by rename, same bytes
        tmp = vault / "other.md"
        tmp.write_bytes(path.read_bytes())
        os.replace(tmp, path)
    theirs = path.read_bytes()
    with pytest.raises(NoteChanged, match="changed while it was being tagged; not written"):
        write_note(note, note.text + "ours\n")
    assert path.read_bytes() == theirs
    assert not list(vault.glob(".block-tags.md.*.part"))


def test_a_temporary_file_a_kill_left_is_removed_when_the_note_is_read(vault):
    part = vault / ".block-tags.md.k1ll3d.part"
    part.write_text("half a note")
    note = read_note(vault / "block-tags.md")
    assert not part.exists() and note.notes == (f"removed {part}, left by an interrupted run",)
