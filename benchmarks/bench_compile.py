"""Compile time in a new process: fgraph cold and warm against PyTensor's numba mode (and
JAX's jit), for the graphs of `bench_elemwise.py` and `bench_logistic.py`.

Every measurement is a fresh Python process (this script re-runs itself with `--worker`),
timing the build of the graph, its compile and one call on small inputs (PyTensor's
numba mode compiles at the first call, so the call is included for everyone). Importing
the library is done before the clock starts and reported separately.

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

    python benchmarks/bench_compile.py [--graphs elemwise logistic]

A peer that is not installed or fails is reported with the reason; the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import bench_elemwise, bench_logistic  # noqa: E402
from benchmarks.peers import Run  # noqa: E402

LIBRARIES = {
    "fgraph": ("ops", "numba_backend", "rewrite"),
    "pytensor": ("pytensor", "pytensor.tensor"),
    "jax": ("jax", "jax.numpy"),
    "numba": ("numba",),
}


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


def worker(library: str, graph: str) -> None:
    """Runs in the measured process: print import and compile seconds as JSON."""
    start = time.perf_counter()
    for module in LIBRARIES[library]:
        __import__(module)
    imported = time.perf_counter()
    builders, inputs = small_problem(graph)
    builders[library](inputs)()
    compiled = time.perf_counter()
    print(json.dumps({"import": imported - start, "compile": compiled - imported}))


def measure(library: str, graph: str, environment: dict[str, str]) -> str:
    """Run one worker process; a formatted result, or the reason it failed."""
    completed = subprocess.run(
        [sys.executable, __file__, "--worker", library, graph],
        cwd=REPO_ROOT,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        if any("ModuleNotFoundError" in line for line in lines[-3:]):
            return f"not installed ({lines[-1]})"
        last = lines[-1][:300] if lines else f"exit status {completed.returncode}"
        return f"failed: {last}"
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    return f"{result['compile']:8.2f} s   (import {result['import']:.2f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", nargs="+", default=["elemwise", "logistic"])
    parser.add_argument("--worker", nargs=2, metavar=("LIBRARY", "GRAPH"))
    options = parser.parse_args()
    if options.worker:
        worker(*options.worker)
        return
    print("compile + first call in a new process (library import excluded)")
    for graph in options.graphs:
        print(f"\n{graph}:")
        with tempfile.TemporaryDirectory() as folder:
            fgraph_environment = {
                "FGRAPH_CACHE_DIR": str(Path(folder) / "fgraph"),
                "NUMBA_CACHE_DIR": str(Path(folder) / "numba"),
            }
            new_graph_environment = {
                **fgraph_environment, "FGRAPH_CACHE_DIR": str(Path(folder) / "fgraph-new")
            }
            pytensor_folder = Path(folder) / "pytensor"
            pytensor_environment = {"PYTENSOR_FLAGS": f"base_compiledir={pytensor_folder}"}
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
                print(f"  {label:<24}{measure(library, graph, environment)}", flush=True)


if __name__ == "__main__":
    main()
