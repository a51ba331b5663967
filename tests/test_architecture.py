"""The package's shape: the import rule, a library without Click, and a CLI
that still answers when llama-cpp-python is broken.

The import rule (docs/development.md): cli -> lab / registry / scale ->
decoding / hashtags / io / integrations -> backend. An import may go down or
sideways, never up, and the package's modules never import each other in a
cycle (not even through imports inside functions).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ROOT, SLOW_FILES

PACKAGE = ROOT / "localsidecar"
BACKEND, CORE, MIDDLE, CLI = 0, 1, 2, 3
LAYER_NAMES = {
    BACKEND: "backend",
    CORE: "decoding/hashtags/io/integrations/notes",
    MIDDLE: "lab/registry/scale",
    CLI: "cli",
}
# Every package and top-level module with its layer; a new one must be added here.
LAYERS = {
    "localsidecar.backend": BACKEND,  # every llama_cpp call
    "localsidecar": CORE,  # the public API: lazy names, nothing imported when it loads
    "localsidecar.errors": CORE,  # the public error types (backend's, re-exported)
    "localsidecar.decoding": CORE,  # engine, speculative decoding, draft policy, layouts, prompts
    "localsidecar.hashtags": CORE,  # the sidecar's hashtag generation, the tag metrics
    "localsidecar.io": CORE,  # documents, --out result files, atomic writes, interrupts, formatting
    "localsidecar.notes": CORE,  # Markdown notes: front matter edited in place, safe replaces
    "localsidecar.summary": CORE,  # extract summaries (candidates, scoring, the walk), the support check
    "localsidecar.integrations": CORE,  # adapters for other libraries (llama-cpp-python's draft API)
    "localsidecar.lab": MIDDLE,  # acceptance, sweep, hashtags-eval and quant experiments
    "localsidecar.registry": MIDDLE,  # named pairs, downloads, the embedded model
    "localsidecar.scale": MIDDLE,  # executors: in process, worker processes, Ray actors
    "localsidecar.cli": CLI,  # the Click commands
    "localsidecar.__main__": CLI,  # the console script
}
COMMANDS = ("run", "tag", "acceptance", "sweep", "hashtags-eval", "quant", "models", "pull", "doctor")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer of `module`: that of the longest LAYERS entry it is in.
    A module in no listed package is an error, not a default."""
    parts = module.split(".")
    for n in range(min(len(parts), 2), 0, -1):
        if (name := ".".join(parts[:n])) in LAYERS and (n == 2 or name == module):
            return LAYERS[name]
    raise KeyError(f"{module}: not in tests/test_architecture.py's LAYERS")


def imported_modules(module: str, *, load_time_only: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every localsidecar module `module` imports.
    `from X import name` counts as X.name when that is a module. With
    load_time_only, imports inside functions (run later, lazily) are left out."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = ast.walk(tree) if not load_time_only else _load_time_nodes(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "localsidecar"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "localsidecar":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((node.lineno, sub if sub in MODULES else base))
    return found


def _load_time_nodes(tree: ast.Module):
    """Statements that run when the module is imported (not function bodies)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def test_the_scan_sees_the_package():
    assert {
        "localsidecar.backend.context",
        "localsidecar.decoding.engine",
        "localsidecar.lab.acceptance",
        "localsidecar.registry.models",
        "localsidecar.cli.run",
    } <= set(MODULES)
    assert layer("localsidecar.backend.gguf") == BACKEND and layer("localsidecar.decoding.engine") == CORE
    assert layer("localsidecar") == CORE and layer("localsidecar.cli") == CLI
    assert layer("localsidecar.scale.ray_pool") == MIDDLE
    with pytest.raises(KeyError):
        layer("localsidecar.newpackage.module")
    with pytest.raises(KeyError):
        layer("localsidecar.loose_module")
    edges = imported_modules("localsidecar.lab.quant")
    assert any(m == "localsidecar.backend" for _, m in edges)  # `from localsidecar.backend import ...`
    assert any(m == "localsidecar.registry.embedded" for _, m in edges)


def test_every_package_and_module_has_a_layer():
    """A new package or top-level module is placed in a layer on purpose."""
    here = {module_name(p) for p in PACKAGE.glob("*.py")}
    here |= {f"localsidecar.{d.name}" for d in PACKAGE.iterdir() if (d / "__init__.py").exists()}
    assert here == set(LAYERS), f"unlisted: {sorted(here - set(LAYERS))}, gone: {sorted(set(LAYERS) - here)}"
    for m in MODULES:
        layer(m)  # raises for a module outside every listed package


def test_backend_imports_nothing_above_it():
    """Every llama_cpp call lives in backend/, which knows nothing of the
    package that uses it (relative imports stay inside it too)."""
    bad = [
        f"{m}:{line} imports {target}"
        for m in MODULES
        if layer(m) == BACKEND
        for line, target in imported_modules(m)
        if not target.startswith("localsidecar.backend")
    ]
    assert bad == []


def test_imports_never_go_up_a_layer():
    bad = [
        f"{m}:{line} ({LAYER_NAMES[layer(m)]}) imports {target} ({LAYER_NAMES[layer(target)]})"
        for m in MODULES
        for line, target in imported_modules(m)
        if layer(target) > layer(m)
    ]
    assert bad == []


@pytest.mark.parametrize("load_time_only", [True, False], ids=["when-modules-load", "at-all"])
def test_no_import_cycle(load_time_only):
    """No cycle among the modules: neither when they load nor through the
    imports inside functions (which only hide a cycle until they run)."""
    graph = {
        m: sorted({t for _, t in imported_modules(m, load_time_only=load_time_only) if t != m})
        for m in MODULES
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for t in graph.get(m, []):
            if state.get(t) == 1:
                return path + [m, t]
            if t not in state and (cycle := visit(t, path + [m])):
                return cycle
        state[m] = 2
        return None

    for m in graph:
        if m not in state:
            cycle = visit(m, [])
            assert cycle is None, " -> ".join(cycle)


def _imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, top-level name) of every import statement in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.lineno, (node.module or "").split(".")[0]))
    return found


def test_only_backend_imports_llama_cpp():
    bad = [
        f"{m}:{line}"
        for m, path in MODULES.items()
        if layer(m) != BACKEND
        for line, name in _imports_of(path)
        if name == "llama_cpp"
    ]
    assert bad == []


def test_only_cli_imports_click():
    bad = [
        f"{m}:{line}"
        for m, path in MODULES.items()
        if layer(m) != CLI
        for line, name in _imports_of(path)
        if name == "click"
    ]
    assert bad == []


def _python(code_or_args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *code_or_args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )


def test_engine_import_loads_no_click():
    r = _python(
        [
            "-c",
            "import localsidecar, sys; from localsidecar import Engine; "
            "assert 'click' not in sys.modules, 'click loaded'; assert Engine.__name__ == 'Engine'",
        ]
    )
    assert r.returncode == 0, r.stderr


# --- a broken llama-cpp-python ------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_env(tmp_path_factory) -> dict[str, str]:
    """An environment where `import llama_cpp` raises ImportError, as with a
    llama-cpp-python whose shared library does not load."""
    root = tmp_path_factory.mktemp("broken")
    fake = root / "site" / "llama_cpp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("libllama.so: cannot open shared object file")\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "site"), str(ROOT), env.get("PYTHONPATH", "")])
    env.update(
        HF_HOME=str(root / "hf"),
        HF_HUB_OFFLINE="1",
        LOCALSIDECAR_MODELS_DIR=str(root / "models"),
        COLUMNS="200",
    )
    check = _python(["-c", "import llama_cpp"], env)
    assert check.returncode != 0 and "libllama.so" in check.stderr  # the fake really shadows the real one
    return env


def test_help_and_models_work_without_llama_cpp(broken_env):
    r = _python(["-m", "localsidecar.cli", "--help"], broken_env)
    assert r.returncode == 0, r.stderr
    for name in COMMANDS:
        assert f"  {name} " in r.stdout, name
    r = _python(["-m", "localsidecar.cli", "models", "--json"], broken_env)
    assert r.returncode == 0, r.stderr
    assert '"embedded"' in r.stdout and "Traceback" not in r.stderr


def test_doctor_names_the_broken_llama_cpp_in_one_line(broken_env):
    r = _python(["-m", "localsidecar.cli", "doctor"], broken_env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("Error: llama-cpp-python does not load") and "libllama.so" in lines[0]
    assert "pip install" in lines[0]  # says how to repair it
    assert "localsidecar" in r.stdout  # the report itself is still printed


# --- docs/DESIGN.md ---------------------------------------------------------------------------

DESIGN = ROOT / "docs" / "DESIGN.md"
SECTIONS = (
    "Consecutive positions",
    "Attention follows the first sequence id",
    "Unified cache shares cells",
    "Cell placement changes results",
    "Batch shape changes results",
    "Mixed-sequence batches",
    "Masked emulation",
    "Log callback lifetime",
    "K-quant fallback",
    "Grammar sampler accepts once",
    "Buffer types and AMX",
    "Non-finite logits",
    "Signals while a Ray cluster starts",
    "Hashtag candidates",
    "Sliding-window caches",
    "Numbers from the document",
    "Target cells for the hashtag phase",
    "Picking tags from a token trie",
    "Scoring candidates with the model",
    "Front matter edited by splicing",
    "Contexts sized per document",
    "Extract summaries",
    "Names from the document",
)


def _design_sections() -> dict[str, str]:
    parts = DESIGN.read_text(encoding="utf-8").split("\n## ")[1:]
    return {p.split("\n", 1)[0].strip(): p for p in parts}


def test_design_notes_name_real_tests_for_every_fact():
    sections = _design_sections()
    assert tuple(sections) == SECTIONS
    for title, text in sections.items():
        refs = re.findall(r"`(test_\w+\.py)::(test_\w+)", text)
        assert refs, f"{title}: no guarding test named"
        for file, name in refs:
            source = (ROOT / "tests" / file).read_text(encoding="utf-8")
            assert re.search(rf"^def {name}\(", source, re.M), f"{title}: {file}::{name} does not exist"


def test_code_cites_design_sections_that_exist():
    titles = set(_design_sections())
    cited = []
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        text = re.sub(r"\s*\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))  # comments wrap over lines
        for m in re.finditer(r"docs/DESIGN\.md, ([A-Z][\w -]+?)(?=[):.,]|$)", text):
            cited.append((path.name, m[1].strip()))
        assert not re.search(r"DESIGN(\.md)? fact", text), f"{path.name} cites a fact by number"
    assert cited and all(title in titles for _, title in cited), [c for c in cited if c[1] not in titles]
    # and every section is cited where the code relies on it (or the section goes)
    assert titles <= {title for _, title in cited}, sorted(titles - {title for _, title in cited})


def test_no_test_file_imports_another_or_conftest():
    """Fixtures live in conftest.py, plain helpers in tests/helpers.py: a test file
    imported by another would run its tests twice and shadow fixtures (ruff F811)."""
    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name.rsplit(".", 1)[-1] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").rsplit(".", 1)[-1]]
                names += [a.name for a in node.names] if node.level and not node.module else []
            else:
                continue
            found += [(path.name, n) for n in names if n == "conftest" or n.startswith("test_")]
    assert not found, found


def test_the_fast_tier_keeps_the_logic_and_a_few_engine_runs(pytestconfig):
    """`pytest -m "not slow"` (README, Development): the slow marker is registered,
    the files marked slow whole exist, and the fast tier leaves out the heavy
    tests yet keeps a few real-engine smoke tests (they use the `engine` fixture)."""
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))
    assert all((ROOT / "tests" / name).is_file() for name in SLOW_FILES), SLOW_FILES
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "--fixtures-per-test", "-p", "no:randomly"]
        + ["-p", "no:cacheprovider", "-m", "not slow", str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    fast = re.findall(r"^(tests/test_\w+\.py::\S+)$", out.stdout, re.M)
    deselected = int(re.search(r"(\d+) deselected", out.stdout)[1])
    per_test = re.split(r"^-+ fixtures used by ", out.stdout, flags=re.M)[1:]
    with_engine = [t.split()[0] for t in per_test if re.search(r"^engine -- ", t, re.M)]
    assert len(fast) >= 300 and deselected >= 200, (len(fast), deselected)
    assert 3 <= len(with_engine) <= 15, with_engine
