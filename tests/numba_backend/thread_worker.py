"""A separate process for the BLAS thread tests: record what compiled matrix products and
LAPACK calls set OpenBLAS's thread count to, per size and per `threads` setting.

    python -m tests.numba_backend.thread_worker

The compiled code's setter symbol is pointed at a recording function (which then sets
the count) before anything is compiled, so this runs in a process of its own. Prints
one JSON line: per case, the counts compiled code set, in order, whether the values
match the reference evaluator, and the count after the call.
"""

from __future__ import annotations

import ctypes
import json
from typing import Any

import numpy as np
from llvmlite import binding

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import blas, function

assert blas.openblas_threads is not None, "SciPy's BLAS is not OpenBLAS"
get_threads, set_threads = blas.openblas_threads
set_threads(2)
recorded: list[int] = []


def _record(count: int) -> None:
    recorded.append(count)
    set_threads(count)


_recording_setter = ctypes.CFUNCTYPE(None, ctypes.c_int)(_record)
binding.add_symbol("fgraph_blas_set_threads", ctypes.cast(_recording_setter, ctypes.c_void_p).value or 0)


def case(inputs: list[Variable], output: Variable, values: list[Any], **options: Any) -> dict[str, Any]:
    compiled = function(inputs, output, **options)
    recorded.clear()
    got = compiled(*values)
    counts = list(recorded)
    (expected,) = evaluate(Graph(inputs, [output]), dict(zip(inputs, values)))
    return {"set": counts, "ok": bool(np.allclose(got, expected)), "after": get_threads()}


def main() -> None:
    rng = np.random.default_rng(0)
    a, b, v = pt.matrix("a"), pt.matrix("b"), pt.vector("v")
    tiny = [rng.normal(size=(10, 10)), rng.normal(size=(10, 10))]  # OpenBLAS: one thread
    small = [rng.normal(size=(100, 100)), rng.normal(size=(100, 100))]  # 10^6 multiply-adds
    large = [rng.normal(size=(1024, 1024)), rng.normal(size=(1024, 1024))]  # 2^30
    xs, w = pt.matrix("xs", shape=(None, 600)), pt.matrix("w", shape=(600, 600))
    h0 = pt.vector("h0", shape=(600,))
    hs = pt.scan(lambda x, h, w: pt.tanh(w @ h + x), sequences=[xs], outputs_info=[h0],
                 non_sequences=[w])
    loop = [rng.normal(size=(3, 600)), rng.normal(size=(600, 600)) / 30, rng.normal(size=600)]
    spd = small[0] @ small[0].T + 100 * np.eye(100)
    triangular = [np.tril(tiny[0]) + 10 * np.eye(10), tiny[1]]  # two right-hand sides or more
    root = rng.normal(size=(1024, 1024))
    large_spd = root @ root.T + 1024 * np.eye(1024)  # 2^30: OpenBLAS's count
    report = {
        "tiny": case([a, b], a @ b, tiny),
        "small": case([a, b], a @ b, small),
        "vector": case([a, v], a @ v, [rng.normal(size=(1000, 500)), rng.normal(size=500)]),
        "large": case([a, b], a @ b, large),
        "loop": case([xs, w, h0], hs, loop),
        "cholesky": case([a], pt.linalg.cholesky(a), [spd]),
        "solve_triangular": case([a, b], pt.linalg.solve_triangular(a, b, lower=True), triangular),
        "large cholesky": case([a], pt.linalg.cholesky(a), [large_spd]),
        "small cholesky": case([a], pt.linalg.cholesky(a), [triangular[0] @ triangular[0].T]),
        "triangular vector": case([a, v], pt.linalg.solve_triangular(a, v, lower=True),
                                  [triangular[0], tiny[1][0]]),
        "threads=2": case([a, b], a @ b, small, threads=2),
        "threads=1": case([a, b], a @ b, small, threads=1),
    }
    set_threads(1)  # as OPENBLAS_NUM_THREADS=1 or threadpoolctl would
    report["count one"] = case([a, b], a @ b, small)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
