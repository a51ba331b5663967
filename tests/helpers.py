"""Plain helpers shared by several test files (fixtures are in conftest.py; no
test file imports another): the repository's paths, a one-line error, speculative
decoding's near-tie criterion, waiting for a command's --out lines, signals sent
on events (a process's signal masks in /proc, never a delay), a hub cache built
by hand, the fixture vault and a second reader of its notes."""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from click.testing import CliRunner

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


ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BENCHMARKS = ROOT / "benchmarks"
# The fast tier (`pytest -m "not slow"`, the README's Development) leaves out the
# tests marked slow: `pytestmark` or `@pytest.mark.slow` in their files, and these
# files of real-engine runs whole (conftest.py marks them; their contents are kept
# as they are until they are split by subject).
SLOW_FILES = (
    "test_bad_input.py",
    "test_interrupts.py",
    "test_scale.py",
    "test_resume_faults.py",
    "test_user_output.py",
    "test_extract.py",
    "test_ctx_auto.py",
    "test_damaged_models.py",
)
# A fixed thread count (docs/DESIGN.md, Batch shape changes results); one per
# pytest-xdist worker: two workers on two cores, never four spinning threads.
TEST_THREADS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


def one_line_error(r, code: int = 2) -> str:
    """The single stderr line of a failed CliRunner command (exit `code`, no traceback)."""
    assert r.exit_code == code, (r.exit_code, r.output, r.exception)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.output
    return lines[0]


# --- a hub cache built by hand in the hub's own layout (tests/test_models.py) ---

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SMALL_Q4 = {
    "Qwen/Qwen2.5-1.5B-Instruct-GGUF": ["qwen2.5-1.5b-instruct-q4_k_m.gguf"],
    "Qwen/Qwen2.5-0.5B-Instruct-GGUF": ["qwen2.5-0.5b-instruct-q4_k_m.gguf"],
}


def seed_hub_file(
    cache: Path, repo: str, filename: str, content: bytes | None = None, *, link_to: Path | None = None
) -> Path:
    """Put a file in the hub cache the way huggingface_hub lays it out; with
    `link_to`, its blob is a link to that file (a loadable model)."""
    content = content if content is not None else f"fake {repo} {filename}".encode()
    folder = cache / ("models--" + repo.replace("/", "--"))
    blob = folder / "blobs" / hashlib.sha256(content).hexdigest()
    blob.parent.mkdir(parents=True, exist_ok=True)
    if link_to is not None:
        blob.symlink_to(link_to)
    else:
        blob.write_bytes(content)
    link = folder / "snapshots" / COMMIT / filename
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(blob, link.parent))
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(COMMIT)
    return link


def seed_all(cache: Path, files: dict[str, list[str]]) -> None:
    for repo, names in files.items():
        for name in names:
            seed_hub_file(cache, repo, name)


def cli(*args: str):
    from localsidecar.cli import main

    return CliRunner().invoke(main, list(args))


# --- the fixture vault (tests/data/vault) and a second reader of its notes ---

VAULT = ROOT / "tests" / "data" / "vault"


def untag(text: str, tool_tags: list[str], summary_key: str | None, old: str) -> str:
    """Undo the tool's edit by text alone (no YAML or TOML library): drop its
    record line, its summary line, its tag items (block items, or ', Tag' in a
    one-line list), the `tags` key and the front matter when `old` (the note
    before) had none."""
    from localsidecar.notes.frontmatter import RECORD_KEY
    from localsidecar.notes.split import BOM

    had_front = bool(re.match(r"\ufeff?(---|\+\+\+)\r?\n", old))
    had_tags = bool(re.search(r"^tags\s*[:=]", old, re.M))
    bom = BOM if text.startswith(BOM) else ""
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text[len(bom) :])
    fence = lines[0].rstrip("\r\n")
    end = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...", "+++"))
    kept = []
    for line in lines[1:end]:
        s = line.rstrip("\r\n")
        if re.match(rf"{RECORD_KEY}\s*[:=]", s) or (summary_key and re.match(rf"{summary_key}\s*[:=] ", s)):
            continue
        m = re.fullmatch(r"\s*-\s+(.*?)\s*", s)
        if m and m[1] in tool_tags:
            continue
        for t in tool_tags:
            for q in ("", '"'):
                line = (
                    line.replace(f", {q}{t}{q}", "")
                    .replace(f"[{q}{t}{q}, ", "[")
                    .replace(f"[{q}{t}{q}]", "[]")
                )
        kept.append(line)
    kept = [  # a `tags:` key the tool added, its items gone
        line
        for i, line in enumerate(kept)
        if had_tags
        or line.rstrip("\r\n") != "tags:"
        or (i + 1 < len(kept) and re.match(r"\s*- ", kept[i + 1]))
    ]
    front = "".join(kept)
    if not had_front and not front:
        return bom + "".join(lines[end + 1 :])
    return bom + lines[0] + front + lines[end] + "".join(lines[end + 1 :]) if fence else text


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def second_reader(text: str) -> tuple[dict, str]:
    """(metadata, body) by python-frontmatter (PyYAML), or tomllib for TOML front matter."""
    import frontmatter

    from localsidecar.notes.split import BOM

    text = text.removeprefix(BOM)
    if text.startswith("+++"):
        _, meta, content = re.split(r"^\+\+\+\r?$\n?", text, maxsplit=2, flags=re.M)
        return tomllib.loads(meta.replace("\r\n", "\n")), content
    post = frontmatter.load(io.StringIO(text))
    return post.metadata, post.content


def rebuilt(text: str, source: str, spans) -> str:
    """`text` walked along its spans: each span's source text in order, a single space
    allowed between two of them (a line break or markup left out), or ': ' (joining a
    notes unit's topic title to it), a final '.' (added to a cut clause or an item), and
    an opening line's "Topics: " and "; " (summary.outline); returns what is left over."""
    from localsidecar.summary.outline import LABEL as TOPICS_LABEL

    i = 0
    for a, b in spans:
        piece = source[a:b]
        if i == 0 and not text.startswith(piece) and text.startswith(TOPICS_LABEL):
            i = len(TOPICS_LABEL)
        for joint in (" ", ": ", "; "):
            if not text.startswith(piece, i) and text.startswith(joint, i) and (i or joint == " "):
                i += len(joint)
        assert text.startswith(piece, i), (text, piece, i)
        i += len(piece)
    return text[i:]
