"""Views (DimShuffle, Subtensor) that only drop or insert length-1 axes keep their
source's memory order (`intrinsics.with_layout_of`): values are right for C-ordered,
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
    assert compiled.source.count("with_layout_of(") == 5
    assert "with_layout_of(i1[::2" not in compiled.source  # a strided view stays strided
    rng = np.random.default_rng(5)
    values = [rng.normal(size=(6, 1)), rng.normal(size=(6, 4))]
    wanted = evaluate(outputs, dict(zip([x, m], values)))
    for got, expected in zip(compiled(*values), wanted):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)
