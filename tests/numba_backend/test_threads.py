"""BLAS and numba threads of compiled calls: products and LAPACK calls below
`blas.THREADED_PRODUCT_MIN` multiply-adds lower OpenBLAS's count to one around the call
(recorded in a process of its own, `thread_worker`), `function(..., threads=n)` holds the counts at most `n`
for the whole call and keeps a lower count the user set, `threads` is checked, and the
values are the reference evaluator's whatever the setting."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numba
import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import CompiledFunction, blas, function
from numba_backend.compiled_function import caller, entry_signature
from numba_backend.threads import blas_threads
from tests.numba_backend.test_cache import REPO_ROOT, worker_environment

needs_openblas = pytest.mark.skipif(
    blas.openblas_threads is None, reason="SciPy's BLAS is not OpenBLAS"
)


@pytest.fixture
def two_blas_threads() -> Iterator[None]:
    """OpenBLAS at two threads (whatever the machine's cores), as it was afterwards."""
    assert blas.openblas_threads is not None
    before = blas.openblas_threads[0]()
    blas.openblas_threads[1](2)
    yield
    blas.openblas_threads[1](before)


def _logistic() -> tuple[list[Variable], list[Variable]]:
    X, y, w = pt.matrix("X"), pt.vector("y"), pt.vector("w")
    z = X @ w
    loss = pt.mean(y * pt.softplus(-z) + (1 - y) * pt.softplus(z))
    return [X, y, w], [loss, pt.grad(loss, w)]


def _logistic_values() -> list[np.ndarray[Any, np.dtype[Any]]]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 100))
    return [X, (rng.uniform(size=3000) < 0.5).astype(np.float64), rng.normal(size=100) / 10]


Seen = tuple[int | None, int, int]
"""During a call: OpenBLAS's thread count, numba's, and the size rule's threshold."""


def _seen_inside(compiled: CompiledFunction[Any]) -> tuple[CompiledFunction[Any], list[Seen]]:
    """`compiled` with its entry point wrapped to record what each call sees inside the
    caller (and `threads`' limits), and the list it records into."""
    seen: list[Seen] = []
    signature = entry_signature(compiled.graph, compiled._constants)
    entry = compiled._dispatcher.overloads[signature].entry_point

    def recording(*arguments: Any) -> Any:
        seen.append((blas_threads(), numba.get_num_threads(), blas.threaded_min.value))
        return entry(*arguments)

    call = caller(compiled.graph, recording, compiled._constants, compiled.single_output,
                  compiled.parallel, compiled.threads)
    return attrs.evolve(compiled, call=call), seen


@pytest.mark.parametrize("threads", [None, 1, 2, 3])
def test_values_do_not_depend_on_threads(threads: int | None) -> None:
    inputs, outputs = _logistic()
    values = _logistic_values()
    got = function(inputs, outputs, threads=threads)(*values)
    expected = evaluate(Graph(inputs, outputs), dict(zip(inputs, values)))
    for result, reference in zip(got, expected):
        np.testing.assert_allclose(result, reference, rtol=1e-10)


@pytest.mark.parametrize(
    ("threads", "error", "message"),
    [
        (0, ValueError, "threads must be at least 1, got 0"),
        (-2, ValueError, "threads must be at least 1, got -2"),
        (1.5, TypeError, "threads must be a positive int or None, got 1.5"),
        (True, TypeError, "threads must be a positive int or None, got True"),
        ("2", TypeError, "threads must be a positive int or None, got '2'"),
    ],
)
def test_threads_is_checked(threads: Any, error: type[Exception], message: str) -> None:
    x = pt.vector("x")
    with pytest.raises(error, match=f"^{message}$"):
        function([x], x * 2, threads=threads)


@needs_openblas
def test_a_call_with_threads_one_runs_blas_on_one_thread(two_blas_threads: None) -> None:
    compiled, seen = _seen_inside(function(*_logistic(), threads=1))
    compiled(*_logistic_values())
    assert seen[0][0] == 1
    assert blas_threads() == 2  # restored after the call


@needs_openblas
def test_a_lower_count_the_user_set_is_kept(two_blas_threads: None) -> None:
    """What `threadpoolctl.threadpool_limits(1)` does: set OpenBLAS's count to one."""
    assert blas.openblas_threads is not None
    blas.openblas_threads[1](1)
    compiled, seen = _seen_inside(function(*_logistic(), threads=2))
    compiled(*_logistic_values())
    assert seen[0][0] == 1 and blas_threads() == 1


@needs_openblas
def test_threads_lifts_the_size_rule_for_the_call_only(two_blas_threads: None) -> None:
    compiled, seen = _seen_inside(function(*_logistic(), threads=2))
    compiled(*_logistic_values())
    assert seen == [(2, numba.get_num_threads(), 0)]
    assert blas.threaded_min.value == blas.THREADED_PRODUCT_MIN


def test_a_call_without_threads_changes_nothing() -> None:
    compiled, seen = _seen_inside(function(*_logistic()))
    compiled(*_logistic_values())
    assert seen == [(blas_threads(), numba.get_num_threads(), blas.THREADED_PRODUCT_MIN)]


@needs_openblas
def test_overlapping_calls_from_several_threads_restore_the_settings(two_blas_threads: None) -> None:
    inputs, outputs = _logistic()
    values = _logistic_values()
    functions = [function(inputs, outputs, threads=threads) for threads in (None, 1, 2, 3)]
    expected = functions[0](*values)
    wrong: list[int] = []

    def calls(compiled: CompiledFunction[Any]) -> None:
        for _ in range(30):
            got = compiled(*values)
            if not all(np.allclose(g, e, rtol=1e-12) for g, e in zip(got, expected)):
                wrong.append(1)

    workers = [threading.Thread(target=calls, args=(f,)) for f in functions * 2]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not wrong
    assert blas_threads() == 2 and blas.threaded_min.value == blas.THREADED_PRODUCT_MIN


def test_a_parallel_call_with_threads_one_runs_numba_on_one_thread() -> None:
    x = pt.vector("x")
    compiled, seen = _seen_inside(function([x], pt.exp(x) * 2, parallel=True, threads=1))
    before = numba.get_num_threads()
    values = np.linspace(0, 1, 100_000)
    np.testing.assert_allclose(compiled(values), np.exp(values) * 2, rtol=1e-14)
    assert seen[0][1] == 1 and numba.get_num_threads() == before


def test_a_pickled_function_keeps_its_threads() -> None:
    x = pt.vector("x")
    copy: CompiledFunction[Any] = pickle.loads(pickle.dumps(function([x], x * 2, threads=1)))
    assert copy.threads == 1
    np.testing.assert_array_equal(copy(np.arange(3.0)), [0.0, 2.0, 4.0])


@needs_openblas
@pytest.mark.slow
def test_products_and_lapack_calls_below_the_threshold_run_on_one_thread(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.numba_backend.thread_worker"], cwd=REPO_ROOT,
        env=worker_environment(tmp_path / "cache"), capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report: dict[str, dict[str, Any]] = json.loads(completed.stdout.strip().splitlines()[-1])
    assert all(case["ok"] for case in report.values()), report
    sets = {name: case["set"] for name, case in report.items()}
    assert sets["tiny"] == []  # OpenBLAS runs it on one thread itself
    assert sets["small"] == [1, 2] and sets["vector"] == [1, 2]  # lowered, then restored
    assert sets["large"] == []  # 2^30 multiply-adds: OpenBLAS's count
    assert sets["loop"] == [1, 2] * 3  # per step of the loop
    assert sets["cholesky"] == [1, 2] and sets["solve_triangular"] == [1, 2]  # LAPACK
    assert sets["large cholesky"] == []
    assert sets["small cholesky"] == [] and sets["triangular vector"] == []  # OpenBLAS: one
    assert sets["threads=2"] == [] and sets["threads=1"] == []
    assert sets["count one"] == [] and report["count one"]["after"] == 1
    assert all(report[name]["after"] == 2 for name in ("small", "loop", "threads=1"))
