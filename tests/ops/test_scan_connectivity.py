"""Which loop inputs a derivative reaches: a gradient through a loop is disconnected
(DisconnectedInputError, or zeros when asked) exactly where nothing the cost computes
depends on the variable, as PyTensor's `test_grad_connectivity_matrix` pins, and the
connected ones match finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from ops.gradients import propagate_tangents
from ops.loop_connection import loop_dependencies
from ops.scan_op import Scan
from tests.ops.checks import numeric_gradient

Array = np.ndarray[Any, np.dtype[Any]]


def pytensor_loop() -> tuple[list[Variable], list[Variable]]:
    """PyTensor's test_grad_connectivity_matrix: x_t = x**2, y_t = y, z_t = x + 1."""
    x0, y0, z0 = pt.vector("x0"), pt.vector("y0"), pt.vector("z0")
    x, y, z = pt.scan(lambda x, y, z: (x**2, y, x + 1), outputs_info=[x0, y0, z0], n_steps=10)
    return [x0, y0, z0], [x, y, z]


def test_gradient_connectivity_matrix() -> None:
    (x0, y0, z0), (x, y, z) = pytensor_loop()
    cost = (x + y + z).sum()
    gx0, gy0 = pt.grad(cost, [x0, y0])
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on z0"):
        pt.grad(cost, z0)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on y0"):
        pt.grad(x.sum(), y0)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on z0"):
        pt.grad(z[-1].sum(), z0)
    zeros = pt.grad(cost, z0, disconnected_inputs="ignore")

    values = [np.array([0.9, -0.97]), np.array([0.3, 2.0]), np.array([5.0, 6.0])]
    inputs = dict(zip((x0, y0, z0), values))
    got = evaluate([gx0, gy0, zeros], inputs)
    np.testing.assert_allclose(got[2], [0.0, 0.0])
    np.testing.assert_allclose(got[1], [10.0, 10.0])

    def total(a: Array) -> Array:
        return np.asarray(evaluate([cost], {**inputs, x0: a})[0])

    (numeric,) = numeric_gradient(total, [values[0]], np.asarray(1.0))
    np.testing.assert_allclose(got[0], numeric, rtol=1e-6)
    compiled = function([x0, y0, z0], [gx0, gy0, zeros])(*values)
    for c, e in zip(compiled, got):
        np.testing.assert_allclose(c, e, rtol=1e-12)


def test_forward_mode_disconnects_the_same_outputs() -> None:
    (x0, y0, z0), _ = pytensor_loop()
    finals = pt.reduce(lambda x, y, z: (x**2, y, x + 1), None, [x0, y0, z0], n_steps=10)
    x, y, z = finals
    tangent = pt.constant(np.ones(2))
    assert propagate_tangents({z0: tangent}, [x, y, z]) == [None, None, None]
    moved_by_x0 = propagate_tangents({x0: tangent}, [x, y, z])
    assert moved_by_x0[0] is not None and moved_by_x0[1] is None and moved_by_x0[2] is not None
    (jvp_z,) = pt.jvp([z], [x0], [tangent])
    value = np.array([0.999, 1.001])
    got = evaluate([jvp_z], {x0: value, y0: value, z0: value})[0]
    np.testing.assert_allclose(got, (2**9) * value ** (2**9 - 1), rtol=1e-12)  # z = x0**512 + 1


def test_connection_is_a_fixed_point_over_the_carries() -> None:
    a0, b0, c0, w = pt.scalar("a0"), pt.scalar("b0"), pt.scalar("c0"), pt.scalar("w")
    # a reads b, b reads c, c reads w: a depends on w only after three steps.
    a, b, c = pt.reduce(lambda a, b, c, w: (b * 2.0, c * 3.0, c * w), None, [a0, b0, c0],
                        non_sequences=[w], n_steps=4)
    node = a.owner
    assert node is not None and isinstance(node.op, Scan)
    depends = loop_dependencies(node.op)
    assert depends.finals[0] == {1, 2, 3}  # b0, c0, w; a0 is overwritten by the first step
    assert depends.finals[2] == {2, 3}
    ga = pt.grad(a, [b0, c0, w])
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on a0"):
        pt.grad(a, a0)
    got = evaluate(ga, {a0: 1.0, b0: 1.0, c0: 1.5, w: 0.5})
    # a_4 = 2 b_3 = 6 c_2 = 6 c0 w**2
    np.testing.assert_allclose(got, [0.0, 6 * 0.5**2, 12 * 1.5 * 0.5])


def test_a_symbolic_step_count_keeps_the_initial_value_connected() -> None:
    z0, x0 = pt.scalar("z0"), pt.scalar("x0")
    n = pt.scalar("n", dtype="int64")
    _, z = pt.reduce(lambda x, z: (x * 2.0, x + 1.0), None, [x0, z0], n_steps=n)
    gz0 = pt.grad(z, z0)  # zero steps leave z0 as it is
    np.testing.assert_allclose(evaluate([gz0], {z0: 1.0, x0: 2.0, n: 0})[0], 1.0)
    np.testing.assert_allclose(evaluate([gz0], {z0: 1.0, x0: 2.0, n: 3})[0], 0.0)


def test_sequences_and_non_sequences_reaching_only_some_outputs() -> None:
    xs, h0, w, v = pt.vector("xs"), pt.scalar("h0"), pt.scalar("w"), pt.scalar("v")
    h, ys = pt.scan(lambda x, h, w, v: (h * w, x * v), sequences=[xs], outputs_info=[h0, None],
                    non_sequences=[w, v])
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on xs"):
        pt.grad(h.sum(), xs)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on v"):
        pt.grad(h[-1], v)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on w"):
        pt.grad(ys.sum(), w)
    gxs, gv = pt.grad(ys.sum(), [xs, v])
    got = evaluate([gxs, gv], {xs: np.array([1.0, 2.0, 4.0]), h0: 1.0, w: 2.0, v: 3.0})
    np.testing.assert_allclose(got[0], [3.0, 3.0, 3.0])
    np.testing.assert_allclose(got[1], 7.0)


def test_an_integer_carry_carries_no_derivative() -> None:
    x0 = pt.scalar("x0")
    count, y = pt.scan(lambda c, y, x0: (c + pt.cast(x0 > 0, "int64"), y * 2.0),
                       outputs_info=[pt.constant(0), pt.constant(1.0)], non_sequences=[x0],
                       n_steps=3)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on x0"):
        pt.grad(y.sum() + pt.cast(count, "float64").sum(), x0)


def test_second_derivatives_stay_disconnected() -> None:
    (x0, y0, z0), (x, _, z) = pytensor_loop()
    first = pt.grad((x + z).sum(), x0)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on y0"):
        pt.grad(first.sum(), y0)
    second = pt.grad(first[0], x0)

    others = {y0: np.zeros(2), z0: np.zeros(2)}

    def first_at(value: Array) -> Array:
        return np.asarray(evaluate([first[0]], {x0: value, **others})[0])

    value = np.array([0.93, 1.01])
    (numeric,) = numeric_gradient(first_at, [value], np.asarray(1.0))
    np.testing.assert_allclose(evaluate([second], {x0: value, **others})[0], numeric, rtol=1e-5)
