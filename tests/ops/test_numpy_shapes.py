"""NumPy's stacking, shape, index and small elementwise names (`hstack`, `atleast_2d`,
`cross`, `triu_indices`, `fill_diagonal`, `nan_to_num`, `take(mode=...)`, `tile` with
variable counts, ...): values against NumPy with static and unknown lengths, edge
lengths 0 and 1, compiled against the reference, gradients against finite differences,
and the errors bad input gets."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Input, ShapeError, TensorType, Variable, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(1)
S = np.array(1.5)
V = RNG.normal(size=4)
W = RNG.normal(size=4)
M = RNG.normal(size=(3, 4))
T = RNG.normal(size=(2, 3, 4))
EMPTY = np.zeros(0)
ROWS3 = RNG.normal(size=(5, 3))
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -2.5, 1e308])
SPECIAL32 = np.array([np.nan, np.inf, -np.inf, 0.0, -2.5, 3e38], "float32")
INDICES = np.array([[0, -1, 5], [-7, 3, 11]])


def vectors(x: Variable, length: int, axis: int = -1) -> Variable:
    """`x` with the length of its vector axis known, as `cross` needs."""
    shape: list[int | None] = [None] * x.ndim
    shape[axis] = length
    return pt.specify_shape(x, shape)


def numpy_cross(*args: Any, **kwargs: Any) -> Array:
    with warnings.catch_warnings():  # NumPy 2 deprecates 2-vectors, still computes them
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.asarray(np.cross(*args, **kwargs))


# name, fgraph function, NumPy function, arguments
CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], list[Array]]] = [
    ("atleast_1d scalar", pt.atleast_1d, np.atleast_1d, [S]),
    ("atleast_1d matrix", pt.atleast_1d, np.atleast_1d, [M]),
    ("atleast_2d scalar", pt.atleast_2d, np.atleast_2d, [S]),
    ("atleast_2d vector", pt.atleast_2d, np.atleast_2d, [V]),
    ("atleast_2d tensor3", pt.atleast_2d, np.atleast_2d, [T]),
    ("atleast_3d scalar", pt.atleast_3d, np.atleast_3d, [S]),
    ("atleast_3d vector", pt.atleast_3d, np.atleast_3d, [V]),
    ("atleast_3d matrix", pt.atleast_3d, np.atleast_3d, [M]),
    ("atleast_3d empty", pt.atleast_3d, np.atleast_3d, [EMPTY]),
    ("atleast_2d several", lambda a, b: pt.atleast_2d(a, b)[1],
     lambda a, b: np.atleast_2d(a, b)[1], [M, V]),
    ("hstack vectors", lambda a, b: pt.hstack([a, b, a]), lambda a, b: np.hstack([a, b, a]),
     [V, EMPTY]),
    ("hstack scalars", lambda a, b: pt.hstack([a, b]), lambda a, b: np.hstack([a, b]), [S, S]),
    ("hstack matrices", lambda a, b: pt.hstack([a, b]), lambda a, b: np.hstack([a, b]),
     [M, M[:, :1].copy()]),
    ("hstack ints and floats", lambda a, b: pt.hstack([a, b]), lambda a, b: np.hstack([a, b]),
     [np.arange(3), V]),
    ("vstack vectors", lambda a, b: pt.vstack([a, b]), lambda a, b: np.vstack([a, b]), [V, W]),
    ("vstack matrix and vector", lambda a, b: pt.vstack([a, b]),
     lambda a, b: np.vstack([a, b]), [M, V]),
    ("vstack empty rows", lambda a, b: pt.vstack([a, b]), lambda a, b: np.vstack([a, b]),
     [np.zeros((0, 4)), V]),
    ("dstack vectors", lambda a, b: pt.dstack([a, b]), lambda a, b: np.dstack([a, b]), [V, W]),
    ("dstack matrices", lambda a, b: pt.dstack([a, b]), lambda a, b: np.dstack([a, b]), [M, M]),
    ("dstack tensor3", lambda a, b: pt.dstack([a, b]), lambda a, b: np.dstack([a, b]),
     [T, T[:, :, :1].copy()]),
    ("column_stack", lambda a, b, c: pt.column_stack([a, b, c]),
     lambda a, b, c: np.column_stack([a, b, c]), [V, M.T.copy(), W]),
    ("column_stack one row", lambda a, b: pt.column_stack([a, b]),
     lambda a, b: np.column_stack([a, b]), [V[:1].copy(), W[:1].copy()]),
    ("cross", lambda a, b: pt.cross(vectors(a, 3), vectors(b, 3)), numpy_cross,
     [ROWS3, ROWS3[::-1].copy()]),
    ("cross broadcasts", lambda a, b: pt.cross(vectors(a, 3), pt.specify_shape(b, (1, 3))),
     numpy_cross,
     [ROWS3, ROWS3[:1].copy()]),
    ("cross axes", lambda a, b: pt.cross(vectors(a, 3, 0), vectors(b, 3), axisa=0, axisc=0),
     lambda a, b: numpy_cross(a, b, axisa=0, axisc=0), [ROWS3.T.copy(), ROWS3]),
    ("cross axis", lambda a, b: pt.cross(vectors(a, 3, 0), vectors(b, 3, 0), axis=0),
     lambda a, b: numpy_cross(a, b, axis=0), [ROWS3.T.copy(), ROWS3[::-1].T.copy()]),
    ("cross 2 and 3", lambda a, b: pt.cross(vectors(a, 2), vectors(b, 3)), numpy_cross,
     [ROWS3[:, :2].copy(), ROWS3]),
    ("cross 3 and 2", lambda a, b: pt.cross(vectors(a, 3), vectors(b, 2)), numpy_cross,
     [ROWS3, ROWS3[:, 1:].copy()]),
    ("cross 2 and 2", lambda a, b: pt.cross(vectors(a, 2), vectors(b, 2)), numpy_cross,
     [ROWS3[:, :2].copy(), ROWS3[:, 1:].copy()]),
    ("cross with infinities", lambda a, b: pt.cross(vectors(a, 2), vectors(b, 3)), numpy_cross,
     [np.array([1.0, 2.0]), np.array([np.inf, 1.0, 2.0])]),
    ("cross no vectors", lambda a, b: pt.cross(vectors(a, 3), vectors(b, 3)), numpy_cross,
     [np.zeros((0, 3)), np.zeros((0, 3))]),
    ("fill_diagonal square", lambda a: pt.fill_diagonal(a, 7.0),
     lambda a: _numpy_fill_diagonal(a, 7.0), [M[:, :3].copy()]),
    ("fill_diagonal wide", lambda a: pt.fill_diagonal(a, 7.0),
     lambda a: _numpy_fill_diagonal(a, 7.0), [M]),
    ("fill_diagonal tall", lambda a, v: pt.fill_diagonal(a, v),
     lambda a, v: _numpy_fill_diagonal(a, v), [M.T.copy(), S]),
    ("fill_diagonal cube", lambda a: pt.fill_diagonal(a, -1.0),
     lambda a: _numpy_fill_diagonal(a, -1.0), [RNG.normal(size=(3, 3, 3))]),
    ("fill_diagonal vector value", lambda a, v: pt.fill_diagonal(a, v),
     lambda a, v: _numpy_fill_diagonal(a, v), [M, V[:3].copy()]),
    ("fill_diagonal empty", lambda a: pt.fill_diagonal(a, 7.0),
     lambda a: _numpy_fill_diagonal(a, 7.0), [np.zeros((0, 3))]),
    ("fill_diagonal 1 x 1", lambda a: pt.fill_diagonal(a, 7.0),
     lambda a: _numpy_fill_diagonal(a, 7.0), [np.zeros((1, 1))]),
    ("nan_to_num", pt.nan_to_num, np.nan_to_num, [SPECIAL]),
    ("nan_to_num float32", pt.nan_to_num, np.nan_to_num, [SPECIAL32]),
    ("nan_to_num values", lambda x: pt.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
     lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), [SPECIAL]),
    ("nan_to_num posinf out of range", lambda x: pt.nan_to_num(x, posinf=1e300),
     lambda x: np.nan_to_num(x, posinf=1e300), [SPECIAL32]),
    ("nan_to_num integers", pt.nan_to_num, np.nan_to_num, [np.arange(3)]),
    ("deg2rad float32", pt.deg2rad, np.deg2rad, [np.array([90.0, -45.5, 1.0], "float32")]),
    ("rad2deg float32", pt.rad2deg, np.rad2deg, [np.array([1.0, -0.5, 3.0], "float32")]),
    ("deg2rad int64", pt.deg2rad, np.deg2rad, [np.array([0, 90, -180])]),
    ("trunc", pt.trunc, np.trunc, [np.array([-1.5, -0.5, 0.5, 2.7, np.inf, np.nan])]),
    ("trunc int32", pt.trunc, np.trunc, [np.array([-3, 4], "int32")]),
    ("ceil_intdiv", pt.ceil_intdiv, lambda a, b: -(-a // b) * (b != 0),
     [np.array([7, -7, 6, 0, 5, -9]), np.array([2, 2, 3, 4, 0, -4])]),
    ("take wrap", lambda x, i: pt.take(x, i, mode="wrap"),
     lambda x, i: np.take(x, i, mode="wrap"), [V, INDICES]),
    ("take clip", lambda x, i: pt.take(x, i, mode="clip"),
     lambda x, i: np.take(x, i, mode="clip"), [V, INDICES]),
    ("take wrap axis", lambda x, i: pt.take(x, i, axis=1, mode="wrap"),
     lambda x, i: np.take(x, i, axis=1, mode="wrap"), [M, INDICES]),
    ("take clip flattened", lambda x, i: pt.take(x, i, mode="clip"),
     lambda x, i: np.take(x, i, mode="clip"), [M, INDICES * 3]),
    ("take clip length 1", lambda x, i: pt.take(x, i, axis=0, mode="clip"),
     lambda x, i: np.take(x, i, axis=0, mode="clip"), [M[:1].copy(), INDICES]),
    ("take wrap int32 indices", lambda x, i: pt.take(x, i, mode="wrap"),
     lambda x, i: np.take(x, i, mode="wrap"), [V, INDICES.astype("int32")]),
    ("tile", lambda x: pt.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [M]),
    ("tile zero", lambda x: pt.tile(x, (0, 2)), lambda x: np.tile(x, (0, 2)), [M]),
    ("tile short reps", lambda x: pt.tile(x, 2), lambda x: np.tile(x, 2), [T]),
]


def _numpy_fill_diagonal(a: Array, value: Any) -> Array:
    filled = a.copy()
    np.fill_diagonal(filled, value)
    return filled


def _inputs(values: list[Array], static: bool) -> list[Variable]:
    return [
        Input(TensorType(v.dtype.name, v.shape if static else (None,) * v.ndim), f"in{k}")
        for k, v in enumerate(values)
    ]


def _assert_same(got: Array, expected: Array, name: str = "") -> None:
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected, err_msg=name)


@pytest.mark.parametrize("static", [True, False])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_values_match_numpy(
    case: tuple[str, Callable[..., Variable], Callable[..., Any], list[Array]], static: bool
) -> None:
    name, build, reference, values = case
    variables = _inputs(values, static)
    output = build(*variables)
    (got,) = evaluate([output], dict(zip(variables, values)))
    with np.errstate(all="ignore"):
        expected = np.asarray(reference(*values))
    _assert_same(got, expected, name)
    if static:
        assert output.type.shape == expected.shape


def test_compiled_values_match_the_reference() -> None:
    for start in range(0, len(CASES), 20):
        chunk = CASES[start : start + 20]
        variables: list[Variable] = []
        values: list[Array] = []
        outputs: list[Variable] = []
        for _, build, _, args in chunk:
            own = _inputs(args, static=False)
            variables += own
            values += args
            outputs.append(build(*own))
        got = function(variables, outputs)(*values)
        for (name, *_), g, e in zip(chunk, got, evaluate(outputs, dict(zip(variables, values)))):
            _assert_same(g, e, name)


def test_atleast_gives_one_result_per_input() -> None:
    x, v = pt.scalar("x"), pt.vector("v")
    assert isinstance(pt.atleast_1d(x), Variable)
    shapes = [result.type.shape for result in pt.atleast_3d(x, v, pt.vector("w", shape=(4,)))]
    assert shapes == [(1, 1, 1), (1, None, 1), (1, 4, 1)]
    assert pt.atleast_2d(v) is not v and pt.atleast_1d(v) is v


def test_stacks_keep_static_lengths() -> None:
    a = pt.matrix("a", shape=(2, 3))
    b = pt.vector("b", shape=(3,))
    assert pt.vstack([a, b]).type.shape == (3, 3)
    assert pt.hstack([a, a]).type.shape == (2, 6)
    assert pt.dstack([a, a]).type.shape == (2, 3, 2)
    assert pt.column_stack([b, b]).type.shape == (3, 2)
    assert pt.cross(pt.tensor("c", shape=(5, 1, 3)), pt.tensor("d", shape=(4, 3))).type.shape == (
        5, 4, 3
    )


@pytest.mark.parametrize("name", ["triu_indices", "tril_indices"])
def test_triangle_indices_match_numpy_for_constant_and_variable_sizes(name: str) -> None:
    ours, numpys = getattr(pt, name), getattr(np, name)
    n, k = pt.scalar("n", dtype="int64"), pt.scalar("k", dtype="int64")
    m = pt.scalar("m", dtype="int32")
    variable = [ours(n), ours(n, k), ours(n, k, m)]
    outputs = [index for pair in variable for index in pair]
    compiled = function([n, m, k], outputs)
    sizes = [(4, 4, 0), (3, 5, 1), (5, 3, -2), (0, 0, 0), (1, 1, 0), (3, 4, 9)]
    for rows, columns, offset in sizes:
        expected = [numpys(rows), numpys(rows, offset), numpys(rows, offset, columns)]
        want = [np.asarray(index) for pair in expected for index in pair]
        feed: dict[Variable, Any] = {n: np.int64(rows), m: np.int32(columns), k: np.int64(offset)}
        for got, e in zip(evaluate(outputs, feed), want):
            _assert_same(got, e)
        for got, e in zip(compiled(np.int64(rows), np.int32(columns), np.int64(offset)), want):
            _assert_same(got, e)
        constant_rows, constant_columns = ours(rows, offset, columns)
        assert constant_rows.type.shape == want[4].shape  # constants: lengths known
        _assert_same(evaluate([constant_rows], {})[0], want[4])
        _assert_same(evaluate([constant_columns], {})[0], want[5])


def test_triangle_indices_from_a_matrix_index_its_triangle() -> None:
    x = pt.matrix("x")
    upper = x[pt.triu_indices_from(x, 1)]
    lower = x[pt.tril_indices_from(x)]
    assert pt.triu_indices_from(pt.matrix("s", shape=(3, 4)))[0].type.shape == (9,)
    compiled = function([x], [upper, lower])
    for value in (M, M.T.copy(), np.zeros((0, 2))):
        want = [value[np.triu_indices_from(value, 1)], value[np.tril_indices_from(value)]]
        for got in (evaluate([upper, lower], {x: value}), compiled(value)):
            for g, e in zip(got, want):
                _assert_same(g, e)


def test_tile_with_variable_counts() -> None:
    x = pt.matrix("x")
    n = pt.scalar("n", dtype="int64")
    reps = pt.vector("reps", dtype="int32", shape=(3,))
    outputs = [pt.tile(x, [n, 2]), pt.tile(x, reps), pt.tile(x, n), pt.tile(x, [1, n])]
    assert outputs[0].type.shape == (None, None) and outputs[1].ndim == 3
    compiled = function([x, n, reps], outputs)
    for value, count, counts in [
        (M, 3, (2, 1, 2)), (M[:1], 0, (0, 3, 1)), (np.zeros((0, 2)), 1, (1, 1, 1))
    ]:
        feed: dict[Variable, Any] = {x: value, n: np.int64(count), reps: np.array(counts, "int32")}
        want = [np.tile(value, (count, 2)), np.tile(value, counts), np.tile(value, count),
                np.tile(value, (1, count))]
        for got in (evaluate(outputs, feed), compiled(*feed.values())):
            for g, e in zip(got, want):
                _assert_same(g, e)
    assert pt.tile(pt.matrix("s", shape=(3, 4)), (2, 1, 3)).type.shape == (2, 3, 12)
    static = pt.matrix("s", shape=(3, 4))
    assert pt.tile(static, (1, 1)) is static


@pytest.mark.parametrize(
    "build, values",
    [
        (lambda a, b: pt.cross(vectors(a, 3), vectors(b, 3)), [ROWS3, ROWS3[::-1].copy()]),
        (lambda a, b: pt.cross(vectors(a, 2), vectors(b, 3)), [ROWS3[:, :2].copy(), ROWS3]),
        (lambda a, b: pt.cross(vectors(a, 2), vectors(b, 2)),
         [ROWS3[:, :2].copy(), ROWS3[:, 1:].copy()]),
        (lambda a, v: pt.fill_diagonal(a, v) ** 2, [M, S]),
        (lambda a, v: pt.fill_diagonal(a, v) ** 2, [M.T.copy(), V[:3].copy()]),
        (lambda a: pt.fill_diagonal(a, 0.0) * a, [RNG.normal(size=(3, 3, 3))]),
        (lambda a, b: pt.hstack([a, b]) ** 2, [V, W]),
        (lambda a, b: pt.vstack([a, b]) ** 2, [M, V]),
        (lambda a, b: pt.dstack([a, b]) ** 2, [M, M]),
        (lambda a, b: pt.column_stack([a, b]) ** 2, [V[:3].copy(), M]),
        (lambda x: pt.atleast_3d(x) ** 2, [V]),
        (lambda x: pt.nan_to_num(x) ** 2, [V]),
        (lambda x: pt.deg2rad(x) * pt.rad2deg(x), [V]),
        (lambda x: pt.take(x, INDICES, mode="wrap") ** 2, [V]),
        (lambda x: pt.take(x, INDICES, axis=1, mode="clip") ** 2, [M]),
        (lambda x: pt.tile(x, (2, 1, 3)) ** 2, [M]),
        (lambda x: pt.tile(x, pt.constant(np.array([2, 2]))) ** 2, [V[:2].copy()]),
    ],
)
def test_gradients_match_finite_differences(
    build: Callable[..., Variable], values: list[Array]
) -> None:
    check_pullback(build, values)


def test_gradients_at_replaced_and_filled_elements() -> None:
    x, v = pt.vector("x"), pt.scalar("v")
    (through_nan_to_num,) = pt.grad(pt.sum(pt.nan_to_num(x) * 3.0), [x])
    np.testing.assert_array_equal(evaluate([through_nan_to_num], {x: SPECIAL})[0],
                                  [0.0, 0.0, 0.0, 3.0, 3.0, 3.0])
    a = pt.matrix("a")
    gradients = pt.grad(pt.sum(pt.fill_diagonal(a, v) * 2.0), [a, v])
    got_a, got_v = evaluate(gradients, {a: M, v: np.array(1.0)})
    expected_a = np.full(M.shape, 2.0)
    np.fill_diagonal(expected_a, 0.0)
    np.testing.assert_array_equal(got_a, expected_a)
    assert got_v == 6.0  # three diagonal elements
    n = pt.scalar("n", dtype="int64")
    (through_tile,) = pt.grad(pt.sum(pt.tile(x, [n, 2])), [x])
    np.testing.assert_array_equal(evaluate([through_tile], {x: V, n: np.int64(3)})[0],
                                  np.full(4, 6.0))


def test_bad_input_gets_clear_errors() -> None:
    unknown = pt.matrix("rows")
    with pytest.raises(ShapeError, match=r"cross: axis 1 of a .*length 2 or 3, got unknown"):
        pt.cross(unknown, unknown)
    with pytest.raises(ShapeError, match="cross: axis 1 of b .*got 4"):
        pt.cross(pt.matrix("a", shape=(2, 3)), pt.matrix("b", shape=(2, 4)))
    with pytest.raises(ShapeError, match="fill_diagonal: a must have at least 2 axes"):
        pt.fill_diagonal(pt.vector("v"), 1.0)
    with pytest.raises(ShapeError, match="equal lengths"):
        pt.fill_diagonal(pt.tensor("t", shape=(2, 3, 2)), 1.0)
    with pytest.raises(DTypeError, match="cannot write a float64 value into a int64"):
        pt.fill_diagonal(pt.matrix("i", dtype="int64"), pt.scalar("f"))
    cube = pt.tensor3("cube")
    with pytest.raises(ShapeError):  # unequal lengths found when run
        evaluate([pt.fill_diagonal(cube, 1.0)], {cube: np.zeros((2, 3, 2))})
    with pytest.raises(ValueError, match="take: mode must be 'raise', 'wrap' or 'clip'"):
        pt.take(pt.vector("x"), [0], mode="nearest")
    with pytest.raises(TypeError, match="triu_indices n: expected an integer scalar, got float"):
        pt.triu_indices(pt.scalar("n"))
    with pytest.raises(ValueError, match="tril_indices: negative dimensions"):
        pt.tril_indices(-1)
    with pytest.raises(ShapeError, match="triu_indices_from: expected a matrix"):
        pt.triu_indices_from(pt.vector("v"))
    with pytest.raises(DTypeError, match="nan_to_num: complex input"):
        pt.nan_to_num(pt.vector("z", dtype="complex128"))
    with pytest.raises(DTypeError, match="deg2rad: not defined for complex128"):
        pt.deg2rad(pt.vector("z", dtype="complex128"))
    with pytest.raises(ValueError, match="hstack: needs at least one tensor"):
        pt.hstack([])
    with pytest.raises(DTypeError, match="tile reps"):
        pt.tile(pt.vector("x"), pt.vector("reps"))
    with pytest.raises(ShapeError, match="differ in length along axis 1"):
        pt.vstack([pt.matrix("a", shape=(2, 3)), pt.vector("b", shape=(4,))])
    x = pt.vector("x")
    with pytest.raises(IndexError):  # an empty axis has nothing to wrap to, as in NumPy
        evaluate([pt.take(x, [0], mode="wrap")], {x: EMPTY})
    with pytest.raises(IndexError):
        function([x], pt.take(x, [0], mode="clip"))(EMPTY)
