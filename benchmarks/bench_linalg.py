"""Linear algebra and special functions, fgraph against peers: run time and first-call
(compile) time.

    L1  log-density of a 200-dimensional multivariate normal (Cholesky factor, a
        triangular solve, the log of the factor's diagonal) and its gradient with respect
        to the mean and the covariance
    L2  gammaln(x) + digamma(x) over 10^7 values

Peers: NumPy/SciPy written by hand (L1: the gradient by its closed form), JAX (`jit`,
`value_and_grad`), PyTensor 3.0.7 in numba mode. Caches start empty (fgraph's, numba's
and PyTensor's compile directories are temporary) unless `--warm`, so first-call times
are cold compiles. The check column compares values with fgraph's: for L1 the
log-density and its gradient in the mean (gradients in the covariance follow different
conventions: fgraph and PyTensor differentiate the lower triangle Cholesky reads, JAX
the symmetric matrix).

    python benchmarks/bench_linalg.py [--repeats 21] [--warm] [--only L1,L2]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

Array = np.ndarray[Any, np.dtype[np.float64]]
DIMENSION = 200
SPECIAL_SIZE = 10**7


def mvn_problem() -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(0)
    root = rng.normal(size=(DIMENSION, DIMENSION))
    covariance = root @ root.T / DIMENSION + np.eye(DIMENSION)
    return rng.normal(size=DIMENSION), rng.normal(size=DIMENSION), covariance


def special_problem() -> Array:
    return np.random.default_rng(1).uniform(0.1, 50.0, size=SPECIAL_SIZE)


# -- L1 ---------------------------------------------------------------------------------------
def l1_graph(
    normaliser: float = DIMENSION * math.log(2 * math.pi), robust: bool = False
) -> tuple[list[Any], list[Any]]:
    """L1's inputs and outputs; `compile_models` edits it: another `normaliser`, or
    `robust`, the quadratic form z.z replaced by sum(log1p(z**2))."""
    import ops as pt

    y, mu, cov = pt.vector("y", shape=(DIMENSION,)), pt.vector("mu", shape=(DIMENSION,)), pt.matrix(
        "cov", shape=(DIMENSION, DIMENSION))
    factor = pt.linalg.cholesky(cov)
    z = pt.linalg.solve_triangular(factor, y - mu, lower=True)
    quadratic = pt.sum(pt.log1p(z * z)) if robust else pt.sum(z * z)
    logp = -0.5 * (normaliser + quadratic) - pt.sum(pt.log(pt.linalg.diagonal(factor)))
    return [y, mu, cov], [logp, *pt.grad(logp, [mu, cov])]


def l1_fgraph() -> Callable[[], Any]:
    from numba_backend import function

    compiled = function(*l1_graph())
    problem = mvn_problem()
    return lambda: compiled(*problem)


def l1_numpy() -> Callable[[], Any]:
    import scipy.linalg

    y, mu, cov = mvn_problem()

    def run() -> Any:
        factor = scipy.linalg.cholesky(cov, lower=True)
        z = scipy.linalg.solve_triangular(factor, y - mu, lower=True)
        logp = -0.5 * (DIMENSION * math.log(2 * math.pi) + z @ z) - np.log(np.diag(factor)).sum()
        alpha = scipy.linalg.solve_triangular(factor, z, lower=True, trans=1)  # cov^-1 (y - mu)
        inverse = scipy.linalg.cho_solve((factor, True), np.eye(DIMENSION))
        grad_cov = 0.5 * (np.outer(alpha, alpha) - inverse)
        return logp, alpha, grad_cov

    return run


def l1_jax() -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    jax.config.update("jax_enable_x64", True)

    def logp(mu: Any, cov: Any, y: Any) -> Any:
        factor = jnp.linalg.cholesky(cov)
        z = jsl.solve_triangular(factor, y - mu, lower=True)
        return -0.5 * (DIMENSION * math.log(2 * math.pi) + z @ z) - jnp.log(jnp.diag(factor)).sum()

    compiled = jax.jit(jax.value_and_grad(logp, argnums=(0, 1)))
    y, mu, cov = (jax.device_put(a) for a in mvn_problem())

    def run() -> Any:
        value, (grad_mu, grad_cov) = compiled(mu, cov, y)
        return value.block_until_ready(), grad_mu.block_until_ready(), grad_cov.block_until_ready()

    return run


def l1_pytensor() -> Callable[[], Any]:
    import pytensor
    import pytensor.tensor as ptt
    from pytensor.tensor.linalg import cholesky, solve_triangular

    y, mu, cov = ptt.dvector("y"), ptt.dvector("mu"), ptt.dmatrix("cov")
    factor = cholesky(cov, lower=True)
    z = solve_triangular(factor, y - mu, lower=True)
    logp = -0.5 * (DIMENSION * math.log(2 * math.pi) + (z * z).sum()) - ptt.log(
        ptt.diagonal(factor)).sum()
    compiled = pytensor.function([y, mu, cov], [logp, *pytensor.grad(logp, [mu, cov])], mode="NUMBA")
    problem = mvn_problem()
    return lambda: compiled(*problem)


# -- L2 ---------------------------------------------------------------------------------------
def l2_fgraph() -> Callable[[], Any]:
    import ops as pt
    from numba_backend import function

    x = pt.vector("x")
    compiled = function([x], pt.gammaln(x) + pt.digamma(x))
    values = special_problem()
    return lambda: compiled(values)


def l2_scipy() -> Callable[[], Any]:
    import scipy.special

    values = special_problem()
    return lambda: scipy.special.gammaln(values) + scipy.special.digamma(values)


def l2_jax() -> Callable[[], Any]:
    import jax
    import jax.scipy.special as jss

    jax.config.update("jax_enable_x64", True)
    compiled = jax.jit(lambda x: jss.gammaln(x) + jss.digamma(x))
    values = jax.device_put(special_problem())
    return lambda: compiled(values).block_until_ready()


def l2_pytensor() -> Callable[[], Any]:
    import pytensor
    import pytensor.tensor as ptt

    x = ptt.dvector("x")
    compiled = pytensor.function([x], ptt.gammaln(x) + ptt.psi(x), mode="NUMBA")
    values = special_problem()
    return lambda: compiled(values)


WORKLOADS: dict[str, dict[str, Callable[[], Callable[[], Any]]]] = {
    "L1": {"fgraph": l1_fgraph, "numpy/scipy (by hand)": l1_numpy, "jax jit": l1_jax,
           "pytensor numba": l1_pytensor},
    "L2": {"fgraph": l2_fgraph, "scipy.special": l2_scipy, "jax jit": l2_jax,
           "pytensor numba": l2_pytensor},
}


def _checked(value: Any, name: str) -> list[Array]:
    """What the check column compares: for L1 the log-density and its gradient in the
    mean (the covariance gradients follow different conventions), else everything."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return [np.asarray(v, dtype=float) for v in (values[:2] if name == "L1" else values)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--warm", action="store_true", help="keep the compile caches")
    parser.add_argument("--only", default="L1,L2")
    options = parser.parse_args()
    if not options.warm:
        folder = tempfile.mkdtemp(prefix="bench_linalg_")
        os.environ["FGRAPH_CACHE_DIR"] = os.path.join(folder, "fgraph")
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(folder, "numba")
        os.environ["PYTENSOR_FLAGS"] = f"base_compiledir={os.path.join(folder, 'pytensor')}"
    from benchmarks.peers import Peer, measure

    for name in options.only.split(","):
        repeats = options.repeats if name == "L1" else max(5, options.repeats // 4)
        print(f"\n{name}: median of {repeats} runs")
        print(f"{'peer':<24}{'median':>12}{'vs fgraph':>11}{'first call s':>14}  check")
        results = [measure(Peer(peer, build), repeats) for peer, build in WORKLOADS[name].items()]
        reference = next((r for r in results if r.name == "fgraph" and r.failure is None), None)
        for result in results:
            if result.failure is not None:
                print(f"{result.name:<24}{result.failure}")
                continue
            unit, scale = ("us", 1e6) if result.median < 1e-3 else ("ms", 1e3)
            ratio = "-" if reference is None else f"{result.median / reference.median:.2f}x"
            check = "-"
            if reference is not None:
                got, want = _checked(result.value, name), _checked(reference.value, name)
                same = len(got) == len(want) and all(
                    np.allclose(g, w, rtol=1e-8, atol=1e-10) for g, w in zip(got, want))
                check = "ok" if same else "DIFFERS"
            print(f"{result.name:<24}{result.median * scale:>9.2f} {unit}{ratio:>11}"
                  f"{result.build_seconds:>14.2f}  {check}")


if __name__ == "__main__":
    main()
