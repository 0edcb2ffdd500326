"""Compile time in a new process: fgraph cold and warm against PyTensor's numba mode and
JAX's jit, for small graphs and for the models of issue 19 (`compile_models.py`).

Every measurement is a fresh Python process (this script re-runs itself as a worker),
timing the build of the graph, its compile and one call (PyTensor's numba mode and JAX
compile at the first call, so the call is included for everyone). Each worker runs
under a memory cap (`RLIMIT_AS`, `--memory-gb`) and a time limit (`--timeout`), so a
pathological case is reported as "> timeout" or "out of memory" instead of taking the
machine down.

Graphs (`--graphs elemwise logistic`; no names: skipped), one run each:

- fgraph cold: a new, empty `FGRAPH_CACHE_DIR` and `NUMBA_CACHE_DIR` (nothing cached,
  not even the library's own numba functions such as `vecmath`, as after installing);
  warm: a second process on the same folders (the generated module and numba's disk
  cache are reused); new graph: a third process with an empty `FGRAPH_CACHE_DIR` but
  the library's numba cache kept: a graph never compiled before, on a machine where
  fgraph has run before (the usual case).
- PyTensor cold: a new, empty `base_compiledir` (`PYTENSOR_FLAGS=base_compiledir=...`; its
  numba cache lives there too, not in `compiledir`); warm: a second process on the same
  folder.
- JAX: a new process (no persistent compilation cache).
- numba floor: a new process compiling `x + 1`: numba's own start-up, which every warm
  load pays too (it loads numba's registries), so no cache brings a load below it.
  Library import is excluded and reported separately.

Models (`--models`, default all of `compile_models.MODELS`; no names: skipped), medians
of `--repeats` runs. Each process first imports its library and compiles an unrelated
tiny function, so start-up is not counted; the time is build + compile + first call.

- fgraph cold: empty cache folders; with the model's generated lines (of the module
  source) and the worker's peak memory (`ru_maxrss`).
- JAX (`jit` of `value_and_grad`) and PyTensor (numba mode, empty `base_compiledir`),
  and fgraph / JAX, the ratio of each run's two times (median of the ratios).
- Recompile after an edit: processes on the caches the cold process left (restored
  before each, at the same paths, so numba's cache index still matches): the model
  unchanged (warm), one constant changed, one term changed (see `compile_models`), each
  as a fraction of that run's cold time.
- New graph: a process with a new fgraph cache folder and numba's cache of the cold
  process kept: a model never compiled, on a machine where fgraph has run before (the
  library's numba helpers, such as the LAPACK calls, load instead of compiling), and
  its ratio to JAX's time.

A case that times out or fails is not run again in later repeats. Outputs are checked
between the libraries (first run's values); a disagreement is printed under the table.

    python benchmarks/bench_compile.py [--graphs elemwise logistic] [--models kalman hmm ...]
        [--repeats 3] [--timeout 120] [--memory-gb 3] [--peers fgraph jax pytensor]

A peer that is not installed or fails is reported with the reason; the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import bench_elemwise, bench_logistic  # noqa: E402
from benchmarks.compile_models import MODELS, Edit, compile_fgraph  # noqa: E402
from benchmarks.peers import Run  # noqa: E402

LIBRARIES = {
    "fgraph": ("ops", "numba_backend", "rewrite"),
    "pytensor": ("pytensor", "pytensor.tensor"),
    "jax": ("jax", "jax.numpy"),
    "numba": ("numba",),
}
MODEL_PEERS = ("fgraph", "jax", "pytensor")
EDITS: tuple[Edit, ...] = ("original", "constant", "term")


# -- graphs -----------------------------------------------------------------------------------
def numba_floor(inputs: Any) -> Run:
    """The least a numba user pays in a new process: numba's start-up (it loads its
    registries at the first compile) and the compile of a one-line function."""
    import numba

    first = np.asarray(inputs if isinstance(inputs, np.ndarray) else inputs[0])
    compiled = numba.njit(lambda values: values + 1.0)
    return lambda: compiled(first)


def small_problem(graph: str) -> tuple[dict[str, Callable[[Any], Run]], Any]:
    """The peer builders of a graph's benchmark module, and small inputs for them."""
    rng = np.random.default_rng(0)
    if graph == "elemwise":
        builders: dict[str, Callable[[Any], Run]] = {
            "fgraph": bench_elemwise.fgraph_peer,
            "pytensor": bench_elemwise.pytensor_peer,
            "jax": bench_elemwise.jax_peer,
            "numba": numba_floor,
        }
        return builders, rng.uniform(0.0, 4.0, 1000)
    X = rng.normal(size=(200, 10))
    w = rng.normal(size=10)
    y = (rng.uniform(size=200) < 0.5).astype(np.float64)
    builders = {
        "fgraph": bench_logistic.fgraph_peer,
        "pytensor": bench_logistic.pytensor_peer,
        "jax": bench_logistic.jax_peer,
        "numba": numba_floor,
    }
    return builders, (X, y, w)


def graph_worker(library: str, graph: str) -> dict[str, float]:
    """Runs in the measured process: import and compile seconds."""
    start = time.perf_counter()
    for module in LIBRARIES[library]:
        __import__(module)
    imported = time.perf_counter()
    builders, inputs = small_problem(graph)
    builders[library](inputs)()
    compiled = time.perf_counter()
    return {"import": imported - start, "compile": compiled - imported}


def run_graphs(graphs: Sequence[str], limits: Limits) -> None:
    print("compile + first call in a new process (library import excluded)")
    for graph in graphs:
        print(f"\n{graph}:")
        with tempfile.TemporaryDirectory() as folder:
            fgraph_environment = {
                "FGRAPH_CACHE_DIR": str(Path(folder) / "fgraph"),
                "NUMBA_CACHE_DIR": str(Path(folder) / "numba"),
            }
            new_graph_environment = {
                **fgraph_environment, "FGRAPH_CACHE_DIR": str(Path(folder) / "fgraph-new")
            }
            pytensor_environment = _pytensor_environment(Path(folder) / "pytensor")
            runs = [
                ("fgraph cold", "fgraph", fgraph_environment),
                ("fgraph warm", "fgraph", fgraph_environment),
                ("fgraph new graph", "fgraph", new_graph_environment),
                ("pytensor numba cold", "pytensor", pytensor_environment),
                ("pytensor numba warm", "pytensor", pytensor_environment),
                ("jax jit (new process)", "jax", {}),
                ("numba floor (x + 1)", "numba", {}),
            ]
            for label, library, environment in runs:
                result = run_worker(["--graph-worker", library, graph], environment, limits)
                shown = (
                    result
                    if isinstance(result, str)
                    else f"{result['compile']:8.2f} s   (import {result['import']:.2f} s)"
                )
                print(f"  {label:<24}{shown}", flush=True)


# -- workers ----------------------------------------------------------------------------------
@attrs.frozen
class Limits:
    timeout: float
    memory_bytes: int


def run_worker(
    arguments: Sequence[str], environment: dict[str, str], limits: Limits
) -> dict[str, Any] | str:
    """Run this script as a worker in a new process: the JSON it prints last, or why
    there is none ("> timeout", out of memory, not installed, failed: ...)."""
    command = [sys.executable, __file__, "--memory-bytes", str(limits.memory_bytes), *arguments]
    try:
        completed = subprocess.run(
            command, cwd=REPO_ROOT, env={**os.environ, **environment}, capture_output=True,
            text=True, timeout=limits.timeout,
        )
    except subprocess.TimeoutExpired:
        return f"> {limits.timeout:.0f} s"
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        if any("ModuleNotFoundError" in line for line in lines[-3:]):
            return f"not installed ({lines[-1].split(': ')[-1]})"
        if any(sign in completed.stderr for sign in ("MemoryError", "bad_alloc", "out of memory")):
            return f"out of memory (> {limits.memory_bytes / 2**30:.0f} GB)"
        last = lines[-1][:200] if lines else f"exit status {completed.returncode}"
        return f"failed: {last}"
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def warm_up(library: str) -> None:
    """Import `library` and compile an unrelated tiny function with it, so that what is
    timed next excludes the library's start-up."""
    values = np.linspace(0.0, 1.0, 3)
    if library == "fgraph":
        import ops as pt
        from numba_backend import function

        x = pt.vector("warm_up")
        function([x], x * 2.0 + 1.0)(values)
    elif library == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.block_until_ready(jax.jit(lambda x: x * 2.0 + 1.0)(values))
    else:
        import pytensor
        import pytensor.tensor as ptt

        x = ptt.dvector("warm_up")
        pytensor.function([x], x * 2.0 + 1.0, mode="NUMBA")(values)


def model_worker(library: str, name: str, edit: Edit, outputs: str) -> dict[str, Any]:
    """Runs in the measured process: seconds for build + compile + first call of the
    model, generated lines (fgraph), peak memory; the outputs are saved to `outputs`."""
    model = MODELS[name]
    warm_up(library)
    start = time.perf_counter()
    lines = None
    if library == "fgraph":
        compiled = compile_fgraph(model, edit)
        result = compiled(*model.arguments())
        lines = len(compiled.source.splitlines())
    else:
        result = (model.jax if library == "jax" else model.pytensor)()()
    seconds = time.perf_counter() - start
    np.savez(outputs, *(np.asarray(value) for value in _flattened(result)))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "lines": lines, "peak_mb": peak_mb}


def _flattened(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flattened(item)]
    return [value]


def _pytensor_environment(folder: Path) -> dict[str, str]:
    return {"PYTENSOR_FLAGS": f"base_compiledir={folder}"}


# -- models -----------------------------------------------------------------------------------
@attrs.frozen
class Case:
    """What one model's repeats measured: per (library, edit or "warm"), the successful
    runs or the reason there are none."""

    runs: dict[tuple[str, str], list[dict[str, Any]]] = attrs.field(factory=dict)
    failures: dict[tuple[str, str], str] = attrs.field(factory=dict)
    disagreements: list[str] = attrs.field(factory=list)


def measure_model(
    name: str, peers: Sequence[str], limits: Limits, case: Case, check: bool
) -> None:
    """One repeat of a model: fgraph cold, its edits on the caches the cold run left,
    JAX and PyTensor; `check` compares the outputs between the libraries."""
    model = MODELS[name]
    with tempfile.TemporaryDirectory(prefix="bench_compile_") as folder_name:
        folder = Path(folder_name)
        caches = {"FGRAPH_CACHE_DIR": str(folder / "fgraph"),
                  "NUMBA_CACHE_DIR": str(folder / "numba")}
        environments = {"fgraph": caches, "jax": {},
                        "pytensor": _pytensor_environment(folder / "pytensor")}
        saved: dict[str, Path] = {}
        for library in peers:
            cold = _measure_once(case, library, "original", name, environments[library],
                                 folder / f"{library}.npz", limits)
            if cold:
                saved[library] = folder / f"{library}.npz"
            if library != "fgraph" or not cold:
                continue
            shutil.copytree(folder / "fgraph", folder / "fgraph-after-cold")
            shutil.copytree(folder / "numba", folder / "numba-after-cold")
            for edit in ("original", *model.edits):
                for cache in ("fgraph", "numba"):  # what the cold process left, same paths
                    shutil.rmtree(folder / cache)
                    shutil.copytree(folder / f"{cache}-after-cold", folder / cache)
                _measure_once(case, "fgraph", edit, name, caches, folder / "edit.npz", limits,
                              recompile=True)
            # A graph never compiled, on a machine where fgraph has run before: a new
            # fgraph cache folder, numba's cache of the library's helpers kept.
            shutil.rmtree(folder / "numba")
            shutil.copytree(folder / "numba-after-cold", folder / "numba")
            new_graph = {**caches, "FGRAPH_CACHE_DIR": str(folder / "fgraph-new")}
            _measure_once(case, "fgraph", "new graph", name, new_graph, folder / "new.npz",
                          limits, recompile=True)
        if check and "fgraph" in saved:
            for library in saved.keys() - {"fgraph"}:
                problem = _disagreement(saved["fgraph"], saved[library], model.checked_outputs)
                if problem:
                    case.disagreements.append(f"{name}: {library} {problem}")


def _measure_once(
    case: Case, library: str, edit: Edit | Literal["new graph"], name: str,
    environment: dict[str, str],
    outputs: Path, limits: Limits, recompile: bool = False,
) -> bool:
    """Measure one process unless an earlier repeat failed; record and print it."""
    key = (library, "warm" if recompile and edit == "original" else edit)
    if key in case.failures:
        return False
    built: Edit = "original" if edit == "new graph" else edit
    result = run_worker(["--model-worker", library, name, built, str(outputs)], environment,
                        limits)
    label = f"{name} {library} {key[1] if recompile else 'cold'}"
    if isinstance(result, str):
        case.failures[key] = result
        print(f"  {label:<40}{result}", flush=True)
        return False
    case.runs.setdefault(key, []).append(result)
    extra = f"  {result['lines']} lines" if result["lines"] else ""
    print(f"  {label:<40}{result['seconds']:8.2f} s  {result['peak_mb']:7.0f} MB{extra}",
          flush=True)
    return True


def _disagreement(mine: Path, theirs: Path, checked: int | None) -> str | None:
    with np.load(mine) as ours, np.load(theirs) as peer:
        a = [ours[key] for key in ours.files]
        b = [peer[key] for key in peer.files]
    if len(a) != len(b):
        return f"gives {len(b)} outputs, fgraph {len(a)}"
    for index, (x, y) in enumerate(list(zip(a, b))[:checked]):
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-6, atol=1e-9):
            return f"differs from fgraph in output {index}"
    return None


def _short(failure: str) -> str:
    """A failure as a table cell: without the missing module's name, at most 60 chars."""
    return "not installed" if failure.startswith("not installed") else failure[:60]


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def table(names: Sequence[str], cases: dict[str, Case], peers: Sequence[str]) -> str:
    """The models' table in Markdown."""
    header = ["model", "fgraph cold s", "JAX s", "fgraph / JAX", "new graph s (/ JAX)",
              "PyTensor s", "generated lines", "peak MB fgraph / JAX", "warm",
              "constant edit", "term edit"]
    rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name in names:
        case = cases[name]

        def cell(library: str, edit: str = "original", field: str = "seconds") -> str:
            key = (library, edit)
            if key in case.failures:
                return _short(case.failures[key]) if field == "seconds" else "—"
            runs = case.runs.get(key)
            if not runs or runs[0][field] is None:
                return "" if library in peers else "not run"
            value = _median([run[field] for run in runs])
            return f"{value:.0f}" if field in ("lines", "peak_mb") else f"{value:.2f}"

        cold = case.runs.get(("fgraph", "original"), [])
        jax = case.runs.get(("jax", "original"), [])
        ratio = (
            f"{_median([f['seconds'] / j['seconds'] for f, j in zip(cold, jax)]):.1f}x"
            if cold and jax else "—"
        )

        def fraction(edit: str) -> str:
            runs = case.runs.get(("fgraph", edit))
            if ("fgraph", edit) in case.failures:
                return _short(case.failures[("fgraph", edit)])
            if not runs:
                return "—"
            share = _median([run["seconds"] / c["seconds"] for run, c in zip(runs, cold)])
            return f"{share:.2f} ({_median([run['seconds'] for run in runs]):.2f} s)"

        fresh = case.runs.get(("fgraph", "new graph"), [])
        new_graph = (
            f"{_median([f['seconds'] for f in fresh]):.2f} "
            f"({_median([f['seconds'] / j['seconds'] for f, j in zip(fresh, jax)]):.1f}x)"
            if fresh and jax else "—"
        )
        memory = f"{cell('fgraph', field='peak_mb')} / {cell('jax', field='peak_mb')}"
        row = [MODELS[name].title, cell("fgraph"), cell("jax"), ratio, new_graph,
               cell("pytensor"),
               cell("fgraph", field="lines"), memory, fraction("warm"), fraction("constant"),
               fraction("term")]
        rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)


def run_models(
    names: Sequence[str], peers: Sequence[str], repeats: int, limits: Limits
) -> None:
    print(f"\nmodels: build + compile + first call in a new process, empty caches, "
          f"median of {repeats} runs (timeout {limits.timeout:.0f} s, memory cap "
          f"{limits.memory_bytes / 2**30:.0f} GB)")
    cases = {name: Case() for name in names}
    for repeat in range(repeats):
        print(f"\nrun {repeat + 1} of {repeats}")
        for name in names:
            measure_model(name, peers, limits, cases[name], check=repeat == 0)
    print()
    print(table(names, cases, peers))
    print("\nedits: time of a new process on the caches the cold process left, as a "
          "fraction of the cold time (and in seconds); — where the model has no such edit")
    for case in cases.values():
        for line in case.disagreements:
            print(f"CHECK: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--graphs", nargs="*", default=["elemwise", "logistic"])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--peers", nargs="+", default=list(MODEL_PEERS), choices=MODEL_PEERS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per process")
    parser.add_argument("--memory-gb", type=float, default=3.0, help="address space per process")
    parser.add_argument("--graph-worker", nargs=2, metavar=("LIBRARY", "GRAPH"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--model-worker", nargs=4, metavar=("LIBRARY", "MODEL", "EDIT", "OUT"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--memory-bytes", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (options.memory_bytes, options.memory_bytes))
    if options.graph_worker:
        print(json.dumps(graph_worker(*options.graph_worker)))
        return
    if options.model_worker:
        print(json.dumps(model_worker(*options.model_worker)))
        return
    limits = Limits(options.timeout, int(options.memory_gb * 2**30))
    if options.graphs:
        run_graphs(options.graphs, limits)
    if options.models:
        run_models(options.models, options.peers, options.repeats, limits)


if __name__ == "__main__":
    main()
