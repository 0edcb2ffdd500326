"""A compiled graph called from the user's own compiled code (`numba_backend.embed`):
`numba_function` inside a user's `@numba.njit` loop, `cfunc` through ctypes, and
`low_level_callable` through SciPy; values against the reference evaluator, errors
naming the input, fresh outputs, and no disk cache of code holding this process's
addresses."""

from __future__ import annotations

import ctypes
import pickle
import warnings
from typing import Any

import numba
import numpy as np
import pytest
from numba.core.errors import NumbaWarning, TypingError
from scipy.integrate import quad

import ops as pt
from fgraph import Input, Variable, evaluate
from numba_backend import CompiledFunction, function
from numba_backend.embed import CALL_CONTRACT

Array = np.ndarray[Any, np.dtype[Any]]
WEIGHTS = np.array([0.5, -1.0, 2.0])


def model_inputs() -> tuple[Input, Input, Input]:
    """A vector, a 0-d scale and a matrix of static width 3."""
    return pt.vector("x"), pt.scalar("scale"), pt.tensor("T", shape=(None, 3))


def model_outputs(x: Variable, scale: Variable, t: Variable) -> list[Variable]:
    """A 0-d log-density and its gradient, a view of an input and a constant (which
    tempt aliasing), and a product with the static-width input."""
    logp = -0.5 * (((x - pt.constant(WEIGHTS)) * scale) ** 2).sum()
    return [logp, pt.grad(logp, x), x[::-1], pt.constant(WEIGHTS), t @ x]


@pytest.fixture(scope="module")
def model() -> tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]]:
    inputs = model_inputs()
    outputs = model_outputs(*inputs)
    return function(list(inputs), outputs), outputs, inputs


def model_values(seed: int) -> tuple[Array, float, Array]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=3), float(rng.uniform(0.5, 2.0)), rng.normal(size=(2, 3))


def assert_matches(results: Any, expected: list[Array]) -> None:
    assert len(results) == len(expected)
    for result, wanted in zip(results, expected):
        np.testing.assert_allclose(result, wanted, rtol=1e-12)
        assert np.asarray(result).dtype == wanted.dtype


def test_numba_function_from_python_matches_evaluate(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, outputs, inputs = model
    values = model_values(0)
    results = compiled.numba_function(*values)
    assert isinstance(results, tuple)
    assert isinstance(results[0], float)  # a 0-d output is a number
    assert_matches(results, evaluate(outputs, dict(zip(inputs, values))))


def test_numba_function_inside_a_users_njit_loop(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    """A user's loop calls it with numbers and arrays it made itself, a non-contiguous
    view and an int array among them (copied and cast to the input's type)."""
    compiled, outputs, inputs = model
    graph_function = compiled.numba_function

    @numba.njit
    def users_loop(x: Array, steps: int) -> tuple[float, Array]:
        table = np.ones((4, 3))
        total = 0.0
        gradient = np.zeros(3)
        for step in range(steps):
            logp, grad, reversed_x, weights, product = graph_function(x, 1.0 + step, table[::2])
            total += logp + reversed_x[0] + weights[1] + product[1]
            gradient += grad
        logp, grad, _, _, _ = graph_function(np.arange(3), 2, table[1:])  # ints: safe casts
        return total + logp, gradient + grad

    x = np.array([0.1, 0.2, 0.3])
    total, gradient = users_loop(x, 3)
    want_total, want_gradient = 0.0, np.zeros(3)
    for step in range(3):
        logp, grad, reversed_x, weights, product = evaluate(
            outputs, dict(zip(inputs, (x, 1.0 + step, np.ones((2, 3)))))
        )
        want_total += float(logp + reversed_x[0] + weights[1] + product[1])
        want_gradient += grad
    logp, grad, *_ = evaluate(outputs, dict(zip(inputs, (np.arange(3.0), 2.0, np.ones((3, 3))))))
    np.testing.assert_allclose(total, want_total + float(logp), rtol=1e-12)
    np.testing.assert_allclose(gradient, want_gradient + grad, rtol=1e-12)


def test_numba_function_outputs_share_nothing_with_arguments_or_constants(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled = model[0]
    x, scale, t = model_values(1)
    first = compiled.numba_function(x, scale, t)
    for result in first[1:]:
        assert not np.may_share_memory(result, x) and not np.may_share_memory(result, t)
        result[...] = 7.0
    second = compiled.numba_function(x, scale, t)
    np.testing.assert_array_equal(second[3], WEIGHTS)  # the constant is intact
    np.testing.assert_array_equal(second[2], x[::-1])
    np.testing.assert_array_equal(compiled(x, scale, t)[3], WEIGHTS)


def test_numba_function_errors_name_the_input(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled = model[0]
    x, scale, t = model_values(2)
    with pytest.raises(ValueError, match=r"T: expected shape \(\?, 3\), got length other than 3 along axis 1"):
        compiled.numba_function(x, scale, np.ones((2, 4)))
    with pytest.raises(TypingError, match=r"x: expected an array of 1 axes of dtype float64 .* got array\(float64, 2d"):
        compiled.numba_function(np.ones((2, 3)), scale, t)
    with pytest.raises(TypingError, match=r"scale: expected a number of dtype float64 .* got complex128"):
        compiled.numba_function(x, 1j, t)
    with pytest.raises(TypingError, match=r"x: expected an array .* got array\(complex128"):
        compiled.numba_function(x.astype(complex), scale, t)
    with pytest.raises(ValueError, match="differ"):  # the entry's own run-time check
        compiled.numba_function(np.ones(4), scale, t)


def test_a_single_output_is_returned_alone() -> None:
    x, s = pt.vector("x"), pt.scalar("s")
    total = function([x, s], (x * s).sum())
    doubled = function([x, s], x * s)
    assert total.numba_function(np.arange(3.0), 2.0) == 6.0
    np.testing.assert_array_equal(doubled.numba_function(np.arange(3.0), 2.0), [0.0, 2.0, 4.0])

    graph_total = total.numba_function

    @numba.njit
    def users_sum(values: Array) -> float:
        return graph_total(values, 0.5) + graph_total(values, 1.5)  # type: ignore[no-any-return]

    assert users_sum(np.arange(4.0)) == 12.0


def test_a_function_calling_it_is_not_cached_to_disk(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    """The code holds this process's addresses (the entry's, the constants'): numba must
    refuse to cache a user's `cache=True` function calling it, and say so."""
    graph_function = model[0].numba_function

    def users_cached(x: Array) -> float:
        logp: float = graph_function(x, 1.0, np.ones((1, 3)))[0]
        return logp

    cached = numba.njit(cache=True)(users_cached)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cached(WEIGHTS) == 0.0
    messages = [str(w.message) for w in caught if issubclass(w.category, NumbaWarning)]
    assert any("Cannot cache" in m and "dynamic globals" in m for m in messages)


def _pointers(*arrays: Array) -> Any:
    return (ctypes.c_void_p * len(arrays))(*(array.ctypes.data for array in arrays))


def _lengths(*lengths: int) -> Any:
    return (ctypes.c_int64 * len(lengths))(*lengths)


def test_cfunc_writes_the_outputs_into_the_callers_buffers(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, outputs, inputs = model
    assert "int64_t f(void **inputs" in CALL_CONTRACT
    x, scale, t = model_values(3)
    scale_buffer = np.array(scale)
    expected = evaluate(outputs, dict(zip(inputs, (x, scale, t))))
    written = [np.full(e.shape, np.nan) for e in expected]
    call = compiled.cfunc.ctypes
    status = call(_pointers(x, scale_buffer, t), _lengths(3, 2, 3), _pointers(*written),
                  _lengths(*(e.size for e in expected)))
    assert status == 0
    assert_matches(written, expected)


def test_cfunc_reports_bad_shapes_failures_and_sizes_without_writing(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled = model[0]
    x, scale, t = model_values(4)
    call = compiled.cfunc.ctypes
    written = [np.full(shape, np.nan) for shape in [(), (3,), (3,), (3,), (2,)]]
    sizes = _lengths(1, 3, 3, 3, 2)
    inputs = _pointers(x, np.array(scale), t)
    assert call(inputs, _lengths(3, 2, 4), _pointers(*written), sizes) == 1  # T's width
    assert call(inputs, _lengths(-1, 2, 3), _pointers(*written), sizes) == 1
    assert call(inputs, _lengths(2, 2, 3), _pointers(*written), sizes) == 2  # x vs weights
    assert call(inputs, _lengths(3, 2, 3), _pointers(*written), _lengths(1, 3, 3, 3, 5)) == 3
    assert all(np.isnan(buffer).all() for buffer in written)


def test_cfunc_takes_buffers_of_the_inputs_dtypes() -> None:
    counts, offset = pt.vector("counts", dtype="int32"), pt.scalar("offset", dtype="int64")
    compiled = function([counts, offset], [counts.sum() + offset, counts * 2])
    values = np.array([1, 2, 3], dtype=np.int32)
    total, doubled = np.zeros((), dtype=np.int64), np.zeros(3, dtype=np.int32)
    status = compiled.cfunc.ctypes(
        _pointers(values, np.array(10, dtype=np.int64)), _lengths(3),
        _pointers(total, doubled), _lengths(1, 3),
    )
    assert status == 0 and total == 16
    np.testing.assert_array_equal(doubled, [2, 4, 6])


def test_low_level_callable_integrates_with_quad_and_extra_arguments() -> None:
    t, rate = pt.scalar("t"), pt.scalar("rate")
    compiled = function([t, rate], pt.exp(-rate * t * t))
    value, _ = quad(compiled.low_level_callable, -np.inf, np.inf, args=(2.0,))
    np.testing.assert_allclose(value, np.sqrt(np.pi / 2.0), rtol=1e-10)
    direct = compiled.low_level_callable.function  # n must be the count of numbers
    assert np.isnan(direct(1, (ctypes.c_double * 1)(0.5), None))


def test_low_level_callable_of_a_vector() -> None:
    x = pt.vector("x")
    norm = function([x], (x**2).sum())
    call = norm.low_level_callable.function
    assert call(3, (ctypes.c_double * 3)(1.0, 2.0, 3.0), None) == 14.0
    y = pt.tensor("y", shape=(2,))
    fixed = function([y], y.sum())
    assert fixed.low_level_callable.function(2, (ctypes.c_double * 2)(1.0, 2.0), None) == 3.0
    assert np.isnan(fixed.low_level_callable.function(3, (ctypes.c_double * 3)(), None))
    with pytest.raises(TypeError, match=r"low_level_callable .* takes \(float64\(\?,\), float64\(\?,\)\)"):
        _ = function([x, pt.vector("z")], (x * 2).sum()).low_level_callable
    with pytest.raises(TypeError, match=r"gives \(float64\(\?,\)\)"):
        _ = function([x], x * 2).low_level_callable


def test_pickled_functions_embed_again(
    model: tuple[CompiledFunction[list[Array]], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, outputs, inputs = model
    _ = compiled.numba_function  # a compiled embedding is not part of the pickle
    restored = pickle.loads(pickle.dumps(compiled))
    values = model_values(5)
    assert_matches(restored.numba_function(*values), evaluate(outputs, dict(zip(inputs, values))))
