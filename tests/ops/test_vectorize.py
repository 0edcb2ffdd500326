"""`pt.vectorize_graph` and `pt.vmap` against a Python loop over the batch: every op
family (with and without a batching rule of its own), loops, gradients in both orders
(`grad(vmap(f))` and per-example `vmap(grad(f))`), compiled code, random graphs, and
the structure: batched ops, not loops, where an op has a rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ops as pt
from fgraph import DTypeError, Graph, Input, ShapeError, TensorType, Variable, evaluate, toposort
from numba_backend import function
from ops.scan_op import Scan
from tests.graph_strategies import GeneratedGraph, assert_outputs_close, graphs, scaled_examples

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(0)
BATCH = 4


def unknown(value: Array, name: str) -> Input:
    return Input(TensorType(value.dtype.name, (None,) * value.ndim), name)


def looped(fn: Callable[..., Variable], batched: Sequence[Array], fixed: Sequence[Array]) -> Array:
    """fn applied to each element of the batch, by evaluating it once per element."""
    examples = [unknown(x[0], f"e{k}") for k, x in enumerate(batched)]
    constants = [unknown(c, f"c{k}") for k, c in enumerate(fixed)]
    output = fn(*examples, *constants)
    rows = []
    for i in range(batched[0].shape[0]):
        feed: dict[Variable, Array] = {e: x[i] for e, x in zip(examples, batched)}
        feed.update(zip(constants, fixed))
        rows.append(evaluate([output], feed)[0])
    return np.stack(rows)


def check_vmap(fn: Callable[..., Variable], batched: Sequence[Array], fixed: Sequence[Array] = ()) -> Variable:
    inputs = [unknown(x, f"b{k}") for k, x in enumerate(batched)]
    constants = [unknown(c, f"c{k}") for k, c in enumerate(fixed)]
    mapped = pt.vmap(fn, in_axes=[0] * len(inputs) + [None] * len(constants))(*inputs, *constants)
    assert isinstance(mapped, Variable)
    (got,) = evaluate([mapped], {**dict(zip(inputs, batched)), **dict(zip(constants, fixed))})
    expected = looped(fn, batched, fixed)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    return mapped


X = RNG.normal(size=(BATCH, 3, 5))
V = RNG.normal(size=(BATCH, 5))
W = RNG.normal(size=(5, 2))
S = RNG.normal(size=(BATCH, 3, 3))
SPD = S @ np.swapaxes(S, -1, -2) + 3 * np.eye(3)

CASES: list[tuple[str, Callable[..., Variable], list[Array], list[Array]]] = [
    ("elementwise", lambda x: pt.exp(x) * 2 + pt.sin(x), [X], []),
    ("elementwise with unbatched", lambda x, w: x * w[:, 0][None, :3].T, [X], [W]),
    ("sum", lambda x: x.sum(axis=0), [X], []),
    ("max", lambda x: pt.max(x, axis=1), [X], []),
    ("argmax", lambda x: pt.argmax(x, axis=1), [X], []),
    ("argmax flattened (loop)", lambda x: pt.argmax(x), [X], []),
    ("cumsum", lambda x: pt.cumsum(x, axis=1), [X], []),
    ("softmax", lambda x: pt.softmax(x, axis=-1), [X], []),
    ("transpose", lambda x: x.T, [X], []),
    ("basic indexing", lambda x: x[1:, ::2], [X], []),
    ("advanced indexing (loop)", lambda x: x[[0, 2]], [X], []),
    ("index update", lambda x: pt.set_subtensor(x[0], 1.0), [X], []),
    ("reshape", lambda x: x.reshape((15,)), [X], []),
    ("shape", lambda x: pt.zeros_like(x) + x.shape[0], [X], []),
    ("broadcast_to", lambda v: pt.broadcast_to(v, (3, 5)), [V], []),
    ("concatenate (loop)", lambda x: pt.concatenate([x, x * 2]), [X], []),
    ("sort (loop)", lambda x: pt.sort(x), [X], []),
    ("matmul unbatched", lambda x, w: x @ w, [X], [W]),
    ("matmul both", lambda x, y: x @ y, [X, RNG.normal(size=(BATCH, 5, 2))], []),
    ("cholesky", pt.linalg.cholesky, [SPD], []),
    ("solve", pt.linalg.solve, [SPD, RNG.normal(size=(BATCH, 3))], []),
    ("det", pt.linalg.det, [S], []),
    ("special", lambda x: pt.gammaln(pt.abs(x) + 1), [X], []),
    ("einsum", lambda x, w: pt.einsum("ij,jk->ik", x, w), [X], [W]),
    ("scan over a batched sequence", lambda x, h0: pt.scan(
        lambda a, prev: pt.tanh(prev + a), sequences=[x], outputs_info=[h0]), [X], [RNG.normal(size=5)]),
    ("scan with a batched carry", lambda h0: pt.scan(
        lambda prev: prev * 0.5 + 1, outputs_info=[h0], n_steps=3), [V], []),
    ("gradient inside", lambda x: pt.grad(pt.sum(pt.tanh(x) ** 2), x), [V], []),
    ("per-example gradient", lambda x, w: pt.grad(pt.sum(pt.sigmoid(x @ w)), w), [V], [W]),
    ("per-example gradient through a loop", lambda x, w: pt.grad(pt.sum(pt.scan(
        lambda a, prev, w: pt.tanh(w @ prev + a), sequences=[x], outputs_info=[pt.zeros(5)],
        non_sequences=[w]) ** 2), w), [X], [RNG.normal(size=(5, 5)) * 0.3]),
]


@pytest.mark.parametrize("fn, batched, fixed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vmap_matches_a_loop(fn: Callable[..., Variable], batched: list[Array], fixed: list[Array]) -> None:
    check_vmap(fn, batched, fixed)


def node_names(output: Variable) -> list[str]:
    return [type(node.op).__name__ for node in toposort([output])]


def test_ops_with_rules_are_batched_not_looped() -> None:
    x, w = pt.tensor3("x"), pt.matrix("w")
    mapped = pt.vmap(lambda a: pt.exp(a @ w).sum(axis=0), in_axes=0)(x)
    assert isinstance(mapped, Variable)
    assert "Scan" not in node_names(mapped) and node_names(mapped).count("MatMul") == 1
    h0 = pt.vector("h0", shape=(5,))
    loop = pt.vmap(lambda a: pt.scan(lambda r, prev: pt.tanh(prev + r), sequences=[a], outputs_info=[h0]))(x)
    assert isinstance(loop, Variable)
    scans = [node.op for node in toposort([loop]) if isinstance(node.op, Scan)]
    assert len(scans) == 1  # one loop whose body is batched, not a loop of loops
    assert scans[0].inner_graph.inputs[0].type.shape == (None, 5)


def test_grad_of_vmap() -> None:
    x, w = pt.matrix("x"), pt.vector("w")
    loss = pt.sum(pt.vmap(lambda row: pt.log1p(pt.exp(-(row @ w))))(x))
    gradient = pt.grad(loss, w)
    values: dict[Variable, Array] = {x: RNG.normal(size=(6, 3)), w: RNG.normal(size=3)}
    (got,) = evaluate([gradient], values)
    direct = pt.grad(pt.sum(pt.log1p(pt.exp(-(x @ w)))), w)
    np.testing.assert_allclose(got, evaluate([direct], values)[0], rtol=1e-12)


def test_in_and_out_axes() -> None:
    x = pt.matrix("x")
    mapped = pt.vmap(lambda column: column * 2, in_axes=1, out_axes=1)(x)
    assert isinstance(mapped, Variable)
    value = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(evaluate([mapped], {x: value})[0], value * 2)
    several = pt.vmap(lambda a: [a.sum(), a * 0 + 1.0], out_axes=[0, 1])(x)
    assert isinstance(several, list)
    total, ones = evaluate(several, {x: value})
    np.testing.assert_allclose(total, value.sum(axis=1))
    assert ones.shape == (4, 3)


def test_outputs_independent_of_the_batch_are_repeated() -> None:
    x, c = pt.matrix("x"), pt.vector("c")
    mapped = pt.vmap(lambda row, constant: constant * 2, in_axes=[0, None])(x, c)
    assert isinstance(mapped, Variable)
    got = evaluate([mapped], {x: np.zeros((3, 2)), c: np.array([1.0, 2.0])})[0]
    np.testing.assert_array_equal(got, [[2.0, 4.0]] * 3)


def test_vectorize_graph_with_several_batch_axes() -> None:
    x = pt.vector("x")
    y = pt.exp(x).sum() + x[0]
    xb = pt.tensor3("xb")
    (batched,) = pt.vectorize_graph([y], replace={x: xb})
    value = RNG.normal(size=(2, 3, 4))
    expected = np.exp(value).sum(axis=-1) + value[..., 0]
    np.testing.assert_allclose(evaluate([batched], {xb: value})[0], expected)


def test_vectorize_graph_errors() -> None:
    x = pt.vector("x")
    with pytest.raises(ShapeError, match="batch axes"):
        pt.vectorize_graph([x * 2], replace={x: pt.scalar("s")})
    with pytest.raises(DTypeError, match="another dtype"):
        pt.vectorize_graph([x * 2], replace={x: pt.matrix("m", dtype="float32")})


def test_batched_graphs_compile() -> None:
    x, w = pt.matrix("x"), pt.vector("w")
    per_example = pt.vmap(lambda row: pt.grad(pt.log1p(pt.exp(-(row @ w))), w))(x)
    assert isinstance(per_example, Variable)
    compiled = function([x, w], per_example)
    values = [RNG.normal(size=(5, 3)), RNG.normal(size=3)]
    np.testing.assert_allclose(compiled(*values), evaluate([per_example], dict(zip([x, w], values)))[0],
                               rtol=1e-12)


@settings(max_examples=scaled_examples(0.3), deadline=None)
@given(example=graphs(max_steps=5), batch=st.integers(1, 3))
def test_random_graphs_vectorize(example: GeneratedGraph, batch: int) -> None:
    """Each input batched (its value repeated with noise): the batched graph's element
    i is the graph on element i."""
    graph = example.graph
    batched_inputs = [Input(TensorType(v.dtype, (batch, *v.type.shape)), f"batched {k}")
                      for k, v in enumerate(graph.inputs)]
    outputs = pt.vectorize_graph(list(graph.outputs), dict(zip(graph.inputs, batched_inputs)))
    values = [np.stack([v * (1 + 0.01 * i) for i in range(batch)]).astype(v.dtype) for v in example.values]
    got = evaluate(outputs, dict(zip(batched_inputs, values)))
    for i in range(batch):
        expected = evaluate(list(graph.outputs), dict(zip(graph.inputs, [v[i] for v in values])))
        element = GeneratedGraph(Graph(list(graph.inputs), list(graph.outputs)), tuple(v[i] for v in values),
                                 example.bounds)
        rows = [g[i] if g.ndim > e.ndim else g for g, e in zip(got, expected)]
        assert_outputs_close(rows, expected, element)
