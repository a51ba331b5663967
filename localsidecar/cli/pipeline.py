"""`run`'s pipeline, for `run` and for a command that summarizes documents as run does (`tag`).

`Pipeline` holds run's option groups (cli/args.py) as the command received
them and gives what a job needs: the pair, the executors, the settings an
output depends on, run's per-document job with the command's hashtag settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from localsidecar.cli.args import (
    InputArgs,
    LayoutArgs,
    ModelArgs,
    OutputArgs,
    PromptArgs,
    ScaleArgs,
    SpecArgs,
    SummaryArgs,
)
from localsidecar.hashtags.generation import HashtagSettings


@dataclass(frozen=True)
class Pipeline:
    """run's options as one value: what the models, the summary and the hashtags need."""

    layout: LayoutArgs
    spec: SpecArgs
    summary: SummaryArgs
    inputs: InputArgs
    prompts: PromptArgs
    output: OutputArgs
    scale: ScaleArgs
    model: ModelArgs

    @property
    def mode(self) -> str:
        return self.layout.mode

    @property
    def max_chars(self) -> int | None:
        return self.inputs.max_chars

    @property
    def quiet(self) -> bool:
        return self.output.quiet

    @property
    def verbose(self) -> bool:
        return self.model.verbose

    def executors(self):
        return self.scale.scale(self.model)

    def files(self):
        return self.model.files(need_draft=self.layout.need_draft)

    def spec_config(self, files):
        """How the summary is decoded and which summary it is (--summary auto: by the target's size)."""
        return self.summary.config(self.spec, files.target)

    def identity(self, files) -> dict:
        """What the output depends on (models by content, every setting), as run's --out config."""
        from localsidecar.io.results import model_identity

        return {
            "target": model_identity(files.target),
            "draft": model_identity(files.draft),
            "mode": self.layout.mode,
            "reveal": self.layout.reveal,
            "prompts": vars(self.prompts.config()),
            "spec": vars(self.spec_config(files)),
            "soft_tokens": self.spec.soft_limit,
            "max_chars": self.inputs.max_chars,
        }

    def job(
        self,
        files,
        log: Callable[[str], None] | None,
        *,
        hashtags: HashtagSettings | None = None,
        compare: bool = False,
    ):
        """run's per-document job; `hashtags`: other hashtag settings than the default."""
        from localsidecar.cli.jobs import RunJob

        engine = self.model.engine_config(
            soft_tokens=self.spec.soft_limit,
            hashtags=hashtags or HashtagSettings(),
            log=log if self.model.verbose and self.scale.in_process else None,
        )
        return RunJob(
            files,
            engine,
            self.prompts.config(),
            self.model.verbose,
            mode=self.layout.mode,
            spec=self.spec_config(files),
            compare=compare,
            reveal=self.layout.reveal,
        )

    def hashtag_settings(self, max_tags: int) -> HashtagSettings:
        return dataclasses.replace(HashtagSettings(), max_items=max_tags)
