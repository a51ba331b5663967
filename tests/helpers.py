"""Assertions shared by several test files: speculative decoding's near-tie
criterion, waiting for a command's --out lines, and signals sent on events
(a process's signal masks in /proc, never a delay)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

# docs/DESIGN.md, Batch shape changes results: one-token vs batched decoding of
# the same sequence moves a logit by about 1.0-1.35 over whole summaries (0.68
# fifty tokens in); a near-tie is a top-2 gap inside that.
BATCH_NOISE = 1.35


def top2_gap(logits: np.ndarray) -> tuple[int, int, float]:
    i2, i1 = np.argsort(logits)[-2:]
    return int(i1), int(i2), float(logits[i1] - logits[i2])


def check_equal_or_near_tie(
    tokens: Sequence[int],
    ref_tokens: Sequence[int],
    logits_after: Callable[[Sequence[int]], np.ndarray],
    max_tokens: int,
) -> None:
    """Greedy speculative output `tokens` equals the target-only greedy output
    `ref_tokens`, or first differs where the target's two best logits (decoding
    one token at a time) lie within batch-size noise. `logits_after(prefix)` is
    the target's one-token-at-a-time logits after the prompt plus `prefix`."""
    n = min(len(tokens), len(ref_tokens))
    first = next((i for i in range(n) if tokens[i] != ref_tokens[i]), None)
    if first is None:
        if len(tokens) != len(ref_tokens) and max_tokens not in (len(tokens), len(ref_tokens)):
            # one side stopped at EOG where the other went on: EOG must be a near-tie there
            _, _, gap = top2_gap(logits_after(list(tokens[:n])))
            assert gap <= BATCH_NOISE, f"one output stops at {n} where the target's top-2 gap is {gap:.3f}"
        return
    top1, top2, gap = top2_gap(logits_after(list(ref_tokens[:first])))
    assert {tokens[first], ref_tokens[first]} == {top1, top2}, "differs outside the target's top two"
    assert gap <= BATCH_NOISE, f"differs at position {first} where the target's top-2 gap is {gap:.3f}"


def one_at_a_time_logits(engine, p, prefix_tokens: Sequence[int]) -> np.ndarray:
    """The target's logits after the prompt `p` plus `prefix_tokens`, decoding
    one token per call (the reference check_equal_or_near_tie compares with)."""
    from localsidecar.decoding.layouts import prefill_target

    ctx = engine.t_ctx
    prefill_target(ctx, p)
    seq = [p.bare[-1]] + list(prefix_tokens)
    for i, tok in enumerate(seq):
        ctx.decode_tokens([tok], len(p.bare) - 1 + i, (0,), "last")
    return np.array(ctx.logits(-1))


def speculative_from_scratch(engine, p, mode: str, spec, **decoder):
    """Both caches prefilled afresh for `mode` (the target's bare[:-1], the
    draft's layout), then the speculative loop to the target's EOG; returns
    (Generation, DraftLayout). `decoder`: SpeculativeDecoder's keywords."""
    from localsidecar.decoding.layouts import prefill_draft, prefill_target
    from localsidecar.decoding.speculative import SpeculativeDecoder

    prefill_target(engine.t_ctx, p)
    lay = prefill_draft(engine.d_ctx, p, mode, reserve=spec.cells_after_prompt)
    gen = SpeculativeDecoder(engine.t_ctx, engine.d_ctx, spec, **decoder).generate(
        p.bare, lay, engine.target.is_eog
    )
    return gen, lay


def wait_for_lines(
    out: Path, n: int, proc: subprocess.Popen, timeout: float = 600, poll_s: float = 0.05
) -> None:
    """Wait until `out` holds n complete lines; fail if `proc` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode} before line {n}: {proc.stderr.read()}")
        time.sleep(poll_s)
    proc.kill()
    raise AssertionError(f"no line {n} in {out} after {timeout} s")


def signal_bit(pid: int, field: str, sig: int) -> bool:
    """Bit `sig` of a signal mask in /proc/PID/status (SigCgt: caught, ShdPnd: pending)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def wait_until(
    predicate: Callable[[], bool], proc: subprocess.Popen, what: str, timeout: float = 600
) -> None:
    """Wait for an event `predicate` tells; fail if `proc` exits first (or
    after `timeout`, a safety net: the event is what the test waits for)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode} before {what}: {proc.stderr.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {what} after {timeout} s")
        time.sleep(0.002)


def send_delivered(proc: subprocess.Popen, sig: int) -> None:
    """Send `sig` and wait until the kernel has handed it to the process (no
    longer pending): a second signal sent after this is not merged with it."""
    proc.send_signal(sig)
    wait_until(lambda: not signal_bit(proc.pid, "ShdPnd", sig), proc, "delivery")


_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def token_text_offset(data: bytes, token: int) -> tuple[int, int]:
    """(offset, length) of token `token`'s text in a GGUF's tokenizer.ggml.tokens array."""
    import struct

    pos = 4 + 4 + 8
    (n_kv,) = struct.unpack_from("<Q", data, pos)
    pos += 8

    def string(p):
        (n,) = struct.unpack_from("<Q", data, p)
        return p + 8, n

    def skip(vtype, p):
        if vtype == 8:
            s, n = string(p)
            return s + n
        if vtype == 9:
            (item, count) = struct.unpack_from("<IQ", data, p)
            p += 12
            for _ in range(count):
                p = skip(item, p)
            return p
        return p + _GGUF_SIZES[vtype]

    for _ in range(n_kv):
        s, n = string(pos)
        key = data[s : s + n].decode()
        (vtype,) = struct.unpack_from("<I", data, s + n)
        pos = s + n + 4
        if key == "tokenizer.ggml.tokens":
            p = pos + 12
            for _ in range(token):
                p = skip(8, p)
            return string(p)
        pos = skip(vtype, pos)
    raise AssertionError("no tokenizer.ggml.tokens")
