"""The models of issue 19's compile-time table, each written once per library: fgraph (the
graph, to compile with `numba_backend.function`), JAX (`jit` of `value_and_grad`) and
PyTensor (`function(..., mode="NUMBA")`), on the same inputs.

    kalman        2-d Kalman filter over T = 200 (`inv` and `slogdet` in the loop body):
                  log-likelihood and its gradient in A, H, Q, R
    indexed-N     sum over i < N of exp(x[i]) * w[i] + log1p(x[i]**2) * w[i+1], the graph
                  built by a Python loop over i: value and gradient in x and w
    hmm           3-state HMM forward algorithm over T = 500 (`logsumexp` in the loop):
                  log-likelihood and its gradient in the initial and transition logits
                  and the emission means
    gaussian      bench_linalg's L1: a 200-d Gaussian log-density (cholesky,
                  solve_triangular) and its gradient in the mean and the covariance
    rnn           bench_loops' W4: RNN, hidden 64, T = 1000, loss and gradient
    logistic      bench_logistic's model on bench_compile's small problem, + gradient
    elemwise-5000 bench_rewrite's 5 004-op elementwise graph, summed (no gradient)

A model is its fgraph graph (inputs, outputs) for an `Edit`, the arguments to call the
compiled function with, and the JAX and PyTensor builders of a zero-argument run (each
builds and compiles inside, so timing the builder and one run times the compile). The
outputs come in the same order in every library (value first, then the gradients in
the order listed above). Profile the fgraph side with, for instance:

    from benchmarks.compile_models import MODELS, compile_fgraph
    compiled = compile_fgraph(MODELS["kalman"])
    compiled(*MODELS["kalman"].arguments())

Edits (for `bench_compile.py`'s recompile-after-edit case): "constant" changes one
numeric constant of the model, "term" replaces one term by another; each model lists
the edits it has (one whose only literals are indices or a power of 2 has no constant
edit: changing those changes the graph's structure, not a constant).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import bench_linalg, bench_logistic, bench_loops, bench_rewrite  # noqa: E402
from benchmarks.peers import Run  # noqa: E402

Array = np.ndarray[Any, np.dtype[np.float64]]
Edit = Literal["original", "constant", "term"]
Graph = tuple[Sequence[Any], Sequence[Any]]
"""An fgraph function's inputs and outputs (`Variable`s; fgraph is imported lazily)."""

LOG_2PI = math.log(2 * math.pi)
CONSTANT_EDIT = 1.001
"""The factor the constant edit multiplies the model's constant by."""


@attrs.frozen
class Model:
    name: str
    title: str
    graph: Callable[[Edit], Graph]
    arguments: Callable[[], tuple[Array, ...]]
    jax: Callable[[], Run]
    pytensor: Callable[[], Run]
    edits: tuple[Edit, ...] = ()
    checked_outputs: int | None = None
    """How many leading outputs the libraries must agree on (None: all); the Gaussian's
    covariance gradient follows different conventions (see bench_linalg)."""


def compile_fgraph(model: Model, edit: Edit = "original") -> Any:
    """The model's fgraph graph compiled with `numba_backend.function` (fast_run)."""
    from numba_backend import function

    inputs, outputs = model.graph(edit)
    return function(list(inputs), list(outputs))


def _jax_run(compiled: Callable[..., Any], arguments: tuple[Array, ...]) -> Run:
    """A run of a jitted function that waits for every output."""
    import jax

    on_device = [jax.device_put(argument) for argument in arguments]
    return lambda: jax.block_until_ready(compiled(*on_device))


def _enable_x64() -> None:
    import jax

    jax.config.update("jax_enable_x64", True)


# -- Kalman filter ----------------------------------------------------------------------------
KALMAN_STEPS = 200


def kalman_arguments() -> tuple[Array, ...]:
    """Observations of a 2-d rotating state, then A, H, Q, R, m0, P0."""
    rng = np.random.default_rng(0)
    A = np.array([[0.95, 0.1], [-0.1, 0.95]])
    H = np.array([[1.0, 0.0], [0.5, 1.0]])
    Q, R = 0.1 * np.eye(2), 0.5 * np.eye(2)
    state, observations = np.zeros(2), np.empty((KALMAN_STEPS, 2))
    for t in range(KALMAN_STEPS):
        state = A @ state + rng.normal(scale=0.3, size=2)
        observations[t] = H @ state + rng.normal(scale=0.7, size=2)
    return observations, A, H, Q, R, np.zeros(2), np.eye(2)


def _kalman_constant(edit: Edit) -> float:
    """The per-step normalising constant log(2 pi) (times 2 / 2 for two dimensions)."""
    return LOG_2PI * (CONSTANT_EDIT if edit == "constant" else 1.0)


def kalman_graph(edit: Edit = "original") -> Graph:
    import ops as pt

    ys = pt.matrix("ys", shape=(None, 2))
    A, H, Q, R = (pt.matrix(name, shape=(2, 2)) for name in "AHQR")
    m0, P0 = pt.vector("m0", shape=(2,)), pt.matrix("P0", shape=(2, 2))
    normaliser = _kalman_constant(edit)

    def step(y: Any, m: Any, P: Any, A: Any, H: Any, Q: Any, R: Any) -> Any:
        m_pred = A @ m
        P_pred = A @ P @ A.T + Q
        innovation = y - H @ m_pred
        S = H @ P_pred @ H.T + R
        S_inv = pt.linalg.inv(S)
        gain = P_pred @ H.T @ S_inv
        _, logdet = pt.linalg.slogdet(S)
        quadratic = innovation @ S_inv @ innovation
        if edit == "term":
            quadratic = pt.log1p(quadratic)
        loglik = -0.5 * (logdet + quadratic) - normaliser
        return m_pred + gain @ innovation, P_pred - gain @ H @ P_pred, loglik

    _, _, logliks = pt.scan(step, sequences=[ys], outputs_info=[m0, P0, None],
                            non_sequences=[A, H, Q, R])
    total = logliks.sum()
    return [ys, A, H, Q, R, m0, P0], [total, *pt.grad(total, [A, H, Q, R])]


def kalman_jax() -> Run:
    import jax
    import jax.numpy as jnp

    _enable_x64()

    def loglik(A: Any, H: Any, Q: Any, R: Any, ys: Any, m0: Any, P0: Any) -> Any:
        def step(carry: Any, y: Any) -> Any:
            m, P = carry
            m_pred = A @ m
            P_pred = A @ P @ A.T + Q
            innovation = y - H @ m_pred
            S = H @ P_pred @ H.T + R
            S_inv = jnp.linalg.inv(S)
            gain = P_pred @ H.T @ S_inv
            _, logdet = jnp.linalg.slogdet(S)
            value = -0.5 * (logdet + innovation @ S_inv @ innovation) - LOG_2PI
            return (m_pred + gain @ innovation, P_pred - gain @ H @ P_pred), value

        return jax.lax.scan(step, (m0, P0), ys)[1].sum()

    compiled = jax.jit(jax.value_and_grad(loglik, argnums=(0, 1, 2, 3)))
    ys, A, H, Q, R, m0, P0 = kalman_arguments()
    return _jax_run(compiled, (A, H, Q, R, ys, m0, P0))


def kalman_pytensor() -> Run:
    import pytensor
    import pytensor.tensor as ptt
    from pytensor.tensor.linalg import inv, slogdet

    ys, A, H, Q, R = (ptt.dmatrix(name) for name in ("ys", "A", "H", "Q", "R"))
    m0, P0 = ptt.dvector("m0"), ptt.dmatrix("P0")

    def step(y: Any, m: Any, P: Any, A: Any, H: Any, Q: Any, R: Any) -> Any:
        m_pred = A @ m
        P_pred = A @ P @ A.T + Q
        innovation = y - H @ m_pred
        S = H @ P_pred @ H.T + R
        S_inv = inv(S)
        gain = P_pred @ H.T @ S_inv
        _, logdet = slogdet(S)
        value = -0.5 * (logdet + innovation @ S_inv @ innovation) - LOG_2PI
        return m_pred + gain @ innovation, P_pred - gain @ H @ P_pred, value

    _, _, logliks = pytensor.scan(step, sequences=[ys], outputs_info=[m0, P0, None],
                                  non_sequences=[A, H, Q, R], return_updates=False)
    total = logliks.sum()
    compiled = pytensor.function([ys, A, H, Q, R, m0, P0],
                                 [total, *pytensor.grad(total, [A, H, Q, R])], mode="NUMBA")
    arguments = kalman_arguments()
    return lambda: compiled(*arguments)


# -- indexed scalar terms ---------------------------------------------------------------------
def indexed_arguments(terms: int) -> tuple[Array, Array]:
    rng = np.random.default_rng(terms)
    return rng.normal(size=terms), rng.normal(size=terms + 1)


def indexed_graph(terms: int, edit: Edit = "original") -> Graph:
    """The term sum written as a user writes it, one Python iteration per term; the term
    edit makes term 0's exp an expm1."""
    import ops as pt

    x, w = pt.vector("x", shape=(terms,)), pt.vector("w", shape=(terms + 1,))
    total = None
    for i in range(terms):
        first = pt.expm1(x[i]) if edit == "term" and i == 0 else pt.exp(x[i])
        term = first * w[i] + pt.log1p(x[i] ** 2) * w[i + 1]
        total = term if total is None else total + term
    return [x, w], [total, *pt.grad(total, [x, w])]


def indexed_jax(terms: int) -> Run:
    import jax
    import jax.numpy as jnp

    _enable_x64()

    def value(x: Any, w: Any) -> Any:
        total = None
        for i in range(terms):
            term = jnp.exp(x[i]) * w[i] + jnp.log1p(x[i] ** 2) * w[i + 1]
            total = term if total is None else total + term
        return total

    compiled = jax.jit(jax.value_and_grad(value, argnums=(0, 1)))
    return _jax_run(compiled, indexed_arguments(terms))


def indexed_pytensor(terms: int) -> Run:
    import pytensor
    import pytensor.tensor as ptt

    x, w = ptt.dvector("x"), ptt.dvector("w")
    total = None
    for i in range(terms):
        term = ptt.exp(x[i]) * w[i] + ptt.log1p(x[i] ** 2) * w[i + 1]
        total = term if total is None else total + term
    compiled = pytensor.function([x, w], [total, *pytensor.grad(total, [x, w])], mode="NUMBA")
    arguments = indexed_arguments(terms)
    return lambda: compiled(*arguments)


# -- HMM forward algorithm --------------------------------------------------------------------
HMM_STEPS, HMM_STATES = 500, 3
HMM_SIGMA = 0.8
"""The emissions' standard deviation (a constant of the model: the constant edit's)."""


def hmm_arguments() -> tuple[Array, ...]:
    """Observations of a 3-state chain with Gaussian emissions, then the initial logits,
    the transition logits and the emission means."""
    rng = np.random.default_rng(0)
    means = np.array([-1.5, 0.0, 2.0])
    transition = np.full((HMM_STATES, HMM_STATES), 0.05) + 0.85 * np.eye(HMM_STATES)
    transition /= transition.sum(axis=1, keepdims=True)
    state, ys = 0, np.empty(HMM_STEPS)
    for t in range(HMM_STEPS):
        state = rng.choice(HMM_STATES, p=transition[state])
        ys[t] = means[state] + HMM_SIGMA * rng.normal()
    return ys, np.zeros(HMM_STATES), np.log(transition), means + 0.1


def _hmm_sigma(edit: Edit) -> float:
    return HMM_SIGMA * (CONSTANT_EDIT if edit == "constant" else 1.0)


def hmm_graph(edit: Edit = "original", static_states: bool = True) -> Graph:
    """The emission log-densities are a (T, 3) matrix computed before the loop; the term
    edit makes them Cauchy-like (the quadratic q becomes log1p(q)). The number of states
    is declared (static) unless `static_states` is False; T never is."""
    import ops as pt

    states = HMM_STATES if static_states else None
    ys = pt.vector("ys")
    initial_logits = pt.vector("initial_logits", shape=(states,))
    transition_logits = pt.matrix("transition_logits", shape=(states, states))
    means = pt.vector("means", shape=(states,))
    sigma = _hmm_sigma(edit)
    quadratic = ((ys[:, None] - means[None, :]) / sigma) ** 2
    if edit == "term":
        quadratic = pt.log1p(quadratic)
    emissions = -0.5 * quadratic - math.log(sigma) - 0.5 * LOG_2PI
    log_transition = pt.log_softmax(transition_logits, axis=1)
    first = pt.log_softmax(initial_logits) + emissions[0]

    def step(emission: Any, alpha: Any, log_transition: Any) -> Any:
        return pt.logsumexp(alpha[:, None] + log_transition, axis=0) + emission

    alphas = pt.scan(step, sequences=[emissions[1:]], outputs_info=[first],
                     non_sequences=[log_transition])
    loglik = pt.logsumexp(alphas[-1])
    wrt = [initial_logits, transition_logits, means]
    return [ys, *wrt], [loglik, *pt.grad(loglik, wrt)]


def hmm_jax() -> Run:
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    _enable_x64()

    def loglik(initial_logits: Any, transition_logits: Any, means: Any, ys: Any) -> Any:
        quadratic = ((ys[:, None] - means[None, :]) / HMM_SIGMA) ** 2
        emissions = -0.5 * quadratic - math.log(HMM_SIGMA) - 0.5 * LOG_2PI
        log_transition = jax.nn.log_softmax(transition_logits, axis=1)
        first = jax.nn.log_softmax(initial_logits) + emissions[0]

        def step(alpha: Any, emission: Any) -> Any:
            new = logsumexp(alpha[:, None] + log_transition, axis=0) + emission
            return new, None

        return logsumexp(jax.lax.scan(step, first, emissions[1:])[0])

    compiled = jax.jit(jax.value_and_grad(loglik, argnums=(0, 1, 2)))
    ys, initial_logits, transition_logits, means = hmm_arguments()
    return _jax_run(compiled, (initial_logits, transition_logits, means, jnp.asarray(ys)))


def hmm_pytensor() -> Run:
    import pytensor
    import pytensor.tensor as ptt
    from pytensor.tensor.special import log_softmax

    def logsumexp(z: Any, axis: int) -> Any:
        """The max-shifted form written out: PyTensor 3.0.7's own `logsumexp` gives NaN
        gradients in this model (in numba and FAST_COMPILE modes alike)."""
        shift = ptt.max(z, axis=axis, keepdims=True)
        return ptt.log(ptt.exp(z - shift).sum(axis=axis)) + ptt.squeeze(shift, axis=axis)

    ys, initial_logits, means = ptt.dvector("ys"), ptt.dvector("initial_logits"), ptt.dvector(
        "means")
    transition_logits = ptt.dmatrix("transition_logits")
    quadratic = ((ys[:, None] - means[None, :]) / HMM_SIGMA) ** 2
    emissions = -0.5 * quadratic - math.log(HMM_SIGMA) - 0.5 * LOG_2PI
    log_transition = log_softmax(transition_logits, axis=1)
    first = log_softmax(initial_logits) + emissions[0]
    alphas = pytensor.scan(
        lambda emission, alpha, log_transition: logsumexp(
            alpha[:, None] + log_transition, axis=0) + emission,
        sequences=[emissions[1:]], outputs_info=[first], non_sequences=[log_transition],
        return_updates=False)
    loglik = logsumexp(alphas[-1], axis=0)
    wrt = [initial_logits, transition_logits, means]
    compiled = pytensor.function([ys, *wrt], [loglik, *pytensor.grad(loglik, wrt)], mode="NUMBA")
    arguments = hmm_arguments()
    return lambda: compiled(*arguments)


# -- the 5 004-op elementwise graph -----------------------------------------------------------
ELEMWISE_LENGTH = 1000


def elemwise_arguments() -> tuple[Array, ...]:
    rng = np.random.default_rng(0)
    return tuple(rng.uniform(0.0, 1.0, ELEMWISE_LENGTH) for _ in range(bench_rewrite.INPUTS))


def elemwise_graph(edit: Edit = "original") -> Graph:
    """bench_rewrite's graph; the constant edit is its `salt` (one constant changed)."""
    graph = bench_rewrite.fgraph_graph(salt=1 if edit == "constant" else 0)
    return graph.inputs, graph.outputs


def elemwise_jax() -> Run:
    import jax
    import jax.numpy as jnp

    _enable_x64()

    def total(*xs: Any) -> Any:
        acc = xs[0]
        for i in range(bench_rewrite.STEPS):
            acc = acc * 0.999 + jnp.sin(xs[i % bench_rewrite.INPUTS])
            acc = acc - jnp.sin(xs[i % bench_rewrite.INPUTS]) * (i / 5000)
        return acc.sum()

    return _jax_run(jax.jit(total), elemwise_arguments())


def elemwise_pytensor() -> Run:
    import pytensor

    xs, total = bench_rewrite.pytensor_graph()
    compiled = pytensor.function(xs, total, mode="NUMBA")
    arguments = elemwise_arguments()
    return lambda: compiled(*arguments)


# -- reused workloads -------------------------------------------------------------------------
def gaussian_graph(edit: Edit = "original") -> Graph:
    """bench_linalg's L1; the constant edit scales its normalising constant, the term
    edit makes the quadratic form z.z a sum of log1p(z**2)."""
    normaliser = bench_linalg.DIMENSION * LOG_2PI
    return bench_linalg.l1_graph(
        normaliser * (CONSTANT_EDIT if edit == "constant" else 1.0), robust=edit == "term")


def logistic_arguments() -> tuple[Array, Array, Array]:
    """bench_compile's small logistic problem (compile time hardly depends on size)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    w = rng.normal(size=10)
    y = (rng.uniform(size=200) < 0.5).astype(np.float64)
    return X, y, w


def _indexed_model(terms: int) -> Model:
    return Model(
        f"indexed-{terms}", f"{terms} indexed scalar terms, + gradient",
        lambda edit: indexed_graph(terms, edit), lambda: indexed_arguments(terms),
        lambda: indexed_jax(terms), lambda: indexed_pytensor(terms), ("term",),
    )


def _first(build: Callable[[], tuple[Run, str]]) -> Callable[[], Run]:
    """bench_loops' builders return a run and a description: the run."""
    return lambda: build()[0]


MODELS: dict[str, Model] = {
    model.name: model
    for model in [
        Model("kalman", f"2-d Kalman filter, T = {KALMAN_STEPS}, inv + slogdet in the loop, "
              "loglik + gradient", kalman_graph, kalman_arguments, kalman_jax,
              kalman_pytensor, ("constant", "term")),
        *(_indexed_model(terms) for terms in (25, 50, 100, 500)),
        Model("hmm", f"{HMM_STATES}-state HMM forward algorithm, T = {HMM_STEPS} (logsumexp "
              "in the loop), + gradient", hmm_graph, hmm_arguments, hmm_jax, hmm_pytensor,
              ("constant", "term")),
        Model("gaussian", f"{bench_linalg.DIMENSION}-d Gaussian log-density (cholesky, "
              "solve_triangular), + gradient", gaussian_graph, bench_linalg.mvn_problem,
              bench_linalg.l1_jax, bench_linalg.l1_pytensor, ("constant", "term"),
              checked_outputs=2),
        Model("rnn", f"RNN T = {bench_loops.STEPS_W4}, hidden {bench_loops.HIDDEN}, + gradient "
              "(W4)", lambda edit: bench_loops.w4_graph(), bench_loops.rnn_problem,
              _first(bench_loops.w4_jax), _first(bench_loops.w4_pytensor)),
        Model("logistic", "logistic regression + gradient (W6)",
              lambda edit: bench_logistic.fgraph_graph(), logistic_arguments,
              lambda: bench_logistic.jax_peer(logistic_arguments()),
              lambda: bench_logistic.pytensor_peer(logistic_arguments())),
        Model("elemwise-5000", "5 004-op elementwise graph (W5)", elemwise_graph,
              elemwise_arguments, elemwise_jax, elemwise_pytensor, ("constant",)),
    ]
}
