"""A separate process for the cache tests: compile the test graph, check it, time it.

    python -m tests.numba_backend.cache_worker build
    python -m tests.numba_backend.cache_worker pickle PATH    # build, then pickle to PATH
    python -m tests.numba_backend.cache_worker unpickle PATH  # load a pickled function

Prints one JSON line: the seconds spent compiling (or unpickling), whether the results
match the reference evaluator, and the path of the generated module. Numba's one-time
start-up (loading its registries on the first compile of a process) is paid before the
clock starts, so the time is that of this graph alone.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np

import ops as pt
from fgraph import Input, Variable, evaluate
from numba_backend import CompiledFunction, function
from numba_backend.cache import module_path
from numba_backend.codegen import entry_name


def cache_test_graph() -> tuple[list[Input], list[Variable]]:
    """Enough unfused element loops and reductions that a cold compile clearly costs more
    than loading numba's cache."""
    x = pt.vector("x")
    a = pt.matrix("A")
    smooth = pt.exp(-x * x) * 2 + pt.log(1 + x * x)
    return [x, a], [smooth.sum(), (a * smooth).sum(axis=1)]


def arguments() -> list[np.ndarray[Any, np.dtype[Any]]]:
    rng = np.random.default_rng(7)
    return [rng.normal(size=5), rng.normal(size=(3, 5))]


def warm_up_numba() -> None:
    def total(values: np.ndarray[Any, np.dtype[Any]]) -> float:
        return float(np.exp(values).sum())

    numba.njit(total)(np.ones(2))


def matches_reference(compiled: CompiledFunction[Any]) -> bool:
    inputs, outputs = cache_test_graph()
    expected = evaluate(outputs, dict(zip(inputs, arguments())))
    results = compiled(*arguments())
    return len(results) == len(expected) and all(
        np.allclose(result, wanted, rtol=1e-12) for result, wanted in zip(results, expected)
    )


def main(argv: list[str]) -> None:
    warm_up_numba()
    mode = argv[0]
    start = time.perf_counter()
    if mode == "unpickle":
        with open(argv[1], "rb") as file:
            compiled = pickle.load(file)
    else:
        inputs, outputs = cache_test_graph()
        compiled = function(inputs, outputs, mode="none")
    seconds = time.perf_counter() - start
    if not isinstance(compiled, CompiledFunction):
        raise TypeError(f"unpickled a {type(compiled).__name__}, not a CompiledFunction[Any]")
    if mode == "pickle":
        with open(argv[1], "wb") as file:
            pickle.dump(compiled, file)
    path = module_path(compiled.graph.structure_digest, entry_name(compiled.graph))
    report = {"seconds": seconds, "ok": matches_reference(compiled), "module": str(path)}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
