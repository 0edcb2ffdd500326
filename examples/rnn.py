"""A recurrent network's loss and its gradient through the loop, compiled with numba.

    h_t = tanh(W h_{t-1} + U x_t + b),   loss = sum_t |h_t|^2

`pt.scan` builds the loop, `pt.grad` differentiates through it (the gradient is a loop
running backwards), and `function` optimizes and compiles both. The script checks the
compiled numbers against the reference evaluator, prints what the optimizer made of the
gradient (a forward loop, a backward loop with one carry, and the weight gradients as
matrix products) and times a call.

Run with `python examples/rnn.py`.
"""

from __future__ import annotations

import time

import numpy as np

import ops as pt
from fgraph import evaluate
from numba_backend import function
from ops.scan_op import Scan

HIDDEN, FEATURES, STEPS = 64, 32, 1000


def main() -> None:
    X = pt.matrix("X", shape=(None, FEATURES))  # any number of steps
    W = pt.matrix("W", shape=(HIDDEN, HIDDEN))
    U = pt.matrix("U", shape=(HIDDEN, FEATURES))
    b, h0 = pt.vector("b", shape=(HIDDEN,)), pt.vector("h0", shape=(HIDDEN,))

    def step(x: pt.Variable, h: pt.Variable, W: pt.Variable, U: pt.Variable,
             b: pt.Variable) -> pt.Variable:
        return pt.tanh(W @ h + U @ x + b)

    hs = pt.scan(step, sequences=[X], outputs_info=[h0], non_sequences=[W, U, b])
    loss = (hs**2).sum()
    outputs = [loss, *pt.grad(loss, [W, U, b])]
    compiled = function([X, W, U, b, h0], outputs)

    rng = np.random.default_rng(0)
    values = [
        rng.normal(size=(STEPS, FEATURES)),
        rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        rng.normal(size=(HIDDEN, FEATURES)) / np.sqrt(FEATURES),
        rng.normal(size=HIDDEN) * 0.1,
        np.zeros(HIDDEN),
    ]
    got = compiled(*values)
    expected = evaluate(outputs, dict(zip([X, W, U, b, h0], values)))
    for name, g, e in zip(["loss", "dW", "dU", "db"], got, expected):
        assert np.allclose(g, e, rtol=1e-9, atol=1e-12), name

    optimized = compiled.graph
    loops = [node.op for node in optimized.nodes if isinstance(node.op, Scan)]
    products = sum(type(node.op).__name__ == "MatMul" for node in optimized.nodes)
    print(f"loss {float(got[0]):.6f}; |dW| {np.linalg.norm(got[1]):.6f} (matches evaluate)")
    print(f"optimized graph: {len(optimized.nodes)} nodes, {len(loops)} loops "
          f"({', '.join(str(op) for op in loops)}), {products} matrix products outside them")
    timings = []
    for _ in range(21):
        start = time.perf_counter()
        compiled(*values)
        timings.append(time.perf_counter() - start)
    print(f"one call (T = {STEPS}): {np.median(timings) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
