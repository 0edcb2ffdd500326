"""Hamiltonian Monte Carlo written in your own numba code, calling fgraph's log-density
and gradient with no Python in between.

The target is a 10-dimensional Gaussian with correlated coordinates and a known mean.
fgraph builds its log-density and derives the gradient; `f.numba_function` is an njit
function computing both, which the sampler below (plain `@numba.njit` code: momenta,
leapfrog steps, the accept test) calls at every leapfrog step. The script prints the
time of one call from inside the sampler against one call of `f(x)` from Python, and
checks the sample mean against the target's mean.

    python examples/hmc_sampler.py
"""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np

import ops as pt
from numba_backend import function

DIMENSION, SAMPLES, LEAPFROG_STEPS, STEP_SIZE = 10, 2000, 10, 0.2
Array = np.ndarray[Any, np.dtype[Any]]


def target() -> tuple[Array, Array]:
    """The mean and the precision (inverse covariance: unit variances, correlation 0.5
    between neighbouring coordinates)."""
    covariance = np.eye(DIMENSION) + 0.5 * (np.eye(DIMENSION, k=1) + np.eye(DIMENSION, k=-1))
    return np.linspace(-1.0, 1.0, DIMENSION), np.linalg.inv(covariance)


@numba.njit
def hmc(logp_and_grad: Any, start: Array, samples: int, seed: int) -> tuple[Array, float]:
    """A chain of `samples` HMC draws from the density `logp_and_grad` computes (with its
    gradient), and the acceptance rate: any njit function of a vector returning the
    log-density and its gradient will do."""
    np.random.seed(seed)
    chain = np.empty((samples, start.shape[0]))
    x = start.copy()
    logp, grad = logp_and_grad(x)
    accepted = 0
    for sample in range(samples):
        momentum = np.random.standard_normal(x.shape[0])
        energy = -logp + 0.5 * (momentum @ momentum)
        proposal, proposal_logp, proposal_grad = x.copy(), logp, grad
        momentum = momentum + 0.5 * STEP_SIZE * proposal_grad
        for step in range(LEAPFROG_STEPS):
            proposal = proposal + STEP_SIZE * momentum
            proposal_logp, proposal_grad = logp_and_grad(proposal)
            if step < LEAPFROG_STEPS - 1:
                momentum = momentum + STEP_SIZE * proposal_grad
        momentum = momentum + 0.5 * STEP_SIZE * proposal_grad
        proposal_energy = -proposal_logp + 0.5 * (momentum @ momentum)
        if np.log(np.random.uniform(0.0, 1.0)) < energy - proposal_energy:
            x, logp, grad = proposal, proposal_logp, proposal_grad
            accepted += 1
        chain[sample] = x
    return chain, accepted / samples


@numba.njit
def repeated_calls(logp_and_grad: Any, x: Array, calls: int) -> float:
    """`calls` calls at points that differ (so none can be skipped): the call's own cost."""
    total = 0.0
    for call in range(calls):
        x[0] = call * 1e-9
        total += logp_and_grad(x)[0]
    return total


def main() -> None:
    mean, precision = target()
    x = pt.vector("x", shape=(DIMENSION,))
    centered = x - pt.constant(mean)
    logp = -0.5 * pt.sum(centered * (pt.constant(precision) @ centered))
    f = function([x], [logp, pt.grad(logp, x)])
    logp_and_grad = f.numba_function  # an njit function: (logp, grad) of a vector

    start = np.zeros(DIMENSION)
    inside_logp, inside_grad = logp_and_grad(start)
    python_logp, python_grad = f(start)
    assert np.isclose(inside_logp, python_logp) and np.allclose(inside_grad, python_grad)

    hmc(logp_and_grad, start, 10, 0)  # compile the sampler first
    began = time.perf_counter()
    chain, acceptance = hmc(logp_and_grad, start, SAMPLES, 1)
    per_step = (time.perf_counter() - began) / (SAMPLES * LEAPFROG_STEPS)
    calls = 20_000
    repeated_calls(logp_and_grad, start.copy(), 10)
    began = time.perf_counter()
    repeated_calls(logp_and_grad, start.copy(), calls)
    inside = (time.perf_counter() - began) / calls
    began = time.perf_counter()
    for _ in range(calls):
        f(start)
    from_python = (time.perf_counter() - began) / calls
    print(f"per call of the log-density and gradient: {inside * 1e6:.2f} us from numba, "
          f"{from_python * 1e6:.2f} us as f(x) from Python; {per_step * 1e6:.2f} us per "
          "leapfrog step of the whole sampler")

    kept = chain[SAMPLES // 10:]
    error = np.abs(kept.mean(axis=0) - mean).max()
    print(f"{SAMPLES} draws, acceptance {acceptance:.2f}; largest error of the sample mean "
          f"{error:.3f} (sample standard deviations {kept.std(axis=0).min():.2f} to "
          f"{kept.std(axis=0).max():.2f}, target 1)")
    assert error < 0.25, "the sample mean is off the target's mean"
    print("sample mean matches the target's mean")


if __name__ == "__main__":
    main()
