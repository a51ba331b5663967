"""The keys the tool owns in a note's front matter, read and written.

The tool owns, in each note it tagged:
- RECORD_KEY, a flow mapping: the tags it added (`tags`), the summary key it
  wrote (`summary`), the body's hash (`body`) and the settings' (`settings`).
  It lives in the note itself so that a note and what the tool knows of it
  are replaced in one rename: a kill can never leave them disagreeing, and a
  note keeps it when moved, renamed or synced (docs/tag.md);
- the items of `tags` its record names (a tag the user wrote is never one);
- the summary key its record names.

`apply` returns the note's new text; FrontMatterError when the note cannot be
edited without touching what the user wrote (it is then left as it was).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from localsidecar.notes import yaml_edit
from localsidecar.notes.split import YAML, FrontMatterError, NoteParts

RECORD_KEY = "localsidecar"
TAGS = "tags"


@dataclass(frozen=True)
class Owned:
    """What the tool writes into one note: `tags`, the tool's tags to follow
    the user's (none of them the user's already); `summary_key` None: no
    summary (a summary the tool wrote before is removed); `record`: the
    RECORD_KEY value."""

    tags: tuple[str, ...]
    summary_key: str | None
    summary: str | None
    record: Mapping


@dataclass(frozen=True)
class Front:
    """A note's front matter as the tool sees it."""

    kind: str | None
    data: Mapping  # every key's value ({} without front matter)
    record: Mapping | None  # RECORD_KEY's value, when the tool wrote one
    user_tags: tuple[str, ...]  # the `tags` values the user wrote, in order

    @property
    def tool_tags(self) -> tuple[str, ...]:
        return tuple(str(t) for t in (self.record or {}).get("tags", ()) or ())

    @property
    def tool_summary_key(self) -> str | None:
        key = (self.record or {}).get("summary")
        return str(key) if key else None

    def user_owns(self, key: str) -> bool:
        """The note has `key` and the tool did not write it."""
        return key in self.data and key != self.tool_summary_key


def _values(tags) -> list[str]:
    if tags is None or tags == "":
        return []
    if isinstance(tags, list):
        return [str(t) for t in tags if t is not None]
    return [str(tags)]


def read_front(parts: NoteParts) -> Front:
    """Parse the front matter (FrontMatterError naming the line when it does not parse)."""
    first = parts.first_front_line
    if parts.kind is None:
        return Front(None, {}, None, ())
    if parts.kind == YAML:
        data = yaml_edit.load(parts.front, first)
    else:
        data = _toml_load(parts.front, first)
    record = data.get(RECORD_KEY)
    if record is not None and not isinstance(record, Mapping):
        raise FrontMatterError(first, f"`{RECORD_KEY}` is not this tool's record (a mapping)")
    tool = {str(t) for t in (record or {}).get("tags", ()) or ()}
    user = tuple(t for t in _values(data.get(TAGS)) if t not in tool)
    return Front(parts.kind, data, record, user)


def apply(parts: NoteParts, front: Front, owned: Owned) -> str:
    """The note's text with the owned keys replaced (see the module docstring)."""
    if parts.kind is None:
        nl = parts.newline
        text = _render_all(owned, nl)
        return parts.bom + "---" + nl + text + "---" + nl + parts.body
    if parts.kind == YAML:
        new_front = _apply_yaml(parts, front, owned)
    else:
        new_front = _apply_toml(parts, front, owned)
    return parts.with_front(new_front).join()


def _render_all(owned: Owned, nl: str) -> str:
    text = yaml_edit.render_entry(TAGS, list(owned.tags), nl) if owned.tags else ""
    if owned.summary_key and owned.summary is not None:
        text += yaml_edit.render_entry(owned.summary_key, owned.summary, nl)
    return text + yaml_edit.render_entry(RECORD_KEY, dict(owned.record), nl)


# --- YAML -------------------------------------------------------------------------------


def _apply_yaml(parts: NoteParts, front: Front, owned: Owned) -> str:
    text, nl, first = parts.front, parts.newline, parts.first_front_line
    by_key = {e.key: e for e in yaml_edit.entries(text, first)}
    edits: list[tuple[int, int, str]] = []
    appended = ""
    if TAGS in by_key:
        try:
            edits.append(
                yaml_edit.tags_replacement(text, by_key[TAGS], set(front.tool_tags), owned.tags, nl, first)
            )
        except FrontMatterError as exc:
            line = exc.line or yaml_edit.line_of(text, by_key[TAGS].key_start, first)
            raise FrontMatterError(line, exc.reason) from None
    elif owned.tags:
        appended += yaml_edit.render_entry(TAGS, list(owned.tags), nl)
    old_key = front.tool_summary_key
    if old_key and old_key != owned.summary_key and old_key in by_key:
        start, end, _ = yaml_edit.entry_span(text, by_key[old_key])
        edits.append((start, end, ""))
    if owned.summary_key and owned.summary is not None:
        entry = yaml_edit.render_entry(owned.summary_key, owned.summary, nl)
        if owned.summary_key in by_key:
            start, end, rest = yaml_edit.entry_span(text, by_key[owned.summary_key])
            edits.append((start, end, yaml_edit._with_rest(entry, rest, nl)))
        else:
            appended += entry
    record = yaml_edit.render_entry(RECORD_KEY, dict(owned.record), nl)
    if RECORD_KEY in by_key:
        start, end, rest = yaml_edit.entry_span(text, by_key[RECORD_KEY])
        edits.append((start, end, yaml_edit._with_rest(record, rest, nl)))
    else:
        appended += record
    new = text
    for start, end, repl in sorted(edits, key=lambda e: e[0], reverse=True):
        new = new[:start] + repl + new[end:]
    new += appended
    _check(front, yaml_edit.load(new, first), owned, first)
    return new


def _check(front: Front, new: Mapping, owned: Owned, first: int) -> None:
    """Every key the tool does not own reads as before, and the owned ones as meant."""
    owned_keys = {TAGS, RECORD_KEY, front.tool_summary_key, owned.summary_key} - {None}
    before = [k for k in front.data if k not in owned_keys]
    after = [k for k in new if k not in owned_keys]
    problems = []
    if before != after or any(_plain(front.data[k]) != _plain(new[k]) for k in before):
        problems.append("another key's value")
    if list(front.user_tags) + list(owned.tags) != _values(new.get(TAGS)):
        problems.append("the tags")
    if owned.summary_key and owned.summary is not None and new.get(owned.summary_key) != owned.summary:
        problems.append("the summary")
    if _plain(new.get(RECORD_KEY)) != _plain(owned.record):
        problems.append("the record")
    if problems:
        raise FrontMatterError(first, "the edit would change " + " and ".join(problems) + "; not written")


def _plain(value):
    """A parsed value as plain Python data (ruamel's and tomlkit's types compare as such)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "unwrap"):  # tomlkit items
        return _plain(value.unwrap())
    return value


# --- TOML -------------------------------------------------------------------------------


def _toml_load(text: str, first: int):
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        line = getattr(exc, "line", 1) or 1
        raise FrontMatterError(first + line - 1, f"TOML front matter does not parse ({exc})") from None
    if tomlkit.dumps(doc) != text:
        raise FrontMatterError(first, "tomlkit would not write this TOML back byte for byte")
    return doc


def _apply_toml(parts: NoteParts, front: Front, owned: Owned) -> str:
    """tomlkit's round trip is byte-exact (checked when read), and its edits
    touch only the items changed."""
    import tomlkit

    first = parts.first_front_line
    doc = _toml_load(parts.front, first)
    tags = doc.get(TAGS)
    if tags is not None and not isinstance(tags, list):
        raise FrontMatterError(first, "`tags` is not an array")
    if tags is None:
        if owned.tags:
            arr = tomlkit.array()
            arr.extend(owned.tags)
            doc[TAGS] = arr
    else:
        tool = set(front.tool_tags)
        for i in reversed(range(len(tags))):
            if str(tags[i]) in tool:
                del tags[i]
        tags.extend(owned.tags)
    old_key = front.tool_summary_key
    if old_key and old_key != owned.summary_key and old_key in doc:
        del doc[old_key]
    if owned.summary_key and owned.summary is not None:
        doc[owned.summary_key] = owned.summary
    record = tomlkit.inline_table()
    record.update({k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in owned.record.items()})
    doc[RECORD_KEY] = record
    new = tomlkit.dumps(doc)
    if parts.newline == "\r\n":
        new = new.replace("\r\n", "\n").replace("\n", "\r\n")
    _check(front, _toml_load(new, first), owned, first)
    return new
