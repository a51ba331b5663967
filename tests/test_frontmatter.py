"""Front matter edits (localsidecar.notes) on the fixture vault, without a model:
every byte outside the keys the tool owns comes out unchanged (the files are
compared, through an independent text-level undo), the user's tags stay in
order, a rerun replaces only the tool's own tags, and python-frontmatter (a
second reader, PyYAML) reads the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from localsidecar.notes.frontmatter import RECORD_KEY, apply, read_front
from localsidecar.notes.merge import NotePlan, content_hash, new_tags, spell
from localsidecar.notes.split import BOM, FrontMatterError, split_note

from .helpers import VAULT, read, second_reader, untag

EDITABLE = sorted(
    p
    for p in VAULT.rglob("*")
    if p.suffix in (".md", ".markdown")
    and ".obsidian" not in p.parts
    and p.name
    not in {
        "invalid-yaml.md",
        "unclosed.md",
        "duplicate-keys.md",
        "tags-mapping.md",
        "non-utf8.md",
        "dots-end.md",
    }
)
PLAN = NotePlan("summary", settings="test")
SUMMARY = "The island ferry stops for six weeks: a smaller boat runs twice a day."


def tagged(text: str, tags=("#Ferry", "#HarbourWorks"), summary=SUMMARY, plan=PLAN) -> tuple[str, list[str]]:
    parts = split_note(text)
    front = read_front(parts)
    owned = plan.owned(front, content_hash(parts.body), list(tags), summary)
    return apply(parts, front, owned), list(owned.tags)


def taggable(path: Path) -> str:
    """The note's text; the test is skipped for a note with no body (the command skips it too)."""
    text = read(path)
    if not split_note(text).body.strip():
        pytest.skip("no body: the command does not tag it")
    return text


def test_the_fixture_vault_has_the_shapes_people_keep():
    notes = [p for p in VAULT.rglob("*") if p.is_file() and ".obsidian" not in p.parts]
    assert len([p for p in notes if p.suffix in (".md", ".markdown")]) >= 30
    texts = {p.name: p.read_bytes() for p in notes}
    assert texts["crlf.md"].count(b"\r\n") > 3 and texts["bom.md"].startswith(BOM.encode())
    assert texts["hugo.md"].startswith(b"+++") and texts["empty.md"] == b""
    with pytest.raises(UnicodeDecodeError):
        texts["non-utf8.md"].decode("utf-8")


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_every_byte_outside_the_owned_keys_is_unchanged(path):
    old = taggable(path)
    new, tool_tags = tagged(old)
    assert new != old
    user_tags = read_front(split_note(old)).user_tags
    if path.name == "scalar-tags.md":  # the one normalisation: a scalar becomes a list
        assert untag(new, tool_tags, "summary", old) == old.replace("tags: chess\n", "tags:\n  - chess\n")
    elif path.name in ("block-scalar.md",):  # the user's own summary key: no summary written
        assert "The user's own" in new and SUMMARY not in new
        assert untag(new, tool_tags, None, old) == old
    else:
        assert untag(new, tool_tags, "summary", old) == old
    meta, content = second_reader(new)
    assert [str(t) for t in meta["tags"]] == [*user_tags, *tool_tags]
    assert meta[RECORD_KEY]["tags"] == tool_tags
    if path.name != "block-scalar.md":
        assert meta["summary"] == SUMMARY
    assert content.replace("\r\n", "\n").strip() == split_note(old).body.replace("\r\n", "\n").strip()


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_a_rerun_replaces_only_the_tools_own_tags(path):
    old = taggable(path)
    once, _ = tagged(old)
    twice, tool_tags = tagged(once, tags=("#Dock", "#Ferry"), summary="Another summary.")
    assert tool_tags == ["Dock", "Ferry"]
    front = read_front(split_note(twice))
    assert list(front.user_tags) == list(read_front(split_note(old)).user_tags)
    assert front.tool_tags == ("Dock", "Ferry")
    again, _ = tagged(twice, tags=("#Dock", "#Ferry"), summary="Another summary.")
    assert again == twice  # same result: the same bytes
    back, _ = tagged(twice)
    assert back == once


def test_user_tags_are_never_added_twice_nor_reordered():
    text = "---\ntags: [Ferry, '#harbourworks', zeta]\n---\nBody.\n"
    new, tool_tags = tagged(text, tags=("#Ferry", "#HarbourWorks", "#Tide"))
    assert tool_tags == ["Tide"]
    assert "tags: [Ferry, '#harbourworks', zeta, Tide]\n" in new


def test_spelling_and_prefix():
    assert spell("#MarketStreet", "camel") == "MarketStreet"
    assert spell("#MarketStreet", "kebab") == "market-street"
    assert spell("#MarketStreet2024", "lower") == "marketstreet2024"
    assert new_tags(["#Ferry", "#Tide"], ["ai/ferry"], spelling="camel", prefix="ai/") == ("ai/Tide",)
    new, _ = tagged(
        "Body.\n", plan=NotePlan("summary", spelling="kebab", prefix="ai/"), tags=["#HarbourWorks"]
    )
    assert "tags:\n  - ai/harbour-works\n" in new


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("---\ntitle: a\ntags: [one, two\nnext: x\n---\nBody\n", 4, "does not parse"),
        ("---\ntitle: Never closed\n\nBody\n", 1, "never closed"),
        ("---\ntitle: A\ntitle: B\n---\nBody\n", 3, "does not parse"),
        ("---\ntags:\n  a: 1\n---\nBody\n", 2, "not a list"),
        ("+++\ntitle = 'x\n+++\nBody\n", 2, "TOML"),
        ("---\n- a list\n---\nBody\n", 2, "not a mapping"),
        ('{"title": "json"}\nBody\n', 1, "JSON"),
    ],
)
def test_front_matter_that_cannot_be_edited_names_its_line(text, line, words):
    with pytest.raises(FrontMatterError) as exc:
        tagged(text)
    assert exc.value.line == line and words in exc.value.reason


def test_no_summary_removes_only_the_summary_the_tool_wrote():
    once, _ = tagged("---\ntitle: x\n---\nBody.\n")
    assert "summary: " in once
    plan = NotePlan(None, settings="test")
    new, _ = tagged(once, plan=plan)
    assert "summary:" not in new and "title: x\n" in new
    mine = "---\nsummary: my own words\n---\nBody.\n"
    assert "summary: my own words\n" in tagged(mine, plan=plan)[0]
    assert "summary: my own words\n" in tagged(mine)[0]  # never taken over
