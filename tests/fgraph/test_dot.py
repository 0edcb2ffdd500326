"""`to_dot`: a golden DOT text of a loop (its body as a cluster), and rendering when the
graphviz package and Graphviz's dot program are there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ops as pt
from fgraph import Graph, to_dot

GOLDEN = """\
digraph "fgraph" {
  rankdir=TB;
  compound=true;
  node [fontname=Helvetica];
  r0 [label="x0\\nfloat64()", shape=ellipse, style=filled, fillcolor=palegreen];
  n0 [label="Scan{carries=1, sequences=0, traced=T, length=3}", shape=box];
  r1 [label="3", shape=ellipse, style=filled, fillcolor=lightgrey];
  r1 -> n0 [label=0];
  r0 -> n0 [label=1];
  v0_0 [label="float64()", shape=ellipse];
  n0 -> v0_0;
  v0_1 [label="float64(4,)", shape=ellipse];
  n0 -> v0_1;
  subgraph cluster_1 {
    label="Scan{carries=1, sequences=0, traced=T, length=3} body";
    style=rounded;
    c1_r0 [label="p0\\nfloat64()", shape=ellipse];
    c1_n0 [label="Mul", shape=box];
    c1_r0 -> c1_n0 [label=0];
    c1_r1 [label="2.0", shape=ellipse, style=filled, fillcolor=lightgrey];
    c1_r1 -> c1_n0 [label=1];
    c1_v0_0 [label="float64()", shape=ellipse];
    c1_n0 -> c1_v0_0;
    c1_n1 [label="Add", shape=box];
    c1_v0_0 -> c1_n1 [label=0];
    c1_r2 [label="1.0", shape=ellipse, style=filled, fillcolor=lightgrey];
    c1_r2 -> c1_n1 [label=1];
    c1_v1_0 [label="float64()", shape=doublecircle];
    c1_n1 -> c1_v1_0;
  }
  n0 -> c1_n0 [style=dashed, lhead=cluster_1];
  n1 [label="Subtensor{1:}", shape=box];
  v0_1 -> n1;
  v1_0 [label="float64(3,)", shape=doublecircle];
  n1 -> v1_0;
}
"""


def loop_graph() -> Graph:
    x0 = pt.scalar("x0")
    return Graph([x0], [pt.scan(lambda p: p * 2 + 1, outputs_info=[x0], n_steps=3)])


def test_dot_text_of_a_loop_with_its_body_as_a_cluster() -> None:
    assert to_dot(loop_graph()) == GOLDEN


def test_render_needs_graphviz_and_dot(tmp_path: Path) -> None:
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    from fgraph import render_dot

    written = render_dot(loop_graph(), tmp_path / "loop", format="svg")
    assert written.exists() and "<svg" in written.read_text()


def test_to_dot_draws_variables_as_the_graph_they_close() -> None:
    import ops as pt

    x, w = pt.vector("x"), pt.vector("w")
    y = pt.exp(x) * 2 + (w * 3).sum()
    assert to_dot(y) == to_dot(Graph([x, w], [y]))
    assert to_dot([y, x + 1]) == to_dot(Graph([x, w], [y, x + 1]))
    with pytest.raises(TypeError, match="a Graph, a variable or a list of variables, got int"):
        to_dot(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got an empty list"):
        to_dot([])
