"""Run time of a logistic-regression loss and its gradient, fgraph against peers.

    z = X @ w;  loss = mean(y * softplus(-z) + (1 - y) * softplus(z));  grad = d loss / d w

with X: 20000 x 100, y: 20000 (0/1 labels), w: 100, all float64. fgraph and PyTensor
derive the gradient (`grad`), JAX with `value_and_grad`; NumPy and the numba function are
written by hand (dloss/dz = (sigmoid(z) - y) / n, grad = X.T @ dloss/dz; the matrix
products go to BLAS in both). Each peer runs once to compile and warm up, then
`--repeats` timed runs; the script prints the median, its ratio to fgraph's median (above
1: slower than fgraph), the first-call time and a check of both values against NumPy.

    python benchmarks/bench_logistic.py [--rows 20000] [--columns 100] [--repeats 7] [--busy]

`--busy` times fgraph, the hand-written numba function and JAX quiet and then with
another process spinning on one core, and prints both medians per peer.

A peer that is not installed, or that fails to build (for instance an op without a numba
kernel yet), is reported with the reason and skipped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.peers import (  # noqa: E402
    BUSY_PEERS, Peer, Run, agree, measure, measure_quiet_and_busy, report, report_quiet_and_busy,
)

Array = np.ndarray[Any, np.dtype[np.float64]]
Problem = tuple[Array, Array, Array]


def fgraph_graph() -> tuple[list[Any], list[Any]]:
    """The model's inputs (X, y, w) and outputs (the loss, its gradient in w)."""
    import ops as pt

    X, y, w = pt.matrix("X"), pt.vector("y"), pt.vector("w")
    z = pt.matmul(X, w)
    loss = pt.mean(y * pt.softplus(-z) + (1 - y) * pt.softplus(z))
    return [X, y, w], [loss, pt.grad(loss, w)]


def fgraph_peer(problem: Problem) -> Run:
    from numba_backend import function

    compiled = function(*fgraph_graph(), mode="fast_run")
    return lambda: compiled(*problem)


def numpy_peer(problem: Problem) -> Run:
    X, y, w = problem

    def run() -> tuple[float, Array]:
        z = X @ w
        loss = float(np.mean(y * np.logaddexp(0.0, -z) + (1 - y) * np.logaddexp(0.0, z)))
        slope = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
        return loss, X.T @ slope

    return run


def numba_peer(problem: Problem) -> Run:
    import numba

    def loss_and_grad(X: Array, y: Array, w: Array) -> tuple[float, Array]:
        z = X @ w
        n = z.shape[0]
        total = 0.0
        slope = np.empty(n)
        for i in range(n):
            zi = z[i]
            softplus_z = max(zi, 0.0) + np.log1p(np.exp(-abs(zi)))  # log(1 + e^z), stable
            total += y[i] * (softplus_z - zi) + (1 - y[i]) * softplus_z
            slope[i] = (1.0 / (1.0 + np.exp(-zi)) - y[i]) / n
        return total / n, X.T @ slope

    compiled = numba.njit(loss_and_grad)
    return lambda: compiled(*problem)


def pytensor_peer(problem: Problem) -> Run:
    import pytensor
    import pytensor.tensor as ptt

    X, y, w = ptt.matrix("X", dtype="float64"), ptt.vector("y", dtype="float64"), ptt.vector(
        "w", dtype="float64"
    )
    z = X @ w
    loss = ptt.mean(y * ptt.softplus(-z) + (1 - y) * ptt.softplus(z))
    compiled = pytensor.function([X, y, w], [loss, pytensor.grad(loss, w)], mode="NUMBA")
    return lambda: compiled(*problem)


def jax_peer(problem: Problem) -> Run:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(w: Any, X: Any, y: Any) -> Any:
        z = X @ w
        return jnp.mean(y * jax.nn.softplus(-z) + (1 - y) * jax.nn.softplus(z))

    compiled = jax.jit(jax.value_and_grad(loss))
    X, y, w = (jax.device_put(array) for array in problem)

    def run() -> Any:
        value, gradient = compiled(w, X, y)
        return value.block_until_ready(), gradient.block_until_ready()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--busy", action="store_true", help="also time with one core busy")
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(options.rows, options.columns))
    w = rng.normal(size=options.columns) / np.sqrt(options.columns)
    y = (rng.uniform(size=options.rows) < 1 / (1 + np.exp(-X @ w))).astype(np.float64)
    problem = (X, y, w)
    peers = [
        Peer("fgraph", lambda: fgraph_peer(problem)),
        Peer("numpy", lambda: numpy_peer(problem)),
        Peer("numba (hand-written)", lambda: numba_peer(problem)),
        Peer("pytensor numba", lambda: pytensor_peer(problem)),
        Peer("jax jit", lambda: jax_peer(problem)),
    ]
    print(f"logistic loss and gradient, X {options.rows}x{options.columns}, "
          f"median of {options.repeats} runs")
    reference = numpy_peer(problem)()
    if options.busy:
        pairs = [measure_quiet_and_busy(peer, options.repeats)
                 for peer in peers if peer.name in BUSY_PEERS]
        report_quiet_and_busy(pairs, lambda value: agree(value, reference, rtol=1e-8))
        return
    results = [measure(peer, options.repeats) for peer in peers]
    report(results, reference, rtol=1e-8)


if __name__ == "__main__":
    main()
