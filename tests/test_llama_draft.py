"""GGUFDraft inside llama-cpp-python's own Llama, on the real embedded pair."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from llama_cpp import Llama, LogitsProcessorList

from localsidecar import GGUFDraft, LocalsidecarError, load_llama
from localsidecar.integrations.llama_cpp_python import auto_policy
from tests.helpers import check_equal_or_near_tie

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)

MAX_TOKENS = 32
N_CTX = 1024


class RecordingDraft(GGUFDraft):
    """Logs every call: its input, its proposals, the cache right after it, and
    how many input tokens it reused from the cache and decoded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.log: list[dict] = []

    def __call__(self, input_ids, /, **kwargs):
        reused, decoded = self.stats.reused, self.stats.decoded
        out = super().__call__(input_ids)
        self.log.append(
            {
                "ids": list(map(int, input_ids)),
                "proposals": out.tolist(),
                "cached": self.cached_tokens,
                "pos_max": self.cache_pos_max(),
                "reused": self.stats.reused - reused,
                "decoded": self.stats.decoded - decoded,
            }
        )
        return out


def _llama(target: Path, draft=None) -> Llama:
    """The target as the README loads it: load_llama, the project's model params
    (a plain Llama(...) uses llama.cpp's defaults; tests/conftest.py refuses it)."""
    return load_llama(target, n_ctx=N_CTX, logits_all=draft is not None, draft_model=draft, verbose=False)


def _greedy(llm: Llama, prompt: list[int], is_eog, record: list | None = None) -> list[int]:
    """Llama.generate at temperature 0 up to MAX_TOKENS or an end-of-generation
    token (create_completion's loop); `record` gets the logits of each choice."""
    lp = (
        LogitsProcessorList([lambda ids, logits: (record.append(np.array(logits)), logits)[1]])
        if record is not None
        else None
    )
    out: list[int] = []
    for tok in llm.generate(prompt, temp=0.0, logits_processor=lp):
        if is_eog(tok) or len(out) == MAX_TOKENS:
            break
        out.append(int(tok))
    return out


@pytest.fixture(scope="module")
def prompts(engine, example_texts) -> list[list[int]]:
    return [engine.prompt(text).bare for text in list(example_texts.values())[:3]]


@pytest.fixture(scope="module")
def reference(pair_paths, engine, prompts):
    """Target-only greedy tokens (one token per decode) and the logits each came from."""
    llm = _llama(pair_paths[0])
    try:
        out = []
        for p in prompts:
            logits: list[np.ndarray] = []
            out.append((_greedy(llm, p, engine.target.is_eog, logits), logits))
        return out
    finally:
        llm.close()


def test_greedy_completions_match_the_target_without_draft(pair_paths, engine, prompts, reference):
    with GGUFDraft(pair_paths[1], n_draft=4, p_min=0.0) as draft:
        llm = _llama(pair_paths[0], draft)
        try:
            for p, (ref_tokens, ref_logits) in zip(prompts, reference):
                tokens = _greedy(llm, p, engine.target.is_eog)
                check_equal_or_near_tie(
                    tokens, ref_tokens, lambda prefix: ref_logits[len(prefix)], MAX_TOKENS
                )
        finally:
            llm.close()
        assert draft.stats.calls > 0 and draft.stats.proposed > 0


def _shared_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _accepted_from_log(log: list[dict]) -> int:
    """Proposals that the next call's input holds at the proposed positions."""
    total = 0
    for call, nxt in zip(log, log[1:]):
        ids, props = call["ids"], call["proposals"]
        if nxt["ids"][: len(ids)] == ids:
            total += _shared_prefix(nxt["ids"][len(ids) :], props)
    return total


def _check_cache_after_call(call: dict, keep_proposals: bool) -> None:
    """The cache never holds more than the committed input plus this call's
    own proposals (which the next call keeps only as far as its input repeats
    them); a call that proposed nothing may leave it behind the input."""
    ids, props, cached = call["ids"], call["proposals"], call["cached"]
    assert call["pos_max"] == len(cached) - 1
    if call["reused"] + call["decoded"] == 0:  # no catch-up: nothing was proposed or decoded
        assert not props and cached == ids[: len(cached)]
        return
    assert call["reused"] + call["decoded"] == len(ids) and cached[: len(ids)] == ids
    extra = cached[len(ids) :]
    if keep_proposals:
        # all proposals but the last were decoded to propose the next; a stop
        # (p_min, end of generation, the policy) after a decode keeps them all
        assert extra == props[: len(extra)] and len(extra) >= len(props) - 1
    else:
        assert extra == []


@pytest.mark.parametrize("n_draft,keep_proposals", [(4, True), (4, False), ("auto", True)])
def test_proposals_are_accepted_and_the_cache_holds_only_committed_tokens(
    pair_paths, prompts, n_draft, keep_proposals
):
    with RecordingDraft(pair_paths[1], n_draft=n_draft, p_min=0.0) as draft:
        draft.keep_proposals = keep_proposals
        llm = _llama(pair_paths[0], draft)
        try:
            text = llm.create_completion(prompts[0], max_tokens=24, temperature=0.0)["choices"][0]["text"]
        finally:
            llm.close()
        s = draft.stats
        assert text and s.calls == len(draft.log) > 1
        assert 0 < s.proposed == sum(len(c["proposals"]) for c in draft.log)
        assert s.accepted == _accepted_from_log(draft.log) <= s.proposed
        assert s.acceptance_rate == s.accepted / s.proposed
        if n_draft != "auto":  # the policy may find drafting not worth it on this pair
            assert s.accepted > 0 and all(len(c["proposals"]) == n_draft for c in draft.log[:3])
        for call in draft.log:
            _check_cache_after_call(call, keep_proposals)
        for call, nxt in zip(draft.log, draft.log[1:]):
            if nxt["decoded"]:
                assert nxt["reused"] == min(_shared_prefix(call["cached"], nxt["ids"]), len(nxt["ids"]) - 1)


def _permuted_vocab_copy(src: Path, dst: Path) -> None:
    """`src` with the strings of tokenizer.ggml.tokens from id 1000 on in
    reverse order: the same model, file size and vocabulary size, but token
    ids that mean other text."""
    data = bytearray(src.read_bytes())
    scalar = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def u(fmt: str, off: int) -> tuple[int, int]:
        return struct.unpack_from(fmt, data, off)[0], off + struct.calcsize(fmt)

    def skip(vtype: int, off: int) -> int:
        if vtype == 8:
            n, off = u("<Q", off)
            return off + n
        if vtype == 9:
            itype, off = u("<I", off)
            count, off = u("<Q", off)
            for _ in range(count):
                off = skip(itype, off)
            return off
        return off + scalar[vtype]

    n_kv, off = u("<Q", 16)
    for _ in range(n_kv):
        klen, off = u("<Q", off)
        key, off = bytes(data[off : off + klen]), off + klen
        vtype, off = u("<I", off)
        if key != b"tokenizer.ggml.tokens":
            off = skip(vtype, off)
            continue
        _, off = u("<I", off)
        count, off = u("<Q", off)
        start, strings = off, []
        for _ in range(count):
            n, off = u("<Q", off)
            strings.append(bytes(data[off : off + n]))
            off += n
        permuted = strings[:1000] + strings[1000:][::-1]
        data[start:off] = b"".join(struct.pack("<Q", len(s)) + s for s in permuted)
        dst.write_bytes(data)
        return
    raise AssertionError("no tokenizer.ggml.tokens in " + str(src))


def test_another_vocabulary_gives_one_line_error(pair_paths, prompts, tmp_path):
    other = tmp_path / "permuted-vocab.gguf"
    _permuted_vocab_copy(pair_paths[1], other)
    with GGUFDraft(other) as draft:
        llm = _llama(pair_paths[0], draft)
        try:
            with pytest.raises(LocalsidecarError) as first_call:
                llm.create_completion(prompts[0], max_tokens=4, temperature=0.0)
            with pytest.raises(LocalsidecarError) as bound:
                draft.bind(llm)
        finally:
            llm.close()
    for exc in (first_call.value, bound.value):
        msg = str(exc)
        assert "\n" not in msg and "do not share a vocabulary" in msg and "token texts differ" in msg


def test_bind_asks_for_logits_all(pair_paths):
    with GGUFDraft(pair_paths[1]) as draft:
        llm = load_llama(pair_paths[0], n_ctx=N_CTX, n_batch=256, draft_model=draft, verbose=False)
        try:
            with pytest.raises(LocalsidecarError, match="logits_all=True"):
                draft.bind(llm)
        finally:
            llm.close()


def test_a_new_prompt_reuses_only_the_shared_prefix(pair_paths, prompts):
    """A second chat prompt reuses exactly the system-prompt tokens it shares
    with the first; a plain prompt (another first token) is decoded afresh and
    proposes exactly what a new draft proposes."""
    plain = "Rivers of Europe, from the longest:"
    with RecordingDraft(pair_paths[1], n_draft=4, p_min=0.0) as draft:
        llm = _llama(pair_paths[0], draft)
        try:
            firsts = []
            for prompt in (prompts[0], prompts[1], plain):
                before = draft.log[-1]["cached"] if draft.log else []
                n_calls = len(draft.log)
                llm.create_completion(prompt, max_tokens=4, temperature=0.0)
                firsts.append((before, draft.log[n_calls]))
        finally:
            llm.close()
        (_, chat_a), (cached_a, chat_b), (cached_b, plain_call) = firsts
        shared = _shared_prefix(cached_a, chat_b["ids"])
        assert 0 < shared < len(prompts[1]) and chat_b["ids"][: len(prompts[1])] == prompts[1]
        assert (chat_b["reused"], chat_b["decoded"]) == (shared, len(chat_b["ids"]) - shared)
        assert chat_b["cached"] == chat_b["ids"] + chat_b["proposals"][:-1]
        assert _shared_prefix(cached_b, plain_call["ids"]) == 0
        assert (plain_call["reused"], plain_call["decoded"]) == (0, len(plain_call["ids"]))
        with GGUFDraft(pair_paths[1], n_draft=4, p_min=0.0, n_ctx=draft.n_ctx) as fresh:
            assert fresh(np.array(plain_call["ids"], dtype=np.intc)).tolist() == plain_call["proposals"]


@pytest.mark.parametrize(
    "draft_s,verify,confidence,accepted,drafts",
    [
        # a cheap draft and a verify batch barely dearer than one token (GPU-like): draft
        (0.002, lambda b: 0.020 + 0.001 * b, 0.9, 3, True),
        # the embedded pair on a CPU: a draft token costs 0.7 of a target token and
        # verifying b tokens about b target tokens: the target alone is faster
        (0.009, lambda b: 0.013 * b, 0.5, 1, False),
    ],
)
def test_auto_policy_drafts_only_where_it_pays(draft_s, verify, confidence, accepted, drafts):
    """n_draft="auto"'s policy, fed the costs and outcomes a GGUFDraft measures."""
    policy = auto_policy()
    for _ in range(12):
        for b in range(1, policy.cap + 2):
            policy.record_verify(b, verify(b))
        policy.record_draft_step(1, draft_s)
        policy.record_round([confidence] * 4, accepted)
    assert (policy.plan().k > 0) == drafts


def test_a_target_loaded_with_llamas_defaults_is_refused_on_an_amx_host(pair_paths, prompts):
    """The AMX host's decision is given as input (its offered buffer types and
    CPU flags), and the target is loaded as a plain Llama(...) loads it there
    (extra buffer types on). bind() refuses it in one line before the target
    decodes anything; so does the first call. On a host with AMX itself the
    load is refused sooner: the probe's test decode of those defaults crashes,
    and load_llama says so in one line."""
    from localsidecar.backend.buffers import BufferPlan, cpu_flags, decide
    from localsidecar.backend.errors import BackendError

    amx_host = decide(("AMX", "CPU_REPACK"), {"avx512f", "amx_tile", "amx_int8"}, {})
    llamas_defaults = BufferPlan(True, False, None, "llama.cpp's defaults")
    with GGUFDraft(pair_paths[1], n_draft=4, buffers=amx_host) as draft:
        try:
            llm = load_llama(
                pair_paths[0],
                buffers=llamas_defaults,
                n_ctx=N_CTX,
                logits_all=True,
                draft_model=draft,
                verbose=False,
            )
        except BackendError as refused:  # this host has AMX: the test decode crashed in a child
            said = str(refused)
            assert "amx_tile" in cpu_flags(), said  # only an AMX host crashes on llama.cpp's defaults
            assert "\n" not in said and said.startswith("llama.cpp crashed on this CPU"), said
            assert "LOCALSIDECAR_EXTRA_BUFTS=0" in said and draft.stats.calls == 0
            return
        try:
            assert llm.model_params.use_extra_bufts is True
            with pytest.raises(LocalsidecarError) as bound:
                draft.bind(llm)
            with pytest.raises(LocalsidecarError) as first_call:
                llm.create_completion(prompts[0], max_tokens=2, temperature=0.0)
        finally:
            llm.close()
        assert draft.stats.calls == 0
    for exc in (bound.value, first_call.value):
        assert "\n" not in str(exc) and str(exc).startswith(
            "the target Llama was loaded with llama.cpp's default"
        )
