"""`pt.einsum`, a composition of existing ops: values against `numpy.einsum` with static,
unknown and broadcast (static 1) lengths, the lowering's structure (one MatMul per pair,
no outer product by elementwise multiply), derivatives against finite differences, a
compiled case, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ops as pt
from fgraph import Graph, Input, ShapeError, TensorType, check_graph, evaluate
from numba_backend import function
from ops.elemwise import Elemwise
from ops.scalar_ops import Mul
from rewrite import optimize
from tests.ops.checks import check_pullback, run

Array = np.ndarray[Any, np.dtype[Any]]
Shapes = list[tuple[int, ...]]

CASES: list[tuple[str, Shapes]] = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("...ij,jk->...ik", [(6, 5, 2, 3), (3, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("i,i,i->", [(4,), (4,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->j", [(3, 3, 4)]), ("iii->i", [(3, 3, 3)]), (",ij->ij", [(), (2, 3)]),
    ("i,->i", [(3,), ()]), ("->", [()]), ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("...i,...i->...", [(2, 3, 4), (2, 3, 4)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i...->...", [(3, 2, 4)]), ("ji", [(2, 3)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij,j->i", [(2, 3), (3,)]), ("ij,jk->i", [(2, 3), (3, 4)]), ("ij->...ij", [(2, 3)]),
    ("Ab,bC->CA", [(2, 3), (3, 4)]), (" i j , j k -> k i ", [(2, 3), (3, 4)]),
    ("ii,i->i", [(3, 3), (3,)]), ("ij...,jk->ik...", [(2, 3, 5), (3, 4)]),
]


def static_inputs(values: list[Array]) -> list[Input]:
    return [Input(TensorType(v.dtype.name, v.shape), f"x{k}") for k, v in enumerate(values)]


def evaluated(subscripts: str, inputs: list[Input], values: list[Array]) -> Array:
    """`pt.einsum` over `inputs`, validated and evaluated on `values`."""
    output = pt.einsum(subscripts, *inputs)
    check_graph(Graph(inputs, [output]))
    (result,) = evaluate([output], dict(zip(inputs, values)))
    return result


def assert_matches_numpy(subscripts: str, got: Array, values: list[Array]) -> None:
    expected = np.einsum(subscripts, *values)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("subscripts, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(subscripts: str, shapes: Shapes) -> None:
    values = [np.random.default_rng(0).normal(size=shape) for shape in shapes]
    assert_matches_numpy(subscripts, evaluated(subscripts, static_inputs(values), values), values)
    assert_matches_numpy(subscripts, run(lambda *xs: pt.einsum(subscripts, *xs), values), values)


DTYPE_CASES = [("bool", "bool"), ("bool", "int64"), ("int8", "int8"), ("uint8", "int32"),
               ("int8", "float32"), ("float32", "float32"), ("int32", "float64")]


@pytest.mark.parametrize("dtypes", DTYPE_CASES, ids=str)
@pytest.mark.parametrize("subscripts, shapes", [("ij,j->", [(3, 3), (3,)]), ("ij,j->i", [(3, 3), (3,)]),
                                                ("ij,jk->ik", [(3, 3), (3, 3)]), ("ii,i", [(3, 3), (3,)])])
def test_einsum_computes_in_the_common_dtype(
    subscripts: str, shapes: Shapes, dtypes: tuple[str, str]
) -> None:
    """As `numpy.einsum`: in the operands' common dtype, integers wrapping in it (int8 sums
    of 100s overflow), bools summed as a logical or; not `numpy.sum`'s wider integers."""
    rng = np.random.default_rng(4)
    values = [rng.integers(0, 2 if dtype == "bool" else 101, size=shape).astype(dtype)
              for shape, dtype in zip(shapes, dtypes)]
    got = run(lambda *xs: pt.einsum(subscripts, *xs), values)
    expected = np.einsum(subscripts, *values)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


BROADCAST_CASES: list[tuple[str, Shapes]] = [
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("i,i", [(1,), (3,)]), ("ij,ij->", [(2, 1), (1, 3)]),
    ("i,i,i", [(1,), (3,), (1,)]), ("bi,bi->b", [(1, 3), (4, 3)]), ("dbb,d", [(1, 3, 3), (2,)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 4)]), ("i...,i...->...", [(2, 3), (2, 1)]),
    ("ab,ab,ab->a", [(2, 1), (1, 3), (2, 3)]), ("ij,jk->ik", [(1, 1), (1, 1)]),
]


@pytest.mark.parametrize("subscripts, shapes", BROADCAST_CASES, ids=[c[0] for c in BROADCAST_CASES])
@pytest.mark.parametrize("known", ["all", "ones"], ids=["static", "only-ones-static"])
def test_static_length_one_broadcasts(subscripts: str, shapes: Shapes, known: str) -> None:
    """As in NumPy, a length 1 broadcasts against the index's length elsewhere, also when
    that other length is unknown."""
    values = [np.random.default_rng(1).normal(size=shape) for shape in shapes]
    inputs = [
        Input(TensorType("float64", tuple(n if known == "all" or n == 1 else None for n in v.shape)))
        for v in values
    ]
    assert_matches_numpy(subscripts, evaluated(subscripts, inputs, values), values)


@st.composite
def einsum_cases(draw: st.DrawFn) -> tuple[str, list[Array], list[Input]]:
    """Random subscripts over up to three operands: repeated indices, indices of static
    length 1, an optional leading ellipsis, implicit or explicit output, and each
    operand's type either fully static or static only in its length-1 axes."""
    lengths = dict(zip("abcd", draw(st.lists(st.integers(2, 3), min_size=4, max_size=4))))
    batch = draw(st.lists(st.integers(1, 2), max_size=2))
    use_ellipsis = draw(st.booleans())
    parts, values, inputs = [], [], []
    for number in range(draw(st.integers(1, 3))):
        indices = draw(st.text(alphabet="abcd", max_size=3))
        broadcast = draw(st.sets(st.sampled_from("abcd")))
        shape = [1 if index in broadcast else lengths[index] for index in indices]
        if use_ellipsis:
            shape = [*batch[len(batch) - draw(st.integers(0, len(batch))):], *shape]
            indices = "..." + indices
        static = draw(st.booleans())
        parts.append(indices)
        values.append(np.random.default_rng(number).normal(size=shape))
        inputs.append(Input(TensorType("float64", tuple(n if static or n == 1 else None
                                                        for n in shape))))
    subscripts = ",".join(parts)
    if draw(st.booleans()):
        used = sorted(set("".join(parts).replace(".", "")))
        output = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
        subscripts += "->" + ("..." if use_ellipsis else "") + output
    return subscripts, values, inputs


@given(einsum_cases())
def test_einsum_matches_numpy_on_random_subscripts(case: tuple[str, list[Array], list[Input]]) -> None:
    subscripts, values, inputs = case
    assert_matches_numpy(subscripts, evaluated(subscripts, inputs, values), values)


def elementwise_products(graph: Graph) -> list[str]:
    """The elementwise multiplications of arrays (not of the scalar lengths that shape
    computations multiply)."""
    return [str(node.op) for node in graph.nodes
            if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Mul)
            and node.output_types[0].ndim > 0]


@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown"])
def test_a_batched_contraction_is_one_matmul(static: bool) -> None:
    x_shape: tuple[int | None, ...] = (5, 2, 3) if static else (None, None, None)
    y_shape: tuple[int | None, ...] = (5, 3, 4) if static else (None, None, None)
    x, y = Input(TensorType("float64", x_shape), "x"), Input(TensorType("float64", y_shape), "y")
    raw = Graph([x, y], [pt.einsum("bij,bjk->bik", x, y)])
    for graph in (raw, optimize(raw)):
        names = [type(node.op).__name__ for node in graph.nodes]
        assert names.count("MatMul") == 1
        assert elementwise_products(graph) == []


def test_outer_products_and_chains_are_matmuls() -> None:
    """No operand pair is multiplied as a broadcast outer product: an outer product is a
    MatMul over a contracted length 1, a chain one MatMul per pair."""
    x, y, z = pt.matrix("x"), pt.matrix("y"), pt.matrix("z")
    for output, products in [(pt.einsum("ij,kl->ijkl", x, y), 1),
                             (pt.einsum("ij,jk,kl->il", x, y, z), 2)]:
        graph = Graph([x, y, z], [output])
        assert [type(node.op).__name__ for node in graph.nodes].count("MatMul") == products
        assert elementwise_products(graph) == []


def test_an_index_in_one_operand_is_summed_before_the_product() -> None:
    """In "ij,jk->i" the k axis is summed out of y first: the product is (2, 3) @ (3, 1)."""
    x, y = pt.matrix("x", shape=(2, 3)), pt.matrix("y", shape=(3, 4))
    graph = Graph([x, y], [pt.einsum("ij,jk->i", x, y)])
    (product,) = [node for node in graph.nodes if isinstance(node.op, pt.MatMul)]
    assert [v.type.shape for v in product.inputs] == [(2, 3), (3, 1)]


@pytest.mark.parametrize("subscripts, shapes", [("ij,jk->ik", [(2, 3), (3, 4)]),
                                                ("bij,bkj->bik", [(2, 2, 3), (2, 2, 3)]),
                                                ("ii,i,ij->j", [(3, 3), (3,), (3, 2)])])
def test_einsum_derivatives(subscripts: str, shapes: Shapes) -> None:
    rng = np.random.default_rng(2)
    check_pullback(lambda *xs: pt.einsum(subscripts, *xs), [rng.normal(size=s) for s in shapes])


def test_einsum_compiles() -> None:
    x, y, z = pt.tensor3("x"), pt.matrix("y"), pt.vector("z")
    compiled = function([x, y, z], pt.einsum("...ij,jk,k->...i", x, y, z))
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 5)), rng.normal(size=5)
    np.testing.assert_allclose(compiled(a, b, c), np.einsum("...ij,jk,k->...i", a, b, c), rtol=1e-12)


@pytest.mark.parametrize(
    "subscripts, shapes, message",
    [
        ("ij,jk->ik", [(2, 3)], "'ij,jk->ik': 2 operand subscripts for 1 operands"),
        ("ij->ij", [(2, 3, 4)], "'ij->ij': subscripts 'ij' for an operand of rank 3"),
        ("...ijk", [(2, 3)], "subscripts '...ijk' for an operand of rank 2"),
        ("ij->k", [(2, 3)], "'ij->k': output indices \\['k'\\] are in no operand"),
        ("ij->ii", [(2, 3)], "'ij->ii': an output index repeats"),
        ("i1->i", [(2, 3)], "'i1->i': invalid subscripts 'i1'"),
        ("i.j", [(2, 3)], "invalid subscripts 'i.j'"),
        ("ij->i-", [(2, 3)], "invalid output subscripts 'i-'"),
        ("...i->i", [(2, 3)], "'...i->i': the output needs '...' for the 1 axes it covers"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "'ij,jk->ik': index 'j' has lengths 3 and 4"),
        ("ii", [(1, 3)], "'ii': repeated index 'i' of 'ii' has lengths 1 and 3"),
    ],
)
def test_einsum_errors(subscripts: str, shapes: Shapes, message: str) -> None:
    """Each a ValueError (ShapeError is one) that names the subscripts."""
    with pytest.raises(ValueError, match=message):
        pt.einsum(subscripts, *static_inputs([np.zeros(s) for s in shapes]))


def test_unequal_static_lengths_raise_a_shape_error() -> None:
    with pytest.raises(ShapeError):
        pt.einsum("i,i", pt.vector("x", shape=(2,)), pt.vector("y", shape=(3,)))
