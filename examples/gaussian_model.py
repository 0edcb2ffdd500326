"""A Bayesian example: the marginal likelihood of Bayesian linear regression, its
gradient, and type-II maximum likelihood by gradient ascent.

With weights w ~ N(0, tau^2 I) and noise of scale sigma, the observations are jointly
Gaussian: y ~ N(0, sigma^2 I + tau^2 X X^T). Its log-density is written the way a PyMC
model is, through a Cholesky factor, a triangular solve and the log of the factor's
diagonal; `pt.grad` differentiates it in log(sigma) and log(tau), and the compiled
function climbs to the most likely scales. The result is checked against SciPy's
`multivariate_normal.logpdf` and against central finite differences.

    python examples/gaussian_model.py
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

import ops as pt
from numba_backend import function

ROWS, FEATURES = 80, 5


def log_marginal_likelihood(X: pt.Variable, y: pt.Variable, log_sigma: pt.Variable,
                            log_tau: pt.Variable) -> pt.Variable:
    """log N(y | 0, sigma^2 I + tau^2 X X^T)."""
    covariance = pt.exp(2 * log_sigma) * pt.eye(y.shape[0]) + pt.exp(2 * log_tau) * (X @ X.T)
    factor = pt.linalg.cholesky(covariance)
    z = pt.linalg.solve_triangular(factor, y, lower=True)
    return (
        -0.5 * pt.sum(z * z)
        - pt.sum(pt.log(pt.linalg.diagonal(factor)))
        - 0.5 * ROWS * math.log(2 * math.pi)
    )


def main() -> None:
    rng = np.random.default_rng(0)
    data_X = rng.normal(size=(ROWS, FEATURES))
    data_y = data_X @ rng.normal(scale=2.0, size=FEATURES) + rng.normal(scale=0.5, size=ROWS)

    X, y = pt.matrix("X"), pt.vector("y")
    log_sigma, log_tau = pt.scalar("log_sigma"), pt.scalar("log_tau")
    logp = log_marginal_likelihood(X, y, log_sigma, log_tau)
    compiled = function([X, y, log_sigma, log_tau], [logp, *pt.grad(logp, [log_sigma, log_tau])])

    def covariance(s: float, t: float) -> np.ndarray:
        gram: np.ndarray = data_X @ data_X.T
        return math.exp(2 * s) * np.eye(ROWS) + math.exp(2 * t) * gram

    start = (0.0, 0.0)
    value, grad_sigma, grad_tau = compiled(data_X, data_y, *start)
    expected = scipy.stats.multivariate_normal(np.zeros(ROWS), covariance(*start)).logpdf(data_y)
    eps = 1e-6
    numeric = [
        (compiled(data_X, data_y, *(np.add(start, shift)))[0]
         - compiled(data_X, data_y, *(np.subtract(start, shift)))[0]) / (2 * eps)
        for shift in ((eps, 0.0), (0.0, eps))
    ]
    assert np.isclose(value, expected, rtol=1e-10), (value, expected)
    assert np.allclose([grad_sigma, grad_tau], numeric, rtol=1e-5), numeric
    print(f"log p(y) at sigma = tau = 1: {float(value):.6f} (SciPy: {expected:.6f})")
    print("log-density and gradient match scipy.stats and finite differences; matches evaluate")

    s, t = start
    for _ in range(200):
        value, grad_sigma, grad_tau = compiled(data_X, data_y, s, t)
        s, t = s + 0.01 * float(grad_sigma), t + 0.01 * float(grad_tau)
    print(f"type-II maximum likelihood: sigma = {math.exp(s):.3f}, tau = {math.exp(t):.3f}, "
          f"log p(y) = {float(value):.4f}")


if __name__ == "__main__":
    main()
