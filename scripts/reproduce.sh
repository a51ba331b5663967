#!/usr/bin/env bash
# Reproduce the acceptance-lab figures.
#
#   scripts/reproduce.sh            # every pair that is available offline
#
# 1. The embedded pair (SmolLM2-135M Q4_1 target, Q4_0 draft) on the repo's
#    example documents: always runs, fully offline.
# 2. The `small` (Qwen2.5-1.5B / 0.5B) and `big` (7B / 1.5B) pairs on a
#    CNN/DailyMail test snapshot: run when the models are downloaded
#    (`localsidecar pull small`) and the snapshot exists, skipped with a
#    message otherwise. The snapshot is a JSONL file, one test article per
#    line with an "article" field (and "id"), e.g. exported from the
#    dataset's test split; point CNNDM at it.
#
# Environment: CNNDM (snapshot, default data/cnndm-test.jsonl), N_DOCS (first
# articles used, default 100), MAX_CHARS (default 6000), MAX_TOKENS (default
# 128), OUT (default reproduce-out), PYTHON (default python), THREADS.
set -u -o pipefail
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then  # the comment above
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python}"
CNNDM="${CNNDM:-$ROOT/data/cnndm-test.jsonl}"
N_DOCS="${N_DOCS:-100}"
MAX_CHARS="${MAX_CHARS:-6000}"
MAX_TOKENS="${MAX_TOKENS:-128}"
OUT="${OUT:-reproduce-out}"
LS=("$PY" -m localsidecar.cli)
[ -n "${THREADS:-}" ] && export LOCALSIDECAR_THREADS="$THREADS"

run_pair() {  # run_pair NAME DOCS... : acceptance + sweep into $OUT/NAME
  local name="$1"; shift
  local dir="$OUT/$name"
  mkdir -p "$dir"
  local pair_args=()
  [ "$name" != embedded ] && pair_args=(--pair "$name")
  echo "== $name: acceptance ($*)"
  if ! "${LS[@]}" acceptance "$@" "${pair_args[@]}" --max-tokens "$MAX_TOKENS" --max-chars "$MAX_CHARS" \
        --checks --json --save-tokens "$dir/tokens.jsonl" > "$dir/acceptance.json" 2> "$dir/acceptance.err"; then
    echo "   skipped $name: $(tail -n 1 "$dir/acceptance.err")"
    return 0
  fi
  "$PY" - "$dir/acceptance.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"   {r['n_docs']} documents, {r['summary_tokens']} summary tokens, n = {r['n']}")
for c, e in r["conditions"].items():
    print(f"   {c:9s} alpha = {e['alpha']:.4f}  95% CI [{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]")
for k, e in r["decomposition"].items():
    print(f"   {k:12s} {e['definition']:18s} {e['value']:+.4f}  95% CI [{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}]")
for k in ("emulation_spread", "layout_noise"):
    e = r.get("checks", {}).get(k)
    if e:
        print(f"   {k:16s} {e['definition']:27s} {e['value']:+.4f}  95% CI [{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}]")
EOF
  echo "== $name: sweep"
  if ! "${LS[@]}" sweep "$@" "${pair_args[@]}" --max-tokens "$MAX_TOKENS" --max-chars "$MAX_CHARS" \
        --out-dir "$dir" > "$dir/sweep.txt" 2> "$dir/sweep.err"; then
    echo "   sweep failed: $(tail -n 1 "$dir/sweep.err")"
    return 0
  fi
  echo "   wrote $dir/nsweep.csv, $dir/depth.csv (and PNGs when matplotlib is installed)"
}

run_pair embedded "$ROOT/examples/notes.txt" "$ROOT/examples/docs"

if [ -f "$CNNDM" ]; then
  mkdir -p "$OUT"
  head -n "$N_DOCS" "$CNNDM" > "$OUT/cnndm-first-$N_DOCS.jsonl"
  for pair in small big; do
    run_pair "$pair" "$OUT/cnndm-first-$N_DOCS.jsonl"
  done
else
  echo "== small, big: skipped: no CNN/DailyMail snapshot at $CNNDM (set CNNDM=path/to/test.jsonl)"
fi

cat <<'EOF'
Published teacher-forced alpha on CNN/DailyMail, for comparison:
   small (Qwen2.5-1.5B / 0.5B): baseline 0.649, visible 0.616, masked 0.645
   big   (Qwen2.5-7B / 1.5B):   baseline 0.636, visible 0.627, masked 0.639
EOF
