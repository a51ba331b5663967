"""Documents from text files, folders, JSONL files and stdin.

Invariants of a loaded document:
- `text` is normalized by `normalize_text` (CRLF -> LF, outer whitespace
  stripped), non-empty, encodable as UTF-8, and at most `max_chars` long.
- `id` is unique within one LoadedDocuments and deterministic for the same
  inputs, so result files can be resumed by id. A file's id is its stem; files
  of one folder whose stems collide (a.txt, a.md) are named with their
  extension, so adding a file never renames another one's id to `a-2`
  (records also carry `text_sha256`, which resume compares: cli/resumable).
- stdin is read up to a bound (STDIN_MAX_BYTES, or what --max-chars can use)
  and never further: `yes | localsidecar run -` ends.
Every problem with the input is a LocalsidecarError whose message is one line naming
the file (and the line number for JSONL).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from localsidecar.errors import LocalsidecarError

STDIN_SPEC = "-"
STDIN_ID = "stdin"
STDIN_NAME = "<stdin>"
JSONL_SUFFIX = ".jsonl"
TEXT_KEYS = ("text", "article")  # first present key wins
STDIN_MAX_BYTES = 64 << 20  # without --max-chars; more is refused, not read
# with --max-chars: a UTF-8 character is at most 4 bytes; the floor leaves room
# for leading whitespace that normalize_text strips
STDIN_FLOOR_BYTES = 1 << 20


def text_sha256(text: str) -> str:
    """The `text_sha256` of a record: what resume compares to know that an id
    still names the same text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    source: str  # file path, "path:lineno" for a JSONL line, "-" for stdin


@dataclass
class LoadedDocuments:
    docs: list[Document] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one line per input skipped with skip_bad
    notes: list[str] = field(default_factory=list)  # e.g. ids renamed to stay unique

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self):
        return iter(self.docs)


class _BadDocument(LocalsidecarError):
    """A problem confined to one document: skippable with skip_bad."""


def normalize_text(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def truncate(text: str, max_chars: int) -> str:
    """At most max_chars; ends at a whitespace boundary when one lies in the last 10%."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    floor = int(max_chars * 0.9)
    for i in range(max_chars, floor, -1):
        # A cut before text[i] is on a boundary when text[i] (i == max_chars: the
        # first dropped character) or text[i-1] is whitespace.
        if text[i].isspace() or text[i - 1].isspace():
            return head[:i].rstrip()
    return head


def load_documents(
    spec: str,
    *,
    max_chars: int | None = None,
    skip_bad: bool = False,
    replace_errors: bool = False,
    stdin: IO | None = None,
) -> LoadedDocuments:
    """Documents named by one spec: a file, a folder, a .jsonl file, or "-" (stdin)."""
    return load_many(
        [spec], max_chars=max_chars, skip_bad=skip_bad, replace_errors=replace_errors, stdin=stdin
    )


def load_many(
    specs: Iterable[str],
    *,
    max_chars: int | None = None,
    skip_bad: bool = False,
    replace_errors: bool = False,
    stdin: IO | None = None,
    outputs: Iterable[str | os.PathLike | None] = (),
) -> LoadedDocuments:
    """Documents of all specs in order. With skip_bad, a bad file or JSONL line is
    recorded in `skipped` instead of raising; a path that does not exist or a folder
    without documents always raises, and so does ending up with no document at all.
    `outputs`: files the command writes (--out, ...): skipped in a folder, refused
    when named as a document, so a resumed run never reads its own results."""
    specs = list(specs)
    if max_chars is not None and max_chars < 1:
        raise LocalsidecarError(f"--max-chars must be at least 1 (got {max_chars})")
    if specs.count(STDIN_SPEC) > 1:
        raise LocalsidecarError("'-' (stdin) can be given only once")
    loader = _Loader(
        skip_bad=skip_bad,
        replace_errors=replace_errors,
        max_chars=max_chars,
        stdin=stdin if stdin is not None else sys.stdin,
        outputs={os.path.realpath(o) for o in outputs if o is not None},
    )
    for spec in specs:
        loader.load_spec(spec)
    result = loader.result
    if not result.docs:
        skipped = f" ({len(result.skipped)} skipped as bad)" if result.skipped else ""
        raise LocalsidecarError(f"no documents to process in {', '.join(specs) or 'the input'}{skipped}")
    docs = _unique_ids(result.docs, result.notes)
    if max_chars is not None:
        docs = [Document(d.id, truncate(d.text, max_chars), d.source) for d in docs]
    result.docs = docs
    return result


def holds_documents(path: str | os.PathLike) -> bool:
    """Whether `path`, an entry of a folder given as input, is one of its
    documents (or a bad one it would refuse): any file with content but a
    JSONL whose complete lines are all JSON objects without a 'text' or
    'article' key, which is what localsidecar itself writes (--out records,
    --save-tokens and --summaries lines; a last line cut by a kill does not
    count). An output that names such a file would destroy an input."""
    try:
        data = _read_bytes(os.fspath(path))
    except _BadDocument:
        return True
    if not data.strip():
        return False
    if not os.fspath(path).endswith(JSONL_SUFFIX):
        return True
    for line in data.split(b"\n")[: data.count(b"\n")]:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return True
        if not isinstance(obj, dict) or any(k in obj for k in TEXT_KEYS):
            return True
    return False


def _unique_ids(docs: list[Document], notes: list[str]) -> list[Document]:
    """Later documents whose id is taken get `id-2`, `id-3`, ... (first free)."""
    taken: set[str] = set()
    out = []
    for doc in docs:
        new_id, n = doc.id, 2
        while new_id in taken:
            new_id, n = f"{doc.id}-{n}", n + 1
        if new_id != doc.id:
            notes.append(f"{doc.source}: id {doc.id!r} is already used; renamed to {new_id!r}")
            doc = Document(new_id, doc.text, doc.source)
        taken.add(new_id)
        out.append(doc)
    return out


class _Loader:
    def __init__(
        self,
        *,
        skip_bad: bool,
        replace_errors: bool,
        stdin: IO,
        outputs: set[str],
        max_chars: int | None = None,
    ) -> None:
        self.outputs = outputs
        self.max_chars = max_chars
        self.skip_bad = skip_bad
        self.replace_errors = replace_errors
        self.stdin = stdin
        self.result = LoadedDocuments()

    def _skippable(self, exc: _BadDocument) -> None:
        if not self.skip_bad:
            raise exc
        self.result.skipped.append(str(exc))

    def load_spec(self, spec: str) -> None:
        if spec == STDIN_SPEC:
            try:
                self.result.docs.append(self._stdin_document())
            except _BadDocument as exc:
                self._skippable(exc)
            return
        try:
            mode = os.stat(spec).st_mode
        except FileNotFoundError:
            raise LocalsidecarError(f"{spec}: no such file or directory") from None
        except OSError as exc:
            raise LocalsidecarError(f"{spec}: cannot access ({exc.strerror or exc})") from None
        if stat.S_ISDIR(mode):
            self._load_folder(spec)
        elif os.path.realpath(spec) in self.outputs:
            raise LocalsidecarError(
                f"{spec} is also an output file of this command; name another document or output"
            )
        elif not stat.S_ISREG(mode):
            # opening a FIFO blocks until a writer comes; a device never ends
            self._skippable(
                _BadDocument(
                    f"{spec} is a {_file_kind(mode)}, not a regular file; give a file or a "
                    "folder, or pipe the text to '-' (stdin)"
                )
            )
        else:
            self._load_file(spec)

    def _load_folder(self, folder: str) -> None:
        try:
            with os.scandir(folder) as entries:
                candidates = sorted(e.name for e in entries if not e.name.startswith("."))
        except OSError as exc:
            raise LocalsidecarError(f"{folder}: cannot list folder ({exc.strerror})") from None
        names = [name for name in candidates if self._is_folder_document(os.path.join(folder, name))]
        if not names:
            raise LocalsidecarError(
                f"{folder}: folder has no documents (hidden files and subfolders are ignored)"
            )
        stems = [Path(name).stem for name in names]
        for name, stem in zip(names, stems):
            path = os.path.join(folder, name)
            if os.path.realpath(path) in self.outputs:
                self.result.notes.append(f"{path}: skipped, it is this command's output file")
                continue
            self._load_file(path, doc_id=name if stems.count(stem) > 1 else stem)

    def _is_folder_document(self, path: str) -> bool:
        """A regular file (or a link to one); subfolders are ignored silently,
        anything else (a link loop, a dangling link, a FIFO, a device) is
        skipped with a note: one odd entry never fails the whole folder."""
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            if os.path.islink(path):
                why = (
                    "a dangling symbolic link"
                    if isinstance(exc, FileNotFoundError)
                    else f"a symbolic link that cannot be followed ({exc.strerror or exc})"
                )
            else:
                why = f"cannot be read ({exc.strerror or exc})"
            self.result.notes.append(f"{path}: skipped, {why}")
            return False
        if stat.S_ISDIR(mode):
            return False
        if not stat.S_ISREG(mode):
            self.result.notes.append(f"{path}: skipped, a {_file_kind(mode)}, not a regular file")
            return False
        return True

    def _load_file(self, path: str, doc_id: str | None = None) -> None:
        try:
            data = _read_bytes(path)
            _refuse_utf16_or_32(data, path)
            _refuse_binary(data, path)
            if path.endswith(JSONL_SUFFIX):
                self._load_jsonl(path, data)
            else:
                text = self._decode(data, f"{path} is")
                self.result.docs.append(_make_document(doc_id or Path(path).stem, text, path, path))
        except _BadDocument as exc:
            self._skippable(exc)

    def _load_jsonl(self, path: str, data: bytes) -> None:
        """One document per non-blank line; each line is decoded on its own so that
        skip_bad loses only the lines that are bad."""
        first_line_of_id: dict[str, int] = {}
        found_any = False
        offset = 0
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            line_offset, offset = offset, offset + len(raw) + 1
            if not raw.strip():
                continue
            found_any = True
            where = f"{path}:{lineno}"
            try:
                line = self._decode(raw, f"{where}:", line_offset)
                doc_id, body, explicit = _parse_jsonl_line(line, where, Path(path).stem, lineno)
                if explicit and doc_id in first_line_of_id:
                    raise _BadDocument(
                        f"{where}: duplicate id {doc_id!r} (first on line {first_line_of_id[doc_id]})"
                    )
                doc = _make_document(doc_id, body, where, where)
            except _BadDocument as exc:
                self._skippable(exc)
                continue
            if explicit:
                first_line_of_id[doc_id] = lineno
            self.result.docs.append(doc)
        if not found_any:
            raise _BadDocument(f"{path}: document is empty")

    def _stdin_document(self) -> Document:
        if self.stdin is None:  # the caller closed it (<&-): Python has no sys.stdin then
            raise LocalsidecarError(f"{STDIN_NAME} is closed; pipe the text to '-' or name a file")
        stream = getattr(self.stdin, "buffer", self.stdin)
        limit = STDIN_MAX_BYTES if self.max_chars is None else max(4 * self.max_chars + 4, STDIN_FLOOR_BYTES)
        try:
            data = stream.read(limit + 1)
        except OSError as exc:
            raise LocalsidecarError(f"{STDIN_NAME}: cannot read ({exc.strerror or exc})") from None
        if len(data) > limit:
            if self.max_chars is None:
                if isinstance(data, bytes):  # /dev/zero is binary before it is long
                    _refuse_utf16_or_32(data, STDIN_NAME)
                    _refuse_binary(data, STDIN_NAME)
                raise LocalsidecarError(
                    f"{STDIN_NAME}: more than {limit >> 20} MiB; pass --max-chars to read "
                    "only the start, or save the text to a file"
                )
            data = _whole_characters(data[:limit]) if isinstance(data, bytes) else data[:limit]
            self.result.notes.append(
                f"{STDIN_NAME}: read the first {limit} bytes only (--max-chars "
                f"{self.max_chars}); the rest of the input was not read"
            )
        if isinstance(data, bytes):
            _refuse_utf16_or_32(data, STDIN_NAME)
            _refuse_binary(data, STDIN_NAME)
            data = self._decode(data, f"{STDIN_NAME} is")
        return _make_document(STDIN_ID, data, STDIN_SPEC, STDIN_NAME)

    def _decode(self, data: bytes, subject: str, base_offset: int = 0) -> str:
        """UTF-8 text of `data`; `subject` starts the error ("<path> is", "<path>:<n>:")."""
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if self.replace_errors:
                return data.decode("utf-8-sig", errors="replace")
            raise _BadDocument(
                f"{subject} not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                f"{base_offset + exc.start}); pass --replace-errors to decode with replacement"
            ) from None


_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "UTF-32", "little-endian"),
    (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
    (b"\xff\xfe", "UTF-16", "little-endian"),
    (b"\xfe\xff", "UTF-16", "big-endian"),
)
UTF16_SNIFF_BYTES = 64


def _utf16_without_bom(data: bytes) -> str | None:
    """'little-endian' / 'big-endian' when the start of `data` is ASCII text in
    UTF-16 (every other byte NUL, the others not), else None."""
    head = data[: min(len(data), UTF16_SNIFF_BYTES) // 2 * 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if not odd.strip(b"\0") and b"\0" not in even:
        return "little-endian"
    if not even.strip(b"\0") and b"\0" not in odd:
        return "big-endian"
    return None


def _refuse_utf16_or_32(data: bytes, name: str) -> None:
    """UTF-16/32 text is refused with its encoding named and the conversion to
    run (its NUL bytes would otherwise call it binary)."""
    found = next(((enc, order, "with") for bom, enc, order in _BOMS if data.startswith(bom)), None)
    if found is None and (order := _utf16_without_bom(data)):
        found = ("UTF-16", order, "without")
    if found is None:
        return
    enc, order, bom = found
    source = "-" if name == STDIN_NAME else name
    iconv_enc = (
        enc if bom == "with" else enc + ("LE" if order == "little-endian" else "BE")
    )  # no mark: say the order
    raise _BadDocument(
        f"{name} is {enc} text ({order}, {bom} a byte order mark), not UTF-8; convert it, e.g. "
        f"iconv -f {iconv_enc} -t UTF-8 {source} > converted.txt"
    )


def _whole_characters(data: bytes) -> bytes:
    """`data` without a UTF-8 sequence cut off at its end."""
    i = len(data)
    while i > 0 and len(data) - i < 3 and data[i - 1] & 0xC0 == 0x80:  # continuation bytes
        i -= 1
    if i > 0 and data[i - 1] >= 0xC0:  # a lead byte: is its sequence complete?
        need = 2 if data[i - 1] < 0xE0 else 3 if data[i - 1] < 0xF0 else 4
        if len(data) - (i - 1) < need:
            return data[: i - 1]
    return data


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    )
    return next((kind for test, kind in kinds if test(mode)), "special file")


def _refuse_binary(data: bytes, name: str) -> None:
    nul = data.find(b"\0")
    if nul >= 0:
        raise _BadDocument(f"{name} is a binary file (NUL byte at offset {nul}), not text")


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except PermissionError:
        raise _BadDocument(f"{path}: permission denied") from None
    except OSError as exc:
        raise _BadDocument(f"{path}: cannot read ({exc.strerror or exc})") from None


def _parse_jsonl_line(line: str, where: str, stem: str, lineno: int) -> tuple[str, str, bool]:
    """(id, raw text, whether the id was given) of one non-blank JSONL line."""
    try:
        # strict=False: raw control characters inside strings are legitimate text.
        obj = json.loads(line, strict=False)
    except json.JSONDecodeError as exc:
        raise _BadDocument(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise _BadDocument(f"{where}: malformed JSON (nested too deeply)") from None
    except ValueError:  # Python's limit on integer digits (sys.get_int_max_str_digits), in any field
        raise _BadDocument(
            f"{where}: a number with more than {sys.get_int_max_str_digits()} digits, "
            "which Python refuses to read"
        ) from None
    if not isinstance(obj, dict):
        raise _BadDocument(f"{where}: expected a JSON object, got {_json_type(obj)}")
    key = next((k for k in TEXT_KEYS if k in obj), None)
    if key is None:
        raise _BadDocument(f"{where}: no 'text' or 'article' field")
    if not isinstance(obj[key], str):
        raise _BadDocument(f"{where}: '{key}' must be a string, got {_json_type(obj[key])}")
    raw_id = obj.get("id")
    if raw_id is None:
        return f"{stem}-{lineno}", obj[key], False
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise _BadDocument(f"{where}: 'id' must be a string or an integer, got {_json_type(raw_id)}")
    doc_id = str(raw_id)
    if not doc_id.strip():
        raise _BadDocument(f"{where}: 'id' is empty")
    _require_utf8(doc_id, where, "'id'")
    return doc_id, obj[key], True


def _make_document(doc_id: str, raw_text: str, source: str, name: str) -> Document:
    text = normalize_text(raw_text)
    if not text:
        raise _BadDocument(f"{name}: document is empty")
    _require_utf8(text, name)
    return Document(doc_id, text, source)


def _require_utf8(text: str, name: str, what: str = "text") -> None:
    """Lone surrogates (possible via JSON \\ud800 escapes or a text stream) are not text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _BadDocument(
            f"{name}: {what} contains an unpaired surrogate "
            f"(U+{ord(text[exc.start]):04X} at character {exc.start})"
        ) from None


def _json_type(value) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)
