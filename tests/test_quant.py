"""`localsidecar quant` on the real embedded model (SmolLM2-135M Q4_1 and
variants derived from it with llama.cpp's quantizer); no mocks."""

from __future__ import annotations

import csv
import json
import math
import os
import re

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.errors import LocalsidecarError
from localsidecar.lab.quant import finish_rows, make_variant, parse_quants, variants_dir

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

DOC = (
    "The city library will close for two weeks in March to replace its leaking roof. Books can be returned "
    "at the town hall. It reopens on April 2 with a reading festival for children."
)
FAST = ["--max-tokens", "16", "--ctx", "512", "--threads", "1"]  # 1 thread: stable on a shared machine


@pytest.fixture()
def doc(tmp_path):
    p = tmp_path / "library.txt"
    p.write_text(DOC, encoding="utf-8")
    return p


def _invoke(args):
    return CliRunner().invoke(main, ["quant", *args])


# --- no model ------------------------------------------------------------------------------


def test_parse_quants():
    assert parse_quants(" q8_0, Q4_0 ,q8_0") == ["Q8_0", "Q4_0"]
    for bad, why in (("", "no quantization"), ("Q4_0,,Q8_0", "empty item"), ("Q4_0,Q7_X", "'Q7_X'")):
        with pytest.raises(LocalsidecarError) as e:
            parse_quants(bad)
        msg = str(e.value)
        assert why in msg and "Q4_K_M" in msg and "\n" not in msg


@pytest.mark.parametrize(
    "args",
    [
        ["--quants", "Q4_0,Q7_X"],
        ["--quants", ""],
        ["--quants", "Q4_0,"],
        ["--vary", "target", "--target", "TARGET"],
    ],
)
def test_bad_input_is_one_line_exit_2(doc, args, pair_paths):
    args = [a.replace("TARGET", str(pair_paths[0])) for a in args]
    r = _invoke([str(doc), *args])
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("Error: ")
    assert ("Q5_K_M" in r.stderr) if args[0] == "--quants" else ("--draft" in r.stderr)


def _row(q, alpha, tps=None, size=100, tags=None, meaningful=True):
    return {
        "quant": q,
        "alpha": alpha,
        "tokens_per_s": tps,
        "speedup_meaningful": meaningful and tps is not None,
        "size_bytes": size,
        "hashtags_by_doc": tags or {},
        "hashtag_jaccard": None,
        "recommended": False,
        "within_margin": False,
    }


def test_order_fastest_within_margin_then_alpha():
    rows = finish_rows(
        [
            _row("A", 0.90, 10.0, tags={"d": ["x", "y"]}),
            _row("B", 0.95, 8.0, tags={"d": ["x"]}),
            _row("C", 0.94, 12.0, tags={"d": []}),
            _row("D", 0.80, 30.0),
            _row("E", 0.85, 40.0),
        ],
        0.02,
    )
    assert [r["quant"] for r in rows] == ["C", "B", "A", "E", "D"]  # then by α, not speed
    assert [r["recommended"] for r in rows] == [True, False, False, False, False]
    assert [r["within_margin"] for r in rows] == [True, True, False, False, False]
    by = {r["quant"]: r for r in rows}
    assert (
        by["B"]["hashtag_jaccard"] == 1.0
        and by["A"]["hashtag_jaccard"] == 0.5
        and by["C"]["hashtag_jaccard"] == 0.0
    )
    # without the real loop, the smallest file within the margin is recommended
    rows = finish_rows(
        [_row("A", 0.95, size=300), _row("B", 0.94, size=200), _row("C", 0.90, size=100)], 0.02
    )
    assert [r["quant"] for r in rows] == ["B", "A", "C"] and rows[0]["recommended"]
    # a speed the draft hardly ran for ranks nothing: the meaningful one first, then by size, no star
    rows = finish_rows(
        [
            _row("A", 0.95, 30.0, size=300, meaningful=False),
            _row("B", 0.95, 10.0, size=200),
            _row("C", 0.94, 40.0, size=100, meaningful=False),
        ],
        0.02,
    )
    assert [r["quant"] for r in rows] == ["B", "C", "A"] and [r["recommended"] for r in rows] == [
        True,
        False,
        False,
    ]
    rows = finish_rows(
        [_row("A", 0.95, 30.0, size=300, meaningful=False), _row("C", 0.94, 40.0, meaningful=False)], 0.02
    )
    assert [r["quant"] for r in rows] == ["C", "A"] and not any(r["recommended"] for r in rows)


# --- the real model --------------------------------------------------------------------------


def test_fallback_is_labelled(pair_paths, session_models_dir):
    from localsidecar.backend.gguf import gguf_info

    src = pair_paths[0]
    folder = variants_dir(src, session_models_dir)
    v = make_variant(src, "Q2_K", folder)
    assert v.fell_back and v.label.startswith("Q2_K (really Q4_0 for ")  # 576-wide rows: no K-quant blocks
    assert v.path.parent == folder and v.size_bytes == os.path.getsize(v.path)
    assert gguf_info(v.path).dominant_type == "Q4_0"
    same = make_variant(src, "Q4_1", folder)  # the source already is Q4_1: used as is
    assert same.from_source and same.path == src and same.label == "Q4_1" and not same.fell_back
    assert v.bits_per_weight < same.bits_per_weight


def test_scores_match_lab_and_an_independent_float64_kl(pair_paths, tmp_path):
    from localsidecar.decoding.engine import Engine, EngineConfig
    from localsidecar.decoding.layouts import prefill_draft
    from localsidecar.decoding.prompts import PromptConfig
    from localsidecar.lab.acceptance import Lab
    from localsidecar.lab.quant import RefStore, score_draft

    target, draft = pair_paths
    with Engine(target, None, EngineConfig(n_ctx=512, threads=1), PromptConfig()) as eng:
        eng.swap_draft(draft)
        lab = Lab(eng, max_tokens=16)
        prep = lab.prepare("library", DOC)
        refs = RefStore(tmp_path, budget=0)  # budget 0: p lives in a temporary file
        ref = refs.add(lab, prep)
        assert isinstance(ref.p, np.memmap)
        sc = score_draft(eng.d_ctx, refs.n_common, refs.refs)
        S = len(prep.summary)
        assert sc.tokens == S > 0
        lab_alpha = lab.evaluate(prep, ["baseline"]).alpha_t["baseline"]
        assert np.abs(sc.alpha_t[0] - lab_alpha).max() < 1e-5

        # q from the draft's own baseline prefill, KL and top-1 in float64
        p = prep.prompt
        prefill_draft(eng.d_ctx, p, "baseline", reserve=len(prep.summary))
        eng.d_ctx.decode_tokens([p.tail[-1]] + prep.summary[:-1], len(p.bare) - 1, (0,), "all")
        x = eng.d_ctx.logits_rows()[:, : refs.n_common].astype(np.float64)
        logq = x - x.max(axis=1, keepdims=True)
        logq -= np.log(np.exp(logq).sum(axis=1, keepdims=True))
        p64 = np.asarray(ref.p, dtype=np.float64)
        kl = np.where(p64 > 0, p64 * (np.log(np.where(p64 > 0, p64, 1.0)) - logq), 0.0).sum(axis=1)
        assert sc.kl == pytest.approx(kl.mean(), rel=1e-3, abs=1e-6)
        assert sc.top1 == pytest.approx(np.mean(x.argmax(axis=1) == p64.argmax(axis=1)))
        assert 0 < sc.alpha < 1 and sc.kl > 0

        # the target as its own draft: the same distributions, α = 1, KL = 0
        eng.swap_draft(target)
        assert eng.draft is eng.target
        same = score_draft(eng.d_ctx, refs.n_common, refs.refs)
        assert same.alpha == pytest.approx(1.0, abs=1e-5) and same.kl < 1e-5 and same.top1 == 1.0
        refs.close()
    assert not list(tmp_path.glob("refs-*"))  # the temporary file is gone


def test_quant_two_variants_json_csv_and_resume(doc, tmp_path, session_models_dir):
    out, table = tmp_path / "quant.jsonl", tmp_path / "quant.csv"
    # a fixed draft length: auto's fixed cost model never drafts on this pair (the draft
    # costs as much as the target), and the loop's acceptance is what this test reads
    args = [str(doc), "--quants", "Q8_0,Q4_0", *FAST, "--draft-max", "2", "--json", "--out", str(out)]
    r = _invoke([*args, "--csv", str(table)])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["vary"] == "draft" and res["n_docs"] == 1 and res["draft"] is None
    rows = res["rows"]
    assert sorted(x["quant"] for x in rows) == ["Q4_0", "Q8_0"]
    for x in rows:
        assert 0 < x["alpha"] <= 1 and x["kl"] >= 0 and 0 <= x["top1"] <= 1
        assert 1 - x["alpha"] <= math.sqrt(x["kl"] / 2) + 1e-4  # Pinsker: TV <= sqrt(KL / 2)
        assert x["size_bytes"] == os.path.getsize(x["path"])
        assert os.path.dirname(x["path"]) == res["variants_dir"]
        assert res["variants_dir"].startswith(str(session_models_dir / "quant"))
        assert x["summary_tokens"] > 0 and 0 <= x["acceptance_rate"] <= 1 and x["mean_tokens_per_call"] >= 1
        assert x["speedup"] == pytest.approx(x["tokens_per_s"] / x["target_only_tokens_per_s"], rel=0.02)
        assert list(x["hashtags_by_doc"]) == ["library"]
    by = {x["quant"]: x for x in rows}
    assert by["Q8_0"]["alpha"] > by["Q4_0"]["alpha"] and by["Q8_0"]["kl"] < by["Q4_0"]["kl"]
    assert 8.5 <= by["Q8_0"]["bits_per_weight"] < 9 and 4.5 <= by["Q4_0"]["bits_per_weight"] < 6
    # every round drafts 2: a speed is meaningful from 20 drafted tokens on, and only such a one is starred
    meaningful = [x["drafted"] >= 20 for x in rows]
    assert [x["speedup_meaningful"] for x in rows] == meaningful
    assert [x["recommended"] for x in rows] == [meaningful[0], False]
    assert res["recommended"] == (rows[0]["quant"] if meaningful[0] else None)
    fast = [x["speedup"] > 1 for x, m in zip(rows, meaningful) if m]
    assert res["faster_than_target_only"] == (any(fast) if fast else None)
    best = max(rows, key=lambda x: x["alpha"])
    assert res["best_alpha"] == best["alpha"] and rows[0]["within_margin"]
    if best["hashtags_by_doc"]["library"]:
        assert best["hashtag_jaccard"] == 1.0
    with open(table, newline="", encoding="utf-8") as f:
        got = list(csv.DictReader(f))
    assert [g["quant"] for g in got] == [x["quant"] for x in rows] and got[0]["rank"] == "1"
    assert [int(g["size_bytes"]) for g in got] == [x["size_bytes"] for x in rows]

    again = _invoke(args)  # every variant is in --out: nothing is recomputed
    assert again.exit_code == 0, again.output
    assert "reusing 2 variants" in again.stderr
    assert json.loads(again.stdout)["rows"] == rows
    # an --out file written before the keys were renamed resumes to the same rows
    old = (
        out.read_text()
        .replace('"mean_tokens_per_call"', '"tokens_per_call"')
        .replace('"summary_tokens"', '"scored_tokens"')
        .replace('"hashtags_by_doc"', '"hashtags"')
    )
    assert '"tokens_per_call"' in old and '"scored_tokens"' in old
    lines = [json.loads(line) for line in old.splitlines()]
    for rec in lines:  # drafting speed was tokens per second
        ms = rec.pop("draft_ms_per_token", None)
        rec["draft_tokens_per_s"] = 1000 / ms if ms else None
    out.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    again = _invoke(args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["rows"] == rows


def test_quant_on_the_embedded_pair_marks_its_speedups_not_meaningful(doc, tmp_path):
    """--draft-max auto never drafts on the embedded pair (its draft costs what
    its target does): the loop and target-only do the same work."""
    out = tmp_path / "quant.jsonl"
    r = _invoke([str(doc), "--quants", "Q4_0", *FAST, "--out", str(out)])
    assert r.exit_code == 0, r.output
    (row,) = [line for line in r.stdout.splitlines() if " Q4_0 " in line]
    assert "★" not in row and re.search(r" \d+\.\d\d×‡ ", row), row
    assert "‡ not meaningful: the draft hardly ran (Q4_0 0 drafted)" in r.stdout
    assert "★ none: no variant with α ≥ best α" in r.stdout and "★ recommended" not in r.stdout
    again = _invoke([str(doc), "--quants", "Q4_0", *FAST, "--out", str(out), "--json"])  # from --out
    res = json.loads(again.stdout)
    (x,) = res["rows"]
    assert x["drafted"] == 0 and x["speedup"] > 0 and x["speedup_meaningful"] is False
    assert res["recommended"] is None and res["faster_than_target_only"] is None


def test_vary_target_keeps_the_draft(doc, pair_paths):
    r = _invoke([str(doc), "--vary", "target", "--quants", "Q8_0", "--no-loop", *FAST, "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert (
        res["vary"] == "target" and res["draft"] == str(pair_paths[1]) and res["source"] == str(pair_paths[0])
    )
    (row,) = res["rows"]
    assert row["quant"] == "Q8_0" and 0 < row["alpha"] <= 1 and row["kl"] >= 0 and row["recommended"]
    assert row["tokens_per_s"] is None and row["acceptance_rate"] is None and row["hashtags_by_doc"] == {}


def test_table_names_the_fallback(doc):
    r = _invoke([str(doc), "--quants", "Q2_K", "--no-loop", *FAST])
    assert r.exit_code == 0, r.output
    assert "Q2_K* (really Q4_0 for" in r.stdout and "★" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()[:8]) <= 100  # the table fits 100 columns
