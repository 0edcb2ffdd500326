"""Views (DimShuffle, Subtensor) that only drop or insert length-1 axes keep their
source's memory order (`intrinsics.with_layout_of`, `intrinsics.dimshuffled`): values are right for C-ordered,
Fortran-ordered and strided sources, in element loops, reductions and BLAS products
reading them."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import evaluate
from numba_backend import function


def test_dropped_and_inserted_axes_over_every_memory_order() -> None:
    x = pt.tensor("x", shape=(None, 1))
    m = pt.matrix("m")
    column = x[:, 0]  # drop a length-1 axis of a C-ordered input
    transposed = x.T[0]  # of a Fortran-ordered view
    strided = m[::2, :1][:, 0]  # of a strided view
    outputs = [
        pt.exp(column)[:, None] * 2,  # insert, then an element loop
        (transposed[None, :] + 1).sum(axis=1),
        pt.matmul(m.T[:, :, None][:, :, 0], column[: m.shape[0]]),  # BLAS on a view
        strided * 3,
    ]
    compiled = function([x, m], outputs)
    assert compiled.source.count("with_layout_of(") + compiled.source.count("dimshuffled(") == 5
    assert "with_layout_of(i1[::2" not in compiled.source  # a strided view stays strided
    rng = np.random.default_rng(5)
    values = [rng.normal(size=(6, 1)), rng.normal(size=(6, 4))]
    wanted = evaluate(outputs, dict(zip([x, m], values)))
    for got, expected in zip(compiled(*values), wanted):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_dimshuffled_views_drop_permute_and_insert_over_every_memory_order() -> None:
    """`dimshuffled` views (any DimShuffle but the identity and a full reversal), read by
    element loops and written out, equal NumPy's for C, Fortran, strided and reversed
    sources, including empty ones."""
    from ops.dimshuffle import DimShuffle

    x = pt.tensor("x", shape=(None, 1, None))
    orders = [(2, 0), (None, 0, None, 2), (0, None, 2, None), (2, None, 0), (None, 2, 1, 0)]
    views = [DimShuffle(order)(x) for order in orders]
    outputs = [view * 1.0 for view in views] + [pt.exp(views[0]).sum(axis=0)]
    compiled = function([x], outputs)
    assert compiled.source.count("dimshuffled(") == len(orders)
    rng = np.random.default_rng(6)
    base = rng.normal(size=(8, 1, 10))
    sources = {"C": base[:4, :, :5].copy(), "F": np.asfortranarray(base[:4, :, :5]),
               "strided": base[::2, :, ::2], "reversed": base[::-2, :, ::-2],
               "empty": base[:0, :, :3]}
    for name, value in sources.items():
        wanted = evaluate(outputs, {x: value})
        for got, expected in zip(compiled(value), wanted):
            assert got.shape == expected.shape, name
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=name)
