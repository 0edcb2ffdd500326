"""Golden snapshots of `dprint`: the exact text users read and paste into bug reports."""

from __future__ import annotations

import io
import textwrap

import numpy as np

from fgraph import Constant, Graph, Param, Variable, dprint
from tests.fgraph.builders import VECTOR, checked_graph, vector
from tests.fgraph.toy_ops import Composite, Scale, SplitSign, add, exp, sub


def expected(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def test_shared_node_is_printed_once() -> None:
    x = vector("x")
    shared = exp(x)
    graph = checked_graph([x], [add(shared, shared)])
    assert dprint(graph, file=None) == expected(
        """
        Add [id A] float64(?,)
         ├─ Exp [id B] float64(?,)
         │  └─ x [id C] float64(?,)
         └─ Exp [id B] ···
        """
    )


def test_multi_output_nodes_are_labelled_by_output_index() -> None:
    x, y = vector("x"), vector("y", length=3)
    positive, negative = SplitSign().apply(sub(x, y))
    graph = checked_graph([x, y], [add(positive, negative), Scale(2.0)(negative)])
    assert dprint(graph, file=None) == expected(
        """
        Add [id A] float64(3,)
         ├─ SplitSign.0 [id B] float64(3,)
         │  └─ Sub [id C] float64(3,)
         │     ├─ x [id D] float64(?,)
         │     └─ y [id E] float64(3,)
         └─ SplitSign.1 [id B] ···
        Scale{factor=2.0} [id F] float64(3,)
         └─ SplitSign.1 [id B] ···
        """
    )


def test_constants_and_untyped_printing() -> None:
    x = vector("x")
    small = add(x, Constant(np.array([1.0, -0.0])))
    large = add(Constant(np.arange(10.0)), x)
    assert dprint([small, large], print_type=False, file=None) == expected(
        """
        Add [id A]
         ├─ x [id B]
         └─ [ 1., -0.] [id C]
        Add [id D]
         ├─ Constant [id E]
         └─ x [id B]
        """
    )


def test_root_outputs() -> None:
    x = vector("x")
    graph = checked_graph([x], [x, Constant(2)])
    assert dprint(graph, file=None) == expected(
        """
        x [id A] float64(?,)
        2 [id B] int64()
        """
    )


def test_inner_graphs_are_printed_below_once() -> None:
    x = vector("x")
    p, q = Param(0, VECTOR), Param(1, VECTOR)
    composite = Composite(Graph([p, q], [Scale(0.5)(add(exp(p), q))]))
    graph = checked_graph([x], [add(composite(x, exp(x)), composite(exp(x), x))])
    assert dprint(graph, file=None) == expected(
        """
        Add [id A] float64(?,)
         ├─ Composite{inner_graph=<graph>} [id B] float64(?,)
         │  ├─ x [id C] float64(?,)
         │  └─ Exp [id D] float64(?,)
         │     └─ x [id C] float64(?,)
         └─ Composite{inner_graph=<graph>} [id E] float64(?,)
            ├─ Exp [id D] ···
            └─ x [id C] float64(?,)

        Inner graphs:

        Composite{inner_graph=<graph>} [id B]
         Scale{factor=0.5} [id F] float64(?,)
          └─ Add [id G] float64(?,)
             ├─ Exp [id H] float64(?,)
             │  └─ p0 [id I] float64(?,)
             └─ p1 [id J] float64(?,)
        """
    )


def test_max_depth_cuts_deep_subtrees() -> None:
    x = vector("x")
    value: Variable = x
    for _ in range(5):
        value = exp(value)
    assert dprint(value, max_depth=3, file=None) == expected(
        """
        Exp [id A] float64(?,)
         └─ Exp [id B] float64(?,)
            └─ Exp [id C] float64(?,)
               └─ Exp [id D] … (max_depth=3)
        """
    )


def test_prints_to_the_given_file_and_is_deterministic() -> None:
    x = vector("x")
    graph = checked_graph([x], [add(exp(x), x)])
    sink = io.StringIO()
    text = dprint(graph, file=sink)
    assert sink.getvalue() == text + "\n"
    renamed = vector("x")
    assert dprint(checked_graph([renamed], [add(exp(renamed), renamed)]), file=None) == text
