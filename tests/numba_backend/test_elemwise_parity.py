"""Every scalar op compiled by numba agrees with the reference evaluator: values and
dtypes, for float64, float32, int64, bool and mixed operands, special values included
(NaN, infinities, signed zeros, halves, division by zero), broadcasting along static
length-1 axes, and 0-d operands.

Numba's compile time grows with the loops and output arrays of a function (measured
here: 60 one-statement 2-d loops take about 5 s to compile), so each dtype group
applies every op inside ONE `Fused` node, compiled unoptimized (`mode="none"`): one
loop whose body inlines each op's scalar expression, the same expressions `Elemwise`
loops use. The `Elemwise` loop itself is checked for each arity with broadcasting and
0-d operands.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Graph, Param, TensorType, Variable, check_graph, evaluate
from numba_backend import function
from numba_backend.scalar_ops import scalar_expression
from ops.elemwise import Elemwise
from ops.fused import Fused
from ops.scalar_ops import Complex, Imag, Real, ScalarOp
from tests.numba_backend.batch_parity import Batch, assert_same
from tests.ops.elemwise_cases import CASES

Array = np.ndarray[Any, np.dtype[Any]]
Build = Callable[..., Variable]

FLOATS = np.array(
    [
        [np.nan, np.inf, -np.inf, 0.0, -0.0],
        [0.5, 1.5, 2.5, -2.5, 1e3],
        [-1e3, 0.3, 0.9, -0.7, 2.0],
        [3.7, -1.2, 1.0, -1.0, 20.0],
    ]
)
INTEGERS = np.array(
    [[0, 5, -5, 15, -15], [25, -25, 3, -3, 1], [-1, 7, -8, 2, 9], [4, -4, 6, -6, 0]]
)
BOOLS = np.array([[True, False, True, True, False]] * 2 + [[False, True, False, False, True]] * 2)
DIVISORS = np.array([[-1.5, 0.0, 0.7, 2.0, -3.0]])  # includes division by zero
THIRD = np.array([[1.2], [-0.4], [np.nan], [2.5]])
EXPONENTS = np.array([[1, 2, 3, 1, 2]])  # integers to negative powers raise in NumPy


def group_values(dtype: str) -> tuple[Array, Array, Array]:
    """Values for the three operands (shapes (4, 5), (1, 5), (4, 1)) in `dtype`."""
    if dtype == "bool":
        return BOOLS, BOOLS[1:2], BOOLS[:, :1]
    if dtype.startswith("int"):
        divisors = np.array([[-2, 0, 3, 1, -3]], dtype)
        return INTEGERS.astype(dtype), divisors, np.array([[1], [-2], [0], [4]], dtype)
    return FLOATS.astype(dtype), DIVISORS.astype(dtype), THIRD.astype(dtype)


GROUPS: dict[str, tuple[str, str, str]] = {
    "float64": ("float64",) * 3,
    "float32": ("float32",) * 3,
    "int64": ("int64",) * 3,
    "bool": ("bool",) * 3,
}
MIXED = ("float32", "int64", "float64")
INTEGER_TO_FLOAT = frozenset({"true_div", "sqrt", "exp", "sigmoid", "softplus", "erf", "arctan2"})
"""The float-valued cases the integer group keeps (the others differ from the float64
group's only by the operand conversion these check), to keep its compile short."""
EXTRA: tuple[tuple[str, Build, int], ...] = (
    ("round_2", lambda x: pt.round(x, 2), 1),
    ("round_-1", lambda x: pt.round(x, -1), 1),
    ("second", pt.second, 2),
    ("cast_bool", lambda x: pt.cast(x, "bool"), 1),
    ("cast_float32", lambda x: pt.cast(x, "float32"), 1),
    ("cast_float64", lambda x: pt.cast(x, "float64"), 1),
    ("cast_int64", lambda x: pt.cast(x, "int64"), 1),
    ("cast_int8", lambda x: pt.cast(x, "int8"), 1),
    ("cast_uint8", lambda x: pt.cast(x, "uint8"), 1),
)
ALL_CASES: tuple[tuple[str, Build, int], ...] = (
    tuple((case.name, case.build, case.nin) for case in CASES) + EXTRA
)


def is_integral(dtype: str) -> bool:
    return dtype == "bool" or dtype.startswith(("int", "uint"))


def operands_for(
    name: str, nin: int, operands: Sequence[Variable], exponents: Variable
) -> list[Variable]:
    """The operands a case reads. Integers raised to powers and integer reciprocals read
    positive values (NumPy raises for negative powers and has no value for 1 // 0); casts
    of floats to integers read the finite, in-range second operand, and casts to uint8
    non-negative values."""
    first, second = operands[0], operands[1]
    if name == "pow" and is_integral(second.dtype):
        return [first, exponents]
    if name == "reciprocal" and is_integral(first.dtype):
        return [exponents]
    if name.startswith(("cast_int", "cast_uint")) and not is_integral(first.dtype):
        first = second
    if name == "cast_uint8":
        first = pt.abs(first)
    return [first, *operands[1:nin]]


@attrs.frozen
class Sweep:
    """Every case applicable to one group's operand dtypes, as outputs of one `Fused`
    node (`inner` holds the cases on rank-0 params), with the inputs' test values."""

    batch: Batch
    inner: Graph


def build_sweep(dtypes: tuple[str, str, str], zero_d: bool, min_arity: int = 1) -> Sweep:
    """NumPy refusing the dtypes, or giving float16 (which numba lacks on the CPU),
    leaves a case out; so do float-valued cases of integer operands, but a few, and
    cases of fewer than `min_arity` operands."""
    batch = Batch()
    values = [group_values(dtype)[k] for k, dtype in enumerate(dtypes)]
    exponent_values = EXPONENTS.astype("int8" if dtypes[1] == "bool" else dtypes[1])
    values.append(exponent_values)
    # The first operand's axes are not static 1: the others broadcast against it.
    statics: list[tuple[int | None, ...]] = [(None, None), (1, None), (None, 1), (1, None)]
    if zero_d:
        values = [np.asarray(value.flat[k + 1]) for k, value in enumerate(values)]
        statics = [()] * 4
    outer = [batch.input(value, static=static) for value, static in zip(values, statics)]
    params = [Param(k, TensorType(variable.dtype, ())) for k, variable in enumerate(outer)]
    names: list[str] = []
    outputs: list[Variable] = []
    for name, build, nin in ALL_CASES:
        if nin < min_arity:
            continue
        try:
            output = build(*operands_for(name, nin, params[:3], params[3]))
        except DTypeError:
            continue
        integer_to_float = is_integral(dtypes[0]) and not is_integral(output.dtype)
        if output.dtype != "float16" and (name in INTEGER_TO_FLOAT or not integer_to_float):
            names.append(name)
            outputs.append(output)
    inner = Graph(params, outputs)
    for name, output in zip(names, Fused(inner).apply(*outer)):
        batch.case(name, output)
    return Sweep(batch, inner)


def rtol_for(dtypes: tuple[str, ...]) -> float:
    return 1e-5 if "float32" in dtypes else 1e-12


def mismatches(results: dict[str, tuple[Array, Array]], rtol: float) -> Iterator[str]:
    for name, (got, want) in results.items():
        try:
            assert_same(got, want, rtol=rtol)
        except AssertionError as error:
            yield f"{name}: {error}"


def assert_parity(batch: Batch, rtol: float) -> None:
    """Compiled unoptimized, every case matches the reference evaluator."""
    with np.errstate(all="ignore"):
        failures = list(mismatches(batch.results(), rtol))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_scalar_op_parity(group: str) -> None:
    assert_parity(build_sweep(GROUPS[group], zero_d=False).batch, rtol_for(GROUPS[group]))


def test_mixed_dtypes_on_zero_d_operands() -> None:
    """Operands of different dtypes (promotion: each op computes in the common dtype),
    for the ops of two and three operands, on 0-d arrays."""
    sweep = build_sweep(MIXED, zero_d=True, min_arity=2)
    assert all(output.ndim == 0 for output in sweep.batch.outputs)
    assert_parity(sweep.batch, rtol_for(MIXED))


def test_every_scalar_op_is_swept() -> None:
    """The float64 and int64 groups together apply every scalar op (bitwise ops exist
    for integers only, most float functions are swept on floats only), but the complex
    parts, which test_complex_parity sweeps on complex operands."""
    sweeps = [build_sweep(GROUPS[name], zero_d=False) for name in ("float64", "int64")]
    used = {Real, Imag, Complex} | {
        type(node.op.scalar_op)
        for sweep in sweeps
        for node in sweep.inner.nodes
        if isinstance(node.op, Elemwise)
    }
    missing = sorted(cls.__name__ for cls in scalar_op_classes() if cls not in used)
    assert not missing, f"scalar ops no parity group applies: {missing}"


@pytest.mark.parametrize("dtypes", [("float64",) * 3, ("int64", "float32", "bool")])
def test_elemwise_loops(dtypes: tuple[str, str, str]) -> None:
    """`Elemwise` nodes, one loop each, for every arity: broadcasting along static
    length-1 axes of either operand, 0-d operands, mixed dtypes."""
    batch = Batch()
    values = [group_values(dtype)[k] for k, dtype in enumerate(dtypes)]
    x = batch.input(values[0], static=(None, None))
    row = batch.input(values[1], static=(1, None))
    column = batch.input(values[2], static=(None, 1))
    zero_d = batch.input(np.asarray(values[1].flat[2]), static=())
    batch.case("unary", pt.sqrt(x))
    batch.case("row_broadcast", pt.mul(x, row))
    batch.case("both_broadcast", pt.sub(column, row))
    batch.case("zero_d", pt.maximum(zero_d, zero_d))
    batch.case("zero_d_broadcast", pt.true_div(x, zero_d))
    batch.case("ternary", pt.where(x, row, column))
    assert_parity(batch, rtol_for(dtypes))


def test_fast_run_agrees() -> None:
    """Optimized (simplified and fused into one loop), compositions of many ops give the
    reference evaluator's values."""
    batch = Batch()
    x = batch.input(FLOATS, static=(None, None))
    row = batch.input(DIVISORS, static=(1, None))
    column = batch.input(THIRD, static=(None, 1))
    batch.case("arithmetic", pt.exp(x) * row + pt.sigmoid(column) - 2 * x / 3)
    batch.case("choice", pt.where(x > row, pt.log1p(pt.abs(x)), pt.round(x, 1)))
    batch.case("integer", pt.int_div(x, row) + pt.mod(x, row) ** 2)
    batch.case("discrete", pt.cast(pt.logical_and(x > 0, column < 1), "int64") * 3)
    batch.case("special", pt.clip(pt.erfc(x), row, 1.0) + pt.softplus(-x) * pt.tanh(column))
    graph = Graph(batch.inputs, batch.outputs)
    check_graph(graph)
    compiled = function(batch.inputs, batch.outputs, mode="fast_run")
    assert any(isinstance(node.op, Fused) for node in compiled.graph.nodes)
    with np.errstate(all="ignore"):
        got = compiled(*batch.values)
        want = evaluate(batch.outputs, dict(zip(batch.inputs, batch.values)))
    results = {name: (g, np.asarray(w)) for name, g, w in zip(batch.names, got, want)}
    failures = list(mismatches(results, rtol_for(GROUPS["float64"])))
    assert not failures, "\n".join(failures)


def test_run_time_broadcast_of_a_full_axis_is_refused() -> None:
    x = pt.tensor("x", shape=(None, None))
    y = pt.tensor("y", shape=(None, None))
    compiled = function([x, y], x + y, mode="none")
    np.testing.assert_array_equal(compiled(np.ones((2, 3)), np.ones((2, 3))), np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match="static length of 1"):
        compiled(np.ones((2, 3)), np.ones((1, 3)))


def scalar_op_classes() -> list[type[ScalarOp]]:
    """The concrete scalar ops (frozen attrs classes) defined in `ops.scalar_ops`."""
    module = importlib.import_module("ops.scalar_ops")
    classes: list[type[ScalarOp]] = []
    for value in vars(module).values():
        if isinstance(value, type) and attrs.has(value) and issubclass(value, ScalarOp):
            if value.__module__ == module.__name__:
                classes.append(value)
    return classes


def test_every_scalar_op_has_an_expression() -> None:
    classes = scalar_op_classes()
    assert len(classes) > 60
    missing = [
        cls.__name__
        for cls in classes
        if scalar_expression.dispatch(cls) is scalar_expression.registry[object]
    ]
    assert not missing, f"scalar ops without a numba expression: {missing}"
