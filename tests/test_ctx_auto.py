"""--ctx auto, the default of every command: contexts as large as each
document needs (its prompt, summary and hashtags), up to the context the
models were trained on (SmolLM2-135M: 8192); a longer document is skipped
with one line, not the end of the batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main
from localsidecar.decoding.context_fit import CTX_STEP
from localsidecar.decoding.engine import HASHTAG_MAX_TOKENS, Engine, EngineConfig
from localsidecar.decoding.prompts import PromptConfig
from localsidecar.decoding.speculative import SpecConfig

from .helpers import BENCHMARKS, EXAMPLES, TEST_THREADS, one_line_error

SOURCES = sorted((EXAMPLES / "long").glob("*.txt")) + sorted((BENCHMARKS / "articles").iterdir())


def concatenated(engine, tokens: int) -> str:
    """Example documents one after another until the target's prompt holds `tokens` tokens."""
    parts: list[str] = []
    for path in SOURCES * 4:
        parts.append(path.read_text(encoding="utf-8"))
        text = "\n\n".join(parts)
        if len(engine.prompt(text).bare) >= tokens:
            return text
    raise AssertionError("the examples are too short")


@pytest.fixture(scope="module")
def long_docs(engine, tmp_path_factory) -> tuple[Path, Path]:
    """A 4,300-token article (past the former fixed default of 4096 cells) and one
    past the models' 8192-token training context."""
    folder = tmp_path_factory.mktemp("long-docs")
    article, huge = folder / "article.txt", folder / "huge.txt"
    article.write_text(concatenated(engine, 4300), encoding="utf-8")
    huge.write_text(concatenated(engine, 8300), encoding="utf-8")
    assert 4300 <= len(engine.prompt(article.read_text(encoding="utf-8")).bare) < 5000
    assert engine.target.n_ctx_train == 8192
    return article, huge


def test_a_4300_token_article_runs_and_one_past_the_training_context_is_skipped(long_docs):
    article, huge = long_docs
    r = CliRunner().invoke(main, ["run", str(article), str(huge), "--max-tokens", "2", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    (rec,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert rec["id"] == "article" and 4300 <= rec["prompt_tokens"] and 0 < rec["summary_tokens"] <= 2
    skipped = [x for x in r.stderr.splitlines() if x.startswith("skipped: ")]
    assert len(skipped) == 1 and skipped[0].startswith("skipped: document 'huge': prompt of ")
    assert "more than the 8192 tokens SmolLM2-135M-Instruct.Q4_1.gguf and" in skipped[0]
    assert "1 of the 2 documents skipped: longer than the models' training context" in r.stderr
    # the old default of 4096 cells: one line naming the numbers, before anything is decoded
    line = one_line_error(
        CliRunner().invoke(main, ["run", str(article), "--max-tokens", "2", "--ctx", "4096"])
    )
    assert "document 'article': prompt of" in line and "but --ctx is 4096" in line


def test_auto_contexts_grow_with_the_documents_and_change_no_output(pair_paths, engine, example_texts):
    """Each context is rebuilt only when a longer document comes, at that
    document's need in whole CTX_STEPs; the summaries and hashtags are those
    of a fixed 2048-cell context token for token."""
    birds = (BENCHMARKS / "articles" / "birds.txt").read_text(encoding="utf-8")
    spec = SpecConfig(draft_max=3, max_tokens=16)
    sizes = []
    with Engine(
        pair_paths[0], pair_paths[1], EngineConfig(n_ctx="auto", threads=TEST_THREADS), PromptConfig()
    ) as auto:
        assert auto.n_ctx == auto.t_ctx.n_ctx == CTX_STEP and auto.ctx_limit == 8192
        for doc_id, text in (
            ("notes", example_texts["notes"]),
            ("birds", birds),
            ("river", example_texts["river"]),
        ):
            got, want = auto.run(doc_id, text, "rebased", spec), engine.run(doc_id, text, "rebased", spec)
            assert got.gen.tokens == want.gen.tokens and got.hashtags.tags == want.hashtags.tags
            p = got.prompt
            need = len(p.compound) + 1 + spec.max_tokens + 3 + max(len(p.hashtag_lead), len(p.deferred_turn))
            need += HASHTAG_MAX_TOKENS
            sizes.append((need, auto.n_ctx, auto.t_ctx.n_ctx, auto.d_ctx.n_ctx))
    (n1, a1, t1, d1), (n2, a2, t2, d2), (n3, a3, t3, d3) = sizes
    assert a1 == t1 == d1 == -(-n1 // CTX_STEP) * CTX_STEP  # notes: the smallest whole step that holds it
    assert a2 == t2 == d2 == -(-n2 // CTX_STEP) * CTX_STEP > a1  # birds is longer: rebuilt larger
    assert n3 <= a2 and a3 == t3 == d3 == a2  # river fits: kept
