"""`vmap` of index updates (`set_subtensor`, `inc_subtensor`, basic and advanced) for
every combination of batched and unbatched target, value and indices, against a Python
loop over the batch, evaluated and compiled; and the gradients that build such updates
(per-example gradients of an indexed parameter vector, `vmap` of a pullback, a reversed
slice in a pullback)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Input, TensorType, Variable, evaluate, toposort
from numba_backend import function
from ops.scan_op import Scan

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(7)
BATCH = 3
Update = Callable[[Variable, Variable], Variable]
UPDATES: dict[str, Update] = {"set": pt.set_subtensor, "inc": pt.inc_subtensor}


def example_input(value: Array, name: str, static: bool) -> Input:
    """An input for `value`: of its static shape, or with unknown lengths except the
    lengths 1 a value broadcasts along (only static ones do)."""
    shape = value.shape if static else tuple(1 if n == 1 else None for n in value.shape)
    return Input(TensorType(value.dtype.name, shape), name)


def batch_of(value: Array) -> Array:
    """`value` repeated along a new batch axis, different in every element (indices
    stay valid: they are permuted, not scaled)."""
    if value.dtype.kind == "i" and value.ndim == 0:
        return value + np.arange(BATCH) - 1
    if value.dtype.kind in "bi":
        return np.stack([RNG.permutation(value.ravel()).reshape(value.shape) for _ in range(BATCH)])
    return np.stack([value * (i + 1) + i for i in range(BATCH)])


# Each case: the update of an example target `x` of shape (4, 3, 5) by a value `y` at an
# index that may take one array argument `i`; the example values of y and i (None when
# the index is static).
CASES: list[tuple[str, Callable[..., Variable], Array, Array | None]] = [
    ("slice", lambda x, y, u: u(x[1:3], y), RNG.normal(size=(2, 3, 5)), None),
    ("slice, broadcast value", lambda x, y, u: u(x[1:3], y), RNG.normal(size=(3, 1)), None),
    ("reversed slice", lambda x, y, u: u(x[::-1, 0], y), RNG.normal(size=(4, 5)), None),
    ("scalar into an element", lambda x, y, u: u(x[2, 1, 0], y), np.array(0.5), None),
    ("symbolic int", lambda x, y, i, u: u(x[i], y), RNG.normal(size=5), np.array(2)),
    ("symbolic slice bound", lambda x, y, i, u: u(x[i:, 1], y), RNG.normal(size=5), np.array(1)),
    ("advanced", lambda x, y, i, u: u(x[i], y), RNG.normal(size=(3, 3, 5)), np.array([0, 2, 0])),
    ("advanced after a slice", lambda x, y, i, u: u(x[:, i], y), RNG.normal(size=(4, 3, 5)),
     np.array([2, 0, 2])),
    ("advanced apart (axes first)", lambda x, y, i, u: u(x[i, :, 1], y), RNG.normal(size=(2, 3)),
     np.array([3, 1])),
    ("advanced apart, broadcast value", lambda x, y, i, u: u(x[i, :, 1], y), RNG.normal(size=3),
     np.array([3, 3])),
    ("boolean mask", lambda x, y, i, u: u(x[i], y), RNG.normal(size=5),
     np.array([True, False, True, True])),
]
X = RNG.normal(size=(4, 3, 5))


def flag_combinations(has_index: bool) -> list[tuple[bool, ...]]:
    """(x, y[, i]) batched or not, at least one of them."""
    count = 3 if has_index else 2
    return [flags for flags in itertools.product((False, True), repeat=count) if any(flags)]


@pytest.mark.parametrize("static", [False, True], ids=["unknown lengths", "static lengths"])
@pytest.mark.parametrize("kind", sorted(UPDATES))
@pytest.mark.parametrize("name, build, y_value, i_value", CASES, ids=[c[0] for c in CASES])
def test_update_matches_a_loop(
    name: str, build: Callable[..., Variable], y_value: Array, i_value: Array | None, kind: str,
    static: bool,
) -> None:
    """All combinations in one compiled function: each output is `vmap` of the update
    with some of x, y, i batched; element b must be the update of element b (or of the
    unbatched argument) evaluated alone."""
    update = UPDATES[kind]
    examples = [X, y_value] if i_value is None else [X, y_value, i_value]
    batches = [batch_of(value) for value in examples]
    names = "xyi"
    whole = [example_input(v, names[k], static) for k, v in enumerate(examples)]
    batched = [example_input(v, names[k] + "s", static) for k, v in enumerate(batches)]
    feed: dict[Variable, Array] = {**dict(zip(whole, examples)), **dict(zip(batched, batches))}
    outputs, expected = [], []
    for flags in flag_combinations(i_value is not None):
        arguments = [b if flag else w for flag, b, w in zip(flags, batched, whole)]
        axes = [0 if flag else None for flag in flags]
        mapped = pt.vmap(lambda *a: build(*a, u=update), in_axes=axes)(*arguments)
        assert isinstance(mapped, Variable)
        if len(flags) < 3 or not flags[2]:  # unbatched indices: one batched update, no loop
            assert not any(isinstance(node.op, Scan) for node in toposort([mapped])), flags
        outputs.append(mapped)
        expected.append(looped(build, update, examples, batches, flags))
    got = evaluate(outputs, feed)
    inputs = [*whole, *batched]
    compiled = function(inputs, outputs)(*(feed[v] for v in inputs))
    for flags, value, from_code, want in zip(flag_combinations(i_value is not None), got, compiled, expected):
        np.testing.assert_allclose(value, want, rtol=1e-12, err_msg=f"evaluated, batched {flags}")
        np.testing.assert_allclose(from_code, want, rtol=1e-12, err_msg=f"compiled, batched {flags}")


def looped(
    build: Callable[..., Variable], update: Update, examples: list[Array], batches: list[Array],
    flags: tuple[bool, ...],
) -> Array:
    """The update on each element of the batch, evaluated one element at a time."""
    rows = []
    for b in range(BATCH):
        values = [batch[b] if flag else value for flag, batch, value in zip(flags, batches, examples)]
        inputs = [example_input(v, f"a{k}", True) for k, v in enumerate(values)]
        rows.append(evaluate([build(*inputs, u=update)], dict(zip(inputs, values)))[0])
    return np.stack(rows)


def test_value_batched_along_static_length_1_against_a_full_batch() -> None:
    """`vectorize_graph` batch axes broadcast along static length 1: a target whose batch
    axis is 1 receiving values for the full batch is stretched to it first."""
    x, y = pt.vector("x"), pt.scalar("y")
    updated = pt.set_subtensor(x[1], y)
    xs, ys = pt.tensor("xs", shape=(1, None)), pt.vector("ys")
    (mapped,) = pt.vectorize_graph([updated], {x: xs, y: ys})
    assert mapped.type.shape == (None, None)
    x_value, y_value = np.array([[1.0, 2.0, 3.0]]), np.array([10.0, 20.0])
    (got,) = evaluate([mapped], {xs: x_value, ys: y_value})
    np.testing.assert_array_equal(got, [[1.0, 10.0, 3.0], [1.0, 20.0, 3.0]])


def log_density(x: Variable, theta: Variable) -> Variable:
    return -0.5 * ((x - theta[0]) / pt.exp(theta[1])) ** 2 - theta[1]


def test_per_example_gradients_of_an_indexed_parameter_vector() -> None:
    theta, X_data = pt.vector("theta"), pt.vector("X")
    per_example = pt.vmap(lambda x: pt.grad(log_density(x, theta), theta))(X_data)
    assert isinstance(per_example, Variable)
    theta_value, x_value = np.array([0.3, -0.2]), RNG.normal(size=6)
    scale = np.exp(theta_value[1])
    z = (x_value - theta_value[0]) / scale
    expected = np.stack([z / scale, z**2 - 1], axis=1)
    values: dict[Variable, Array] = {theta: theta_value, X_data: x_value}
    np.testing.assert_allclose(evaluate([per_example], values)[0], expected, rtol=1e-12)
    np.testing.assert_allclose(function([theta, X_data], per_example)(theta_value, x_value), expected,
                               rtol=1e-12)


def test_vmap_of_a_pullback_is_the_jacobian() -> None:
    """Rows of `vmap(vjp)` over the identity's rows: each is `grad` of one output."""
    theta = pt.vector("theta")
    outputs = pt.stack([theta[0] * theta[1], pt.exp(theta[2]), theta[0] ** 2 + theta[2]])
    directions = pt.matrix("directions")
    jac = pt.vmap(lambda c: pt.vjp([outputs], [theta], [c])[0])(directions)
    assert isinstance(jac, Variable)
    theta_value = np.array([0.5, -1.5, 0.25])
    rows = [pt.grad(outputs[k], theta) for k in range(3)]
    expected = np.stack(evaluate(rows, {theta: theta_value}))
    values: dict[Variable, Array] = {theta: theta_value, directions: np.eye(3)}
    np.testing.assert_allclose(evaluate([jac], values)[0], expected, rtol=1e-12)
    np.testing.assert_allclose(function([theta, directions], jac)(theta_value, np.eye(3)), expected,
                               rtol=1e-12)


def test_reversed_slice_in_a_pullback() -> None:
    """The pullback of `w[::-1]` scatters the batched cotangent into an unbatched zeros."""
    w, cotangents = pt.vector("w"), pt.matrix("cotangents")
    pulled = pt.vmap(lambda c: pt.vjp([w[::-1] * pt.sin(w)], [w], [c])[0])(cotangents)
    assert isinstance(pulled, Variable)
    w_value, c_value = RNG.normal(size=4), RNG.normal(size=(5, 4))
    # d/dw of sum(c * w[::-1] * sin(w)) = (c * sin(w))[::-1] + c * w[::-1] * cos(w)
    expected: Array = (c_value * np.sin(w_value))[:, ::-1] + c_value * w_value[::-1] * np.cos(w_value)
    values: dict[Variable, Array] = {w: w_value, cotangents: c_value}
    np.testing.assert_allclose(evaluate([pulled], values)[0], expected, rtol=1e-12)
    np.testing.assert_allclose(function([w, cotangents], pulled)(w_value, c_value), expected,
                               rtol=1e-12)


READS: list[tuple[str, Callable[[Variable, Variable], Variable], Array]] = [
    ("integer array", lambda x, i: x[i], np.array([0, 3, 3])),
    ("after a slice", lambda x, i: x[1:, i], np.array([[2, 0], [1, 1]])),
    ("apart (axes first)", lambda x, i: x[i, :, 1], np.array([[3, 1], [0, 0]])),
    ("apart with a new axis", lambda x, i: x[i, None, 2], np.array([1, 0])),
    ("boolean mask", lambda x, i: x[:, i], np.array([True, False, True])),
]


@pytest.mark.parametrize("batched_index", [False, True], ids=["one index", "batched index"])
@pytest.mark.parametrize("name, build, i_value", READS, ids=[c[0] for c in READS])
def test_advanced_read_matches_a_loop(
    name: str, build: Callable[[Variable, Variable], Variable], i_value: Array, batched_index: bool
) -> None:
    """A batched `x` read at one index is one batched read (no loop), the batch axes in
    front even where NumPy puts the index axes first; a batched index is looped over."""
    examples, batches = [X, i_value], [batch_of(X), batch_of(i_value)]
    flags = (True, batched_index)
    inputs = [example_input(b if flag else v, "xi"[k], False)
              for k, (flag, b, v) in enumerate(zip(flags, batches, examples))]
    mapped = pt.vmap(build, in_axes=[0 if flag else None for flag in flags])(*inputs)
    assert isinstance(mapped, Variable)
    assert any(isinstance(node.op, Scan) for node in toposort([mapped])) == batched_index
    values = [b if flag else v for flag, b, v in zip(flags, batches, examples)]
    expected = looped(lambda x, i, u: build(x, i), pt.set_subtensor, examples, batches, flags)
    np.testing.assert_array_equal(evaluate([mapped], dict(zip(inputs, values)))[0], expected)
    np.testing.assert_array_equal(function(inputs, mapped)(*values), expected)
