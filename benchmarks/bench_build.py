"""Graph-building throughput: fgraph against PyTensor on a 100 000-node elementwise chain.

Both libraries build the same chain on a float64 vector `x` (alternately `exp(v)` and
`v + x`), wrap it in a graph object (`fgraph.Graph` / PyTensor's
`FunctionGraph(clone=False)`), sort it topologically and, for fgraph, compute the stable
digest. Every phase runs `--repeats` times on a freshly built chain; the script prints
the median nodes per second of each phase and the ratio fgraph / PyTensor (above 1 means
fgraph is faster).

    python benchmarks/bench_build.py [--nodes 100000] [--repeats 5]

fgraph uses the toy ops of its test suite (`tests/fgraph/toy_ops.py`), so the benchmark
measures the core (interning, type inference, traversal) and not the op library.
PyTensor is imported only when it runs, and skipped with a message if it is missing.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from fgraph import Graph, Input, TensorType, Variable, toposort  # noqa: E402
from tests.fgraph.toy_ops import Add, Exp  # noqa: E402

PHASES = ("build", "graph", "toposort", "digest")
Timings = dict[str, list[float]]


def timed(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def fgraph_round(nodes: int, timings: Timings) -> int:
    """One measured round for fgraph; returns the node count of the built graph."""
    # A fresh input each round, so every node is really created (not found interned).
    x = Input(TensorType("float64", (None,)), "x")
    exp, add = Exp(), Add()

    def build() -> Variable:
        value: Variable = x
        for step in range(nodes):
            value = add(value, x) if step % 2 else exp(value)
        return value

    seconds, built = timed(build)
    assert isinstance(built, Variable)
    timings["build"].append(seconds)
    seconds, graph = timed(lambda: Graph([x], [built]))
    assert isinstance(graph, Graph)
    timings["graph"].append(seconds)
    timings["toposort"].append(timed(lambda: toposort([built]))[0])
    timings["digest"].append(timed(lambda: graph.digest)[0])
    return len(graph.nodes)


def pytensor_round(nodes: int, timings: Timings) -> int:
    """One measured round for PyTensor; returns the node count of the FunctionGraph."""
    import pytensor.tensor as pt
    from pytensor.graph.fg import FunctionGraph
    from pytensor.tensor.variable import TensorVariable

    x = pt.vector("x", dtype="float64")

    def build() -> TensorVariable[Any, Any]:
        value = x
        for step in range(nodes):
            value = value + x if step % 2 else pt.exp(value)
        return value

    seconds, built = timed(build)
    assert isinstance(built, TensorVariable)
    timings["build"].append(seconds)
    seconds, function_graph = timed(lambda: FunctionGraph([x], [built], clone=False))
    assert isinstance(function_graph, FunctionGraph)
    timings["graph"].append(seconds)
    timings["toposort"].append(timed(function_graph.toposort)[0])
    return len(function_graph.apply_nodes)


def run(library: str, round_: Callable[[int, Timings], int], nodes: int, repeats: int) -> Timings:
    timings: Timings = {phase: [] for phase in PHASES}
    for repeat in range(repeats):
        gc.collect()
        counted = round_(nodes, timings)
        if counted != nodes:
            raise AssertionError(f"{library} built {counted} nodes, expected {nodes}")
        print(f"  {library} round {repeat + 1}/{repeats} done", file=sys.stderr)
    gc.collect()
    return timings


def rate(nodes: int, seconds: list[float]) -> float | None:
    return nodes / statistics.median(seconds) if seconds else None


def show(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    nodes, repeats = arguments.nodes, arguments.repeats

    ours = run("fgraph", fgraph_round, nodes, repeats)
    try:
        import pytensor
    except ImportError:
        print("PyTensor is not installed (pip install -e '.[bench]'); showing fgraph only.")
        theirs: Timings = {phase: [] for phase in PHASES}
        pytensor_version = "missing"
    else:
        pytensor_version = pytensor.__version__
        theirs = run("pytensor", pytensor_round, nodes, repeats)

    print(
        f"\n{nodes:,}-node chain (alternating exp and +), median of {repeats} runs; "
        f"Python {sys.version.split()[0]}, PyTensor {pytensor_version}"
    )
    print(f"{'phase':<10}{'fgraph nodes/s':>18}{'pytensor nodes/s':>20}{'fgraph/pytensor':>18}")
    for phase in PHASES:
        our_rate, their_rate = rate(nodes, ours[phase]), rate(nodes, theirs[phase])
        ratio = "n/a" if our_rate is None or their_rate is None else f"{our_rate / their_rate:.2f}x"
        print(f"{phase:<10}{show(our_rate):>18}{show(their_rate):>20}{ratio:>18}")
    print(
        "\ndigest: PyTensor has no graph digest; its nearest analogue is the numba cache key,"
        " computed only while compiling (numba_funcify_FunctionGraph), so it is not comparable."
    )


if __name__ == "__main__":
    main()
