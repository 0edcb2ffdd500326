"""Every reduction, arg-reduction and running scan compiled by numba agrees with the
reference evaluator (values and dtypes) across axes, ranks (0-d included) and dtypes,
NaN propagation and empty axes included. Cases are batched into a few compiled
functions (each compile costs about half a second or more)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Op, check_graph, evaluate
from numba_backend import function, numba_kernel
from ops.reduction import (
    AllTrue,
    AnyTrue,
    Argmax,
    Argmin,
    CumProd,
    CumSum,
    Max,
    Min,
    Prod,
    Sum,
)
from tests.numba_backend.batch_parity import Batch, assert_same

Array = np.ndarray[Any, np.dtype[Any]]
REDUCTIONS: tuple[type[Sum | Prod | Max | Min | AllTrue | AnyTrue], ...] = (
    Sum,
    Prod,
    Max,
    Min,
    AllTrue,
    AnyTrue,
)
RANK3_AXES: tuple[tuple[int, ...], ...] = ((), (0,), (1, 2), (0, 2), (0, 1, 2))


def assert_batch(batch: Batch, rtol: float = 1e-12) -> None:
    failures = []
    for name, (got, want) in batch.results().items():
        try:
            assert_same(got, want, rtol=rtol)
        except AssertionError as error:
            failures.append(f"{name}: {error}")
    assert not failures, "\n".join(failures)


def add_every_op(batch: Batch, x: Any, label: str, axes_sets: tuple[tuple[int, ...], ...]) -> None:
    """Each reduction over each axes set, each arg-reduction and scan along the first and
    last axes (and all axes), applied to `x`."""
    for op_class in REDUCTIONS:
        for axes in axes_sets:
            batch.case(f"{label} {op_class.__name__}{axes}", op_class(axes)(x))
    for arg_class in (Argmax, Argmin):
        for axis in (None, 0, x.ndim - 1) if x.ndim else (None,):
            batch.case(f"{label} {arg_class.__name__}({axis})", arg_class(axis)(x))
    for scan_class in (CumSum, CumProd):
        for axis in (0, x.ndim - 1) if x.ndim else ():
            for reverse in (False, True):
                name = f"{label} {scan_class.__name__}({axis}, {reverse})"
                batch.case(name, scan_class(axis, reverse)(x))


def test_axes_and_ranks_float64() -> None:
    """Leading, trailing, interleaved, all and no axes of a rank-3 input with static and
    unknown lengths; a rank-1 and a 0-d input."""
    batch = Batch(seed=1)
    x = batch.input((2, 3, 5), static=(None, 3, None))
    add_every_op(batch, x, "rank3", RANK3_AXES)
    vector = batch.input((5,))
    add_every_op(batch, vector, "rank1", ((), (0,)))
    scalar = batch.input(np.asarray(1.5), static=())
    add_every_op(batch, scalar, "rank0", ((),))
    check_graph(Graph(batch.inputs, batch.outputs))
    assert_batch(batch)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_dtypes(dtype: str) -> None:
    """Output dtypes as NumPy's (int8 sums and products widen to int64, bools count), with
    wrap-around and ties (first position wins) for small integers."""
    batch = Batch(seed=2)
    if dtype == "bool":
        values = batch.rng.random((3, 6)) < 0.5
    else:
        values = batch.rng.integers(-3, 4, size=(3, 6)).astype(dtype)
    x = batch.input(values, static=(None, None))
    add_every_op(batch, x, dtype, ((0,), (0, 1)))
    assert_batch(batch, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_nan_propagation() -> None:
    """NaN wins in Max and Min; Argmax and Argmin give the first NaN; NaN is true for All."""
    nan = np.nan  # in different accumulator lanes and in the remainder of a row of 6
    values = np.array(
        [
            [1.0, nan, 3.0, nan, 2.0, 0.0],
            [2.0, 5.0, -1.0, 0.0, 7.0, nan],
            [nan, 7.0, 1.0, 2.0, 9.0, 3.0],
            [1.0, 2.0, 3.0, 4.0, 6.0, 5.0],
        ]
    )
    batch = Batch()
    x = batch.input(values, static=(None, None))
    add_every_op(batch, x, "nan", ((0,), (1,), (0, 1)))
    assert_batch(batch)


def test_empty_axes_with_identity() -> None:
    """Sum, Prod, All and Any over an empty axis give their identity; scans give empty
    arrays; reducing only the non-empty axis gives an empty result."""
    batch = Batch()
    x = batch.input(np.zeros((0, 3)), static=(None, None))
    for op_class in (Sum, Prod, AllTrue, AnyTrue):
        for axes in ((0,), (1,), (0, 1)):
            batch.case(f"{op_class.__name__}{axes}", op_class(axes)(x))
    batch.case("Max(1)", Max((1,))(x))
    batch.case("Argmin(1)", Argmin(1)(x))
    batch.case("CumSum(0)", CumSum(0)(x))
    batch.case("CumProd(1, True)", CumProd(1, True)(x))
    assert_batch(batch)


@pytest.mark.parametrize(
    "op", [Max((0,)), Min((0, 1)), Argmax(0), Argmin(None)], ids=lambda op: str(op)
)
def test_empty_axes_without_identity_raise(op: Op) -> None:
    x = pt.tensor("x", shape=(None, None))
    compiled = function([x], op(x), mode="none")
    values = np.arange(6.0).reshape(2, 3)
    assert_same(compiled(values), evaluate([op(x)], {x: values})[0])
    with pytest.raises(ValueError, match="empty"):
        compiled(np.ones((0, 3)))


def test_fast_run_compositions() -> None:
    """Reductions inside the compositions built on them, optimized and fused."""
    batch = Batch(seed=3)
    x = batch.input((3, 5), static=(None, None))
    batch.case("softmax", pt.softmax(x, axis=-1))
    batch.case("log_softmax", pt.log_softmax(x, axis=0))
    batch.case("logsumexp", pt.logsumexp(x, axis=1))
    batch.case("var", pt.var(x, axis=0))
    batch.case("mean_keepdims", pt.mean(x, axis=1, keepdims=True) * x)
    batch.case("cumsum_flat", pt.cumsum(x))
    compiled = function(batch.inputs, batch.outputs, mode="fast_run")
    got = compiled(*batch.values)
    want = evaluate(batch.outputs, dict(zip(batch.inputs, batch.values)))
    for g, w in zip(got, want):
        assert_same(g, np.asarray(w), rtol=1e-12)


def test_every_reduction_op_has_a_kernel() -> None:
    module = importlib.import_module("ops.reduction")
    concrete = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Op)
        and value.__module__ == module.__name__
        and not getattr(value, "__abstractmethods__", None)
    ]
    assert {cls.__name__ for cls in concrete} == {
        "Sum", "Prod", "Max", "Min", "AllTrue", "AnyTrue", "Argmax", "Argmin", "CumSum", "CumProd"
    }
    fallback = numba_kernel.registry[object]
    missing = [cls.__name__ for cls in concrete if numba_kernel.dispatch(cls) is fallback]
    assert not missing, missing


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize("length", [1, 3, 15, 16, 17])
def test_static_innermost_axes_short_and_long_match_numpy(dtype: str, length: int) -> None:
    """A short static innermost axis (below 16) is reduced by one accumulator, a longer
    one by several lanes: the same values as NumPy either way, NaN first-wins included."""
    x = pt.tensor("x", shape=(2, length), dtype=dtype)
    reductions = [pt.max(x, 1), pt.min(x, 1), pt.prod(x, 1), pt.any(x, 1), pt.all(x, 1),
                  pt.max(x)]
    compiled = function([x], reductions)
    rng = np.random.default_rng(length)
    value = (rng.normal(size=(2, length)) * 3).astype(dtype)
    if dtype.startswith("float"):
        value[1, length // 2] = np.nan
    expected = [np.max(value, 1), np.min(value, 1), np.prod(value, 1), np.any(value, 1),
                np.all(value, 1), np.max(value)]
    for got, wanted in zip(compiled(value), expected):
        np.testing.assert_allclose(got, wanted, rtol=1e-6)
