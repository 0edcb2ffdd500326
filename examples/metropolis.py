"""A random-walk Metropolis sampler inside one `pt.scan`, with the generator state as an
ordinary loop carry.

The target is a 10-dimensional Gaussian with correlated coordinates. Each step draws a
proposal (`pt.random.normal`) and a uniform for the accept test (`pt.random.uniform`)
from the state it carries and passes the new state on: no hidden updates, so the same
seed gives the same chain, compiled or evaluated, and the returned state continues it.

    python examples/metropolis.py
"""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function

DIMENSION, STEPS, STEP_SIZE = 10, 10_000, 0.5


def target_precision() -> np.ndarray:
    """The inverse covariance of the target: unit variances, correlation 0.5 between
    neighbouring coordinates."""
    covariance = np.eye(DIMENSION) + 0.5 * (np.eye(DIMENSION, k=1) + np.eye(DIMENSION, k=-1))
    return np.linalg.inv(covariance)


def sampler(steps: int) -> tuple[Variable, Variable, list[Variable]]:
    """(rng state input, start input, [final state, chain, acceptance rate])."""
    precision = pt.constant(target_precision())

    def log_density(x: Variable) -> Variable:
        return -0.5 * pt.sum(x * (precision @ x))

    def step(rng: Variable, x: Variable, logp: Variable) -> tuple[Variable, ...]:
        rng, proposal = pt.random.normal(rng, x, STEP_SIZE)
        rng, u = pt.random.uniform(rng)
        proposed_logp = log_density(proposal)
        accept = pt.lt(pt.log(u), proposed_logp - logp)
        return (rng, pt.where(accept, proposal, x), pt.where(accept, proposed_logp, logp),
                pt.cast(accept, "float64"))

    rng, start = pt.random.state("rng"), pt.vector("start", shape=(DIMENSION,))
    rngs, chain, _, accepted = pt.scan(
        step, outputs_info=[rng, start, log_density(start), None], n_steps=steps
    )
    return rng, start, [rngs[-1], chain, pt.mean(accepted)]


def main() -> None:
    rng, start, outputs = sampler(STEPS)
    compiled = function([rng, start], outputs)
    final_state, chain, acceptance = compiled(pt.random.seed(0), np.zeros(DIMENSION))

    short_rng, short_start, short_outputs = sampler(200)
    reference = evaluate(short_outputs, {short_rng: pt.random.seed(0), short_start: np.zeros(DIMENSION)})
    np.testing.assert_array_equal(chain[:200], reference[1])
    print("compiled chain matches evaluate")

    kept = chain[STEPS // 10:]
    correlation = np.corrcoef(kept[:, 0], kept[:, 1])[0, 1]
    print(f"{STEPS} steps, acceptance {float(acceptance):.2f}; sample variance of x0 "
          f"{kept[:, 0].var():.2f} (target 1), correlation of x0 and x1 {correlation:.2f} "
          "(target 0.5)")
    _, continued, _ = compiled(final_state, chain[-1])
    assert not np.array_equal(continued, chain), "the returned state continues the stream"


if __name__ == "__main__":
    main()
