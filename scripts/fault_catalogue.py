"""Issue 18's adversarial catalogue: about 90 cheap cases (odd folders, endless
stdin, output paths, an empty hashtag lead, --threads, --variants, corrupt
--summaries lines, resume after edits, --save-tokens, changed draft tokens).
Each is clean when it exits with the expected code, without a traceback, with
exactly one `Error:` line when it fails, and its expected text in the output.

    mkdir /tmp/cat && cd /tmp/cat && WT=/path/to/repo PYTHONPATH=/path/to/repo \
        LOCALSIDECAR_THREADS=1 python /path/to/repo/scripts/fault_catalogue.py
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

R = os.environ["WT"]
EX = f"{R}/examples/notes.txt"
LS = f"{sys.executable} -m localsidecar"
F = "--max-tokens 2 --mode target-only"
W = Path.cwd()


def w(p, t):
    Path(p).parent.mkdir(parents=True, exist_ok=True)
    Path(p).write_text(t)


# fixtures
w("odd/ok.txt", "Only this is a document.\n")
for n, tgt in [("loop.txt", "odd/loop.txt"), ("gone.txt", "nowhere.txt"), ("zero.txt", "/dev/zero")]:
    if not os.path.lexists(f"odd/{n}"):
        os.symlink(os.path.abspath(tgt) if tgt != "/dev/zero" else tgt, f"odd/{n}")
if not os.path.exists("odd/pipe"):
    os.mkfifo("odd/pipe")
os.makedirs("onlydangling", exist_ok=True)
if not os.path.lexists("onlydangling/x.txt"):
    os.symlink("/nonexistent/x", "onlydangling/x.txt")
os.makedirs("onlyfifo", exist_ok=True)
if not os.path.exists("onlyfifo/p"):
    os.mkfifo("onlyfifo/p")
os.makedirs("loops", exist_ok=True)
for a, b in [("l1", "l2"), ("l2", "l1")]:
    if not os.path.lexists(f"loops/{a}"):
        os.symlink(os.path.abspath(f"loops/{b}"), f"loops/{a}")
w("loops/fine.txt", "Fine text here.\n")
w("stem/a.txt", "Text of a dot txt.\n")
w("stem/a.md", "Text of a dot md.\n")
w("stem/a.rst", "Third a.\n")
w("afile", "x")
w("p_empty.json", '{"hashtag_lead": ""}')
w("p_space.json", '{"hashtag_lead": " "}')
w("p_nl.json", '{"hashtag_lead": "\\n"}')
cases = []


def c(name, cmd, rc, needle=None, setup=None):
    cases.append((name, cmd, rc, needle, setup))


# item 0 (sentences, through python)
for s in [
    "76%. The",
    "(£600m). Then",
    'said "no". The',
    "%.",
    ").",
    '".',
    "x%.\nY",
    "a]. B",
    "5 %. A",
    "…%. B",
]:
    c(
        f"sentences {s!r}",
        f"{sys.executable} -c 'import sys; from localsidecar.decoding.sentences import *; "
        f"print(complete_summary(sys.argv[1]), sentence_ends(sys.argv[1], final=True))' {json.dumps(s)!r}",
        0,
    )
# item 7 folders
c("folder with loop/dangling/fifo/dev link", f"{LS} run odd {F}", 0, "skipped, a dangling symbolic link")
c(
    "same with --skip-bad",
    f"{LS} run odd {F} --skip-bad",
    0,
    "skipped, a symbolic link that cannot be followed",
)
c("folder of a dangling link only", f"{LS} run onlydangling {F}", 2, "folder has no documents")
c("folder of a FIFO only", f"{LS} run onlyfifo {F}", 2, "folder has no documents")
c("folder with a 2-link loop", f"{LS} run loops {F}", 0, "loops/l1: skipped")
c("stem collision a.txt a.md a.rst", f"{LS} run stem {F} --json", 0, '"id": "a.md"')
# item 9 stdin
c("stdin /dev/zero --max-chars 100", f"{LS} run - {F} --max-chars 100 < /dev/zero", 2, "binary file")
c("stdin /dev/zero", f"{LS} run - {F} < /dev/zero", 2, "binary file")
c(
    "yes | run - --max-chars 100",
    f"yes | {LS} run - {F} --max-chars 100",
    0,
    "read the first 1048576 bytes only",
)
c("yes | run - (no cap given)", f"yes | {LS} run - {F}", 2, "more than 64 MiB")
c("yes | run - --max-chars 1000000", f"yes | {LS} run - {F} --max-chars 1000000 --ctx 64", 2, None)
c(
    "multibyte stdin cut mid-character",
    f"{sys.executable} -c \"import sys; sys.stdout.write('é€😀'*900000)\" | {LS} run - {F} --max-chars 40",
    0,
    "read the first",
)
c(
    "CRLF stdin with --max-chars",
    f"{sys.executable} -c \"import sys; sys.stdout.write('word\\r\\n'*400000)\" | {LS} run - {F} --max-chars 30",
    0,
    None,
)
c("empty stdin", f"printf '' | {LS} run - {F}", 2, "empty")
c(
    "2 MiB whitespace then text, --max-chars 10",
    f"{sys.executable} -c \"import sys; sys.stdout.write(' '*(2<<20)+'text')\" | {LS} run - {F} --max-chars 10",
    2,
    "empty",
)
c(
    "stdin exactly at 1 MiB floor",
    f"{sys.executable} -c \"import sys; sys.stdout.write('a'*(1<<20))\" | {LS} run - {F} --max-chars 5",
    0,
    None,
)
c("small stdin with --max-chars (no note)", f"echo 'Short text.' | {LS} run - {F} --max-chars 5", 0, None)
# item 5 outputs
c("quant --plot nodir/x.png", f"{LS} quant {EX} --quants Q8_0 --plot nodir/x.png", 2, "nodir does not exist")
c("quant --csv nodir/x.csv", f"{LS} quant {EX} --quants Q8_0 --csv nodir/x.csv", 2, "nodir does not exist")
c("quant --csv /proc/x.csv", f"{LS} quant {EX} --quants Q8_0 --csv /proc/x.csv", 2, "cannot write in /proc")
c("quant --plot afile/x.png", f"{LS} quant {EX} --quants Q8_0 --plot afile/x.png", 2, "is not a folder")
c("sweep --out-dir /proc/x", f"{LS} sweep {EX} --out-dir /proc/x", 2, "cannot write in /proc")
c("sweep --out-dir afile/sub", f"{LS} sweep {EX} --out-dir afile/sub", 2, "is not a folder")
c("sweep --out-dir afile", f"{LS} sweep {EX} --out-dir afile", 2, "is a file")
c("hashtags-eval --csv nodir/x.csv", f"{LS} hashtags-eval {EX} --csv nodir/x.csv", 2, "nodir does not exist")
c("hashtags-eval --csv /proc/x.csv", f"{LS} hashtags-eval {EX} --csv /proc/x.csv", 2, "cannot write in /proc")
c(
    "hashtags-eval --csv /dev/null keywords",
    f"{LS} hashtags-eval {EX} --variants keywords --csv /dev/null",
    0,
    None,
)
c(
    "hashtags-eval --csv new/ok.csv keywords (parent missing)",
    f"{LS} hashtags-eval {EX} --variants keywords --csv new/ok.csv",
    2,
    "does not exist",
)
# item 6
for mode in ["rebased", "masked", "visible", "deferred", "baseline", "target-only"]:
    c(
        f"empty hashtag_lead --mode {mode}",
        f"{LS} run {EX} --max-tokens 4 --mode {mode} --prompts p_empty.json",
        2,
        "'hashtag_lead' is empty",
    )
c("hashtag_lead ' ' rebased", f"{LS} run {EX} --max-tokens 4 --prompts p_space.json", 0, None)
c("hashtag_lead newline visible", f"{LS} run {EX} --max-tokens 4 --mode visible --prompts p_nl.json", 0, None)
# seen-not-counted
c("--threads 512", f"{LS} run {EX} {F} --threads 512", 0, "logical CPUs; using")
c("--threads 3", f"{LS} run {EX} {F} --threads 3", 0, "logical CPUs; using")
c("--threads 0", f"{LS} run {EX} {F} --threads 0", 2, None)
c("LOCALSIDECAR_THREADS=99", f"LOCALSIDECAR_THREADS=99 {LS} run {EX} {F}", 0, "logical CPUs; using")
for v in [",", " , ", ",,,"]:
    c(f"--variants {v!r}", f"{LS} hashtags-eval {EX} --variants '{v}'", 2, "names no variant")
c("--variants ',keywords'", f"{LS} hashtags-eval {EX} --variants ',keywords'", 0, None)
# item 8 summaries
ACC = f"{LS} acceptance {EX} --max-tokens 8 --conditions baseline --resamples 1000 --json --summaries S.jsonl"


def summ(ids):
    def setup():
        good = json.loads(Path("S.good").read_text())
        Path("S.jsonl").write_text(
            (json.dumps({**good, "summary_ids": ids}) if not isinstance(ids, str) else ids) + "\n"
        )

    return setup


c(
    "acceptance builds a summaries cache",
    f"{ACC} && cp S.jsonl S.good",
    0,
    None,
    lambda: Path("S.jsonl").unlink(missing_ok=True),
)
for ids, rc, needle in [
    ([60000], 2, "outside the target's vocabulary"),
    ([49152], 2, "outside"),
    ([49151], 0, None),
    ([-1], 0, "unreadable lines"),
    ([1.5], 0, "unreadable"),
    (["x"], 0, "unreadable"),
    ([True], 0, "unreadable"),
    ([1] * 5000, 2, "more than --max-tokens 8"),
    ([1] * 9, 2, "9 tokens"),
    ([1] * 8, 0, None),
    ([], 0, None),
    ("not json at all", 0, "unreadable"),
    ('{"key": 5, "summary_ids": [1]}', 0, "unreadable"),
    ("[" * 100000 + "]" * 100000, 0, "unreadable"),
]:
    c(f"summaries ids {str(ids)[:30]}", ACC, rc, needle, summ(ids))


# item 4 resume
def jl(*texts, ids=False):
    def setup():
        Path("d.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))

    return setup


RUNJ = f"{LS} run d.jsonl {F} --out R.jsonl"
c("jsonl first run", RUNJ, 0, None, lambda: (Path("R.jsonl").unlink(missing_ok=True), jl("One.", "Two.")()))
c("jsonl rerun unchanged", RUNJ, 0, "skipped 2 documents")
c("jsonl line inserted at top", RUNJ, 2, "of another text", jl("Zero.", "One.", "Two."))
c("jsonl line appended at end", RUNJ, 0, "skipped 2", jl("One.", "Two.", "Three."))
c("jsonl text edited", RUNJ, 2, "d.jsonl:2: id 'd-2'", jl("One.", "Two edited.", "Three."))
c("jsonl edited + --overwrite", RUNJ + " --overwrite", 0, None)
c(
    "jsonl whitespace-only edit (normalized: same text)",
    RUNJ,
    0,
    "skipped 3",
    jl("  One.  ", "Two edited.", "Three."),
)


def strip_hash():
    recs = [json.loads(line) for line in Path("R.jsonl").read_text().splitlines()]
    Path("R.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "text_sha256"}) + "\n" for r in recs)
    )
    jl("Changed.", "Two edited.", "Three.")()


c("old records without hash resume by id", RUNJ, 0, "skipped 3", strip_hash)


def bad_hash():
    recs = [json.loads(line) for line in Path("R.jsonl").read_text().splitlines()]
    Path("R.jsonl").write_text("".join(json.dumps({**r, "text_sha256": 5}) + "\n" for r in recs))


c("non-string text_sha256 trusted by id", RUNJ, 0, "skipped 3", bad_hash)
FD = f"{LS} run fold {F} --out RF.jsonl"
c(
    "folder a.txt first run",
    FD,
    0,
    None,
    lambda: (
        shutil.rmtree("fold", ignore_errors=True),
        Path("RF.jsonl").unlink(missing_ok=True),
        w("fold/a.txt", "A txt.\n"),
    ),
)
c("folder a.md added", FD + " --json", 0, '"id": "a.md"', lambda: w("fold/a.md", "A md.\n"))
c("folder a.txt edited", FD, 2, "fold/a.txt: id 'a.txt'", lambda: w("fold/a.txt", "A txt edited.\n"))
c(
    "--max-chars changes config (refused)",
    f"{LS} run fold {F} --out RF.jsonl --max-chars 3",
    2,
    "different configuration",
)
ACCT = f"{LS} acceptance {EX} --max-tokens 8 --conditions baseline --resamples 1000 --out A.jsonl --save-tokens T.jsonl --summaries S2.jsonl"
c("acceptance with --save-tokens", ACCT, 0, None)
c(
    "stale .part next to --save-tokens",
    ACCT,
    0,
    "left by an interrupted run",
    lambda: Path(".T.jsonl.abc123.part").write_text("{"),
)
c("--save-tokens torn last line", ACCT, 0, "skipped 1", lambda: open("T.jsonl", "a").write('{"id": "no'))
c("--save-tokens /dev/null with --out", ACCT.replace("T.jsonl", "/dev/null"), 0, None)
c("--save-tokens in missing folder", ACCT.replace("T.jsonl", "nodir/T.jsonl"), 2, None)
c("--save-tokens a folder", ACCT.replace("T.jsonl", "fold"), 2, None)
c(
    "acceptance edited text under --out",
    ACCT.replace(EX, "fold"),
    2,
    "of another text",
    lambda: (
        subprocess.run(ACCT.replace(EX, "fold").split(), capture_output=True),
        w("fold/a.md", "A md changed.\n"),
    ),
)


# item 10
def vocab_case(token):
    def setup():
        sys.path.insert(0, R)
        from localsidecar.registry.embedded import embedded_pair
        from tests.test_faults import _token_text_offset

        t, d = embedded_pair(None)
        data = bytearray(Path(d).read_bytes())
        off, n = _token_text_offset(bytes(data), token)
        data[off + n - 1] = ord("Q") if data[off + n - 1] != ord("Q") else ord("Z")
        Path("draftx.gguf").write_bytes(bytes(data))
        Path("target.path").write_text(str(t))

    return setup


for tok in [0, 1000, 30000, 49151]:
    # token 0 is <|endoftext|>: its changed text also changes the end-of-turn id, reported first
    c(
        f"draft token {tok} text changed",
        f"{LS} run {EX} --max-tokens 2 --target $(cat target.path) --draft draftx.gguf",
        2,
        f"(first id {tok})" if tok else "eot ids 0 vs 2",
        vocab_case(tok),
    )
res = []
for name, cmd, rc, needle, setup in cases:
    if setup:
        setup()
    t0 = time.time()
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, errors="replace", timeout=600)
    dt = time.time() - t0
    err = p.stderr
    lines = [ln for ln in err.splitlines() if ln.strip()]
    ok = p.returncode == rc and "Traceback" not in err and (needle is None or needle in err + p.stdout)
    if rc == 2:
        ok = ok and sum(ln.startswith("Error: ") for ln in lines) == 1 and lines[-1].startswith("Error: ")
    parts = [
        f
        for f in os.listdir(".")
        if f.endswith(".part") and not f.startswith(".localsidecar-probe") and "abc123" not in f
    ]
    ok = ok and not [f for f in os.listdir(".") if f.startswith(".localsidecar-probe")]
    res.append((name, ok, p.returncode, dt, (lines[-1] if lines else "")[:150]))
    print(
        f"{'ok  ' if ok else 'FAIL'} {p.returncode} {dt:5.1f}s {name}: {(lines[-1] if lines else '')[:140]}",
        flush=True,
    )
print(f"tried {len(res)}, clean {sum(r[1] for r in res)}, failures {sum(not r[1] for r in res)}")
