"""YAML front matter: read with ruamel.yaml, edited by splicing.

ruamel.yaml's round trip re-renders a whole document (indentation, long
lines, comment placement can change), so it never writes a note here. It
parses (events with exact character spans, and the round-trip loader for
values), and it renders the few scalars the tool writes; the new text is the
old one with only the owned spans replaced:

- a top-level key the tool owns (the summary key it wrote, its record key):
  the lines from the key to the end of its value; what follows the value on
  its last line (a comment) is kept;
- `tags`: the user's items stay as written (their lines of a block list, or
  the flow list up to its last user item); the tool's items are removed and
  the new ones added after the user's, in the list's own style. A scalar
  `tags: foo` becomes a block list whose first item is the user's scalar as
  written (the one normalisation of a user's value, docs/tag.md);
- a missing key is added at the end of the front matter.

The caller (frontmatter.apply) then parses the result and checks that every
other key has the same value as before; any doubt is a FrontMatterError and
nothing is written (docs/DESIGN.md, Front matter edited by splicing).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from localsidecar.notes.split import FrontMatterError

TAGS = "tags"
# Plain scalars that YAML 1.1 readers (PyYAML, python-frontmatter) read as
# something other than a string: the tool quotes them.
_YAML11_WORDS = re.compile(r"(?i)^(y|n|yes|no|on|off|true|false|null|~)$")
_SAFE_PLAIN = re.compile(r"^[^\W\d_][\w/.-]*$")


@dataclass(frozen=True)
class Node:
    kind: str  # "scalar", "seq", "map", "alias"
    start: int
    end: int
    flow: bool = False
    value: str | None = None  # a scalar's value
    plain: bool = False  # a scalar with no quotes or block indicator
    tagged: bool = False  # an explicit YAML tag or anchor
    items: tuple[Node, ...] = ()  # a sequence's items


@dataclass(frozen=True)
class Entry:
    key: str
    key_start: int
    key_end: int
    value: Node


def _read(events: Iterator, ev) -> Node:
    tagged = bool(getattr(ev, "anchor", None)) or (getattr(ev, "tag", None) not in (None, "!"))
    if isinstance(ev, ScalarEvent):
        plain = ev.style is None
        return Node(
            "scalar", ev.start_mark.index, ev.end_mark.index, value=ev.value, plain=plain, tagged=tagged
        )
    if isinstance(ev, AliasEvent):
        return Node("alias", ev.start_mark.index, ev.end_mark.index, tagged=True)
    if isinstance(ev, CollectionStartEvent):
        kind = "seq" if isinstance(ev, SequenceStartEvent) else "map"
        end_type = SequenceEndEvent if kind == "seq" else MappingEndEvent
        items: list[Node] = []
        while not isinstance(nxt := next(events), end_type):
            items.append(_read(events, nxt))
        end = nxt.end_mark.index
        if not ev.flow_style and items:  # a block collection ends at its last item, not at the next key
            end = items[-1].end
        return Node(kind, ev.start_mark.index, end, bool(ev.flow_style), items=tuple(items), tagged=tagged)
    raise FrontMatterError(1, f"unexpected YAML event {type(ev).__name__}")


def _yaml_error(exc: YAMLError, first_line: int) -> FrontMatterError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = first_line + (mark.line if mark is not None else 0)
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return FrontMatterError(line, f"YAML front matter does not parse ({' '.join(str(what).split())})")


def line_of(text: str, index: int, first_line: int) -> int:
    return first_line + text.count("\n", 0, index)


def entries(front: str, first_line: int = 2) -> list[Entry]:
    """The top-level keys of YAML front matter `front` with their spans (in
    order); [] for empty front matter or comments only."""
    try:
        events = iter(list(YAML(typ="rt").parse(front)))
        next(events)  # StreamStart
        ev = next(events)
        if isinstance(ev, StreamEndEvent):
            return []
        root = next(events)
        if isinstance(root, ScalarEvent) and root.value == "" and root.style is None:
            return []
        if not isinstance(root, MappingStartEvent) or root.flow_style:
            raise FrontMatterError(first_line, "the front matter is not a block mapping of keys")
        found: list[Entry] = []
        while not isinstance(ev := next(events), MappingEndEvent):
            if not isinstance(ev, ScalarEvent):
                raise FrontMatterError(
                    line_of(front, ev.start_mark.index, first_line), "a key that is not text"
                )
            value = _read(events, next(events))
            found.append(Entry(ev.value, ev.start_mark.index, ev.end_mark.index, value))
    except MarkedYAMLError as exc:
        raise _yaml_error(exc, first_line) from None
    except YAMLError as exc:
        raise _yaml_error(exc, first_line) from None
    for e in found:
        if e.key_start != _line_start(front, e.key_start):
            raise FrontMatterError(line_of(front, e.key_start, first_line), "an indented top-level key")
    return found


def load(front: str, first_line: int = 2) -> dict:
    """The front matter's values (ruamel.yaml's round-trip loader: duplicate
    keys are an error); {} when empty."""
    try:
        data = YAML(typ="rt").load(front)
    except YAMLError as exc:
        raise _yaml_error(exc, first_line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(first_line, "the front matter is not a mapping of keys")
    return data


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    """The index after the line break of the line holding `index` (or len(text))."""
    n = text.find("\n", index)
    return len(text) if n < 0 else n + 1


def _content_end(front: str, e: Entry) -> int:
    """Where the entry's value ends (an empty value: right after the key's colon)."""
    v = e.value
    if v.kind == "scalar" and v.value == "" and v.plain:
        return front.index(":", e.key_end) + 1
    return max(v.end, e.key_end)


def _block_scalar_end(front: str, e: Entry) -> bool:
    """A `|` / `>` value: its span already ends after a line break."""
    v = e.value
    return v.kind == "scalar" and v.end > v.start and front[v.end - 1] == "\n"


def entry_span(front: str, e: Entry) -> tuple[int, int, str]:
    """(start, end, rest): the entry's lines, and what follows its value on its
    last line (a comment, the line break) that a replacement keeps."""
    start = _line_start(front, e.key_start)
    end = _content_end(front, e)
    if _block_scalar_end(front, e):
        return start, end, ""
    stop = _line_end(front, end)
    return start, stop, front[end:stop]


# --- rendering --------------------------------------------------------------------------


def _dump(data) -> str:
    y = YAML(typ="rt")
    y.width = 1 << 30  # one line per scalar: a comment kept after it stays outside it
    y.default_flow_style = False
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def render_scalar(value: str, flow: bool = False) -> str:
    """`value` as one YAML scalar on one line, plain when that reads the same
    in YAML 1.1 and 1.2 and in a flow list, else quoted by ruamel.yaml."""
    if _SAFE_PLAIN.match(value) and not _YAML11_WORDS.match(value):
        return value
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    text = _dump({"k": DoubleQuotedScalarString(value) if flow or "\n" in value else value})
    return text[len("k: ") :].rstrip("\n")


def render_entry(key: str, value, newline: str) -> str:
    """`key: value` lines: a list in block style (Obsidian's), a mapping in flow style."""
    k = render_scalar(key)
    if isinstance(value, list):
        if not value:
            return f"{k}: []{newline}"
        return f"{k}:{newline}" + "".join(f"  - {render_scalar(v)}{newline}" for v in value)
    if isinstance(value, dict):
        inner = ", ".join(f"{render_scalar(a)}: {_flow_value(b)}" for a, b in value.items())
        return f"{k}: {{{inner}}}{newline}"
    return f"{k}: {render_scalar(str(value))}{newline}"


def _flow_value(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(render_scalar(str(x), flow=True) for x in v) + "]"
    return render_scalar(str(v), flow=True)


# --- tags -------------------------------------------------------------------------------


def user_tag_values(e: Entry | None) -> list[str]:
    """The values of a `tags` entry's items as text (a scalar: itself)."""
    if e is None:
        return []
    v = e.value
    if v.kind == "scalar":
        return [] if v.value == "" and v.plain else [v.value]
    if v.kind == "seq":
        return [i.value for i in v.items if i.kind == "scalar"]
    return []


def _check_tags_node(front: str, e: Entry, first_line: int) -> None:
    v = e.value
    where = line_of(front, e.key_start, first_line)
    if v.tagged or v.kind in ("alias", "map") or any(i.kind != "scalar" or i.tagged for i in v.items):
        raise FrontMatterError(
            where, "`tags` is not a list of plain values (a mapping, an alias or a YAML tag)"
        )
    if v.kind == "scalar" and "\n" in front[v.start : v.end]:
        raise FrontMatterError(where, "`tags` is a scalar over several lines")
    if v.kind == "seq":
        for i in v.items:
            if "\n" in front[i.start : i.end]:
                raise FrontMatterError(
                    line_of(front, i.start, first_line), "a `tags` item over several lines"
                )


def tags_replacement(
    front: str, e: Entry, drop: set[str], add: Sequence[str], newline: str, first_line: int
) -> tuple[int, int, str]:
    """(start, end, text) replacing `front[start:end]`: the tags entry with
    the items whose value is in `drop` removed and `add` appended after the rest."""
    _check_tags_node(front, e, first_line)
    v = e.value
    if v.kind == "scalar":
        if not add:
            return v.start, v.start, ""
        start, end, rest = entry_span(front, e)
        key_line = front[start : front.index(":", e.key_end) + 1]  # `tags:`
        items = [] if v.value == "" and v.plain else [front[v.start : v.end]]  # `tags:` with no value: none
        items += [render_scalar(t) for t in add]
        return (
            start,
            end,
            f"{key_line}{_rest_comment(rest)}{newline}" + "".join(f"  - {i}{newline}" for i in items),
        )
    keep = [i for i in v.items if i.value not in drop]
    if v.flow:
        return _flow_replacement(front, v, keep, add)
    return _block_replacement(front, e, keep, add, newline)


def _rest_comment(rest: str) -> str:
    return rest.rstrip("\r\n")


def _with_rest(text: str, rest: str, newline: str) -> str:
    """A rendered entry with the comment that followed the old value on its last line."""
    comment = _rest_comment(rest)
    if not comment.strip():
        return text
    return text[: -len(newline)] + comment + newline


def _flow_replacement(front: str, v: Node, keep: list[Node], add: Sequence[str]) -> tuple[int, int, str]:
    if "\n" in front[v.start : v.end]:
        raise FrontMatterError(0, "a flow `tags` list over several lines")  # line set by the caller
    new = [render_scalar(t, flow=True) for t in add]
    items = list(v.items)
    if items[: len(keep)] == keep:  # the tool's items are the last ones (as it writes them)
        head_end = keep[-1].end if keep else v.start + 1
        tail = front[items[-1].end : v.end] if items else front[v.start + 1 : v.end]
        sep = ", " if keep and new else ""
        return v.start, v.end, front[v.start : head_end] + sep + ", ".join(new) + tail
    parts = [front[i.start : i.end] for i in keep] + new
    return v.start, v.end, "[" + ", ".join(parts) + "]"


def _block_replacement(
    front: str, e: Entry, keep: list[Node], add: Sequence[str], newline: str
) -> tuple[int, int, str]:
    v = e.value
    first = v.items[0]
    start = _line_start(front, first.start)
    end = _line_end(front, v.items[-1].end)
    lines = [(_line_start(front, i.start), _line_end(front, i.end)) for i in v.items]
    kept_ids = {id(i) for i in keep}
    out: list[str] = []
    cursor = start
    for item, (a, b) in zip(v.items, lines):
        out.append(front[cursor : b if id(item) in kept_ids else a])  # comment lines between items stay
        cursor = b
    model = keep[-1] if keep else first
    prefix = front[_line_start(front, model.start) : model.start]  # "  - "
    if not keep and not add:
        start, end, rest = entry_span(front, e)
        return start, end, _with_rest(render_entry(TAGS, [], newline), rest, newline)
    out += [f"{prefix}{render_scalar(t)}{newline}" for t in add]
    return start, end, "".join(out)
