"""Complex operands compiled by numba agree with NumPy: every elementwise function
NumPy defines for complex64 and complex128 (values and dtypes; `abs`, `real`, `imag`,
`angle` of a complex value are real), `real`/`imag`/`conj`/`angle`/`complex` on real
operands, and the complex norms of `pt.linalg.norm`.

All cases of a dtype compile as one function (fused into few loops, as a user's graph
would), and once unoptimized in chunks (each case its own `Elemwise` loop)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Variable, evaluate
from numba_backend import function
from tests.numba_backend.batch_parity import Batch, assert_same
from tests.ops.elemwise_cases import CASES

Array = np.ndarray[Any, np.dtype[Any]]

VALUES = np.array(
    [3 + 4j, -1j, 0.5, 0j, -2 - 0.5j, 1.5 + 1j, -0.7 + 2.5j, complex(-0.0, -0.0),
     0.3 - 0.9j, -3.7 + 0.0j, 1 - 1j, 2 + 2j]
)
OTHERS = np.array(
    [1 - 1j, 2j, -0.5, 1.5 + 0j, 0j, 0.25 - 3j, -0.7 + 2.5j, 2.0 + 0j,
     1j, 0.5 + 0.5j, -3 + 0j, 2 + 2j]
)
SPECIAL = np.array(
    [complex(np.inf, 1.0), complex(-np.inf, np.inf), complex(np.nan, 0.0), 1e300 + 1e300j,
     complex(0.0, -np.inf), 1e-300 - 1e-300j, complex(1.0, np.nan), 0j,
     -0j, 2 + 0j, 1e3 + 1j, -1e3]
)
EXACT = ("add", "sub", "mul", "true_div", "pow", "neg", "abs", "sign", "maximum",
         "minimum", "where", "lt", "le", "gt", "ge", "eq", "neq", "logical_and", "isnan",
         "isinf", "isfinite", "real", "imag", "conj", "angle")
"""The functions whose values at infinities, NaNs and huge or tiny values match NumPy's
too; the transcendental ones are numba's `cmath`, which handles those its own way."""
COMPLEX_FUNCTIONS: tuple[tuple[str, Callable[..., Variable], Callable[..., Array], int], ...] = (
    ("real", pt.real, np.real, 1),
    ("imag", pt.imag, np.imag, 1),
    ("conj", pt.conj, np.conj, 1),
    ("angle", pt.angle, np.angle, 1),
    ("angle_deg", lambda x: pt.angle(x, deg=True), lambda x: np.angle(x, deg=True), 1),
    ("real_method", lambda x: x.real, lambda x: x.real, 1),
    ("imag_method", lambda x: x.imag, lambda x: x.imag, 1),
    ("conj_method", lambda x: x.conj(), lambda x: x.conj(), 1),
)


def numpy_cases() -> list[tuple[str, Callable[..., Variable], Callable[..., Array], int]]:
    """The elemwise table's NumPy functions, and the complex parts."""
    table = [
        (case.name, case.build, case.reference, case.nin)
        for case in CASES
        if isinstance(case.reference, np.ufunc) or case.name == "where"
    ]
    return table + list(COMPLEX_FUNCTIONS)


def operands(dtype: str, nin: int, special: bool = False) -> list[Array]:
    first = SPECIAL if special else VALUES
    with np.errstate(over="ignore"):  # 1e300 overflows complex64 to inf, as intended
        return [first.astype(dtype), OTHERS.astype(dtype), (OTHERS[::-1] * 2).astype(dtype)][:nin]


def applicable(
    dtype: str, special: bool = False
) -> list[tuple[str, Callable[..., Variable], Array, int]]:
    """(name, build, NumPy's value, nin) for every case NumPy computes for `dtype`; the
    others must be refused when the graph is built, as NumPy refuses them. With
    `special`, the EXACT cases on the special values."""
    found = []
    for name, build, reference, nin in numpy_cases():
        if special and name not in EXACT:
            continue
        values = operands(dtype, nin, special)
        try:
            with np.errstate(all="ignore"):
                expected = np.asarray(reference(*values))
        except TypeError:
            variables = [pt.vector(f"x{k}", dtype=dtype) for k in range(nin)]
            with pytest.raises(DTypeError):
                build(*variables)
            continue
        found.append((name, build, expected, nin))
    return found


def close(got: Array, want: Array, dtype: str, name: str) -> None:
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    rtol = 2e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("special", [False, True], ids=["moderate", "special"])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_compiled_complex_functions_match_numpy(dtype: str, special: bool) -> None:
    cases = applicable(dtype, special)
    assert {"abs", "pow", "true_div", "real", "conj", "angle", "lt"} <= {n for n, *_ in cases}
    variables = [pt.vector(f"x{k}", dtype=dtype) for k in range(3)]
    outputs = [build(*variables[:nin]) for _, build, _, nin in cases]
    values = operands(dtype, 3, special)
    with np.errstate(all="ignore"):
        compiled = function(variables, outputs)(*values)
        evaluated = evaluate(outputs, dict(zip(variables, values)))
    for (name, _, expected, _), got, reference in zip(cases, compiled, evaluated):
        close(got, expected, dtype, name)
        close(np.asarray(reference), expected, dtype, f"{name} (evaluate)")


def test_unoptimized_complex_loops_match_the_evaluator() -> None:
    """Each case its own `Elemwise` loop (no fusion), complex128 and complex64 mixed."""
    batch = Batch()
    x = batch.input(VALUES)
    y = batch.input(OTHERS.astype("complex64"))
    for name, build, _, nin in applicable("complex128"):
        batch.case(name, build(*[x, y, x][:nin]))
    with np.errstate(all="ignore"):
        for name, (got, want) in batch.results().items():
            if np.isnan(want).any():
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
                mask = ~np.isnan(want)
                got, want = got[mask], want[mask]
            assert_same(got, want, rtol=2e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
def test_complex_parts_of_real_operands(dtype: str) -> None:
    """real/imag/conj/angle of real values follow NumPy's dtypes (conj of bool is int8,
    angle of int8 is float16 as NumPy's arctan2 gives it, so it is left to evaluate)."""
    values = np.array([3, -2, 0, 1], dtype=dtype) if dtype != "bool" else np.array([True, False])
    x = pt.vector("x", dtype=dtype)
    cases: list[tuple[Callable[..., Variable], Callable[..., Array]]] = [
        (pt.real, np.real), (pt.imag, np.imag), (pt.conj, np.conj), (pt.angle, np.angle)
    ]
    outputs = [build(x) for build, _ in cases]
    got = evaluate(outputs, {x: values})
    for (_, reference), value in zip(cases, got):
        assert_same(np.asarray(value), np.asarray(reference(values)))
    compiled_outputs = [output for output in outputs if output.dtype != "float16"]
    for got_value, output in zip(function([x], compiled_outputs)(values), compiled_outputs):
        (want,) = evaluate([output], {x: values})
        assert_same(got_value, np.asarray(want))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_complex_from_parts_is_exact(dtype: str) -> None:
    parts = np.array([1.5, -0.0, np.inf, np.nan, -np.inf], dtype=dtype)
    real, imag = pt.vector("re", dtype=dtype), pt.vector("im", dtype=dtype)
    made = pt.complex(real, imag)
    assert made.dtype == ("complex64" if dtype == "float32" else "complex128")
    got = function([real, imag], made)(parts, parts[::-1].copy())
    want = np.empty(5, made.dtype)
    want.real, want.imag = parts, parts[::-1]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(parts.dtype), want.view(parts.dtype))


@pytest.mark.parametrize(
    ("ord", "axis"), [(None, None), (1, None), (np.inf, None), (0, None), (3, None), (None, 0)]
)
def test_norm_of_complex_vectors_keeps_imaginary_parts(ord: Any, axis: Any) -> None:
    x = pt.vector("x", dtype="complex128")
    norm = pt.linalg.norm(x, ord=ord, axis=axis)
    value = VALUES[np.isfinite(VALUES)]
    want = np.linalg.norm(value, ord=ord, axis=axis)
    assert norm.dtype == "float64"
    np.testing.assert_allclose(evaluate([norm], {x: value})[0], want, rtol=1e-12)
    np.testing.assert_allclose(function([x], norm)(value), want, rtol=1e-12)


def test_norm_of_complex_matrices() -> None:
    a = pt.matrix("a", dtype="complex64")
    value = (VALUES[:6] + OTHERS[:6]).reshape(2, 3).astype("complex64")
    for ord in (None, "fro", 1, np.inf, -1):
        got = function([a], pt.linalg.norm(a, ord=ord))(value)
        np.testing.assert_allclose(got, np.linalg.norm(value, ord=ord), rtol=1e-6)
        assert got.dtype == np.float32
    np.testing.assert_allclose(evaluate([pt.linalg.norm([3 + 4j, 0])], {})[0], 5.0)
    with pytest.raises(DTypeError, match="norm: order 'nuc'.*complex"):
        pt.linalg.norm(a, ord="nuc")


@pytest.mark.parametrize("with_nan", [False, True], ids=["finite", "nan"])
def test_complex_reductions_match_numpy(with_nan: bool) -> None:
    """Sums and products, and extrema in NumPy's lexicographic order (ties of the real
    part broken by the imaginary part; a NaN wins), over all and along an axis."""
    values = np.array([[3 + 4j, 3 + 5j, -1j], [0.5 + 0j, 2 + 9j, 3 + 5j]])
    if with_nan:
        values[1, 0] = complex(3, np.nan)
    a = pt.matrix("a", dtype="complex128")
    cases: list[tuple[Variable, Any]] = [
        (a.sum(), values.sum()), (a.prod(axis=0), values.prod(axis=0)),
        (a.mean(axis=1), values.mean(axis=1)), (a.max(), values.max()),
        (a.min(axis=1), values.min(axis=1)), (a.max(axis=0), values.max(axis=0)),
        (a.argmax(), values.argmax()), (a.argmin(axis=1), values.argmin(axis=1)),
        (pt.maximum(a, a[::-1]), np.maximum(values, values[::-1])),
    ]
    got = function([a], [built for built, _ in cases])(values)
    for number, (value, (_, want)) in enumerate(zip(got, cases)):
        assert value.dtype == np.asarray(want).dtype, number
        np.testing.assert_allclose(value, want, rtol=1e-12, equal_nan=True, err_msg=str(number))
