"""The per-document jobs of run, acceptance, sweep and hashtags-eval, as
picklable WorkerSpecs (localsidecar.scale): a worker loads the pair once
(`build`) and runs one document per `run` call, wherever it lives — in this
process, a worker process or a Ray actor. A job returns plain data; the
driver (cli/resumable.py) writes every file.

Records come out identical wherever a document runs: the model paths written
into them are the driver's, and with the same --threads the numbers are the
same (contexts are cleared between documents). Every record carries
`text_sha256` of the document's text (resume compares it: cli/resumable).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localsidecar.decoding.defaults import DEFAULT_MAX_TOKENS
from localsidecar.decoding.engine import EngineConfig, RunMode
from localsidecar.decoding.layouts import Mode, Reveal
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.io.documents import text_sha256
from localsidecar.io.results import TEXT_HASH_KEY


def _absolute(arg: str | None) -> str | None:
    """A local path as an absolute one (Ray workers do not share the driver's
    working folder); anything else (REPO:FILE, None) as given."""
    if arg and Path(arg).exists():
        return str(Path(arg).resolve())
    return arg


def resolve_pair_paths(pair, target, draft, models_dir, need_draft=True, quant=None, draft_quant=None):
    """(target path, draft path or None); the embedded pair unless told otherwise;
    quant/draft_quant: a registry pair's quantizations (offline, hub cache only)."""
    from localsidecar.registry.models import resolve_models

    t, d = resolve_models(
        pair=pair,
        target=target,
        draft=draft,
        models_dir=models_dir,
        require_draft=need_draft,
        quant=quant,
        draft_quant=draft_quant,
    )
    return t, d if need_draft else None


@dataclass
class ModelFiles:
    """The pair as resolved on the driver, and as the user named it, so that a
    Ray node can resolve it again on its own disk (`here`)."""

    target: Path
    draft: Path | None
    pair: str | None = None
    target_arg: str | None = None
    draft_arg: str | None = None
    models_dir: str | None = None
    quant: str | None = None
    draft_quant: str | None = None

    @classmethod
    def resolve(
        cls,
        pair,
        target,
        draft,
        models_dir,
        need_draft: bool = True,
        quant: str | None = None,
        draft_quant: str | None = None,
    ) -> ModelFiles:
        t, d = resolve_pair_paths(
            pair, target, draft, models_dir, need_draft=need_draft, quant=quant, draft_quant=draft_quant
        )
        return cls(t, d, pair, _absolute(target), _absolute(draft), _absolute(models_dir), quant, draft_quant)

    @property
    def names(self) -> tuple[str, str | None]:
        """The paths records carry (the driver's)."""
        return str(self.target), str(self.draft) if self.draft else None

    def here(self) -> ModelFiles:
        """Resolved on this node: a registry pair through this node's hub cache
        (pulled if missing), a local path that must exist here."""
        t, d = resolve_pair_paths(
            self.pair,
            self.target_arg,
            self.draft_arg,
            self.models_dir,
            need_draft=self.draft is not None,
            quant=self.quant,
            draft_quant=self.draft_quant,
        )
        return dataclasses.replace(self, target=t, draft=d)


def stage_hook(on_tokens) -> Callable[[str], None] | None:
    """The progress hook's `step` (cli.progress.ProgressHook), when the job runs in the driver's process."""
    return getattr(on_tokens, "step", None)


def log_line(line: str) -> None:
    """--verbose lines of a worker process's engine (draft policy, thread tuner), on stderr."""
    print(line, file=sys.stderr, flush=True)


class EngineWorker:
    """A loaded Engine and the job's per-document function."""

    def __init__(self, job: EngineJob, engine) -> None:
        self.job = job
        self.engine = engine
        self.notes = list(engine.notes) if engine is not None else []
        self.state = job.worker_state(engine)
        self.on_tokens = None  # set by an executor in the driver's process (progress)

    def run(self, payload: Any) -> Any:
        from localsidecar.cli.resumable import Skipped
        from localsidecar.decoding.context_fit import DocumentTooLong

        try:
            return self.job.run_one(self.engine, self.state, payload, self.on_tokens)
        except DocumentTooLong as exc:
            return Skipped(str(exc))

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()


@dataclass
class EngineJob:
    """What every job needs to load the pair; subclasses define run_one."""

    files: ModelFiles | None  # None: no model needed (hashtags-eval keywords only)
    engine: EngineConfig  # `log`: the driver's printer in its process; None sent to workers (see build)
    prompts: PromptConfig
    verbose: bool = False

    def check_node(self) -> None:
        if self.files is not None:
            self.files = self.files.here()

    def build(self, threads: int | None) -> EngineWorker:
        from localsidecar import backend
        from localsidecar.decoding.engine import Engine

        if self.files is None:
            return EngineWorker(self, None)
        backend.set_verbose(self.verbose)
        log = self.engine.log or (log_line if self.verbose else None)
        cfg = dataclasses.replace(self.engine, threads=threads or self.engine.threads, log=log)
        return EngineWorker(self, Engine(self.files.target, self.files.draft, cfg, self.prompts))

    def worker_state(self, engine) -> Any:
        return None

    def run_one(self, engine, state, payload, on_tokens) -> Any:
        raise NotImplementedError


@dataclass
class RunJob(EngineJob):
    """`run`: one document -> its --json/--out record."""

    mode: RunMode = Mode.REBASED
    spec: SpecConfig = dataclasses.field(default_factory=SpecConfig)
    compare: bool = False
    reveal: Reveal = Reveal.SHIFTED

    def run_one(self, engine, state, doc, on_tokens) -> dict:
        from localsidecar.cli.report import run_record

        res = engine.run(
            doc.id,
            doc.text,
            self.mode,
            self.spec,
            compare=self.compare,
            reveal=self.reveal,
            on_tokens=on_tokens,
            on_step=stage_hook(on_tokens),
        )
        return {**run_record(res, *self.files.names), TEXT_HASH_KEY: text_sha256(doc.text)}


class SummaryMemo:
    """A worker's view of the canonical-summaries file: what the driver had
    read, plus what this worker generated (handed back with each result, so
    the driver alone appends to the file)."""

    def __init__(self, known: dict[str, list[int]], origins: dict[str, str] | None = None) -> None:
        self._known = known
        self._origins = origins or {}
        self._new: list[tuple[str, str, list[int], str]] = []

    def where(self, key: str) -> str | None:
        """ "FILE:LINE" of a summary read from the file."""
        return self._origins.get(key)

    def get(self, key: str) -> list[int] | None:
        return self._known.get(key)

    def put(self, key: str, doc_id: str, ids: list[int], stopped: str) -> None:
        self._known[key] = ids
        self._new.append((key, doc_id, ids, stopped))

    def take(self) -> list[tuple[str, str, list[int], str]]:
        new, self._new = self._new, []
        return new


@dataclass
class LabJob(EngineJob):
    """`acceptance` (and `sweep`): teacher-forced α of one document."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    n: int | None = None
    summaries: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    summary_origins: dict[str, str] = dataclasses.field(default_factory=dict)  # key -> "FILE:LINE"
    conditions: Sequence[str] = ()
    checks: bool = False
    save_tokens: bool = False
    sweep_ns: Sequence[int] | None = None  # sweep: masked α at these hidden lengths

    def worker_state(self, engine):
        from localsidecar.lab.acceptance import Lab

        memo = SummaryMemo(self.summaries, self.summary_origins)
        return Lab(engine, max_tokens=self.max_tokens, n=self.n, summaries=memo), memo

    def run_one(self, engine, state, doc, on_tokens) -> dict:
        """{"doc": the DocAlpha (sweep) or its --out record (acceptance), "tokens":
        the --save-tokens line or None, "summaries": new canonical summaries}."""
        from localsidecar.lab.acceptance import token_record
        from localsidecar.lab.acceptance_report import doc_record

        lab, memo = state
        step = stage_hook(on_tokens)
        prep = lab.prepare(doc.id, doc.text, on_step=step)
        if self.sweep_ns is not None:
            ns = sorted(set(self.sweep_ns) | {len(prep.prompt.suffix)})
            res = lab.evaluate(prep, ["baseline", "visible"], sweep_ns=ns, on_step=step)
            return {"doc": res, "n": len(prep.prompt.suffix), "tokens": None, "summaries": memo.take()}
        res = lab.evaluate(prep, list(self.conditions), checks=self.checks, on_step=step)
        return {
            "doc": {**doc_record(res), TEXT_HASH_KEY: text_sha256(doc.text)},
            "tokens": token_record(prep) if self.save_tokens else None,
            "summaries": memo.take(),
        }


@dataclass
class HashtagsJob(EngineJob):
    """`hashtags-eval`: every variant on one document -> its record. Payload:
    (document, its keyword baseline run or None)."""

    variants: Sequence[str] = ()
    spec: SpecConfig = dataclasses.field(default_factory=SpecConfig)

    def run_one(self, engine, state, payload, on_tokens) -> dict:
        from localsidecar.lab.hashtag_eval import evaluate_doc

        doc, keywords = payload
        rec = evaluate_doc(
            engine, doc.id, doc.text, self.variants, self.spec, keywords, on_tokens, stage_hook(on_tokens)
        ).record()
        return {**rec, TEXT_HASH_KEY: text_sha256(doc.text)}
