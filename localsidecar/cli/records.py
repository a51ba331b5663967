"""The keys of `run`'s records (`--json` lines, `--out` lines), each once:
its types and what it means. A key every command shares (io.schema.SHARED)
takes its types and meaning from there, with at most a note for `run`.

docs/records.md's key tables are `markdown_tables()`; tests/test_schema.py
checks that file against it and a real record of each kind against RUN_RECORD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from localsidecar.io.schema import SHARED

When = Literal["always", "compare", "extract"]  # only with --compare; only in an extract summary's record

_TYPE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


@dataclass(frozen=True)
class Key:
    """One key of a record. `types`/`meaning` empty: a SHARED key's own."""

    name: str
    types: tuple[type, ...] = ()
    meaning: str = ""
    note: str = ""  # for a SHARED key: what it adds in this command's records
    when: When = "always"

    def __post_init__(self) -> None:
        shared = self.name in SHARED
        if shared == bool(self.types or self.meaning):
            raise ValueError(f"{self.name}: a shared key takes its types and meaning from io.schema.SHARED")

    @property
    def value_types(self) -> tuple[type, ...]:
        return SHARED[self.name][0] if self.name in SHARED else self.types

    @property
    def text(self) -> str:
        base = SHARED[self.name][1] if self.name in SHARED else self.meaning
        return f"{base}; {self.note}" if self.note else base


NUMBER_OR_NULL = (int, float, type(None))
SECONDS = (int, float)

# In the order the record has them (cli/report.run_record, then cli/jobs.RunJob).
RUN_RECORD: tuple[Key, ...] = (
    Key("id"),
    Key(
        "mode",
        (str,),
        "the draft's layout, `--mode`: rebased, masked, visible, deferred, baseline or target-only",
    ),
    Key(
        "summary_mode",
        (str,),
        "which summary it is, `--summary` resolved: `extract` (the document's own sentences, chosen by the "
        "target) or `free` (written by the model, checked against the document); docs/summaries.md",
    ),
    Key("summary", note="cut back to its last complete sentence (`summary_ids` keep every token)"),
    Key("summary_complete", (bool,), "the summary ends on a sentence end (otherwise it is shown as written)"),
    Key(
        "unsupported",
        (list, type(None)),
        'a free summary\'s sentences the document does not back, `[{"span": …, "why": …}]` (listed whatever '
        "`--unsupported` says; with `drop` they are no longer in `summary`); null for an extract summary",
    ),
    Key("numbers"),
    Key("hashtags"),
    Key("hashtags_raw", note='"" without a hashtag phase'),
    Key(
        "hashtags_valid_json",
        (bool, type(None)),
        "the hashtag text was valid JSON before repair (null: no hashtag phase)",
    ),
    Key("hashtags_note", (str, type(None)), "why there are no hashtags, when known"),
    Key(
        "alpha",
        NUMBER_OR_NULL,
        "online α: the mean overlap Σ min(p, q) of the target's and the draft's distributions over the "
        "drafted positions (null: nothing drafted)",
    ),
    Key("acceptance_rate"),
    Key("drafted"),
    Key("accepted", (int,), "drafted tokens the target accepted"),
    Key(
        "rounds",
        (int,),
        "rounds of the loop, each one target call on the last token plus that round's draft",
    ),
    Key("target_calls", (int,), "every call the target made for the summary, the prompt's batches included"),
    Key("mean_tokens_per_call"),
    Key("k_mean", NUMBER_OR_NULL, "the mean of `k_hist`: drafted tokens per round"),
    Key(
        "k_hist",
        (dict,),
        'rounds by the number of tokens drafted in them, `{"0": n0, "1": n1, …}` (0: the target alone; it sums '
        "to `rounds`)",
    ),
    Key("draft_ms_per_token", note="null when nothing was drafted"),
    Key(
        "draft_catchup_s",
        SECONDS,
        "seconds of the batches that bring the draft up to the committed tokens at the start of a drafting "
        "round (after rounds the target did alone, the whole lag); not in `draft_ms_per_token`",
    ),
    Key("draft_catchup_tokens", (int,), "tokens of those catch-up batches"),
    Key("few_drafted", note="fewer than 20: the rates above are noise"),
    Key(
        "no_draft_reason",
        (str, type(None)),
        "why the draft drafted no token, with the cost model's numbers when they decided it (null: it "
        "drafted, or target-only)",
    ),
    Key("verify_ms", (dict,), 'mean ms of a target call by batch size, `{"1": …, "2": …}`'),
    Key("summary_tokens"),
    Key(
        "stopped",
        (str,),
        "why the summary ended: `eog` (the model ended it), `sentence` (a sentence end past `--soft-tokens`), "
        "`repeat` (a sentence repeated word for word, dropped) or `max_tokens`; an extract summary: `length` (long "
        "enough), `sentences` (the most sentences it takes), `candidates` (no sentence left) or `max_tokens`",
    ),
    Key("tokens_per_s", note="over the generation loop (`gen_s`)"),
    Key("prefill_s", SECONDS, "seconds of prompt processing, a part of `wall_s`"),
    Key("gen_s", SECONDS, "seconds of the summary's generation loop, a part of `wall_s`"),
    Key("draft_s", SECONDS, "seconds the draft spent drafting, catch-up batches apart"),
    Key("verify_s", SECONDS, "seconds in the target's calls of the loop and their acceptance"),
    Key("wall_s", SECONDS, "seconds for the whole document"),
    Key("hashtag_tokens"),
    Key("hashtag_wall_s", SECONDS, "seconds of the hashtag phase, a part of `wall_s`"),
    Key("target", (str,), "the target's model file"),
    Key("draft", (str, type(None)), "the draft's model file (null: target-only)"),
    Key("prompt_tokens"),
    Key("suffix_tokens"),
    Key("prompt_ids", (list,), "the token ids the target was given"),
    Key("summary_ids", note="exactly as generated, also past a cut"),
    Key("threads", (dict,), 'the thread counts each model decoded at, `{"target": [2], "draft": [1, 2]}`'),
    Key(
        "cost_table",
        (str, type(None)),
        "the fixed costs `--draft-max auto` decided from (null for an integer `--draft-max`)",
    ),
    Key(
        "summary_spans",
        (list,),
        "`[[start, end], …]`: where each piece of the summary is in the document's text, in the summary's order",
        when="extract",
    ),
    Key("choices", (int,), "sentences the target chose", when="extract"),
    Key(
        "choices_drafted",
        (int,),
        "choices the draft proposed (0 with `--draft-max auto`: the target chose alone)",
        when="extract",
    ),
    Key("choices_accepted", (int,), "proposed choices the target made too", when="extract"),
    Key("candidate_tokens", (int,), "candidate tokens the target scored to choose among", when="extract"),
    Key("target_only_tokens_per_s", note="the median over the timed pairs", when="compare"),
    Key("speedup", note="the median of the timed pairs' ratios", when="compare"),
    Key("speedup_range", (list, type(None)), "[lowest, highest] of the pairs' ratios", when="compare"),
    Key("speedup_pairs", (int,), "how many interleaved pairs were timed", when="compare"),
    Key(
        "speedup_meaningful",
        (bool,),
        "at least 10% of the rounds drafted and enough tokens were drafted; otherwise both runs did the same "
        "work and the speedup is load noise",
        when="compare",
    ),
    Key("target_only_summary_ids", (list,), "the summary ids of the target-only run", when="compare"),
    Key("text_sha256", note="after `--max-chars`; a resumed `--out` compares it"),
)


def type_names(types: tuple[type, ...]) -> str:
    """'integer', 'number or null', ...: (int, float) is a number."""
    names = [_TYPE_NAMES[t] for t in types if not (t is int and float in types)]
    return " or ".join(dict.fromkeys(names))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_tables() -> str:
    """docs/records.md's generated part: `run`'s keys, then the keys every command shares."""
    lines = [
        "### `run`",
        "",
        _row(["key", "type", "meaning"]),
        _row(["---"] * 3),
    ]
    for k in RUN_RECORD:
        when = {"compare": " (with `--compare`)", "extract": " (extract summaries)"}.get(k.when, "")
        lines.append(_row([f"`{k.name}`{when}", type_names(k.value_types), k.text]))
    lines += [
        "",
        "### Keys every command shares",
        "",
        "A key of this table means the same thing, with a value of the same type, in the records of every "
        "command that has it (`run`, `acceptance`, `sweep`, `quant`, `hashtags-eval`, nested rows included).",
        "",
        _row(["key", "type", "meaning"]),
        _row(["---"] * 3),
    ]
    for name, (types, meaning) in SHARED.items():
        lines.append(_row([f"`{name}`", type_names(types), meaning]))
    return "\n".join(lines) + "\n"
