"""Acceptance lab on the real embedded pair: exactness of the shared-prefix
plan, α against a direct numpy computation, bootstrap CIs, sweep and CLI.

Everything runs with one thread and 64-token summaries (the machine is
shared; llama.cpp's dependence on KV cell placement shows from about the
20th summary token on, so shorter summaries would not test the cell plan).
The canonical summaries are generated once and reused by the CLI tests
through the same summaries file.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.backend import Context
from localsidecar.cli import main
from localsidecar.decoding.distributions import overlap_rows
from localsidecar.decoding.engine import Engine, EngineConfig
from localsidecar.decoding.layouts import prefill_draft, prefill_target
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.io.documents import load_many
from localsidecar.lab.acceptance import CHECKS, CONDITIONS, MASKED_ALT, REBASED_INLINE, Lab, SummaryStore
from localsidecar.lab.acceptance_report import DECOMPOSITION, summarize
from localsidecar.lab.bootstrap import paired_bootstrap
from localsidecar.lab.sweep import depth_rows, nsweep_rows

from .helpers import EXAMPLES, one_line_error

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

MAX_TOKENS = 64
OBSERVED = ("baseline", "rebased", "masked", "visible", REBASED_INLINE)
DOCS_DIR = EXAMPLES / "docs"


@pytest.fixture(scope="module")
def summaries_file(tmp_path_factory):
    return tmp_path_factory.mktemp("lab") / "summaries.jsonl"


@pytest.fixture(scope="module")
def lab_engine(pair_paths):
    with Engine(pair_paths[0], pair_paths[1], EngineConfig(n_ctx=1024, threads=1), PromptConfig()) as eng:
        yield eng


@pytest.fixture(scope="module")
def lab(lab_engine, summaries_file):
    return Lab(lab_engine, max_tokens=MAX_TOKENS, summaries=SummaryStore(summaries_file))


@pytest.fixture(scope="module")
def preps(lab):
    return [lab.prepare(d.id, d.text) for d in load_many([str(DOCS_DIR)]).docs]


@pytest.fixture(scope="module")
def observed() -> dict[str, np.ndarray]:
    """Copies of the draft logits the lab read for the first document."""
    return {}


@pytest.fixture(scope="module")
def steps() -> list[str]:
    """The stages the lab announced (progress) for the first document."""
    return []


@pytest.fixture(scope="module")
def results(lab, preps, observed, steps):
    n_real = len(preps[0].prompt.suffix)

    def keep(name, offset, rows):
        if name in OBSERVED:
            assert offset == 0  # 64 tokens fit one batch
            observed[name] = np.array(rows)

    return [
        lab.evaluate(
            p,
            CONDITIONS,
            sweep_ns=(0, n_real),
            checks=True,
            observe=keep if i == 0 else None,
            on_step=steps.append if i == 0 else None,
        )
        for i, p in enumerate(preps)
    ]


def test_progress_hears_every_pass_in_the_order_it_runs(results, preps, steps):
    n = len(preps[0].prompt.suffix)
    assert steps == [
        "the target's distributions",
        "masked, 0 hidden tokens",
        f"masked, {n} hidden tokens",
        "baseline",
        "rebased",
        "masked",
        "masked_alt",
        "visible",
        "rebased_inline",
    ]


@pytest.fixture()
def runner(monkeypatch):
    monkeypatch.setenv("LOCALSIDECAR_THREADS", "1")
    return CliRunner()


# --- exactness ---------------------------------------------------------------------


def test_rebased_equals_baseline_and_masked_n0_equals_baseline(results):
    for r in results:
        assert r.S > 0
        base = r.alpha_t["baseline"]
        assert np.max(np.abs(r.alpha_t["rebased"] - base)) <= 1e-6
        assert abs(r.alpha("rebased") - r.alpha("baseline")) <= 1e-6
        assert np.max(np.abs(r.alpha_t["masked@0"] - base)) <= 1e-6
        # the sweep's masked (no suffix cells at all) = acceptance's masked (hidden suffix cells present)
        assert np.max(np.abs(r.alpha_t[f"masked@{r.n}"] - r.alpha_t["masked"])) <= 1e-6
        assert r.alpha_t["deferred"] is base
        # the conditions are not all the same number: the effects are measurable
        assert np.max(np.abs(r.alpha_t["visible"] - base)) > 1e-3
        assert np.max(np.abs(r.alpha_t["masked"] - base)) > 1e-4


def test_every_alpha_t_is_a_probability(results):
    for r in results:
        for cond, a in r.alpha_t.items():
            assert a.dtype == np.float32 and a.shape == (r.S,), cond
            assert np.all(np.isfinite(a)) and a.min() >= 0.0 and a.max() <= 1.0, cond


def _softmax64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_alpha_equals_numpy_and_cell_plan_matches_fresh_contexts(lab_engine, preps, results, observed):
    """α_t = float64 numpy overlap of the very logits the lab read (target from
    a fresh context). Baseline and rebased are bit-identical to a fresh
    baseline context; rebased_inline is bit-identical to a fresh rebased
    layout (suffix cells between prefix and summary), and prefill_draft's
    rebased (summary cells reserved) to a fresh baseline."""
    prep, res = preps[0], results[0]
    p, tail = prep.prompt, [prep.prompt.tail[-1]] + prep.summary[:-1]
    tctx = Context(lab_engine.target, 1024, n_threads=1)
    try:
        prefill_target(tctx, p)
        tctx.decode_tokens(tail, len(p.bare) - 1, (0,), "all")
        P = _softmax64(np.array(tctx.logits_rows()))
    finally:
        tctx.close()
    assert set(observed) == set(OBSERVED)
    for name, logits in observed.items():
        ref = np.minimum(P, _softmax64(logits)).sum(axis=1)
        assert np.max(np.abs(res.alpha_t[name] - ref)) <= 1e-5, name
    dctx = Context(lab_engine.draft, 1024, n_seq_max=2, n_threads=1)
    try:
        fresh = {}
        for mode in ("baseline", "rebased"):
            lay = prefill_draft(dctx, p, mode, reserve=len(tail))
            dctx.decode_tokens(tail, lay.n_cached + lay.shift, (0,), "all")
            fresh[mode] = np.array(dctx.logits_rows())
        # the naive rebased layout: suffix cells right after the prefix
        dctx.clear()
        dctx.decode_tokens(p.prefix, 0, (0, 1), "none")
        dctx.decode_tokens(p.suffix, len(p.prefix), (1,), "none")
        dctx.decode_tokens(p.tail[:-1], len(p.prefix), (0,), "none")
        dctx.decode_tokens(tail, len(p.bare) - 1, (0,), "all")
        fresh[REBASED_INLINE] = np.array(dctx.logits_rows())
    finally:
        dctx.close()
    # Measured here: for this document the inline layout moves logits from the
    # 17th summary position on (max |Δα_t| 0.05), so these equalities fail if
    # the plan ever lets suffix cells sit between prefix and summary.
    assert np.array_equal(observed["baseline"], fresh["baseline"])
    assert np.array_equal(observed["rebased"], fresh["baseline"])
    assert np.array_equal(fresh["rebased"], fresh["baseline"])  # prefill_draft's reserved cells
    assert np.array_equal(observed[REBASED_INLINE], fresh[REBASED_INLINE])
    # overlap_rows itself against numpy on arbitrary logits
    rng = np.random.default_rng(1)
    lp, lq = rng.normal(0, 3, (5, 1000)).astype(np.float32), rng.normal(0, 3, (5, 1000)).astype(np.float32)
    got = overlap_rows(_softmax64(lp).astype(np.float32), lq, 1000)
    assert np.allclose(got, np.minimum(_softmax64(lp), _softmax64(lq)).sum(axis=1), atol=1e-6)


def test_draft_file_equal_to_target_gives_alpha_one(pair_paths, summaries_file):
    with Engine(pair_paths[0], pair_paths[0], EngineConfig(n_ctx=1024, threads=1), PromptConfig()) as eng:
        same = Lab(eng, max_tokens=MAX_TOKENS, summaries=SummaryStore(summaries_file))
        doc = load_many([str(DOCS_DIR)]).docs[0]
        res = same.evaluate(same.prepare(doc.id, doc.text), ["baseline", "rebased"])
    for cond in ("baseline", "rebased"):
        assert res.S > 0 and np.all(np.abs(res.alpha_t[cond] - 1.0) <= 1e-5), cond


# --- aggregation ----------------------------------------------------------------------


def test_bootstrap_ci_contains_estimate_and_shrinks_with_repeats(results):
    counts = np.array([r.S for r in results], dtype=float)
    sums = {
        c: np.array([float(r.alpha_t[c].sum(dtype=np.float64)) for r in results])
        for c in ("baseline", "masked", "visible", "rebased")
    }
    est = paired_bootstrap(sums, counts, DECOMPOSITION, n_resamples=2000, seed=0)
    for k, e in est.items():
        assert e.lo <= e.value <= e.hi, k
    assert est["residual"].value == 0.0 and est["residual"].lo == est["residual"].hi == 0.0
    assert est["total"].value == pytest.approx(
        sums["baseline"].sum() / counts.sum() - sums["visible"].sum() / counts.sum()
    )
    rep = paired_bootstrap(
        {k: np.tile(v, 4) for k, v in sums.items()},
        np.tile(counts, 4),
        DECOMPOSITION,
        n_resamples=2000,
        seed=0,
    )
    for k in ("baseline", "visible", "total", "content_leak"):
        assert rep[k].value == pytest.approx(est[k].value)
        assert rep[k].hi - rep[k].lo < 0.75 * (est[k].hi - est[k].lo), k
    again = paired_bootstrap(sums, counts, DECOMPOSITION, n_resamples=2000, seed=0)
    assert again == est  # fixed seed: the same intervals
    one = paired_bootstrap({"a": np.array([3.0])}, np.array([4.0]), n_resamples=1000)
    assert one["a"].value == one["a"].lo == one["a"].hi == 0.75


def test_summary_json_shape_and_values(results):
    res = summarize(
        results, CONDITIONS, target="t.gguf", draft="d.gguf", n_resamples=1000, seed=0, checks=True
    )
    assert {
        "target",
        "draft",
        "n_docs",
        "conditions",
        "decomposition",
        "docs",
        "masked_emulation",
        "checks",
    } <= set(res)
    assert list(res["conditions"]) == list(CONDITIONS) and res["n_docs"] == len(results)
    tokens = sum(r.S for r in results)
    for c, e in res["conditions"].items():
        want = sum(float(r.alpha_t[c].sum(dtype=np.float64)) for r in results) / tokens
        assert e["alpha"] == pytest.approx(want, abs=1e-6) and len(e["ci"]) == 2
    assert res["conditions"]["deferred"]["same_as"] == "baseline"
    dec = res["decomposition"]
    assert set(dec) == {"position", "content_leak", "total", "residual"}
    assert dec["residual"] == {"value": 0.0, "ci": [0.0, 0.0], "definition": "rebased - baseline"}
    a = {c: e["alpha"] for c, e in res["conditions"].items()}
    assert dec["position"]["value"] == pytest.approx(a["baseline"] - a["masked"], abs=2e-6)
    assert dec["total"]["value"] == pytest.approx(
        dec["position"]["value"] + dec["content_leak"]["value"], abs=2e-6
    )
    chk = res["checks"]
    assert set(chk) == {*CHECKS, "emulation_spread", "layout_noise"}
    assert chk["emulation_spread"]["definition"] == f"masked - {MASKED_ALT}"
    assert chk["layout_noise"]["value"] == pytest.approx(
        chk[REBASED_INLINE]["alpha"] - a["baseline"], abs=2e-6
    )
    assert [d["id"] for d in res["docs"]] == [r.id for r in results]


def test_sweep_rows_are_consistent_with_acceptance(results, tmp_path):
    n_real = results[0].n
    ns = [0, n_real]
    rows = nsweep_rows(results, ns, n_real, n_resamples=1000, seed=0)
    acc = summarize(results, CONDITIONS, target="t", draft="d", n_resamples=1000, seed=0)
    assert [r["suffix_tokens"] for r in rows] == ns and [r["is_real"] for r in rows] == [0, 1]
    assert (
        rows[0]["position_cost"] == 0.0 and rows[0]["alpha_masked"] == acc["conditions"]["baseline"]["alpha"]
    )
    assert rows[1]["alpha_masked"] == pytest.approx(acc["conditions"]["masked"]["alpha"], abs=1e-6)
    assert rows[1]["position_cost"] == pytest.approx(acc["decomposition"]["position"]["value"], abs=1e-6)
    depth = depth_rows(results, n_real, 8, n_resamples=1000, seed=0)
    assert [r["t"] for r in depth] == list(range(8))
    for r in depth:
        t = r["t"]
        want = np.mean([float(x.alpha_t["baseline"][t]) - float(x.alpha_t["visible"][t]) for x in results])
        assert r["total"] == pytest.approx(want, abs=1e-6) and r["n_docs"] == len(results)
        assert r["position_lo"] <= r["position"] <= r["position_hi"]


# --- CLI ----------------------------------------------------------------------------------


def test_cli_acceptance_json_save_tokens_and_resume(runner, results, summaries_file, tmp_path):
    out, toks = tmp_path / "acc.jsonl", tmp_path / "tokens.jsonl"
    args = [
        "acceptance",
        str(DOCS_DIR),
        "--max-tokens",
        str(MAX_TOKENS),
        "--summaries",
        str(summaries_file),
        "--json",
        "--out",
        str(out),
        "--save-tokens",
        str(toks),
        "--ctx",
        "1024",
    ]
    r = runner.invoke(main, args)
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["summaries"] == {"generated": 0, "cached": len(results)}  # reused the module's summaries
    assert set(res["conditions"]) == set(CONDITIONS) and res["n_docs"] == len(results)
    for _cond, e in res["conditions"].items():
        assert set(e) >= {"alpha", "ci"} and e["ci"][0] <= e["alpha"] <= e["ci"][1]
    for d, lab_doc in zip(res["docs"], results):
        assert (
            set(d) == {"id", "prompt_tokens", "suffix_tokens", "summary_tokens", "alpha"}
            and d["id"] == lab_doc.id
        )
        for c in CONDITIONS:
            assert d["alpha"][c] == pytest.approx(lab_doc.alpha(c), abs=1e-6)
    assert res["decomposition"]["residual"]["value"] == 0.0
    lines = [json.loads(x) for x in toks.read_text().splitlines()]
    assert [x["id"] for x in lines] == [x.id for x in results]
    for x, lab_doc in zip(lines, results):
        lo, hi = x["suffix_span"]
        assert x["compound_ids"][:lo] + x["compound_ids"][hi:] == x["bare_ids"]
        assert x["summary_ids"] == lab_doc.summary_ids and hi - lo == lab_doc.n
    again = runner.invoke(main, args[:-2])  # same --out: every document is already there
    assert again.exit_code == 0, again.output
    assert f"skipped {len(results)} documents" in again.stderr
    assert json.loads(again.stdout)["conditions"] == res["conditions"]


def test_cli_acceptance_human_tables(runner, summaries_file):
    r = runner.invoke(
        main,
        [
            "acceptance",
            str(DOCS_DIR / "river.txt"),
            "--max-tokens",
            str(MAX_TOKENS),
            "--summaries",
            str(summaries_file),
            "--conditions",
            "rebased,baseline",
            "--ctx",
            "1024",
        ],
    )
    assert r.exit_code == 0, r.output
    for needle in (
        "Teacher-forced",
        "baseline",
        "rebased",
        "residual",
        "rebased - baseline",
        "Per document",
        "river",
    ):
        assert needle in r.stdout, needle
    assert "visible" not in r.stdout


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_cli_sweep_writes_csvs_and_plots(runner, results, summaries_file, tmp_path):
    n_real = results[0].n
    r = runner.invoke(
        main,
        [
            "sweep",
            str(DOCS_DIR),
            "--max-tokens",
            str(MAX_TOKENS),
            "--summaries",
            str(summaries_file),
            "--n-sweep",
            f"0,{n_real},40",
            "--depth-cap",
            "6",
            "--out-dir",
            str(tmp_path),
            "--json",
            "--ctx",
            "1024",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    nrows, drows = read_csv(tmp_path / "nsweep.csv"), read_csv(tmp_path / "depth.csv")
    assert [int(x["suffix_tokens"]) for x in nrows] == [0, n_real, 40] and len(drows) == 6
    real = next(x for x in nrows if x["is_real"] == "1")
    masked = np.sum([x.alpha_t["masked"].sum(dtype=np.float64) for x in results]) / np.sum(
        [x.S for x in results]
    )
    assert float(real["alpha_masked"]) == pytest.approx(masked, abs=1e-6)
    assert float(nrows[0]["position_cost"]) == 0.0
    assert res["nsweep"][1]["alpha_masked"] == float(real["alpha_masked"])
    assert res["masked_emulation"]["method"] == "tail-shift"  # the same object as acceptance --json's
    pytest.importorskip("matplotlib")
    for name in ("nsweep.png", "depth.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["acceptance", "DOC", "--conditions", "baseline,sideways"], "--conditions"),
        (["acceptance", "DOC", "--conditions", ","], "--conditions"),
        (["acceptance", "DOC", "--resamples", "10"], "--resamples"),
        (["acceptance", "no/such/doc.txt"], "no/such/doc.txt"),
        (["acceptance", "DOC", "--ctx", "128"], "--max-chars"),
        (["sweep", "DOC", "--n-sweep", "25,,50"], "--n-sweep"),
        (["sweep", "DOC", "--n-sweep", "ten"], "--n-sweep"),
        (["sweep", "DOC", "--depth-cap", "0"], "--depth-cap"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(runner, args, needle):
    args = [str(DOCS_DIR / "river.txt") if a == "DOC" else a for a in args]
    assert needle in one_line_error(runner.invoke(main, args))


def test_a_summaries_cache_whose_last_line_lost_its_newline_keeps_every_summary(runner, tmp_path):
    """Was: the next summary was appended onto that line, and the run after
    ignored "1 unreadable line": both cached summaries were lost."""
    a, b, summ = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "s.jsonl"
    a.write_text("The bakery on Mill Street opens a second shop next month.\n")
    b.write_text("Heavy rain flooded the fields along the river for three days.\n")

    def acceptance(*docs) -> dict:
        args = ["acceptance", *map(str, docs), "--max-tokens", "4", "--conditions", "baseline"]
        r = runner.invoke(main, [*args, "--resamples", "1000", "--summaries", str(summ), "--json", "-q"])
        assert r.exit_code == 0, r.output
        assert "unreadable" not in r.stderr, r.stderr
        return json.loads(r.stdout)["summaries"]

    assert acceptance(a) == {"generated": 1, "cached": 0}
    summ.write_bytes(summ.read_bytes().rstrip(b"\n"))  # an editor saved it so
    assert acceptance(a, b) == {"generated": 1, "cached": 1}
    store = SummaryStore(summ)  # what the next run reads
    assert store.bad_lines == 0 and len(store.snapshot()) == 2
    assert [json.loads(line)["id"] for line in summ.read_text().splitlines()] == ["a", "b"]
