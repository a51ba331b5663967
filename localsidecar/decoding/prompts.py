"""Prompt wording and the token segments every layout is built from.

Notation (docs/DESIGN.md): the bare prompt is A + T, the compound prompt A + N + T,
with A = template head + document + instruction, N = the hidden hashtag suffix
and T = the chat-template tail that opens the assistant turn. Each segment is
tokenized on its own, so the spans are exact by construction and the bare
prompt is the compound one with N cut out.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from localsidecar.backend import Model
from localsidecar.errors import LocalsidecarError

_U1, _U2, _U3 = "\x01LSU1\x01", "\x01LSU2\x01", "\x01LSU3\x01"


@dataclass(frozen=True)
class PromptConfig:
    """Wording of the prompts; every field can be overridden by option or file."""

    instruction: str = "Summarize the text above in two or three sentences."
    # Wording measured with `localsidecar hashtags-eval` (docs/hashtags.md).
    suffix: str = (
        " After the summary, write three hashtags made of words from the text, as a JSON array of strings."
    )
    hashtag_lead: str = "\n\nHashtags: "
    deferred: str = "Now write three hashtags made of words from the text, as a JSON array of strings."
    system: str = ""

    def __post_init__(self) -> None:
        """Every field is UTF-8 text (an undecodable byte in a command-line
        argument arrives as an unpaired surrogate; so can a JSON \\ud800 escape)."""
        for f in fields(self):
            value = getattr(self, f.name)
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise LocalsidecarError(
                    f"prompt text {f.name!r} is not valid UTF-8 (unpaired surrogate "
                    f"U+{ord(value[exc.start]):04X} at character {exc.start})"
                ) from None
            except AttributeError:
                raise LocalsidecarError(
                    f"prompt text {f.name!r} must be a string, got {type(value).__name__}"
                ) from None
        if not self.hashtag_lead:
            # the hashtag phase samples from the logits of the lead's last token
            raise LocalsidecarError(
                "prompt text 'hashtag_lead' is empty: the hashtag phase decodes it after the "
                'summary and needs at least one token (e.g. " " or the default '
                f"{json.dumps(PromptConfig.hashtag_lead)})"
            )

    @classmethod
    def from_file(cls, path: str | Path) -> PromptConfig:
        """Read a JSON object whose keys are a subset of the field names."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise LocalsidecarError(f"cannot read prompts file {path}: {exc.strerror}") from None
        except (ValueError, RecursionError) as exc:  # bad JSON, not UTF-8, a number too long for Python
            raise LocalsidecarError(f"prompts file {path} is not valid JSON: {exc}") from None
        names = {f.name for f in fields(cls)}
        if (
            not isinstance(data, dict)
            or not set(data) <= names
            or not all(isinstance(v, str) for v in data.values())
        ):
            raise LocalsidecarError(
                f"prompts file {path} must be a JSON object of strings with keys from: {', '.join(sorted(names))}"
            )
        return cls(**data)

    def replace(self, **changes: str | None) -> PromptConfig:
        d = asdict(self)
        d.update({k: v for k, v in changes.items() if v is not None})
        return PromptConfig(**d)


@dataclass(frozen=True)
class ChatFormat:
    """Static pieces of a rendered conversation: head H, user→assistant tail T,
    and the assistant→user turn break B, so that

        single turn:  H + user + T
        second turn:  H + user + T + reply + B + user2 + T
    """

    head: str
    tail: str
    turn_break: str
    templated: bool

    @classmethod
    def for_model(cls, model: Model, system: str = "") -> ChatFormat:
        sys_msg = [("system", system)] if system else []
        one = model.apply_chat_template(sys_msg + [("user", _U1)], add_assistant=True)
        three = model.apply_chat_template(
            sys_msg + [("user", _U1), ("assistant", _U2), ("user", _U3)], add_assistant=True
        )
        if one is None or three is None or _U1 not in one or _U2 not in three:
            return cls.plain()
        head, tail = one.split(_U1, 1)
        between = three.split(_U2, 1)[1].split(_U3, 1)[0]
        return cls(head=head, tail=tail, turn_break=between, templated=True)

    @classmethod
    def plain(cls) -> ChatFormat:
        """Fallback for a GGUF without a (recognised) chat template."""
        return cls(head="", tail="\n\nResponse:\n", turn_break="\n\nInstruction:\n", templated=False)


@dataclass
class PromptTokens:
    """Token segments of one document's prompts (all ids in the model's vocab)."""

    prefix: list[int]  # A: head + document + instruction
    suffix: list[int]  # N: hidden hashtag instruction
    tail: list[int]  # T: opens the assistant turn
    doc_span: tuple[int, int]  # [lo, hi) of the document inside prefix
    hashtag_lead: list[int]  # decoded after the summary in hidden/visible layouts
    deferred_turn: list[int] = field(default_factory=list)  # B + deferred + T

    @property
    def bare(self) -> list[int]:
        return self.prefix + self.tail

    @property
    def compound(self) -> list[int]:
        return self.prefix + self.suffix + self.tail

    @property
    def suffix_span(self) -> tuple[int, int]:
        a = len(self.prefix)
        return (a, a + len(self.suffix))


# --- header blocks (meeting minutes, team notes) -----------------------------------------

# Labels of a notes-style header block. A block counts as a header only when one
# of its lines carries one of these; its other lines are other labels or a title.
HEADER_LABELS = frozenset(
    {
        "minutes",
        "present",
        "attendees",
        "attending",
        "in attendance",
        "also present",
        "apologies",
        "absent",
        "regrets",
        "guests",
        "date",
        "time",
        "place",
        "location",
        "venue",
        "chair",
        "chaired by",
        "facilitator",
        "minutes taken by",
        "minute taker",
        "note taker",
        "notes",
        "notes by",
        "recorder",
        "scribe",
        "secretary",
        "meeting",
        "subject",
        "title",
        "agenda",
    }
)
# What a summary needs from the block, in this order; attendance lists are left
# out: a small model copies them into the summary (docs/measurements/scripts/measure_headers.py).
KEPT_LABELS = {
    "title": "Title",
    "meeting": "Title",
    "subject": "Title",
    "minutes": "Title",
    "date": "Date",
    "time": "Time",
    "place": "Place",
    "location": "Place",
    "venue": "Place",
}
MAX_HEADER_LINES = 8
_LABELLED = re.compile(r"^([A-Za-z][A-Za-z' ]{0,24}?)\s*:\s*(\S.*)$")


def condense_header(text: str) -> str:
    """The document with a leading header block (title, Date:, Present: lines
    before the first blank line) replaced by one line, "Title: ... Date: ...",
    so that the summary starts from the content instead of copying the block.

    Anything else is returned unchanged: a first paragraph with prose in it
    (a line that is neither labelled nor a short title), no labelled line, no
    text after the block. Deterministic, so every model sees the same prompt."""
    stripped = text.lstrip()
    block, sep, body = stripped.partition("\n\n")
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    if not sep or not body.strip() or not 1 < len(lines) <= MAX_HEADER_LINES:
        return text
    fields: list[tuple[str, str]] = []
    known = False
    for i, line in enumerate(lines):
        m = _LABELLED.match(line)
        if m and m.group(1).strip().lower() in HEADER_LABELS:
            label, value = m.group(1).strip().lower(), m.group(2).strip()
            known = True
            # "Minutes: <meeting>" opens a block; further down it names the minute taker
            if label in KEPT_LABELS and (label != "minutes" or i == 0):
                fields.append((KEPT_LABELS[label], value))
        elif i == 0 and len(line.split()) <= 16 and not line.endswith((".", "!", "?")):
            fields.append(("Title", line))
        elif m:
            fields.append((m.group(1).strip().capitalize(), m.group(2).strip()))
        else:
            return text  # prose: not a header block
    if not known:
        return text
    merged: dict[str, list[str]] = {}
    for label, value in fields:
        merged.setdefault(label, []).append(value.rstrip("."))
    line = " ".join(f"{label}: {', '.join(values)}." for label, values in merged.items())
    return f"{line}\n\n{body.lstrip()}" if line else body.lstrip()


def build_prompt(model: Model, fmt: ChatFormat, text: str, cfg: PromptConfig) -> PromptTokens:
    """Tokenize the segments. The document is tokenized without parsing special
    tokens, so text such as '<|im_end|>' in a document stays plain text. A
    leading header block is condensed first (condense_header); doc_span covers
    the document as given to the models."""
    head = (
        model.tokenize(fmt.head, special=True, add_bos=model.add_bos) if (fmt.head or model.add_bos) else []
    )
    doc = model.tokenize(condense_header(text), special=False)
    instr = model.tokenize("\n\n" + cfg.instruction, special=False)
    prefix = head + doc + instr
    return PromptTokens(
        prefix=prefix,
        suffix=model.tokenize(cfg.suffix, special=False),
        tail=model.tokenize(fmt.tail, special=True),
        doc_span=(len(head), len(head) + len(doc)),
        hashtag_lead=model.tokenize(cfg.hashtag_lead, special=False),
        deferred_turn=model.tokenize(fmt.turn_break, special=True)
        + model.tokenize(cfg.deferred, special=False)
        + model.tokenize(fmt.tail, special=True),
    )
