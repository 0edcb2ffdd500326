"""Random numbers, fgraph against peers: run time and first-call (compile) time.

    R1  10^6 normal draws and a transform (exp(x / 2) summed), compiled
    R2  random-walk Metropolis for a 10-dimensional Gaussian, 10^4 steps in one loop

Peers: NumPy's Generator (R1), numba written by hand (R2: the same loop over NumPy's
Generator, which numba supports), JAX (`jax.random` under `jit`; R2 with `lax.scan`),
PyTensor 3.0.7 in numba mode (R1). Caches start empty unless `--warm`. fgraph's numbers
are NumPy's own for the same seed (the check column compares with NumPy's where the
peer draws the same stream: NumPy and hand-written numba; JAX's generator differs).

    python benchmarks/bench_random.py [--repeats 21] [--warm] [--only R1,R2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

DRAWS = 10**6
DIMENSION, STEPS, STEP_SIZE = 10, 10_000, 0.5


def precision() -> np.ndarray:
    covariance = np.eye(DIMENSION) + 0.5 * (np.eye(DIMENSION, k=1) + np.eye(DIMENSION, k=-1))
    return np.linalg.inv(covariance)


# -- R1 ---------------------------------------------------------------------------------------
def r1_fgraph() -> Callable[[], Any]:
    import ops as pt
    from numba_backend import function

    rng = pt.random.state("rng")
    _, x = pt.random.normal(rng, 0.0, 1.0, size=(DRAWS,))
    compiled = function([rng], pt.sum(pt.exp(x / 2)))
    seed = pt.random.seed(0)
    return lambda: compiled(seed)


def r1_numpy() -> Callable[[], Any]:
    def run() -> Any:
        x = np.random.default_rng(0).normal(0.0, 1.0, size=DRAWS)
        return np.exp(x / 2).sum()

    return run


def r1_jax() -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    compiled = jax.jit(lambda key: jnp.exp(jax.random.normal(key, (DRAWS,)) / 2).sum())
    key = jax.random.key(0)
    return lambda: compiled(key).block_until_ready()


def r1_pytensor() -> Callable[[], Any]:
    import pytensor
    import pytensor.tensor as ptt

    rng = pytensor.shared(np.random.default_rng(0))
    x = ptt.random.normal(0.0, 1.0, size=(DRAWS,), rng=rng)
    compiled = pytensor.function([], ptt.exp(x / 2).sum(), mode="NUMBA")
    return compiled


# -- R2 ---------------------------------------------------------------------------------------
def r2_fgraph() -> Callable[[], Any]:
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    import metropolis

    import ops as pt
    from numba_backend import function

    rng, start, outputs = metropolis.sampler(STEPS)
    compiled = function([rng, start], outputs[1:])
    seed = pt.random.seed(0)
    return lambda: compiled(seed, np.zeros(DIMENSION))


def r2_numba() -> Callable[[], Any]:
    import numba

    @numba.njit
    def run(generator: Any, start: np.ndarray, matrix: np.ndarray) -> Any:
        x = start.copy()
        logp = -0.5 * x @ (matrix @ x)
        chain = np.empty((STEPS, DIMENSION))
        accepted = 0.0
        for t in range(STEPS):
            proposal = x + STEP_SIZE * generator.standard_normal(DIMENSION)
            u = generator.random()
            proposed = -0.5 * proposal @ (matrix @ proposal)
            if np.log(u) < proposed - logp:
                x, logp = proposal, proposed
                accepted += 1.0
            chain[t] = x
        return chain, accepted / STEPS

    matrix = precision()
    return lambda: run(np.random.default_rng(0), np.zeros(DIMENSION), matrix)


def r2_jax() -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    matrix = jnp.asarray(precision())

    def log_density(x: Any) -> Any:
        return -0.5 * x @ (matrix @ x)

    def step(carry: Any, key: Any) -> Any:
        x, logp = carry
        noise_key, accept_key = jax.random.split(key)
        proposal = x + STEP_SIZE * jax.random.normal(noise_key, (DIMENSION,))
        proposed = log_density(proposal)
        accept = jnp.log(jax.random.uniform(accept_key)) < proposed - logp
        new = (jnp.where(accept, proposal, x), jnp.where(accept, proposed, logp))
        return new, (new[0], accept.astype(jnp.float64))

    @jax.jit
    def run(key: Any, start: Any) -> Any:
        keys = jax.random.split(key, STEPS)
        _, (chain, accepted) = jax.lax.scan(step, (start, log_density(start)), keys)
        return chain, accepted.mean()

    key, start = jax.random.key(0), jnp.zeros(DIMENSION)
    return lambda: [v.block_until_ready() for v in run(key, start)]


WORKLOADS: dict[str, dict[str, Callable[[], Callable[[], Any]]]] = {
    "R1": {"fgraph": r1_fgraph, "numpy Generator": r1_numpy, "jax jit": r1_jax,
           "pytensor numba": r1_pytensor},
    "R2": {"fgraph": r2_fgraph, "numba (hand-written)": r2_numba, "jax lax.scan": r2_jax},
}
SAME_STREAM = {"numpy Generator", "numba (hand-written)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--warm", action="store_true", help="keep the compile caches")
    parser.add_argument("--only", default="R1,R2")
    options = parser.parse_args()
    if not options.warm:
        folder = tempfile.mkdtemp(prefix="bench_random_")
        os.environ["FGRAPH_CACHE_DIR"] = os.path.join(folder, "fgraph")
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(folder, "numba")
        os.environ["PYTENSOR_FLAGS"] = f"base_compiledir={os.path.join(folder, 'pytensor')}"
    from benchmarks.peers import Peer, measure

    for name in options.only.split(","):
        print(f"\n{name}: median of {options.repeats} runs")
        print(f"{'peer':<24}{'median':>12}{'vs fgraph':>11}{'first call s':>14}  same numbers")
        results = [measure(Peer(peer, build), options.repeats) for peer, build in WORKLOADS[name].items()]
        reference = next((r for r in results if r.name == "fgraph" and r.failure is None), None)
        for result in results:
            if result.failure is not None:
                print(f"{result.name:<24}{result.failure}")
                continue
            unit, scale = ("us", 1e6) if result.median < 1e-3 else ("ms", 1e3)
            ratio = "-" if reference is None else f"{result.median / reference.median:.2f}x"
            check = "-"
            if reference is not None and result.name in SAME_STREAM:
                got = np.asarray(result.value[0] if isinstance(result.value, tuple) else result.value)
                want = np.asarray(reference.value[0] if isinstance(reference.value, (tuple, list)) else reference.value)
                check = "yes" if np.allclose(got, want, rtol=1e-10) else "NO"
            print(f"{result.name:<24}{result.median * scale:>9.2f} {unit}{ratio:>11}"
                  f"{result.build_seconds:>14.2f}  {check}")


if __name__ == "__main__":
    main()
