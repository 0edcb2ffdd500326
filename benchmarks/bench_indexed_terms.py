"""Compile time and peak memory of the indexed-terms model of issue 19, against n:

    cost = sum(exp(x[i]) * w[i] + log1p(x[i] ** 2) * w[i + 1] for i in range(n))
    f = function([x, w], [cost, *grad(cost, [x, w])])

Every measurement is a fresh process with empty `FGRAPH_CACHE_DIR` and `NUMBA_CACHE_DIR`
(cold: nothing cached, not even the library's own numba functions) and a cap on its
address space (`resource.setrlimit`, so a run that grows too much fails instead of taking
the machine down) and on its time. The process first compiles an unrelated tiny numba
function (numba's start-up is not counted), then times building the graph and its
gradient, compiling and the first call; its peak resident memory is `ru_maxrss`. JAX's
`jit` of the same loop (value and gradient) is the peer, measured in the same run when
installed (`/work/benchvenv/bin/python`).

    python benchmarks/bench_indexed_terms.py [--terms 25 50 100 500] [--runs 3]
        [--repo PATH]  # measure the fgraph checkout at PATH (default: this one)

Prints the median of the runs (and the runs), or why a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def fgraph_run(n: int) -> None:
    import numpy as np

    import ops as pt
    from numba_backend import function

    x, w = pt.vector("x"), pt.vector("w")
    cost = sum(pt.exp(x[i]) * w[i] + pt.log1p(x[i] ** 2) * w[i + 1] for i in range(n))
    assert not isinstance(cost, int)
    compiled = function([x, w], [cost, *pt.grad(cost, [x, w])])
    compiled(np.linspace(-1, 1, n), np.linspace(0, 1, n + 1))


def jax_run(n: int) -> None:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def cost(x: jax.Array, w: jax.Array) -> jax.Array:
        return sum(jnp.exp(x[i]) * w[i] + jnp.log1p(x[i] ** 2) * w[i + 1] for i in range(n))

    value_and_grad = jax.jit(jax.value_and_grad(cost, argnums=(0, 1)))
    jax.block_until_ready(value_and_grad(jnp.linspace(-1, 1, n), jnp.linspace(0, 1, n + 1)))


def worker(library: str, n: int, memory_cap: int) -> None:
    """Runs in the measured process: prints seconds and peak RSS (MB) as JSON."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))
    if library == "fgraph":
        import numba
        import numpy as np

        numba.njit(lambda values: values + 1.0)(np.zeros(2))  # numba's start-up
        import numba_backend  # noqa: F401
        import ops  # noqa: F401
        import rewrite  # noqa: F401
    else:
        import jax.numpy as jnp

        jnp.zeros(2).block_until_ready()
    start = time.perf_counter()
    (fgraph_run if library == "fgraph" else jax_run)(n)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak}))


def measure(library: str, n: int, repo: Path, memory_cap: int, timeout: float) -> dict[str, float] | str:
    """One cold run in a new process: its result, or why it failed."""
    with tempfile.TemporaryDirectory() as folder:
        environment = {
            **os.environ,
            "FGRAPH_CACHE_DIR": str(Path(folder) / "fgraph"),
            "NUMBA_CACHE_DIR": str(Path(folder) / "numba"),
            "PYTHONPATH": str(repo),
        }
        command = [sys.executable, __file__, "--worker", library, str(n), str(memory_cap)]
        try:
            completed = subprocess.run(
                command, cwd=repo, env=environment, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return f"> {timeout:.0f} s (stopped)"
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        return f"failed: {lines[-1][:200] if lines else f'exit status {completed.returncode}'}"
    result: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--terms", nargs="+", type=int, default=[25, 50, 100, 500])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path, default=REPO_ROOT)
    parser.add_argument("--libraries", nargs="+", default=["fgraph", "jax"])
    parser.add_argument("--memory-cap-gb", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--worker", nargs=3, metavar=("LIBRARY", "N", "CAP"))
    options = parser.parse_args()
    if options.worker:
        library, n, cap = options.worker
        worker(library, int(n), int(cap))
        return
    cap = int(options.memory_cap_gb * 2**30)
    print(f"cold compile + first call, median of {options.runs} (fgraph from {options.repo})")
    for n in options.terms:
        for library in options.libraries:
            runs = [
                measure(library, n, options.repo, cap, options.timeout)
                for _ in range(options.runs)
            ]
            done = [run for run in runs if isinstance(run, dict)]
            if len(done) < len(runs):
                failure = next(run for run in runs if isinstance(run, str))
                print(f"  n={n:<4} {library:<7} {failure}", flush=True)
                continue
            seconds = [run["seconds"] for run in done]
            peak = statistics.median(run["peak_mb"] for run in done)
            listed = ", ".join(f"{s:.2f}" for s in seconds)
            print(
                f"  n={n:<4} {library:<7} {statistics.median(seconds):7.2f} s  "
                f"peak {peak:6.0f} MB   (runs: {listed})",
                flush=True,
            )


if __name__ == "__main__":
    main()
