"""`localsidecar models` as a user reads it: rows into a pipe, derived quantizations."""

from __future__ import annotations

import json

import pytest

from .helpers import SMALL_Q4, cli, seed_all

pytestmark = pytest.mark.slow  # every test here runs the models (seconds to minutes)


def test_models_into_a_pipe_keeps_every_row_and_path_on_one_line(hub, network_attempts):
    seed_all(hub, SMALL_Q4)
    out = cli("models")
    assert out.exit_code == 0, out.output
    data = json.loads(cli("models", "--json").stdout)
    paths = [r for r in data["models"] if r["path"]]
    assert len(paths) >= 3
    lines = out.stdout.splitlines()
    for r in paths:  # each path whole, on a line of its own after its model and quantization
        assert f"{r['model']} {r['quant']}: {r['path']}" in lines, r["path"]
    for r in data["models"]:  # each model's row on one line
        assert any(r["model"] in ln and f" {r['quant']} " in ln for ln in lines), (r["model"], r["quant"])
    assert network_attempts == []


def test_a_variant_made_by_quant_is_listed_as_such(hub, tmp_path):
    from localsidecar.lab.quant import make_variant, variants_dir
    from localsidecar.registry.embedded import embedded_target_path

    source = embedded_target_path()
    made = make_variant(
        source, "Q8_0", variants_dir(source, tmp_path / "models"), threads=2
    )  # what `quant` does
    assert made.path.name == "SmolLM2-135M-Instruct.Q8_0.gguf" and made.path.is_file()
    data = json.loads(cli("models", "--json").stdout)
    rows = {(r["model"], r["quant"]): r for r in data["models"]}
    q8 = rows[("smollm2-135m-instruct", "Q8_0")]
    assert q8["quant_variant"] == str(made.path) and not q8["present"]
    assert rows[("smollm2-135m-instruct", "Q5_0")]["quant_variant"] is None
    text = cli("models").stdout
    q8_line = next(ln for ln in text.splitlines() if "smollm2-135m-instruct" in ln and " Q8_0 " in ln)
    assert "made by `quant`" in q8_line and "derived from Q4_1" not in q8_line
    assert (
        f"smollm2-135m-instruct Q8_0: {made.path} (made by `quant`; run derives its own copy on use)" in text
    )
    q5_line = next(ln for ln in text.splitlines() if "smollm2-135m-instruct" in ln and " Q5_0 " in ln)
    assert "derived from Q4_1 on first use" in q5_line
