"""The probe's child process (see probe): load a model with the given
buffer choice, print where its weights went, decode a batch and one token."""

from __future__ import annotations

import json
import sys

from .buffers import BufferPlan
from .context import Context
from .model import Model


def main() -> None:
    """The child: load, print the buffer sizes, decode a batch and one token."""
    path, extra = sys.argv[1], sys.argv[2] == "1"
    buffers = BufferPlan(extra, False, None, "probe child")
    model = Model(path, buffers=buffers)
    print("buffers " + json.dumps(model.buffer_sizes), flush=True)
    ctx = Context(model, 128, n_batch=64, n_threads=1)
    toks = (
        model.tokenize(
            "The river clean-up drew forty volunteers on Saturday morning, and the bakery "
            "gave bread to every one of them before noon."
        )
        * 4
    )[:40]
    ctx.decode_tokens(toks, 0, (0,), "last")
    ctx.decode_tokens([toks[0]], len(toks), (0,), "last")
    ctx.close()
    model.close()
    print("ok", flush=True)


if __name__ == "__main__":
    main()
