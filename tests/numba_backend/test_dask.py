"""`dask_function` on a real `distributed.LocalCluster` with two worker processes: the
logistic-regression loss and gradient over 200 000 x 100 rows in 8 chunks equal the
single-process result; means and logsumexps combine exactly; chunked outputs stay Dask
arrays; an unsplittable graph is refused naming its node; a worker killed mid-run is
replaced and the answer is unchanged."""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402

import ops as pt  # noqa: E402
from fgraph import Variable  # noqa: E402
from numba_backend import function  # noqa: E402
from numba_backend.dask import UnsplittableGraphError, dask_function  # noqa: E402

Array = np.ndarray[Any, np.dtype[Any]]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def logistic(X: Variable, y: Variable, w: Variable) -> list[Variable]:
    logits = X @ w
    loss = pt.sum(pt.softplus(logits) - y * logits)
    return [loss, pt.grad(loss, w)]


@pytest.mark.slow
def test_logistic_regression_over_200_000_rows_in_8_chunks(client: Any) -> None:
    X, y, w = pt.matrix("X"), pt.vector("y"), pt.vector("w")
    outputs = logistic(X, y, w)
    rng = da.random.default_rng(0)
    X_chunks = rng.normal(size=(200_000, 100), chunks=(25_000, 100))
    y_chunks = (rng.random(size=200_000, chunks=25_000) < 0.5).astype(np.float64)
    weights = np.random.default_rng(1).normal(size=100) * 0.1
    loss, gradient = dask.compute(*dask_function([X, y, w], outputs, chunked={X: 0, y: 0})(
        X_chunks, y_chunks, weights))
    X_value, y_value = dask.compute(X_chunks, y_chunks)
    expected_loss, expected_gradient = function([X, y, w], outputs)(X_value, y_value, weights)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-10)
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-10)


def test_means_logsumexps_and_chunked_outputs(client: Any) -> None:
    X, w = pt.matrix("X"), pt.vector("w")
    logits = X @ w
    outputs = [pt.mean(X, axis=0), pt.logsumexp(logits), pt.max(logits), pt.var(logits),
               pt.sigmoid(logits), X * 2]
    values = np.random.default_rng(2).normal(size=(1000, 4)) * 10
    weights = np.array([3.0, -1.0, 0.5, 2.0])
    compiled = dask_function([X, w], outputs, chunked={X: 0})
    results = compiled(da.from_array(values, chunks=(128, 4)), weights)
    assert all(isinstance(result, da.Array) for result in results)
    assert results[4].chunks[0] == da.from_array(values, chunks=(128, 4)).chunks[0]
    got = dask.compute(*results)
    expected = function([X, w], outputs)(values, weights)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-12)


COLUMNS = {
    "one column": lambda X: pt.sum(X[:, 0] * X[:, 1]),
    "a slice of columns": lambda X: pt.tanh(X[:, 1:]),
    "a new axis": lambda X: (X[:, None] * X[:, :, None]).sum(axis=0),
    "chosen columns": lambda X: pt.sum(X[:, [0, 2]], axis=0),
    "a column mask": lambda X: X[:, np.array([True, False, True, False])] ** 2,
    "transposed columns": lambda X: pt.sum(X.T[[3, 0]], axis=1),
    "a column and its row count": lambda X: X[:, 2].sum() / X.shape[0],
}


@pytest.mark.parametrize("build", COLUMNS.values(), ids=COLUMNS.keys())
def test_indexing_across_the_data_axis_is_row_wise(client: Any, build: Any) -> None:
    X = pt.matrix("X")
    output = build(X)
    values = np.random.default_rng(3).normal(size=(500, 4))
    (got,) = dask.compute(*dask_function([X], [output], chunked={X: 0})(
        da.from_array(values, chunks=(128, 4))))
    (expected,) = function([X], [output])(values)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda X: pt.cumsum(X, axis=0), "CumSum"),
        (lambda X: pt.sort(X, axis=0), "data axis"),
        (lambda X: X[::-1], "Subtensor"),
        (lambda X: X[1:, 0], "only `:` keeps the rows"),
        (lambda X: X[[0, 2]], "only `:` keeps the rows"),
        (lambda X: X[:, 0][X[:, 1].astype("int64")], "index depends on the chunked rows"),
        (lambda X: X.T @ pt.ones((1000, 3)), "MatMul"),
    ],
)
def test_unsplittable_graphs_are_refused_naming_the_node(build: Any, message: str) -> None:
    X = pt.matrix("X")
    with pytest.raises(UnsplittableGraphError, match=message):
        dask_function([X], [build(X)], chunked={X: 0})


def test_arguments_are_checked() -> None:
    X, y = pt.matrix("X"), pt.vector("y")
    compiled = dask_function([X, y], [pt.sum(X @ pt.ones(3) * y)], chunked={X: 0, y: 0})
    with pytest.raises(ValueError, match="rows along its data axis"):
        compiled(da.zeros((10, 3), chunks=5), da.zeros(9, chunks=5))
    with pytest.raises(ValueError, match="not an input"):
        dask_function([X], [pt.sum(X)], chunked={y: 0})


def test_chunk_functions_run_on_one_thread_also_on_the_workers() -> None:
    """Dask runs chunks in parallel: with two worker processes per machine, a second
    BLAS thread in one would wait for the core the other holds."""
    X, y, w = pt.matrix("X"), pt.vector("y"), pt.vector("w")
    compiled = dask_function([X, y, w], logistic(X, y, w), chunked={X: 0, y: 0})
    functions = [level[0] for level in compiled.level_functions]
    assert compiled.final is not None and functions
    for each in [*functions, compiled.final]:
        assert each.threads == 1
        assert pickle.loads(pickle.dumps(each)).threads == 1  # as a worker receives it


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced(client: Any) -> None:
    X, w = pt.matrix("X"), pt.vector("w")
    # Heavy enough per chunk that the kill lands while tasks are running.
    outputs = [pt.sum(pt.log1p(pt.exp(pt.sin(X @ w) * pt.cos(X @ w))))]
    chunked = client.persist(da.random.default_rng(3).normal(size=(400_000, 50), chunks=(10_000, 50)))
    weights = np.random.default_rng(4).normal(size=50)
    compiled = dask_function([X, w], outputs, chunked={X: 0})
    (expected,) = function([X, w], outputs)(chunked.compute(), weights)
    future = client.compute(compiled(chunked, weights)[0])
    victim = sorted(client.scheduler_info()["workers"])[0]

    def kill() -> None:
        time.sleep(0.05)
        try:
            client.run(os._exit, 1, workers=[victim])
        except OSError:  # CommClosedError: the worker dies before it can answer
            pass

    killer = threading.Thread(target=kill)
    killer.start()
    np.testing.assert_allclose(future.result(timeout=300), expected, rtol=1e-10)
    killer.join()
    assert victim not in client.scheduler_info()["workers"]  # it did die mid-run
