"""Compiled matrix products against NumPy, across the three ways the kernel computes
them: written out inline for small static shapes (`blas.small_matmul_into`, at most
`SMALL_PRODUCT` multiply-adds), one compiled BLAS call per dtype otherwise
(`blas.matmul_into`), explicit loops for integers. Operands are views of every layout
(transposed, strided, reversed), shapes include empty and length-1 axes, and batches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from numba_backend import function
from numba_backend.blas import SMALL_PRODUCT
from numba_backend.codegen import generate
from fgraph import Graph
from rewrite import optimize

Array = np.ndarray[Any, np.dtype[Any]]
Views = Callable[[Array], Array]

VIEWS: dict[str, Views] = {
    "contiguous": lambda a: a,
    "transposed": lambda a: np.ascontiguousarray(a.T).T,
    "strided": lambda a: np.repeat(np.repeat(a, 2, axis=-2), 3, axis=-1)[..., ::2, ::3],
    "reversed": lambda a: np.ascontiguousarray(a[..., ::-1, ::-1])[..., ::-1, ::-1],
}

SHAPES = [((2, 2), (2, 2)), ((3, 1), (1, 4)), ((1, 5), (5, 1)), ((4, 4), (4, 8)),
          ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((12, 12), (12, 12)), ((2, 3, 2), (2, 2)),
          ((3, 2, 2), (1, 2, 2)), ((0, 2, 2), (0, 2, 2)), ((2, 1, 1, 3), (1, 4, 3, 2))]
"""Stacks of small matrices (`small_matmul_into` takes them whole) broadcast either way,
and may be empty."""


def _value(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Array:
    if dtype.startswith("complex"):
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-5, 5, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
def test_products_of_static_shapes_equal_numpys_for_every_layout(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], dtype: str
) -> None:
    x = pt.tensor("x", shape=shapes[0], dtype=dtype)
    y = pt.tensor("y", shape=shapes[1], dtype=dtype)
    # the operands are views inside the graph too: transposes of transposes, reversals
    compiled = function([x, y], [x @ y, pt.transpose(pt.transpose(x)) @ y[..., ::-1, :]])
    rng = np.random.default_rng(0)
    for name, view in VIEWS.items():
        a, b = view(_value(rng, shapes[0], dtype)), view(_value(rng, shapes[1], dtype))
        got = compiled(a, b)
        tolerance = 1e-5 if dtype in ("float32",) else 1e-12
        np.testing.assert_allclose(got[0], a @ b, rtol=tolerance, atol=tolerance, err_msg=name)
        np.testing.assert_allclose(got[1], a @ b[..., ::-1, :], rtol=tolerance, atol=tolerance,
                                   err_msg=name)


def test_stacks_of_unknown_length() -> None:
    """Small products over stacks whose lengths are known at run time only: equal
    lengths multiply, others raise (broadcasting needs a static length of 1, as for
    every op), a static length of 1 broadcasts against any."""
    x = pt.tensor("x", shape=(None, 2, 3))
    y = pt.tensor("y", shape=(None, 3, 2))
    one = pt.tensor("one", shape=(1, 3, 2))
    compiled = function([x, y, one], [x @ y, x @ one])
    rng = np.random.default_rng(1)
    single = rng.normal(size=(1, 3, 2))
    for length in (4, 1, 0):
        a, b = rng.normal(size=(length, 2, 3)), rng.normal(size=(length, 3, 2))
        product, broadcast = compiled(a, b, single)
        np.testing.assert_allclose(product, a @ b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(broadcast, a @ single, rtol=1e-12, atol=1e-12)
    for lengths in ((2, 3), (1, 5)):
        with pytest.raises(ValueError, match="batch axes do not match"):
            compiled(rng.normal(size=(lengths[0], 2, 3)), rng.normal(size=(lengths[1], 3, 2)),
                     single)


def test_small_static_products_are_written_out_and_others_call_blas() -> None:
    small = pt.matrix("small", shape=(4, 4))
    large = pt.matrix("large", shape=(12, 12))
    unknown = pt.matrix("unknown")
    graph = optimize(Graph([small, large, unknown], [small @ small, large @ large,
                                                    unknown @ unknown]), "fast_run")
    source = generate(graph).source
    assert 4 * 4 * 4 <= SMALL_PRODUCT < 12 * 12 * 12
    assert source.count("small_matmul_into(") == 1 and source.count(" matmul_into(") == 2
