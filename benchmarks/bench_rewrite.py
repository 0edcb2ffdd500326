"""Rewrite time: fgraph's `fast_run` pipeline against PyTensor's FAST_RUN rewrites on a
5 004-op elementwise graph.

The graph: ten float64 vectors `x[0..9]`; `acc` starts as `x[0]`; 834 times
`acc = acc * 0.999 + sin(x[i % 10])` then `acc = acc - sin(x[i % 10]) * (i / 5000)`;
the output is `acc.sum()`. (PyTensor builds 5 004 elementwise nodes; fgraph interns
the repeated `sin(x[k])` and constants on construction, so it starts from fewer.)

Phases, each the median of `--repeats` runs:

- `fast_run`: `optimize(graph, "fast_run")` on a freshly built graph. Fresh each time,
  because the engine remembers, per rule set, the nodes every rule declined on: a second
  run on the same nodes would measure that memory, not a first optimization.
- `re-optimize`: `optimize` on the result of the first, what a caller pays when it
  optimizes an already optimized graph (the cache is meant to make this cheap).
- PyTensor: `FAST_RUN`'s optimizer on a fresh `FunctionGraph` (with the inplace
  supervisor a compiled function would have), measuring just the rewrite; then the same
  rewrite again on its result.

    python benchmarks/bench_rewrite.py [--repeats 3] [--skip-pytensor]

Ratios above 1 mean fgraph is faster. The goal is at least 10x on the first run, and a
re-optimization at least 10x cheaper again.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import ops as pt  # noqa: E402
from fgraph import Graph  # noqa: E402
from ops.fused import Fused  # noqa: E402
from rewrite import optimize  # noqa: E402

STEPS = 834
INPUTS = 10


def timed(function: Callable[[], object]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def fgraph_graph(salt: int = 0) -> Graph:
    """The benchmark graph; a different `salt` changes one constant, so that no node of
    one round (not even the fused op's inner graph, over params) is met again in the next."""
    xs = [pt.vector(f"x{k}") for k in range(INPUTS)]
    acc = xs[0]
    for i in range(STEPS):
        acc = acc * (0.999 + salt * 1e-12) + pt.sin(xs[i % INPUTS])
        acc = acc - pt.sin(xs[i % INPUTS]) * (i / 5000)
    return Graph(xs, [acc.sum()])


def fgraph_round(salt: int) -> tuple[float, float, Graph, int]:
    graph = fgraph_graph(salt)
    first, optimized = timed(lambda: optimize(graph, "fast_run"))
    again, reoptimized = timed(lambda: optimize(optimized, "fast_run"))
    assert reoptimized == optimized
    return first, again, optimized, len(graph.nodes)


def pytensor_graph() -> tuple[list[Any], Any]:
    """The benchmark graph in PyTensor: its inputs and its output."""
    import pytensor.tensor as ptt

    xs = [ptt.vector(f"x{k}", dtype="float64") for k in range(INPUTS)]
    acc = xs[0]
    for i in range(STEPS):
        acc = acc * 0.999 + ptt.sin(xs[i % INPUTS])
        acc = acc - ptt.sin(xs[i % INPUTS]) * (i / 5000)
    return xs, acc.sum()


def pytensor_round() -> tuple[float, float, int, int]:
    from pytensor.compile.aliasing import add_supervisor_to_fgraph
    from pytensor.compile.io import SymbolicInput
    from pytensor.compile.mode import get_mode
    from pytensor.graph.fg import FunctionGraph

    xs, total = pytensor_graph()
    fgraph = FunctionGraph(xs, [total], clone=True)
    add_supervisor_to_fgraph(fgraph, [SymbolicInput(x) for x in fgraph.inputs])
    before = len(fgraph.apply_nodes)
    rewriter = get_mode("FAST_RUN").optimizer
    first, _ = timed(lambda: rewriter.rewrite(fgraph))
    again, _ = timed(lambda: rewriter.rewrite(fgraph))
    return first, again, before, len(fgraph.apply_nodes)


def milliseconds(runs: list[float]) -> str:
    return ", ".join(f"{seconds * 1e3:.1f}" for seconds in runs)


def describe(graph: Graph) -> str:
    parts = []
    for node in graph.nodes:
        if isinstance(node.op, Fused):
            inner = len(node.op.inner_graph.nodes)
            parts.append(f"Fused({inner} inner nodes, {len(node.inputs)} inputs)")
        else:
            parts.append(type(node.op).__name__)
    return ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-pytensor", action="store_true")
    arguments = parser.parse_args()

    firsts, agains = [], []
    for salt in range(arguments.repeats):
        first, again, optimized, built = fgraph_round(salt)
        firsts.append(first)
        agains.append(again)
    ours, ours_again = statistics.median(firsts), statistics.median(agains)
    print(f"fgraph: {built} nodes built -> {describe(optimized)}")
    print(f"  fast_run     {ours * 1e3:10.1f} ms   (runs: {milliseconds(firsts)})")
    print(
        f"  re-optimize  {ours_again * 1e3:10.1f} ms   (runs: {milliseconds(agains)}; "
        f"{ours / ours_again:.0f}x cheaper)"
    )
    if arguments.skip_pytensor:
        return
    try:
        import pytensor  # noqa: F401
    except ImportError:
        print("PyTensor is not installed: skipped")
        return
    theirs_runs = [pytensor_round() for _ in range(arguments.repeats)]
    theirs = statistics.median(run[0] for run in theirs_runs)
    theirs_again = statistics.median(run[1] for run in theirs_runs)
    _, _, before, after = theirs_runs[0]
    print(f"PyTensor: {before} nodes -> {after} nodes")
    print(f"  FAST_RUN     {theirs * 1e3:10.1f} ms")
    print(f"  re-rewrite   {theirs_again * 1e3:10.1f} ms")
    print(
        f"fgraph faster: fast_run {theirs / ours:.1f}x, "
        f"re-optimize {theirs_again / ours_again:.0f}x"
    )


if __name__ == "__main__":
    main()
