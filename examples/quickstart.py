"""fgraph in one page: build a typed graph, print it, evaluate it, differentiate it.

Run with `python examples/quickstart.py`.
"""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, check_graph, dprint, evaluate


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
    expected = 2 * np.exp(x_value) + 3 * w_value
    assert np.allclose(gradient_value, expected), "gradient disagrees with the closed form"

    # Equal structure means equal graphs: nodes are interned, names do not matter.
    x2 = pt.vector("another_x")
    w2 = pt.vector("another_w", shape=(3,))
    y2 = pt.exp(x2) * 2 + (x2 * w2).sum()
    print("\nstructurally equal graphs compare equal:", Graph([x2, w2], [y2]) == Graph([x, w], [y]))
    print("digest:", Graph([x, w], [y]).digest[:16], "...")


if __name__ == "__main__":
    main()
