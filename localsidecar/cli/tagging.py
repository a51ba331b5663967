"""The `tag` command's run over notes: read all, decide which are up to date,
run the pipeline on the rest, and edit each note as its result comes in."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click
from rich.console import Console

from localsidecar.cli.errors import UserError
from localsidecar.cli.paths import check_not_models, unwritable
from localsidecar.cli.pipeline import Pipeline
from localsidecar.cli.progress import plural
from localsidecar.errors import LocalsidecarError
from localsidecar.io.documents import Document, normalize_text, truncate
from localsidecar.notes.frontmatter import apply
from localsidecar.notes.merge import NotePlan, check_prefix, content_hash, settings_hash
from localsidecar.notes.split import FrontMatterError
from localsidecar.notes.vault import Note, NoteChanged, Skip, find_notes, read_note, write_note

MAX_TAGS = 5  # the trie picker walks every ordered choice of the offer: 5 of 5 is 120 outputs
TAG_MAX_CHARS = 6000  # a note's first 6000 characters fit the default --ctx with the summary
EXISTING = "existing"
FORMAT = "tag/1"  # part of the settings hash: a new format redoes every note
PROBE = NotePlan("summary")


@dataclass(frozen=True)
class TagOptions:
    """tag's own options."""

    extensions: tuple[str, ...]
    summary_key: str | None
    prefix: str
    max_tags: int
    spelling: str
    vocabulary: str | None
    force: bool
    dry_run: bool
    as_json: bool

    @classmethod
    def take(cls, params: dict, ctx: click.Context) -> TagOptions:
        summary_key = None if params.pop("no_summary") else params.pop("summary_key").strip()
        params.pop("summary_key", None)
        o = cls(
            tuple(params.pop("extensions")),
            summary_key,
            params.pop("prefix"),
            params.pop("max_tags"),
            params.pop("spelling"),
            params.pop("vocabulary"),
            params.pop("force"),
            params.pop("dry_run"),
            params.pop("as_json"),
        )
        if summary_key is not None and not summary_key:
            raise UserError("--summary-key needs a key name (or --no-summary)")
        if summary_key in ("tags", "localsidecar"):
            raise UserError(f"--summary-key {summary_key}: that key holds the tags or the tool's record")
        if any(not e.strip().lstrip(".") for e in o.extensions):
            raise UserError(
                "--ext needs an extension, e.g. --ext md (a note named on the command line is always read)"
            )
        if why := check_prefix(o.prefix):
            raise UserError(why)
        if o.vocabulary is not None:
            for name in ("prefix", "spelling"):
                if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
                    raise UserError(
                        f"--{name} does not apply with --vocabulary: tags are written as it spells them"
                    )
        return o


def diff_name(path: Path) -> str:
    """The note's name in a diff header, as git writes it: relative to the
    working folder when the note is inside it, never with a leading slash."""
    try:
        path = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        pass
    return path.as_posix().lstrip("/")


def diff(path: Path, old: str, new: str) -> str:
    """A unified diff of one note (line ends shown as they are)."""
    name = diff_name(path)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def echo_record(options: TagOptions, record: dict) -> None:
    if options.as_json:
        click.echo(json.dumps(record, ensure_ascii=False))


def note_plan(options: TagOptions, pipeline: Pipeline, files, vocabulary: tuple[str, ...]) -> NotePlan:
    settings = {
        "format": FORMAT,
        **pipeline.identity(files),
        "max_tags": options.max_tags,
        "prefix": options.prefix,
        "spelling": options.spelling,
        "summary_key": options.summary_key,
        # a FILE by its content; `existing` by name: a tag added to the vault does not redo every note
        "vocabulary": (
            options.vocabulary
            if options.vocabulary in (None, EXISTING)
            else content_hash("\n".join(vocabulary))
        ),
    }
    return NotePlan(options.summary_key, options.spelling, options.prefix, settings_hash(settings))


def err_console() -> Console:
    return Console(stderr=True, highlight=False, markup=False, soft_wrap=True)


@dataclass
class Tally:
    counts: Counter

    def line(self, dry_run: bool) -> str:
        c = self.counts
        done = "would be tagged" if dry_run else "tagged"
        parts = [f"{plural(c['tagged'], 'note')} {done}", f"{c['up-to-date']} up to date"]
        parts += [f"{c[k]} {k}" for k in ("skipped", "changed") if c[k]]
        return ", ".join(parts)


def tag_notes(paths: tuple[str, ...], options: TagOptions, pipeline: Pipeline) -> None:
    from localsidecar import backend
    from localsidecar.cli.resumable import run_resumable
    from localsidecar.decoding.layouts import HASHTAG_MODES
    from localsidecar.hashtags.vocabulary import VocabularySettings, read_vocabulary
    from localsidecar.notes.inline_tags import existing_tags

    if pipeline.mode not in HASHTAG_MODES:
        raise UserError(
            f"--mode {pipeline.mode} writes no hashtags; choose one of {', '.join(HASHTAG_MODES)}"
        )
    err = err_console()
    scale = pipeline.executors()
    backend.set_verbose(pipeline.verbose)
    tally = Tally(Counter())
    try:
        found = find_notes(paths, options.extensions)
    except LocalsidecarError as exc:
        raise click.UsageError(str(exc)) from None
    if not found.notes and not found.skipped:
        exts = ", ".join(e if e.startswith(".") else "." + e for e in options.extensions)
        err.print(f"note: no notes found in {', '.join(paths)} (files ending in {exts}; see --ext)")

    def skipped(path: Path, why: str, status: str = "skipped") -> None:
        tally.counts[status] += 1
        err.print(f"{status}: {path}: {why}")
        echo_record(
            options, {"path": str(path), "status": status, "tags_added": [], "summary": None, "skipped": why}
        )

    for path, why in found.skipped:
        skipped(path, why)
    notes: list[Note] = []
    for path in found.notes:
        try:
            note = read_note(path)
        except Skip as exc:
            skipped(path, str(exc))
            continue
        for said in note.notes:
            err.print(f"note: {said}")
        if not normalize_text(note.body):
            skipped(path, "no text below the front matter to tag")
            continue
        try:  # an edit the note's front matter does not allow is found before any model runs
            apply(note.parts, note.front, PROBE.owned(note.front, "", ["#Probe"], "Probe."))
        except FrontMatterError as exc:
            skipped(path, f"{exc.line}: {exc.reason}; left as it is")
            continue
        notes.append(note)
    vocabulary: tuple[str, ...] = ()
    if options.vocabulary == EXISTING:
        vocabulary = existing_tags(notes)
    elif options.vocabulary is not None:
        vocabulary = read_vocabulary(options.vocabulary)
    if options.vocabulary is not None and not vocabulary:
        raise LocalsidecarError(f"--vocabulary {options.vocabulary}: no tags in it")

    check_not_models("note", [note.path for note in notes], pipeline.model.planned_files())
    files = pipeline.files()
    plan = note_plan(options, pipeline, files, vocabulary)
    todo: list[Document] = []
    by_id: dict[str, tuple[Note, str]] = {}
    for note in notes:
        body_hash = content_hash(note.body)
        if not options.force and plan.up_to_date(note.front, body_hash):
            tally.counts["up-to-date"] += 1
            echo_record(
                options,
                {
                    "path": str(note.path),
                    "status": "up-to-date",
                    "tags_added": [],
                    "summary": None,
                    "skipped": None,
                },
            )
            continue
        text = normalize_text(note.body)
        if pipeline.max_chars:
            text = truncate(text, pipeline.max_chars)
        doc = Document(str(note.path), text, str(note.path))
        by_id[doc.id] = (note, body_hash)
        todo.append(doc)
    if not options.dry_run:  # a note that cannot be written is found before any summary runs
        why_not = {folder: unwritable(folder) for folder in {by_id[d.id][0].path.parent for d in todo}}
        for doc in [d for d in todo if why_not[by_id[d.id][0].path.parent]]:
            folder = by_id[doc.id][0].path.parent
            skipped(by_id[doc.id][0].path, f"cannot write in {folder} ({why_not[folder]}); left as it is")
            todo.remove(doc)

    settings = pipeline.hashtag_settings(options.max_tags)
    if vocabulary:
        settings = VocabularySettings.of(settings, vocabulary)
    job = pipeline.job(files, err.print, hashtags=settings)

    def on_result(doc: Document, rec: dict) -> None:
        note, body_hash = by_id[doc.id]
        tags = rec["hashtags"]
        if vocabulary:  # the vocabulary's own spelling
            tags = [settings.spelled(t) for t in tags]
        write_result(note, body_hash, tags, rec["summary"], plan, options, tally, skipped)

    what = "notes"
    describe = lambda rec: dict(tokens=rec["summary_tokens"], alpha=rec["alpha"], seconds=rec["wall_s"])  # noqa: E731
    try:
        with run_resumable(err, what=what, quiet=pipeline.quiet, describe=describe) as run:
            run.drive(run.pending(todo), lambda n: scale.executor(job, n), on_result)
    finally:
        err.print(tally.line(options.dry_run))


def write_result(
    note: Note, body_hash: str, tags, summary, plan: NotePlan, options: TagOptions, tally, skipped
) -> None:
    """Edit one note with its result (or print its diff)."""
    owned = plan.owned(note.front, body_hash, tags, summary)
    try:
        new = apply(note.parts, note.front, owned)
    except FrontMatterError as exc:
        skipped(note.path, f"{exc.line}: {exc.reason}")
        return
    record = {
        "path": str(note.path),
        "status": "tagged",
        "tags_added": list(owned.tags),
        "summary": owned.summary if owned.summary_key else None,
        "skipped": None,
    }
    if options.dry_run:
        record["status"] = "would-tag"
        if not options.as_json:
            click.echo(diff(note.path, note.text, new), nl=False)
    else:
        try:
            write_note(note, new)
        except NoteChanged as exc:
            skipped(note.path, str(exc).split(": ", 1)[1], "changed")
            return
        tally.counts["tagged"] += 1  # written: counted even if stdout fails next (`| head -1`)
        if not options.as_json:
            added = " ".join("+" + t for t in owned.tags) or "(no new tags)"
            click.echo(f"{note.path}: {added}" + (" and a summary" if record["summary"] else ""))
        echo_record(options, record)
        return
    tally.counts["tagged"] += 1
    echo_record(options, record)
