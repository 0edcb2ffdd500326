"""fgraph in one page: build a typed graph, evaluate and differentiate it, rewrite it
with a rule of your own, then compile it with numba and time it against NumPy.

Run with `python examples/quickstart.py`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import ops as pt
from fgraph import Apply, Graph, Variable, check_graph, dprint, evaluate
from numba_backend import function
from ops.elemwise import Elemwise
from ops.scalar_ops import Pow
from rewrite import RuleSet, Trace, rewrite_graph
from rewrite.patterns import is_constant_value


def cube_to_products(node: Apply) -> list[Variable] | None:
    """A user rule: `x ** 3` becomes `x * x * x` (a pure function of one node)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Pow()), inputs=(x, exponent)) if is_constant_value(
            exponent, 3
        ):
            product = x * x * x
            return [product] if product.type == node.out.type else None
    return None


def median_seconds(run: Callable[[], object], repeats: int = 7) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        timings.append(time.perf_counter() - start)
    return float(np.median(timings))


def reference(values: np.ndarray) -> float:
    """The benchmark expression in NumPy."""
    return float(
        np.sum(
            np.exp(-values) * np.sin(3 * values)
            + np.log1p(values**2)
            - np.sqrt(values) / (1 + values)
        )
    )


def main() -> None:
    x = pt.vector("x")
    w = pt.vector("w", shape=(3,))
    y = pt.exp(x) * 2 + (x * w).sum()  # NumPy names and operators build an interned graph
    gradient = pt.grad(y.sum(), x)  # reverse mode; the gradient is itself a graph

    graph = Graph([x, w], [y, gradient])
    check_graph(graph)
    print("The graph of y and dy/dx:")
    dprint(graph)

    x_value = np.array([0.5, -1.0, 2.0])
    w_value = np.array([1.0, 2.0, 3.0])
    y_value, gradient_value = evaluate(graph.outputs, {x: x_value, w: w_value})
    print("\ny     =", y_value)
    print("dy/dx =", gradient_value)
    assert np.allclose(gradient_value, 2 * np.exp(x_value) + 3 * w_value)

    # Equal structure means equal graphs: nodes are interned, names do not matter.
    x2, w2 = pt.vector("another_x"), pt.vector("another_w", shape=(3,))
    y2 = pt.exp(x2) * 2 + (x2 * w2).sum()
    equal = Graph([x2, w2], [y2]) == Graph([x, w], [y])
    print("\nstructurally equal graphs compare equal:", equal)

    # A rewrite is a pure function: the old graph stays valid and unchanged.
    cubic = Graph([x], [(x**3).sum()])
    trace = Trace()
    rewritten = rewrite_graph(cubic, RuleSet("mine", (cube_to_products,)), trace=trace)
    print("\nBefore the user rule:")
    dprint(cubic)
    print("After it (fired:", ", ".join(trace.rule_names), "):")
    dprint(rewritten)
    before, after = (evaluate(g.outputs, {x: x_value})[0] for g in (cubic, rewritten))
    assert np.allclose(before, after)

    # Compile: optimize (fusion, inplace), generate one numba function, run it.
    big = np.random.default_rng(0).uniform(0.1, 2.0, size=1_000_000)
    expression = pt.exp(-x) * pt.sin(3 * x) + pt.log1p(x * x) - pt.sqrt(x) / (1 + x)
    start = time.perf_counter()
    compiled = function([x], expression.sum())
    print(f"\ncompiled in {time.perf_counter() - start:.2f} s (cached on disk for next time)")
    assert np.allclose(compiled(big), reference(big))
    ours = median_seconds(lambda: compiled(big))
    numpy_time = median_seconds(lambda: reference(big))
    print(
        f"fgraph {ours * 1e3:.2f} ms vs NumPy {numpy_time * 1e3:.2f} ms on 10^6 elements "
        f"(NumPy / fgraph = {numpy_time / ours:.1f}x)"
    )


if __name__ == "__main__":
    main()
