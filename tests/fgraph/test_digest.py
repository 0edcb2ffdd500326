"""Stable digests: the same graph has the same sha256 in every process and hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

from fgraph import Constant, Graph, Op, Param, TensorType, Variable
from tests.fgraph.builders import VECTOR, checked_graph, vector
from tests.fgraph.toy_ops import Composite, Scale, SplitSign, add, exp, sub

REPO_ROOT = Path(__file__).resolve().parents[2]


def reference_graph() -> Graph:
    """A graph with every kind of ingredient: params of ops, constants, a multi-output
    node, an op holding an inner graph, and a shared subexpression."""
    x, y = vector("x"), vector("y", dtype="int32", length=3)
    p = Param(0, VECTOR)
    inner = Graph([p], [exp(Scale(-1.5)(p))])
    positive, negative = SplitSign().apply(sub(x, y))
    shared = exp(positive)
    outputs = [
        add(Composite(inner)(shared), negative),
        add(shared, Constant(np.array([0.5, -0.0, np.nan]))),
    ]
    return checked_graph([x, y], outputs)


def test_digest_is_stable_across_processes_and_hash_seeds() -> None:
    script = "from tests.fgraph.test_digest import reference_graph; print(reference_graph().digest)"
    digests = set()
    for seed in ("0", "1", "4242"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO_ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(result.stdout.strip())
    assert digests == {reference_graph().digest}


def test_digest_is_a_sha256_hex_string_computed_once() -> None:
    graph = reference_graph()
    assert len(graph.digest) == 64
    int(graph.digest, 16)
    assert graph.digest is graph.digest


def test_digest_ignores_input_names_like_equality() -> None:
    x, y = vector("x"), vector("y")
    a, b = vector("a"), vector("b")
    assert Graph([x, y], [sub(x, y)]).digest == Graph([a, b], [sub(a, b)]).digest
    p, q = Param(0, VECTOR), Param(1, VECTOR)
    assert Graph([x, y], [sub(x, y)]).digest == Graph([p, q], [sub(p, q)]).digest


def different_graphs() -> list[Graph]:
    x, y = vector("x"), vector("y")
    narrow = vector("x", dtype="float32")
    p = Param(0, VECTOR)
    return [
        Graph([x, y], [sub(x, y)]),
        Graph([y, x], [sub(x, y)]),
        Graph([x, y], [sub(x, y), x]),
        Graph([x, y], [x, sub(x, y)]),
        Graph([x, y], [sub(x, x)]),
        Graph([x], [exp(x)]),
        Graph([x], [exp(x)], dedup_nodes=False),
        Graph([x], [exp(exp(x))]),
        Graph([narrow], [exp(narrow)]),
        Graph([x], [Scale(2.0)(x)]),
        Graph([x], [Scale(3.0)(x)]),
        Graph([x], [add(x, Constant(0.0))]),
        Graph([x], [add(x, Constant(-0.0))]),
        Graph([x], [add(x, Constant(np.float32(0.0)))]),
        Graph([x], [add(x, Constant(np.array([0.0])))]),
        Graph([x], [SplitSign().apply(x)[0]]),
        Graph([x], [SplitSign().apply(x)[1]]),
        Graph([x], [Composite(Graph([p], [exp(p)]))(x)]),
        Graph([x], [Composite(Graph([p], [exp(exp(p))]))(x)]),
    ]


def test_different_graphs_have_different_digests() -> None:
    graphs = different_graphs()
    assert len({graph.digest for graph in graphs}) == len(graphs)
    assert len(set(graphs)) == len(graphs)  # and equality agrees


def test_equal_graphs_have_equal_digests() -> None:
    for one, two in zip(different_graphs(), different_graphs()):
        assert one == two
        assert one.digest == two.digest


@attrs.frozen
class Tagged(Op):
    """An op with a parameter the digest cannot encode."""

    tag: object

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)


def test_undigestable_op_parameter_raises_naming_its_type() -> None:
    x = vector("x")
    out: Variable = Tagged(range(3))(x)
    with pytest.raises(TypeError, match="cannot digest a parameter of type range"):
        _ = Graph([x], [out]).digest
    assert len(Graph([x], [Tagged((1, "a", None, frozenset({2})))(x)]).digest) == 64
    assert len(Graph([x], [Tagged(TensorType("int8", (2,)))(x)]).digest) == 64


def test_structure_digest_ignores_constant_values_only() -> None:
    """The structure digest names compiled code: constants are arguments to it."""
    from fgraph import Constant, Graph, Input, TensorType
    from tests.fgraph.toy_ops import add

    x = Input(TensorType("float64", (2,)), "x")
    two = Graph([x], [add(x, Constant(np.array([2.0, 2.0])))])
    three = Graph([x], [add(x, Constant(np.array([3.0, 3.0])))])
    longer = Graph([x], [add(x, Constant(np.array([3.0])))])
    assert two.digest != three.digest
    assert two.structure_digest == three.structure_digest
    assert longer.structure_digest != three.structure_digest
    assert two.structure_digest != two.digest
