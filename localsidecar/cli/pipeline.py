"""`run`'s pipeline for a command that summarizes documents as run does (`tag`).

The one adapter between run's options and the objects a job needs:
`pipeline_options` gives a command run's own Click options (the same objects'
copies: one help text, one default, one check); `Pipeline.take` folds their
values into one frozen object. A command never lists run's options itself.
When run's option groups become frozen objects of their own (cli/args.py),
this module is where `tag` switches to them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localsidecar.decoding.engine import EngineConfig
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags.generation import HashtagSettings

# run's options a summarizing command takes, in run's --help order (not --compare,
# --json, --out, --overwrite, --skip-bad, --replace-errors: the command has its own outputs).
RUN_OPTIONS = (
    "mode",
    "draft_max",
    "draft_max_cap",
    "numbers",
    "p_min",
    "temperature",
    "seed",
    "max_tokens",
    "soft_tokens",
    "max_chars",
    "reveal",
    "instruction",
    "suffix",
    "deferred_prompt",
    "prompts_file",
    "quiet",
    "workers",
    "ray_address",
    "quant",
    "draft_quant",
    "pair",
    "target",
    "draft",
    "models_dir",
    "n_ctx",
    "threads",
    "gpu_layers",
    "draft_gpu_layers",
    "verbose",
)


def pipeline_options(defaults: dict[str, Any] | None = None) -> Callable:
    """A decorator giving a command run's RUN_OPTIONS; `defaults`: another
    default for some of them (shown in --help)."""
    from localsidecar.cli.run import run_cmd

    by_name = {p.name: p for p in run_cmd.params}
    missing = [n for n in RUN_OPTIONS if n not in by_name]
    if missing:
        raise RuntimeError(f"run has no option {missing}")

    def decorate(f):
        params = getattr(f, "__click_params__", [])
        for name in reversed(RUN_OPTIONS):  # Click lists __click_params__ in reverse
            p = copy.copy(by_name[name])
            if defaults and name in defaults:
                p.default = defaults[name]
                p.show_default = True
            params.append(p)
        f.__click_params__ = params
        return f

    return decorate


@dataclass(frozen=True)
class Pipeline:
    """run's options as one value: what the models, the summary and the hashtags need."""

    options: tuple[tuple[str, Any], ...]  # (name, value) of RUN_OPTIONS

    @classmethod
    def take(cls, params: dict[str, Any]) -> Pipeline:
        """Remove run's options from a command's `params` and keep them."""
        return cls(tuple((name, params.pop(name)) for name in RUN_OPTIONS))

    def __getattr__(self, name: str) -> Any:
        for key, value in object.__getattribute__(self, "options"):
            if key == name:
                return value
        raise AttributeError(name)

    def scale(self):
        from localsidecar.cli.resumable import Scale

        return Scale.from_options(self.workers, self.ray_address, self.threads, self.gpu_layers)

    @property
    def in_process(self) -> bool:
        return not self.ray_address and (self.workers or 1) == 1

    def prompts(self) -> PromptConfig:
        from localsidecar.cli import options as opt

        return opt.prompt_config(self.prompts_file, self.instruction, self.suffix, self.deferred_prompt)

    def spec(self) -> SpecConfig:
        return SpecConfig(
            draft_max=self.draft_max,
            p_min=self.p_min,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            draft_max_cap=self.draft_max_cap,
            numbers=self.numbers,
        )

    def files(self):
        from localsidecar.cli.jobs import ModelFiles

        return ModelFiles.resolve(
            self.pair,
            self.target,
            self.draft,
            self.models_dir,
            need_draft=self.mode != "target-only",
            quant=self.quant,
            draft_quant=self.draft_quant,
        )

    def identity(self, files) -> dict:
        """What the output depends on (models by content, every setting), as
        run's --out config."""
        from localsidecar.io.results import model_identity

        return {
            "target": model_identity(files.target),
            "draft": model_identity(files.draft),
            "mode": self.mode,
            "reveal": self.reveal,
            "prompts": vars(self.prompts()),
            "spec": vars(self.spec()),
            "soft_tokens": self.soft_tokens or None,
            "max_chars": self.max_chars,
        }

    def job(self, files, hashtags: HashtagSettings, log: Callable[[str], None] | None):
        """run's per-document job with these hashtag settings."""
        from localsidecar.cli.jobs import RunJob

        engine = EngineConfig(
            n_ctx=self.n_ctx,
            threads=self.threads,
            gpu_layers=self.gpu_layers,
            draft_gpu_layers=self.draft_gpu_layers,
            soft_tokens=self.soft_tokens or None,
            hashtags=hashtags,
            log=log if self.verbose and self.in_process else None,
        )
        return RunJob(
            files, engine, self.prompts(), self.verbose, mode=self.mode, spec=self.spec(), reveal=self.reveal
        )

    def hashtag_settings(self, max_tags: int) -> HashtagSettings:
        return dataclasses.replace(HashtagSettings(), max_items=max_tags)
