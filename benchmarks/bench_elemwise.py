"""Run time of one fused elementwise expression reduced to a scalar, fgraph against peers.

    sum(exp(-x) * sin(3x) + log1p(x * x) - sqrt(x) / (1 + x))    over x: 10**7 float64

Peers: fgraph (`function(..., mode="fast_run")`, serial and with `parallel=True`), NumPy, a hand-written serial numba loop
(the target a fused loop should reach), PyTensor's numba mode and JAX's jit (x64, input
already on the device). Each runs once to compile and warm up, then `--repeats` timed
runs; the script prints the median, its ratio to fgraph's median (above 1: slower than
fgraph), the first-call time (compile + one run) and a check of the value against NumPy.

    python benchmarks/bench_elemwise.py [--size 10000000] [--repeats 7]

A peer that is not installed, or that fails to build (for instance an op without a numba
kernel yet), is reported with the reason and skipped.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.peers import Peer, Run, measure, report  # noqa: E402

Array = np.ndarray[Any, np.dtype[np.float64]]


def fgraph_peer(data: Array, parallel: bool = False) -> Run:
    import ops as pt
    from numba_backend import function

    x = pt.vector("x")
    total = (pt.exp(-x) * pt.sin(3 * x) + pt.log1p(x * x) - pt.sqrt(x) / (1 + x)).sum()
    compiled = function([x], total, mode="fast_run", parallel=parallel)
    return lambda: compiled(data)


def numpy_peer(data: Array) -> Run:
    def run() -> float:
        return float(
            (np.exp(-data) * np.sin(3 * data) + np.log1p(data * data) - np.sqrt(data) / (1 + data))
            .sum()
        )

    return run


def numba_loop_peer(data: Array) -> Run:
    import numba

    def loop(values: Array) -> float:
        total = 0.0
        for index in range(values.shape[0]):
            v = values[index]
            total += math.exp(-v) * math.sin(3 * v) + math.log1p(v * v) - math.sqrt(v) / (1 + v)
        return total

    compiled = numba.njit(loop)
    return lambda: compiled(data)


def pytensor_peer(data: Array) -> Run:
    import pytensor
    import pytensor.tensor as ptt

    x = ptt.vector("x", dtype="float64")
    total = (ptt.exp(-x) * ptt.sin(3 * x) + ptt.log1p(x * x) - ptt.sqrt(x) / (1 + x)).sum()
    compiled = pytensor.function([x], total, mode="NUMBA")
    return lambda: compiled(data)


def jax_peer(data: Array) -> Run:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    @jax.jit
    def total(x: Any) -> Any:
        return (jnp.exp(-x) * jnp.sin(3 * x) + jnp.log1p(x * x) - jnp.sqrt(x) / (1 + x)).sum()

    on_device = jax.device_put(data)
    return lambda: total(on_device).block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10**7)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    data: Array = np.random.default_rng(0).uniform(0.0, 4.0, options.size)
    peers = [
        Peer("fgraph", lambda: fgraph_peer(data)),
        Peer("fgraph parallel=True", lambda: fgraph_peer(data, parallel=True)),
        Peer("numpy", lambda: numpy_peer(data)),
        Peer("numba loop (serial)", lambda: numba_loop_peer(data)),
        Peer("pytensor numba", lambda: pytensor_peer(data)),
        Peer("jax jit", lambda: jax_peer(data)),
    ]
    print(f"elementwise expression summed over {options.size} float64, "
          f"median of {options.repeats} runs")
    results = [measure(peer, options.repeats) for peer in peers]
    report(results, numpy_peer(data)(), rtol=1e-8)


if __name__ == "__main__":
    main()
