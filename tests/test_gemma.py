"""The gemma pair (Gemma 3 270M: interleaved sliding-window attention, 512-token
window, 262k vocabulary): registry, every layout on llama.cpp's iSWA cache,
the hashtag sidecar and the lab. One model load per module (fixtures below).

Documents: `bakery` (a prompt of about 200 tokens, inside the window) and
`flood` (about 620 tokens, so the summary sits past the window's reach of the
document's start).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localsidecar.backend import Context
from localsidecar.backend.gguf import gguf_info
from localsidecar.cli import main
from localsidecar.decoding.layouts import MODES, Seq, prefill_draft
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.registry import gemma
from tests.helpers import check_equal_or_near_tie, one_at_a_time_logits, speculative_from_scratch

from .helpers import BENCHMARKS, EXAMPLES, TEST_THREADS, one_line_error

pytestmark = [
    pytest.mark.slow,  # every test here runs the models (seconds to minutes)
    pytest.mark.skipif(
        not gemma.installed(),
        reason=f"the gemma pair's package is not installed ({gemma.INSTALL_HINT}); the test extra installs it",
    ),
]

DOCS = {"bakery": EXAMPLES / "docs" / "bakery.txt", "flood": BENCHMARKS / "articles" / "flood.txt"}
MAX_TOKENS = 24
WINDOW = 512


@pytest.fixture(scope="module")
def gemma_paths(session_models_dir) -> tuple[Path, Path]:
    from localsidecar.registry.models import resolve_models

    return resolve_models(pair="gemma", models_dir=session_models_dir)


@pytest.fixture(scope="module")
def gengine(gemma_paths):
    from localsidecar.decoding.engine import Engine, EngineConfig
    from localsidecar.decoding.prompts import PromptConfig

    with Engine(
        gemma_paths[0], gemma_paths[1], EngineConfig(n_ctx=2048, threads=TEST_THREADS), PromptConfig()
    ) as eng:
        yield eng


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {k: p.read_text(encoding="utf-8") for k, p in DOCS.items()}


@pytest.fixture(scope="module")
def prompts(gengine, texts):
    return {k: gengine.prompt(t) for k, t in texts.items()}


@pytest.fixture(scope="module")
def reference(gengine, prompts):
    """Target-only greedy summaries, one token per call."""
    out = {}
    for name, p in prompts.items():
        out[name] = gengine.generate_target_only(p, SpecConfig(max_tokens=MAX_TOKENS)).tokens
    return out


def _cell_sizes(ctx: Context, tokens: list[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """(header, bytes per cell) of sequence 0's saved state in the full and in
    the window half, from caches of 64 and 128 cells (both inside the window)."""
    sizes = []
    for n in (64, 128):
        ctx.clear()
        ctx.decode_tokens(tokens[:n], 0, (Seq.SUMMARY,), "none")
        window = ctx.seq_state_size(Seq.SUMMARY, window_only=True)
        sizes.append((ctx.seq_state_size(Seq.SUMMARY) - window, window))
    ctx.clear()
    per = [(sizes[1][h] - sizes[0][h]) // 64 for h in (0, 1)]
    return tuple((sizes[0][h] - 64 * per[h], per[h]) for h in (0, 1))


def _cells_in_halves(ctx: Context, cal) -> tuple[int, int]:
    """Sequence 0's cells in the full half, and in the window half those inside
    the window of its largest position (what llama.cpp saves of that half)."""
    window = ctx.seq_state_size(Seq.SUMMARY, window_only=True)
    out = []
    for size, (head, per) in zip((ctx.seq_state_size(Seq.SUMMARY) - window, window), cal):
        if size < head:  # an empty half saves no per-layer headers
            out.append(0)
            continue
        assert (size - head) % per == 0, (size, head, per)
        out.append((size - head) // per)
    return out[0], out[1]


def _draft_logits(ctx: Context, p, mode: str, summary: list[int]) -> np.ndarray:
    lay = prefill_draft(ctx, p, mode, reserve=len(summary) + 1)
    toks = [p.tail[-1]] + summary
    ctx.decode_tokens(toks, lay.n_cached + lay.shift, (Seq.SUMMARY,), logits="all")
    return np.array(ctx.logits_rows())


# --- registry ---------------------------------------------------------------------------


def test_pair_resolves_offline_with_its_licence_and_window(gemma_paths, session_models_dir):
    target, draft = gemma_paths
    assert target.name == gemma.GEMMA_FILE and target.stat().st_size == gemma.GEMMA_SIZE
    assert target.parent == session_models_dir  # assembled into the models dir, not the package's ~/.cache
    info = gguf_info(target)
    assert info.architecture == "gemma3"
    assert info.metadata["gemma3.attention.sliding_window"] == WINDOW
    assert gguf_info(draft).real_label() == "Q4_0" and draft.name == "gemma-3-270m.Q4_0.gguf"
    r = CliRunner().invoke(main, ["models", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    pair = next(p for p in data["pairs"] if p["pair"] == "gemma")
    assert pair["ready"] and pair["target_path"] == str(target)
    rows = [m for m in data["models"] if m["model"] == "gemma-3-270m"]
    assert {m["quant"] for m in rows} >= {"Q4_K_M", "Q4_0", "Q8_0"}
    assert all(m["license"].startswith("gemma") and Path(m["license_file"]).is_file() for m in rows)
    table = CliRunner().invoke(main, ["models"], env={"COLUMNS": "200"})  # no column left out
    assert f"licence of gemma-3-270m, {rows[0]['license']}: {rows[0]['license_file']}" in table.stdout
    assert re.search(r"^ gemma-3-270m +Q4_K_M .* gemma +", table.stdout, re.M)  # the short name in the table


def test_pull_and_doctor_know_the_pair(gemma_paths):
    r = CliRunner().invoke(main, ["pull", "gemma"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"target: {gemma_paths[0]}", f"draft:  {gemma_paths[1]}"]
    d = CliRunner().invoke(main, ["doctor", "--json"])
    pair = next(p for p in json.loads(d.stdout)["pairs"] if p["pair"] == "gemma")
    assert pair["ready"] and pair["draft_path"] == str(gemma_paths[1])


def test_a_missing_package_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    from localsidecar.registry import models

    monkeypatch.setattr(gemma, "_package_dir", lambda name: None)
    r = CliRunner().invoke(
        main, ["run", str(DOCS["bakery"]), "--pair", "gemma", "--models-dir", str(tmp_path)]
    )
    line = one_line_error(r)
    assert "localsidecar[gemma]" in line, line
    status = models.pair_status(models.load_registry().pair("gemma"), tmp_path)
    assert not status["ready"] and "localsidecar[gemma]" in status["install"]


def test_engine_uses_the_plain_prompt(gengine, prompts):
    """The base model ships no chat template llama.cpp recognises."""
    assert not gengine.fmt.templated
    assert any("no chat template" in n for n in gengine.notes)
    assert gengine.target.n_vocab == 262144
    assert len(prompts["bakery"].bare) < WINDOW < len(prompts["flood"].bare)


# --- layouts on the iSWA cache ------------------------------------------------------------


@pytest.fixture(scope="module")
def cell_sizes(gengine, prompts):
    tokens = prompts["flood"].prefix
    return {"target": _cell_sizes(gengine.t_ctx, tokens), "draft": _cell_sizes(gengine.d_ctx, tokens)}


@pytest.mark.parametrize("name,draft_max", [("bakery", 2), ("flood", 5)])
def test_greedy_speculative_is_lossless_in_every_mode(
    gengine, prompts, reference, cell_sizes, name, draft_max
):
    """Each document at one draft size (two sizes in all), every mode."""
    p = prompts[name]
    for mode in MODES:
        spec = SpecConfig(draft_max=draft_max, max_tokens=MAX_TOKENS)
        gen, lay = speculative_from_scratch(gengine, p, mode, spec)
        s = gen.stats
        assert 0 < s.n_drafted <= draft_max * s.rounds and s.n_accept <= s.n_drafted
        assert gen.tokens == gen.target_argmax
        # rollback left both halves of both caches at the committed tokens
        # (read before the near-tie check, which decodes in the target's
        # cache): the target holds bare + summary minus its last token, in
        # positions 0.. (pos_max reads the window half, the state sizes
        # count each half's cells); the draft at most that, its positions
        # skipping the suffix's n in masked.
        n_t = len(p.bare) + len(gen.tokens) - 1
        assert gengine.t_ctx.pos_max(Seq.SUMMARY) == n_t - 1
        assert _cells_in_halves(gengine.t_ctx, cell_sizes["target"]) == (n_t, min(n_t, WINDOW))
        d_max = lay.n_cached + lay.shift - 1
        gap = range(lay.a, lay.a + lay.shift) if mode == "masked" else range(0)
        d_pos = [q for q in range(d_max + 1) if q not in gap]
        assert gengine.d_ctx.pos_max(Seq.SUMMARY) == d_max
        assert _cells_in_halves(gengine.d_ctx, cell_sizes["draft"]) == (
            len(d_pos),
            sum(d_max - q < WINDOW for q in d_pos),
        )
        assert lay.n_cached <= n_t + 1
        check_equal_or_near_tie(
            gen.tokens, reference[name], lambda pre: one_at_a_time_logits(gengine, p, pre), MAX_TOKENS
        )


def test_rebased_equals_a_fresh_baseline_context_past_the_window(gengine, prompts):
    """Whole summaries, the long document's summary reaching past the window."""
    fresh = Context(gengine.draft, 2048, n_seq_max=2, kv_unified=True, n_threads=TEST_THREADS)
    try:
        for name, p in prompts.items():
            summary = gengine.generate_target_only(p, SpecConfig(max_tokens=64)).tokens
            assert len(summary) >= 32
            rebased = _draft_logits(gengine.d_ctx, p, "rebased", summary)
            baseline = _draft_logits(fresh, p, "baseline", summary)
            assert rebased.shape == (len(summary) + 1, 262144)
            assert np.array_equal(rebased, baseline), (name, float(np.max(np.abs(rebased - baseline))))
    finally:
        fresh.close()


def test_run_rebased_drafts_exactly_like_baseline(gengine, texts):
    spec = SpecConfig(draft_max=4, max_tokens=MAX_TOKENS)
    base = gengine.run("flood", texts["flood"], "baseline", spec).gen
    reb = gengine.run("flood", texts["flood"], "rebased", spec).gen
    assert reb.tokens == base.tokens
    assert (reb.stats.n_drafted, reb.stats.n_accept, reb.stats.alpha) == (
        base.stats.n_drafted,
        base.stats.n_accept,
        base.stats.alpha,
    )


def test_hidden_suffix_cells_stay_invisible_in_the_window_cache(gengine, prompts, reference):
    """Two suffixes of one length, hidden in sequence 1: identical logits in
    sequence 0 (rebased, masked) on both halves of the iSWA cache."""
    p = prompts["flood"]
    other = gengine.prompt("x")  # any other token ids of the same length
    pb = replace(p, suffix=(other.prefix * 20)[: len(p.suffix)])
    assert pb.suffix != p.suffix
    for mode in ("rebased", "masked"):
        assert np.array_equal(
            _draft_logits(gengine.d_ctx, p, mode, reference["flood"]),
            _draft_logits(gengine.d_ctx, pb, mode, reference["flood"]),
        ), mode


def test_seq_add_moves_both_halves_of_the_iswa_cache(gengine, prompts):
    """Masked emulation's seq_add: tokens decoded at 0.. and moved +n give the
    logits of the same tokens decoded at n.. (a sequence without cells may
    start anywhere) up to the K-shift's rounding, for n inside and past the
    window (measured: top-1 equal at 8 of 8 tokens, up to 0.79 apart at n = 25:
    the K-shift's rounding is of the size of batch-shape noise). Were only one half moved, the
    relative positions of the global (or sliding) layers would be off by n,
    and at n = 900 the sliding layers would see none of the first tokens."""
    p = prompts["flood"]
    x, y = p.prefix[:300], p.prefix[300:308]
    ctx = gengine.d_ctx
    for n in (25, 900):
        ctx.clear()
        ctx.decode_tokens(x, 0, (Seq.SUMMARY,), "none")
        ctx.seq_add(Seq.SUMMARY, 0, -1, n)
        assert ctx.pos_max(Seq.SUMMARY) == n + len(x) - 1
        ctx.decode_tokens(y, n + len(x), (Seq.SUMMARY,), "all")
        moved = np.array(ctx.logits_rows())
        ctx.clear()
        ctx.decode_tokens(x, n, (Seq.SUMMARY,), "none")
        ctx.decode_tokens(y, n + len(x), (Seq.SUMMARY,), "all")
        direct = np.array(ctx.logits_rows())
        diff = float(np.max(np.abs(moved - direct)))
        print(f"seq_add +{n}: max |logit difference| {diff:.4f}")
        assert np.mean(moved.argmax(1) == direct.argmax(1)) >= 0.75 and diff < 1.5, (n, diff)


def test_a_small_window_cache_refuses_a_long_shared_prefix(gengine, prompts):
    """Why every Context asks for swa_full (docs/DESIGN.md, Sliding-window
    caches): without it the window half has 512 x 2 + 512 = 1536 cells, and a
    prefix shared by both sequences pins them, so the 1,600th token finds no
    cell although n_ctx (4096) has room; with it the same prefix decodes."""
    from localsidecar.backend import DecodeError

    tokens = (prompts["flood"].prefix * 3)[:1600]
    for full in (False, True):
        ctx = Context(
            gengine.draft, 4096, n_seq_max=2, kv_unified=True, n_threads=TEST_THREADS, swa_full=full
        )
        try:
            if full:
                ctx.decode_tokens(tokens, 0, (Seq.SUMMARY, Seq.SIDECAR), "last")
                assert ctx.pos_max(Seq.SIDECAR) == len(tokens) - 1
            else:
                with pytest.raises(DecodeError, match="no KV slot"):
                    ctx.decode_tokens(tokens, 0, (Seq.SUMMARY, Seq.SIDECAR), "last")
        finally:
            ctx.close()


def test_pos_max_reads_the_window_half(gengine, prompts, cell_sizes):
    """llama_memory_seq_pos_max (and pos_min) on an iSWA cache report the
    window half only. Without swa_full the window half recycles cells of
    positions outside the window and purges them, so after 1,400 tokens its
    smallest position is past 0 while the full half still holds every cell;
    removing the positions from there on empties the window half: pos_max
    reads -1 while the full half holds pos_min cells (positions 0..pos_min-1)."""
    tokens = (prompts["flood"].prefix * 3)[:1400]
    ctx = Context(gengine.draft, 2048, n_seq_max=1, n_threads=TEST_THREADS, swa_full=False)
    try:
        for s in range(0, len(tokens), 256):
            ctx.decode_tokens(tokens[s : s + 256], s, (Seq.SUMMARY,), "none")
        lo = ctx.pos_min(Seq.SUMMARY)
        assert 0 < lo <= len(tokens) - WINDOW and ctx.pos_max(Seq.SUMMARY) == len(tokens) - 1
        assert _cells_in_halves(ctx, cell_sizes["draft"]) == (len(tokens), WINDOW)
        ctx.seq_rm(Seq.SUMMARY, lo, -1)
        assert (ctx.pos_min(Seq.SUMMARY), ctx.pos_max(Seq.SUMMARY)) == (-1, -1)
        assert _cells_in_halves(ctx, cell_sizes["draft"]) == (lo, 0)
    finally:
        ctx.close()


@pytest.mark.parametrize(
    "mode,reveal", [("rebased", "shifted"), ("rebased", "overlap"), ("masked", "shifted")]
)
def test_reveal_variants_and_hashtags_under_the_grammar(gengine, texts, mode, reveal):
    """The hashtag phase on the 262k vocabulary: tags under the grammar after
    every reveal; sequence 1 sees the summary (its largest position follows it)."""
    r = gengine.run("bakery", texts["bakery"], mode, SpecConfig(draft_max=3, max_tokens=24), reveal=reveal)
    h = r.hashtags
    assert h is not None and h.tokens > 0 and h.valid_json, h.raw
    assert 1 <= len(h.tags) <= 5 and all(t.startswith("#") for t in h.tags)


# --- the lab on the gemma pair (smoke, tiny sizes) ------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["acceptance", "--checks", "--max-tokens", "8"],
        ["sweep", "--n-sweep", "25,400", "--max-tokens", "8", "--no-plots", "--resamples", "1000"],
        ["quant", "--quants", "Q4_0,Q8_0", "--max-tokens", "8", "--no-loop"],
        ["hashtags-eval", "--variants", "rebased-shifted", "--max-tokens", "8"],
    ],
    ids=lambda a: a[0],
)
def test_lab_commands_run_on_the_gemma_pair(gemma_paths, tmp_path, args):
    doc = tmp_path / "doc.txt"
    doc.write_text(DOCS["bakery"].read_text(encoding="utf-8")[:500], encoding="utf-8")
    extra = ["--out-dir", str(tmp_path)] if args[0] == "sweep" else []
    r = CliRunner().invoke(main, [args[0], str(doc), "--pair", "gemma", "--json", "-q", *args[1:], *extra])
    assert r.exit_code == 0, (r.output, r.exception)
    if args[0] == "hashtags-eval":  # JSON Lines: one object per document, then the summary
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        assert [x["kind"] for x in lines] == ["document", "summary"]
        row = lines[0]["rows"][0]
        assert row["variant"] == "rebased-shifted" and row["valid_json"] and row["n_tags"] >= 1, row
        assert lines[1]["variants"][0]["n_docs"] == 1
    else:
        assert json.loads(r.stdout)
