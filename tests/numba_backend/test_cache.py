"""The compile cache across processes: a second process loads numba's disk cache, damaged
generated modules and damaged numba cache files are replaced, pickled functions load in
a fresh process, and processes compiling one graph at the same time all succeed.

The slow tests run `cache_worker` in fresh processes (a process imports a generated
module once, so only a new process shows what is read from disk). The first, cold compile
is shared: each test works on its own copy of that cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from fgraph import Graph
from numba_backend.cache import cache_root, load_module, module_path
from numba_backend import codegen
from numba_backend.codegen import generate
from tests.numba_backend.cache_worker import cache_test_graph

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER = [sys.executable, "-m", "tests.numba_backend.cache_worker"]
PICKLE_NAME = "function.pkl"

def test_the_cache_folder_is_chosen_by_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("FGRAPH_CACHE_DIR")
    assert cache_root() == tmp_path / "xdg" / "fgraph"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "fgraph"


def test_a_module_lives_in_a_folder_named_by_its_digest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(tmp_path))
    digest = "ab" + "0" * 62
    assert module_path(digest, "fgraph_x") == tmp_path / "ab" / digest / "fgraph_x.py"


def test_loading_rewrites_a_differing_file_and_drops_its_numba_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """In process, with plain Python (no numba): the file on disk is never trusted."""
    monkeypatch.setenv("FGRAPH_CACHE_DIR", str(tmp_path))
    digest = "cd" + "1" * 62
    name = f"fgraph_cache_test_{os.getpid()}"
    path = module_path(digest, name)
    (path.parent / "__pycache__").mkdir(parents=True)
    (path.parent / "__pycache__" / f"{name}.stale.nbi").write_bytes(b"stale")
    path.write_text("raise SystemExit('imported a stale module')\n", encoding="utf-8")
    try:
        module = load_module(digest, name, "ANSWER = 42\n")
        assert getattr(module, "ANSWER") == 42
        assert load_module(digest, name, "ANSWER = 42\n") is module  # imported once
    finally:
        sys.modules.pop(name, None)
    assert path.read_text(encoding="utf-8") == "ANSWER = 42\n"
    assert not (path.parent / "__pycache__").exists()
    assert [file.name for file in path.parent.iterdir()] == [path.name]  # no temporary left


def test_the_module_names_the_backend_version_it_was_generated_by() -> None:
    """Compiled code holds what the backend's intrinsics lowered to, but numba's cache
    follows only the module file: a changed backend must change every module's text
    (which drops numba's cache on the next load)."""
    digest = hashlib.sha256()
    for path in sorted(Path(codegen.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    source = generate(Graph(*cache_test_graph())).source
    assert f"# numba_backend {digest.hexdigest()[:16]}\n" in source


@attrs.frozen
class WorkerReport:
    seconds: float
    ok: bool
    module: Path


@attrs.frozen
class ColdCache:
    folder: Path
    report: WorkerReport

    def copy(self, destination: Path) -> tuple[Path, Path]:
        """A private copy of the cold cache (file times kept, so numba's index stays
        fresh) and the path of the generated module inside it."""
        shutil.copytree(self.folder, destination)
        return destination, destination / self.report.module.relative_to(self.folder)


def worker_environment(cache_folder: Path, numba_folder: Path | None = None) -> dict[str, str]:
    """Without `numba_folder`, numba's cache sits next to the module."""
    environment = dict(os.environ)
    environment["FGRAPH_CACHE_DIR"] = str(cache_folder)
    environment.pop("NUMBA_CACHE_DIR", None)
    if numba_folder is not None:
        environment["NUMBA_CACHE_DIR"] = str(numba_folder)
    environment.pop("NUMBA_DISABLE_JIT", None)
    return environment


def parse_report(completed: subprocess.CompletedProcess[str]) -> WorkerReport:
    assert completed.returncode == 0, completed.stderr[-3000:]
    fields = json.loads(completed.stdout.strip().splitlines()[-1])
    return WorkerReport(float(fields["seconds"]), bool(fields["ok"]), Path(fields["module"]))


def run_worker(cache_folder: Path, *argv: str, numba_folder: Path | None = None) -> WorkerReport:
    completed = subprocess.run(
        [*WORKER, *argv],
        cwd=REPO_ROOT,
        env=worker_environment(cache_folder, numba_folder),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return parse_report(completed)


def expected_source() -> str:
    inputs, outputs = cache_test_graph()
    return generate(Graph(inputs, outputs)).source  # mode "none": the graph as written


def numba_cache_files(module: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted((module.parent / "__pycache__").iterdir())}


@pytest.fixture(scope="module")
def cold_cache(tmp_path_factory: pytest.TempPathFactory) -> ColdCache:
    folder = tmp_path_factory.mktemp("cold_cache")
    report = run_worker(folder, "pickle", str(folder / PICKLE_NAME))
    assert report.ok
    return ColdCache(folder, report)


@pytest.mark.slow
def test_a_cold_compile_writes_the_module_and_numba_cache(cold_cache: ColdCache) -> None:
    module = cold_cache.report.module
    assert module.read_text(encoding="utf-8") == expected_source()
    suffixes = sorted(path.suffix for path in numba_cache_files(module))
    assert suffixes == [".nbc", ".nbi"]


@pytest.mark.slow
def test_a_second_process_loads_from_numba_disk_cache(
    cold_cache: ColdCache, tmp_path: Path
) -> None:
    folder, module = cold_cache.copy(tmp_path / "cache")
    before = numba_cache_files(module)
    times = {path: path.stat().st_mtime_ns for path in before}
    warm = run_worker(folder, "build")
    assert warm.ok
    assert warm.module == module
    # A cache hit writes nothing, and costs a fraction of the cold compile.
    assert numba_cache_files(module) == before
    assert {path: path.stat().st_mtime_ns for path in before} == times
    assert warm.seconds < 0.6 * cold_cache.report.seconds, (warm, cold_cache.report)


@pytest.mark.slow
def test_a_pickled_function_loads_in_a_fresh_process(
    cold_cache: ColdCache, tmp_path: Path
) -> None:
    folder, module = cold_cache.copy(tmp_path / "cache")
    before = numba_cache_files(module)
    loaded = run_worker(folder, "unpickle", str(folder / PICKLE_NAME))
    assert loaded.ok
    assert numba_cache_files(module) == before  # loaded from numba's cache, not recompiled


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["exits if imported", "truncated"])
def test_a_damaged_module_file_is_rewritten_never_imported(
    cold_cache: ColdCache, tmp_path: Path, damage: str
) -> None:
    folder, module = cold_cache.copy(tmp_path / "cache")
    source = module.read_text(encoding="utf-8")
    if damage == "exits if imported":
        module.write_text("raise SystemExit('imported a damaged module')\n", encoding="utf-8")
    else:
        module.write_text(source[: len(source) // 2], encoding="utf-8")
    report = run_worker(folder, "build")
    assert report.ok
    assert module.read_text(encoding="utf-8") == expected_source()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("suffix", "damage"), [(".nbi", "garbage"), (".nbc", "truncated")]
)
def test_a_damaged_numba_cache_file_is_recompiled_and_replaced(
    cold_cache: ColdCache, tmp_path: Path, suffix: str, damage: str
) -> None:
    folder, module = cold_cache.copy(tmp_path / "cache")
    (damaged,) = [path for path in numba_cache_files(module) if path.suffix == suffix]
    content = damaged.read_bytes()
    broken = b"not a pickle\n" if damage == "garbage" else content[: len(content) // 2]
    damaged.write_bytes(broken)
    report = run_worker(folder, "build")
    assert report.ok
    assert damaged.read_bytes() != broken
    assert sorted(path.suffix for path in numba_cache_files(module)) == [".nbc", ".nbi"]


@pytest.mark.slow
def test_a_damaged_index_under_numba_cache_dir_is_recompiled_and_replaced(
    tmp_path: Path,
) -> None:
    """With `NUMBA_CACHE_DIR` set, numba's cache is not next to the module: recovering
    from a damaged entry must still find it."""
    folder, numba_folder = tmp_path / "cache", tmp_path / "numba"
    assert run_worker(folder, "build", numba_folder=numba_folder).ok
    indexes = [path for path in numba_folder.rglob("*.nbi") if "fgraph_" in path.name]
    assert len(indexes) == 1 and not list(folder.rglob("__pycache__"))
    indexes[0].write_bytes(b"not a pickle\n")
    assert run_worker(folder, "build", numba_folder=numba_folder).ok
    assert indexes[0].read_bytes() != b"not a pickle\n"


@pytest.mark.slow
def test_processes_compiling_one_graph_at_once_all_succeed(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    processes = [
        subprocess.Popen(
            [*WORKER, "build"],
            cwd=REPO_ROOT,
            env=worker_environment(folder),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    reports = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=600)
        completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        reports.append(parse_report(completed))
    assert all(report.ok for report in reports)
    assert len({report.module for report in reports}) == 1
    assert reports[0].module.read_text(encoding="utf-8") == expected_source()
    assert not list(reports[0].module.parent.glob(".tmp-*"))  # no temporary file left behind
