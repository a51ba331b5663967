"""Print this host's numeric facts of llama.cpp in one table (docs/DESIGN.md):
cell placement, batch shape, thread count, mixed-sequence batches, and the
buffer types the weights went to, for the project's buffer-type decision and
for use_extra_bufts=False, on the embedded draft model (or --model).

Usage: python scripts/host_facts.py [--model PATH] [--json]

Exact or not is a property of the kernels this build runs on this CPU; the
project's code is correct either way. Attach the output to a bug report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from localsidecar.backend import Model  # noqa: E402
from localsidecar.backend.buffers import BufferPlan, plan  # noqa: E402
from localsidecar.backend.facts import measure  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a GGUF (default: the embedded draft)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.model:
        path = Path(args.model)
    else:
        from localsidecar.registry.embedded import embedded_pair

        path = embedded_pair()[1]
    chosen = plan()
    configs = {"chosen": chosen}
    if chosen.use_extra_bufts:
        configs["use_extra_bufts=False"] = BufferPlan(False, chosen.amx_offered, chosen.offered, "comparison")
    out = {}
    for name, buffers in configs.items():
        m = Model(path, buffers=buffers)
        try:
            facts = measure(m)
            out[name] = {
                "buffers": m.buffer_sizes,
                "facts": {k: v.as_dict() for k, v in facts.items()},
                "described": {k: v.describe() for k, v in facts.items()},
            }
        finally:
            m.close()
    if args.json:
        print(json.dumps({"model": str(path), "decision": chosen.reason, "configs": out}, indent=2))
        return
    print(f"model: {path.name}\ndecision: {chosen.reason}")
    names = list(out)
    rows = [
        (
            "buffer types",
            *[", ".join(f"{k} {v:.1f} MiB" for k, v in out[n]["buffers"].items()) for n in names],
        )
    ]
    rows += [(fact, *[out[n]["described"][fact] for n in names]) for fact in out[names[0]]["described"]]
    widths = [max(len(r[i]) for r in rows + [("fact", *names)]) for i in range(len(names) + 1)]
    for r in [("fact", *names)] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
