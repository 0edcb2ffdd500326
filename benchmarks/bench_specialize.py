"""`function(..., specialize_shapes=True)` on the 3-state HMM forward algorithm + gradient
(T = 500, `compile_models`' hmm): the graph with every length unknown, compiled as it is
and with `specialize_shapes=True`, against the same graph with the number of states
declared (`shape=(3,)`, `(3, 3)`) and JAX's `jit` (which specializes on shapes too).

    python benchmarks/bench_specialize.py [--rounds 3] [--calls 2000]

Each round times every peer in turn (median of `--calls` calls, one after the other);
the table gives the median over rounds of each peer's median and its ratio to the
specialized function's in the same round (above 1: slower than specialized).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.compile_models import hmm_arguments, hmm_graph, hmm_jax  # noqa: E402
from benchmarks.peers import agree  # noqa: E402

Run = Callable[[], Any]


def fgraph_run(static_states: bool, specialize_shapes: bool) -> Run:
    from numba_backend import function

    inputs, outputs = hmm_graph(static_states=static_states)
    compiled = function(inputs, list(outputs), specialize_shapes=specialize_shapes)
    arguments = hmm_arguments()
    return lambda: compiled(*arguments)


PEERS: dict[str, Callable[[], Run]] = {
    "fgraph specialize_shapes": lambda: fgraph_run(False, True),
    "fgraph lengths unknown": lambda: fgraph_run(False, False),
    "fgraph states declared": lambda: fgraph_run(True, False),
    "jax jit": hmm_jax,
}


def flat(value: Any) -> list[Any]:
    """The arrays of a result, nested tuples (JAX's `(value, (gradients...))`) flattened."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flat(item)]
    return [value]


def per_call(run: Run, calls: int) -> float:
    """The median time of one call over `calls` calls."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args()
    runs: dict[str, Run] = {}
    for name, build in PEERS.items():
        start = time.perf_counter()
        try:
            runs[name] = build()
            value = runs[name]()
        except ImportError as error:
            print(f"{name}: not installed ({error.name or error})")
            continue
        if name == "fgraph specialize_shapes":
            reference = value
        check = "ok" if agree(flat(value), flat(reference), 1e-9) else "MISMATCH"
        print(f"{name}: first call {time.perf_counter() - start:.2f} s, values {check}")
    medians: dict[str, list[float]] = {name: [] for name in runs}
    ratios: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(options.rounds):
        round_medians = {name: per_call(run, options.calls) for name, run in runs.items()}
        for name, median in round_medians.items():
            medians[name].append(median)
            ratios[name].append(median / round_medians["fgraph specialize_shapes"])
    print(f"\n{'peer':<28}{'median us':>11}{'vs specialized':>16}")
    for name in runs:
        print(f"{name:<28}{statistics.median(medians[name]) * 1e6:>11.1f}"
              f"{statistics.median(ratios[name]):>15.2f}x")


if __name__ == "__main__":
    main()
