"""One record schema (io.schema, cli.records): every command's real records, on
one small document, carry a shared key with the same type; `run`'s records
have exactly the keys and types of cli.records.RUN_RECORD, and docs/records.md's
tables are generated from both; an --out file written under the older key
names resumes.

`python -m tests.test_schema --write` rewrites docs/records.md's tables."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.cli.records import RUN_RECORD, markdown_tables
from localsidecar.io.schema import RENAMED, SHARED, retired, upgrade

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

RECORDS_DOC = Path(__file__).resolve().parent.parent / "docs" / "records.md"
GENERATED = re.compile(r"(<!-- generated: .*? -->\n)(.*?)(<!-- end generated -->\n)", re.S)

DOC = (
    "The city library will close for two weeks in March to replace its leaking roof. Books can be returned "
    "at the town hall. It reopens on April 2 with a reading festival for children."
)
FAST = ["--max-tokens", "8", "--ctx", "512", "--threads", "1"]
SECTIONS = ("settings", "config")  # a run's configuration, not a record


def _invoke(args):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return r


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _dicts(value, seen_under=""):
    """Every dict inside a record (configurations left out), with the key it stands under."""
    if isinstance(value, dict):
        yield seen_under, value
        for k, v in value.items():
            if k not in SECTIONS:
                yield from _dicts(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _dicts(v, seen_under)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, list[dict]]:
    """command -> its --json output and --out lines, each command run once on DOC."""
    tmp = tmp_path_factory.mktemp("schema")
    doc = tmp / "library.txt"
    doc.write_text(DOC, encoding="utf-8")
    runs = {
        "run": ["run", str(doc), *FAST, "--draft-max", "2", "--compare"],
        "acceptance": ["acceptance", str(doc), *FAST, "--resamples", "1000"],
        "sweep": ["sweep", str(doc), *FAST, "--n-sweep", "4", "--no-plots", "--out-dir", str(tmp / "sweep")],
        # Q4_1 is the embedded target itself: used as is, nothing to derive
        "quant": ["quant", str(doc), *FAST, "--quants", "Q4_1", "--draft-max", "2"],
        "hashtags-eval": ["hashtags-eval", str(doc), *FAST, "--variants", "rebased-shifted,target"],
    }
    got = {}
    for command, args in runs.items():
        out = [] if command == "sweep" else ["--out", str(tmp / f"{command}.jsonl")]
        r = _invoke([*args, "--json", *out])
        got[command] = _json_lines(r.stdout) + (
            _json_lines((tmp / f"{command}.jsonl").read_text()) if out else []
        )
    return got


def test_shared_keys_have_one_type_in_every_command(outputs):
    where: dict[str, set[str]] = {}
    for command, records in outputs.items():
        assert records, command
        for under, d in (x for rec in records for x in _dicts(rec)):
            for key, value in d.items():
                if key in SHARED and under not in ("alpha", "conditions", "checks", "decomposition"):
                    types, meaning = SHARED[key]
                    assert isinstance(value, types), (command, under, key, value, meaning)
                    where.setdefault(key, set()).add(command)
            assert not retired(command) & set(d), (command, under, retired(command) & set(d))
    # the names the commands once disagreed on, now each in every command that has the thing
    assert where["hashtags"] >= {"run", "hashtags-eval"}
    assert where["hashtags_raw"] >= {"run", "hashtags-eval"}
    assert where["hashtags_by_doc"] == {"quant"}
    assert where["suffix_tokens"] >= {"run", "acceptance", "sweep"}
    assert where["n_docs"] >= {"acceptance", "sweep", "quant", "hashtags-eval"}
    assert where["docs"] == {"acceptance"}
    assert where["draft_ms_per_token"] >= {"run", "quant"}
    assert where["hashtag_jaccard"] >= {"quant", "hashtags-eval"}
    assert where["summary_tokens"] >= {"run", "acceptance", "quant", "hashtags-eval"}
    # the same document measured by run, acceptance and hashtags-eval: one suffix, one prompt
    (run_rec,) = [r for r in outputs["run"] if "config" not in r]
    acc = outputs["acceptance"][0]
    assert run_rec["suffix_tokens"] == acc["suffix_tokens"] == acc["docs"][0]["suffix_tokens"] > 0
    assert run_rec["prompt_tokens"] == acc["docs"][0]["prompt_tokens"]


def test_run_records_have_the_documented_keys_and_types(outputs):
    """The --json record and the --out line of `run --compare`: RUN_RECORD's keys in
    its order (the --out line adds its configuration), each value of a documented type."""
    records = outputs["run"]
    assert len(records) == 2
    for rec in records:
        assert rec["summary_mode"] == "extract"  # the embedded pair's default: every key is there
        keys = [k.name for k in RUN_RECORD]
        assert [k for k in rec if k not in SECTIONS] == keys
        for k in RUN_RECORD:
            assert isinstance(rec[k.name], k.value_types), (k.name, rec[k.name], k.value_types)


def test_records_doc_is_generated_from_the_schema():
    text = RECORDS_DOC.read_text(encoding="utf-8")
    m = GENERATED.search(text)
    assert m, "docs/records.md lost its generated part's markers"
    assert m.group(2) == markdown_tables(), "docs/records.md is stale: python -m tests.test_schema --write"
    for k in RUN_RECORD:
        assert f"| `{k.name}`" in m.group(2)


def _downgrade(command: str, record: dict) -> dict:
    """`record` as a version before the renames wrote it (the inverse of upgrade)."""
    back = {}
    for old, new in RENAMED[command].items():
        if isinstance(new, tuple):
            back[new[0]] = (old, lambda ms: 1000 / ms if ms else None)
        else:
            back[new] = (old, lambda v: v)

    def down(d: dict) -> dict:
        return {back[k][0] if k in back else k: back[k][1](v) if k in back else v for k, v in d.items()}

    out = down(record)
    if isinstance(out.get("rows"), list):
        out["rows"] = [down(r) for r in out["rows"]]
    return out


def test_upgrade_is_the_inverse_of_the_renames():
    row = {"quant": "Q8_0", "draft_ms_per_token": 12.5, "hashtags_by_doc": {"a": ["#A"]}, "summary_tokens": 3}
    old = _downgrade("quant", row)
    assert old == {"quant": "Q8_0", "draft_tokens_per_s": 80.0, "hashtags": {"a": ["#A"]}, "scored_tokens": 3}
    assert upgrade("quant", old) == row and upgrade("quant", row) == row
    assert upgrade("quant", {"draft_tokens_per_s": None})["draft_ms_per_token"] is None
    rec = {
        "id": "a",
        "rows": [{"variant": "target", "hashtags": ["#A"], "hashtags_raw": "[]", "hashtag_jaccard": None}],
    }
    assert _downgrade("hashtags-eval", rec)["rows"][0] == {
        "variant": "target",
        "tags": ["#A"],
        "raw": "[]",
        "jaccard": None,
    }
    assert upgrade("hashtags-eval", _downgrade("hashtags-eval", rec)) == rec
    assert upgrade("acceptance", {"id": "a", "n": 7}) == {"id": "a", "suffix_tokens": 7}


@pytest.mark.parametrize("command", ["acceptance", "hashtags-eval"])
def test_out_file_with_old_keys_resumes(command, tmp_path):
    doc = tmp_path / "library.txt"
    doc.write_text(DOC, encoding="utf-8")
    out = tmp_path / "old.jsonl"
    args = [command, str(doc), *FAST, "--json", "--out", str(out)]
    args += ["--resamples", "1000"] if command == "acceptance" else ["--variants", "rebased-shifted,target"]
    first = _json_lines(_invoke(args).stdout)
    lines = _json_lines(out.read_text())
    old = [_downgrade(command, r) for r in lines]
    assert old != lines  # the file really holds older key names
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in old))
    again = _invoke(args)
    assert "skipped 1 document already" in again.stderr, again.stderr
    resumed = _json_lines(again.stdout)
    if command == "acceptance":  # the resumed document gives the same report
        assert resumed[0]["docs"] == first[0]["docs"] and resumed[0]["conditions"] == first[0]["conditions"]
    else:  # the summary over the file's records, the resumed one read under the new names
        assert resumed[-1]["variants"] == first[-1]["variants"]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    old = RECORDS_DOC.read_text(encoding="utf-8")
    RECORDS_DOC.write_text(GENERATED.sub(lambda m: m.group(1) + markdown_tables() + m.group(3), old), "utf-8")
