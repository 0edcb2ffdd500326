"""Graphs NumPy types with float16 (exp of int8, uint8, bool; float16 inputs) compile:
computed in float32 and returned in float16 (`numba_backend.float16`). Every function
of the elemwise table over small integer, bool and float16 operands gives NumPy's
dtype, and its values within float16's rounding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Variable, evaluate
from numba_backend import function
from tests.ops.elemwise_cases import CASES

Array = np.ndarray[Any, np.dtype[Any]]

SMALL = np.array([0, 1, 2, 3, 5, 7, 9, 11, 100, 127])
SECOND = np.array([1, 2, 3, 1, 2, 4, 5, 7, 3, 2])
THIRD = np.array([3, 0, 1, 2, 5, 6, 1, 1, 2, 9])


def values_of(dtype: str) -> list[Array]:
    if dtype == "bool":
        return [SMALL % 2 == 0, SECOND % 2 == 0, THIRD % 2 == 0]
    if dtype == "float16":
        return [(SMALL / 16).astype(dtype), (SECOND / 2).astype(dtype), (THIRD / 4).astype(dtype)]
    return [SMALL.astype(dtype), SECOND.astype(dtype), THIRD.astype(dtype)]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "bool", "float16"])
def test_elemwise_table_over_small_dtypes_matches_numpy(dtype: str) -> None:
    values = values_of(dtype)
    variables = [pt.vector(f"x{k}", dtype=dtype) for k in range(3)]
    names, outputs, expected = [], [], []
    for case in CASES:
        if case.name == "reciprocal" and dtype != "float16":
            continue  # 1 // 0 of integers: NumPy's value is C's undefined conversion of inf
        try:
            with np.errstate(all="ignore"):
                want = np.asarray(case.reference(*values[: case.nin]))
            output = case.build(*variables[: case.nin])
        except (TypeError, DTypeError):  # NumPy has no loop (bitwise ops of floats, ...)
            continue
        names.append(case.name)
        outputs.append(output)
        expected.append(want)
    assert {"exp", "sigmoid", "erf"} <= set(names)
    with np.errstate(all="ignore"):
        compiled = function(variables, outputs)(*values)
        evaluated = evaluate(outputs, dict(zip(variables, values)))
    for name, got, want, reference in zip(names, compiled, expected, evaluated):
        assert got.dtype == want.dtype == np.asarray(reference).dtype, name
        if want.dtype == np.float16:
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-3, equal_nan=True, err_msg=name)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True, err_msg=name)


def test_exp_of_int8_compiles_to_float16() -> None:
    x = pt.vector("x", dtype="int8")
    y = pt.exp(x)
    assert y.dtype == "float16"
    f = function([x], y)
    got = f(np.array([0, 1, 2, 12], dtype="int8"))
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):  # exp(12) is beyond float16: inf, in both
        np.testing.assert_array_equal(got, np.exp(np.array([0, 1, 2, 12], dtype="int8")))
    assert all(v.dtype != "float16" for node in f.graph.nodes for v in node.outputs)


def test_float16_inputs_several_outputs_and_overflow() -> None:
    x, n = pt.vector("x", dtype="float16"), pt.vector("n", dtype="uint8")
    outputs = [x * 2 + pt.sqrt(n), pt.sum(x), pt.exp(n) > 1000, pt.cast(x, "float64"), n + 1]
    f = function([x, n], outputs)
    xv, nv = np.array([0.5, 4e4, -3.0], np.float16), np.array([4, 200, 12], np.uint8)
    got = f(x=xv, n=nv)
    want = evaluate(outputs, {x: xv, n: nv})
    for g, w in zip(got, want):
        assert g.dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=2e-3)
    assert np.isinf(got[0][1])  # 8e4 + sqrt(200) overflows float16, as in NumPy
    with pytest.raises(TypeError, match="x"):
        f(np.array([0.5, 1.0, 2.0]), nv)  # float64 does not fit float16: refused


def test_specialized_shapes_and_zeros_of_float16() -> None:
    n = pt.vector("n", dtype="int8")
    y = pt.exp(n) + pt.zeros((3,), dtype="float16")
    f = function([n], y, specialize_shapes=True)
    got = f(np.array([1, 2, 3], np.int8))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, np.exp(np.array([1, 2, 3], np.int8)), rtol=1e-3)


def test_float16_inside_a_loop_is_refused_clearly() -> None:
    h0 = pt.vector("h0", dtype="float16")
    hs: Variable = pt.scan(lambda h: h * 2, outputs_info=[h0], n_steps=3)
    with pytest.raises(TypeError, match="float16.*inner graph.*float32"):
        function([h0], hs)
