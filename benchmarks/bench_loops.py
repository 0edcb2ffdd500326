"""Loops, fgraph against peers: run time, first-call (compile) time, and for the graph
compilers the loops and nodes left after optimization.

    W1  the seed: y_t = y_{t-1} ** 2 for 4 steps; f = y_4, f' and f'' at x0
    W2  x_t = 0.5 x_{t-1} + sin(x_{t-1}) + 0.1 for 100 000 steps; x_T and d x_T / d x_0
    W4  RNN h_t = tanh(W h_{t-1} + U x_t + b), hidden 64, input 32, T = 1000;
        loss = sum of h_t ** 2; the loss and its gradient with respect to W, U, b
    W7  3-state HMM forward algorithm in log space (`logsumexp` per step), T = 500, and its
        gradient in the initial and transition logits and the emission means
        (`compile_models`' hmm), every length unknown
    W8  W7 with the number of states declared (`shape=(3,)`, `(3, 3)`; T still unknown)

Peers: numba written by hand (forward loop, then backpropagation through time by hand),
JAX (`lax.scan` under `jit` with `grad`), PyTensor 3.0.7 in numba mode (`scan`). Caches
start empty (fgraph's, numba's and PyTensor's compile directories are temporary) unless
`--warm`, so first-call times are cold compiles.

    python benchmarks/bench_loops.py [--repeats 21] [--warm] [--only W1,W2,W4,W7,W8] [--busy]

`--busy` times fgraph, hand-written numba and JAX quiet and then with another process
spinning on one core, and prints both medians per peer.
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

Array = np.ndarray[Any, np.dtype[np.float64]]
STEPS_W2 = 100_000
HIDDEN, FEATURES, STEPS_W4 = 64, 32, 1000


# -- W1 ---------------------------------------------------------------------------------------
def w1_fgraph() -> tuple[Callable[[], Any], str]:
    import ops as pt
    from numba_backend import function

    x0 = pt.scalar("x0")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4)
    first = pt.grad(ys[-1], x0)
    compiled = function([x0], [ys[-1], first, pt.grad(first, x0)])
    return lambda: compiled(1.1), _fgraph_counts(compiled)


def w1_numba() -> tuple[Callable[[], Any], str]:
    import numba

    @numba.njit
    def seed(x0: float) -> tuple[float, float, float]:
        return x0**16, 16 * x0**15, 240 * x0**14

    return lambda: seed(1.1), ""


def w1_jax() -> tuple[Callable[[], Any], str]:
    import jax

    jax.config.update("jax_enable_x64", True)

    def f(x0: Any) -> Any:
        return jax.lax.scan(lambda y, _: (y**2, None), x0, None, length=4)[0]

    compiled = jax.jit(lambda x: (f(x), jax.grad(f)(x), jax.grad(jax.grad(f))(x)))
    return lambda: [v.block_until_ready() for v in compiled(1.1)], ""


def w1_pytensor() -> tuple[Callable[[], Any], str]:
    import pytensor
    import pytensor.tensor as ptt

    x0 = ptt.dscalar("x0")
    ys = pytensor.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4, return_updates=False)
    first = pytensor.grad(ys[-1], x0)
    compiled = pytensor.function([x0], [ys[-1], first, pytensor.grad(first, x0)], mode="NUMBA")
    return lambda: compiled(1.1), _pytensor_counts(compiled)


# -- W2 ---------------------------------------------------------------------------------------
def w2_fgraph() -> tuple[Callable[[], Any], str]:
    import ops as pt
    from numba_backend import function

    x0 = pt.scalar("x0")
    xs = pt.scan(lambda x: 0.5 * x + pt.sin(x) + 0.1, outputs_info=[x0], n_steps=STEPS_W2)
    compiled = function([x0], [xs[-1], pt.grad(xs[-1], x0)])
    return lambda: compiled(0.3), _fgraph_counts(compiled)


def w2_numba() -> tuple[Callable[[], Any], str]:
    import numba

    @numba.njit
    def run(x0: float, steps: int) -> tuple[float, float]:
        xs = np.empty(steps)
        x = x0
        for t in range(steps):
            x = 0.5 * x + np.sin(x) + 0.1
            xs[t] = x
        gradient = 1.0
        for t in range(steps - 1, -1, -1):
            before = x0 if t == 0 else xs[t - 1]
            gradient *= 0.5 + np.cos(before)
        return x, gradient

    return lambda: run(0.3, STEPS_W2), ""


def w2_jax() -> tuple[Callable[[], Any], str]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def last(x0: Any) -> Any:
        step = lambda x, _: (0.5 * x + jnp.sin(x) + 0.1, None)  # noqa: E731
        return jax.lax.scan(step, x0, None, length=STEPS_W2)[0]

    compiled = jax.jit(jax.value_and_grad(last))
    return lambda: [v.block_until_ready() for v in compiled(0.3)], ""


def w2_pytensor() -> tuple[Callable[[], Any], str]:
    import pytensor
    import pytensor.tensor as ptt

    x0 = ptt.dscalar("x0")
    xs = pytensor.scan(lambda x: 0.5 * x + ptt.sin(x) + 0.1, outputs_info=[x0],
                       n_steps=STEPS_W2, return_updates=False)
    compiled = pytensor.function([x0], [xs[-1], pytensor.grad(xs[-1], x0)], mode="NUMBA")
    return lambda: compiled(0.3), _pytensor_counts(compiled)


# -- W4 ---------------------------------------------------------------------------------------
def rnn_problem() -> tuple[Array, Array, Array, Array, Array]:
    rng = np.random.default_rng(0)
    return (
        rng.normal(size=(STEPS_W4, FEATURES)),
        rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        rng.normal(size=(HIDDEN, FEATURES)) / np.sqrt(FEATURES),
        rng.normal(size=HIDDEN) * 0.1,
        np.zeros(HIDDEN),
    )


def w4_graph() -> tuple[list[Any], list[Any]]:
    """W4's inputs and outputs (the loss, then its gradient in W, U, b)."""
    import ops as pt

    X = pt.matrix("X", shape=(None, FEATURES))
    W, U = pt.matrix("W", shape=(HIDDEN, HIDDEN)), pt.matrix("U", shape=(HIDDEN, FEATURES))
    b, h0 = pt.vector("b", shape=(HIDDEN,)), pt.vector("h0", shape=(HIDDEN,))
    hs = pt.scan(lambda x, h, W, U, b: pt.tanh(W @ h + U @ x + b), sequences=[X],
                 outputs_info=[h0], non_sequences=[W, U, b])
    loss = (hs**2).sum()
    return [X, W, U, b, h0], [loss, *pt.grad(loss, [W, U, b])]


def w4_fgraph() -> tuple[Callable[[], Any], str]:
    from numba_backend import function

    compiled = function(*w4_graph())
    problem = rnn_problem()
    return lambda: compiled(*problem), _fgraph_counts(compiled)


def w4_numba() -> tuple[Callable[[], Any], str]:
    import numba

    @numba.njit
    def run(X: Array, W: Array, U: Array, b: Array, h0: Array) -> Any:
        steps = X.shape[0]
        hs = np.empty((steps + 1, h0.shape[0]))
        hs[0] = h0
        inputs = X @ U.T
        for t in range(steps):
            hs[t + 1] = np.tanh(W @ hs[t] + inputs[t] + b)
        loss = (hs[1:] ** 2).sum()
        pre = np.empty((steps, h0.shape[0]))
        carried = np.zeros(h0.shape[0])
        for t in range(steps - 1, -1, -1):
            pre[t] = (carried + 2 * hs[t + 1]) * (1 - hs[t + 1] ** 2)
            carried = W.T @ pre[t]
        return loss, pre.T @ hs[:-1], pre.T @ X, pre.sum(axis=0)

    problem = rnn_problem()
    return lambda: run(*problem), ""


def w4_jax() -> tuple[Callable[[], Any], str]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(W: Any, U: Any, b: Any, X: Any, h0: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            new = jnp.tanh(W @ h + U @ x + b)
            return new, new

        return (jax.lax.scan(step, h0, X)[1] ** 2).sum()

    compiled = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    X, W, U, b, h0 = (jax.device_put(a) for a in rnn_problem())

    def run() -> Any:
        value, grads = compiled(W, U, b, X, h0)
        return value.block_until_ready(), [g.block_until_ready() for g in grads]

    return run, ""


def w4_pytensor() -> tuple[Callable[[], Any], str]:
    import pytensor
    import pytensor.tensor as ptt

    X, W, U = ptt.dmatrix("X"), ptt.dmatrix("W"), ptt.dmatrix("U")
    b, h0 = ptt.dvector("b"), ptt.dvector("h0")
    hs = pytensor.scan(lambda x, h, W, U, b: ptt.tanh(W @ h + U @ x + b), sequences=[X],
                       outputs_info=[h0], non_sequences=[W, U, b], return_updates=False)
    loss = (hs**2).sum()
    compiled = pytensor.function([X, W, U, b, h0], [loss, *pytensor.grad(loss, [W, U, b])],
                                 mode="NUMBA")
    problem = rnn_problem()
    return lambda: compiled(*problem), _pytensor_counts(compiled)


# -- W7, W8 -----------------------------------------------------------------------------------
def hmm_fgraph(static_states: bool) -> tuple[Callable[[], Any], str]:
    from benchmarks.compile_models import hmm_arguments, hmm_graph
    from numba_backend import function

    compiled = function(*hmm_graph(static_states=static_states))
    arguments = hmm_arguments()
    return lambda: compiled(*arguments), _fgraph_counts(compiled)


def hmm_numba() -> tuple[Callable[[], Any], str]:
    """The forward algorithm storing every step's log-alphas, then its backward pass by
    hand: the gradient of the log-likelihood in alpha_t is carried back through each
    step's posterior transition weights, then through the log-softmaxes and emissions."""
    import numba

    from benchmarks.compile_models import HMM_SIGMA, LOG_2PI, hmm_arguments

    @numba.njit
    def log_softmax(logits: Array) -> Array:
        shift = logits.max()
        return logits - shift - np.log(np.exp(logits - shift).sum())

    @numba.njit
    def run(ys: Array, initial_logits: Array, transition_logits: Array, means: Array) -> Any:
        steps, states = ys.shape[0], means.shape[0]
        sigma = HMM_SIGMA
        emissions = np.empty((steps, states))
        for t in range(steps):
            for j in range(states):
                z = (ys[t] - means[j]) / sigma
                emissions[t, j] = -0.5 * z * z - np.log(sigma) - 0.5 * LOG_2PI
        log_transition = np.empty((states, states))
        for i in range(states):
            log_transition[i] = log_softmax(transition_logits[i])
        log_initial = log_softmax(initial_logits)
        alphas = np.empty((steps, states))
        alphas[0] = log_initial + emissions[0]
        terms = np.empty(states)
        for t in range(1, steps):
            for j in range(states):
                for i in range(states):
                    terms[i] = alphas[t - 1, i] + log_transition[i, j]
                shift = terms.max()
                alphas[t, j] = shift + np.log(np.exp(terms - shift).sum()) + emissions[t, j]
        last = alphas[steps - 1]
        shift = last.max()
        loglik = shift + np.log(np.exp(last - shift).sum())

        carried = np.exp(last - loglik)  # d loglik / d alpha_t, from t = T - 1 down
        d_transition = np.zeros((states, states))
        d_means = np.zeros(states)
        before = np.empty(states)
        for t in range(steps - 1, 0, -1):
            for j in range(states):
                d_means[j] += carried[j] * (ys[t] - means[j]) / (sigma * sigma)
            before[:] = 0.0
            for j in range(states):
                total = alphas[t, j] - emissions[t, j]
                for i in range(states):
                    weight = carried[j] * np.exp(alphas[t - 1, i] + log_transition[i, j] - total)
                    before[i] += weight
                    d_transition[i, j] += weight
            carried[:] = before
        for j in range(states):
            d_means[j] += carried[j] * (ys[0] - means[j]) / (sigma * sigma)
        d_initial = carried - np.exp(log_initial) * carried.sum()
        for i in range(states):
            d_transition[i] -= np.exp(log_transition[i]) * d_transition[i].sum()
        return loglik, d_initial, d_transition, d_means

    arguments = hmm_arguments()
    return lambda: run(*arguments), ""


def hmm_jax() -> tuple[Callable[[], Any], str]:
    from benchmarks.compile_models import hmm_jax as build

    return build(), ""


def hmm_pytensor() -> tuple[Callable[[], Any], str]:
    from benchmarks.compile_models import hmm_pytensor as build

    return build(), ""


# -- reporting --------------------------------------------------------------------------------
def _fgraph_counts(compiled: Any) -> str:
    from ops.scan_op import Scan

    nodes = compiled.graph.nodes
    loops = sum(isinstance(node.op, Scan) for node in nodes)
    return f"{loops} loops, {len(nodes)} nodes"


def _pytensor_counts(compiled: Any) -> str:
    nodes = compiled.maker.fgraph.apply_nodes
    loops = sum(type(node.op).__name__ == "Scan" for node in nodes)
    return f"{loops} loops, {len(nodes)} nodes"


WORKLOADS: dict[str, dict[str, Callable[[], tuple[Callable[[], Any], str]]]] = {
    "W1": {"fgraph": w1_fgraph, "numba (hand-written)": w1_numba, "jax jit": w1_jax,
           "pytensor numba": w1_pytensor},
    "W2": {"fgraph": w2_fgraph, "numba (hand-written)": w2_numba, "jax jit": w2_jax,
           "pytensor numba": w2_pytensor},
    "W4": {"fgraph": w4_fgraph, "numba (hand-written)": w4_numba, "jax jit": w4_jax,
           "pytensor numba": w4_pytensor},
    "W7": {"fgraph": lambda: hmm_fgraph(False), "numba (hand-written)": hmm_numba,
           "jax jit": hmm_jax, "pytensor numba": hmm_pytensor},
    "W8": {"fgraph": lambda: hmm_fgraph(True), "numba (hand-written)": hmm_numba,
           "jax jit": hmm_jax, "pytensor numba": hmm_pytensor},
}
REPEATS_SCALE = {"W1": 50, "W7": 20, "W8": 20}
"""Short workloads run more times (times `--repeats`)."""


def _flatten(value: Any) -> list[float]:
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _flatten(item)]
    return [float(x) for x in np.ravel(np.asarray(value))]


def _quiet_and_busy(name: str, repeats: int) -> None:
    from benchmarks.peers import BUSY_PEERS, Peer, measure_quiet_and_busy, report_quiet_and_busy

    def run_only(build: Callable[[], tuple[Callable[[], Any], str]]) -> Callable[[], Callable[[], Any]]:
        return lambda: build()[0]

    pairs = [measure_quiet_and_busy(Peer(peer, run_only(build)), repeats)
             for peer, build in WORKLOADS[name].items() if peer in BUSY_PEERS]
    reference = next((quiet.value for quiet, _ in pairs if quiet.name == "fgraph"), None)

    def agrees(value: Any) -> bool:
        got, want = _flatten(value), _flatten(reference)
        return len(got) == len(want) and bool(np.allclose(got, want, rtol=1e-6, atol=1e-9))

    report_quiet_and_busy(pairs, agrees)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--warm", action="store_true", help="keep the compile caches")
    parser.add_argument("--only", default="W1,W2,W4,W7,W8")
    parser.add_argument("--busy", action="store_true", help="also time with one core busy")
    options = parser.parse_args()
    if not options.warm:
        folder = tempfile.mkdtemp(prefix="bench_loops_")
        os.environ["FGRAPH_CACHE_DIR"] = os.path.join(folder, "fgraph")
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(folder, "numba")
        os.environ["PYTENSOR_FLAGS"] = f"base_compiledir={os.path.join(folder, 'pytensor')}"
    from benchmarks.peers import Peer, Result, measure

    for name in options.only.split(","):
        repeats = options.repeats * REPEATS_SCALE.get(name, 1)
        print(f"\n{name}: median of {repeats} runs")
        if options.busy:
            _quiet_and_busy(name, repeats)
            continue
        print(f"{'peer':<22}{'median':>12}{'vs fgraph':>11}{'first call s':>14}  "
              f"{'check':<7}graph after optimization")
        counts: dict[str, str] = {}
        results: list[Result] = []
        for peer_name, build in WORKLOADS[name].items():

            def run_only(build: Callable[[], tuple[Callable[[], Any], str]] = build,
                         peer: str = peer_name) -> Callable[[], Any]:
                run, count = build()
                counts[peer] = count
                return run

            results.append(measure(Peer(peer_name, run_only), repeats))
        reference = next((r for r in results if r.name == "fgraph" and r.failure is None), None)
        for result in results:
            if result.failure is not None:
                print(f"{result.name:<22}{result.failure}")
                continue
            unit, scale = ("us", 1e6) if result.median < 1e-3 else ("ms", 1e3)
            ratio = "-" if reference is None else f"{result.median / reference.median:.2f}x"
            check = "-"
            if reference is not None:
                got, want = _flatten(result.value), _flatten(reference.value)
                same = len(got) == len(want) and np.allclose(got, want, rtol=1e-6, atol=1e-9)
                check = "ok" if same else "DIFFERS"
            print(f"{result.name:<22}{result.median * scale:>9.2f} {unit}{ratio:>11}"
                  f"{result.build_seconds:>14.2f}  {check:<7}{counts.get(result.name, '')}")


if __name__ == "__main__":
    main()
