"""A separate process for the kernel cache tests: compile one of two graphs that share a
loop, check the results, and report how each outlined kernel was obtained.

    python -m tests.numba_backend.kernel_worker first
    python -m tests.numba_backend.kernel_worker second
    python -m tests.numba_backend.kernel_worker library

Prints one JSON line: whether the results match the reference evaluator, and per kernel
(by function name) numba's cache hits and misses in this process (a miss is a compile).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

import ops as pt
from fgraph import Input, Variable, evaluate
from numba_backend import function
from numba_backend.codegen import generate


def shared_loop_graph(which: str) -> tuple[list[Input], list[Variable]]:
    """The same loop in both graphs; what is computed from its trace differs (a term
    edited outside the loop)."""
    xs, w = pt.matrix("xs", shape=(None, 3)), pt.matrix("w", shape=(3, 3))
    h0 = pt.vector("h0", shape=(3,))
    hs = pt.scan(lambda x, h, w: pt.tanh(w @ h + x), sequences=[xs], outputs_info=[h0],
                 non_sequences=[w])
    total = hs.sum() if which == "first" else (hs * hs).sum() + pt.exp(hs[-1]).sum()
    return [xs, w, h0], [total]


def library_graph() -> tuple[list[Input], list[Variable]]:
    """Products and LAPACK helpers (`matmul_into`, `solve_into`, `slogdet`,
    `cholesky_into`) in a loop body and outside: generated code calls them by symbol,
    which a process loading the cached code registers first (numba's `reload_init`)."""
    xs, w = pt.matrix("xs", shape=(None, 3)), pt.matrix("w", shape=(3, 3))
    h0 = pt.vector("h0", shape=(3,))
    spd = w @ w.T + 3 * pt.eye(3)
    hs = pt.scan(lambda x, h, a: pt.tanh(pt.linalg.solve(a, h + x)), sequences=[xs],
                 outputs_info=[h0], non_sequences=[spd])
    total = hs.sum() + pt.linalg.slogdet(spd)[1] + pt.linalg.cholesky(spd).sum()
    return [xs, w, h0], [total, *pt.grad(total, [w, h0])]


def arguments() -> list[np.ndarray[Any, np.dtype[Any]]]:
    rng = np.random.default_rng(3)
    return [rng.normal(size=(6, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)]


def main(which: str) -> None:
    inputs, outputs = library_graph() if which == "library" else shared_loop_graph(which)
    compiled = function(inputs, outputs)
    expected = evaluate(outputs, dict(zip(inputs, arguments())))
    results = compiled(*arguments())
    got: list[Any] = list(results) if len(outputs) > 1 else [results]
    ok = all(np.allclose(r, e, rtol=1e-10) for r, e in zip(got, expected))
    kernels = {}
    for kernel in generate(compiled.graph).kernels:
        dispatcher = getattr(sys.modules[kernel.module_name], f"{kernel.name}_code")
        kernels[kernel.name] = {
            "hits": sum(dispatcher.stats.cache_hits.values()),
            "misses": sum(dispatcher.stats.cache_misses.values()),
        }
    entry = compiled._dispatcher
    print(json.dumps({"ok": ok, "kernels": kernels,
                      "entry": {"hits": sum(entry.stats.cache_hits.values()),
                                "misses": sum(entry.stats.cache_misses.values())}}))


if __name__ == "__main__":
    main(sys.argv[1])
