"""Complex parts and derivatives through complex values.

fgraph differentiates complex values as JAX does: for a real-valued f of a complex z,
`grad(f, z)` is df/dx - i df/dy (z = x + iy; PyTensor's convention is its conjugate).
Each check compares with central differences along the real and imaginary axes."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Variable, evaluate

Array = np.ndarray[Any, np.dtype[Any]]
Z = np.array([3 + 4j, -1 + 0.5j, 0.25 - 2j])


def jax_gradient(function: Callable[[Array], float], z: Array, eps: float = 1e-6) -> Array:
    """df/dx - i df/dy by central differences, for each element of z."""
    gradient = np.zeros_like(z)
    for index in np.ndindex(z.shape):
        step = np.zeros_like(z)
        step[index] = eps
        along_x = (function(z + step) - function(z - step)) / (2 * eps)
        along_y = (function(z + 1j * step) - function(z - 1j * step)) / (2 * eps)
        gradient[index] = along_x - 1j * along_y
    return gradient


COSTS: tuple[tuple[str, Callable[[Variable], Variable]], ...] = (
    ("abs", lambda z: pt.abs(z).sum()),
    ("abs_squared", lambda z: (pt.abs(z) ** 2).sum()),
    ("real", lambda z: (pt.real(z) * pt.arange(3.0)).sum()),
    ("imag", lambda z: (pt.imag(z) ** 3).sum()),
    ("angle", lambda z: pt.angle(z).sum()),
    ("conj", lambda z: pt.real(pt.conj(z) * (2 + 1j)).sum()),
    ("holomorphic", lambda z: pt.real(pt.exp(z) * z**2 / (1 + z)).sum()),
    ("parts", lambda z: pt.abs(pt.complex(pt.imag(z), pt.real(z) ** 2)).sum()),
    ("norm", lambda z: pt.linalg.norm(z)),
    ("methods", lambda z: (z * z.conj()).real.sum() + z.imag.sum()),
)


@pytest.mark.parametrize(("name", "cost"), COSTS, ids=[name for name, _ in COSTS])
def test_gradients_of_real_costs_follow_jax(name: str, cost: Callable[[Variable], Variable]) -> None:
    z = pt.vector("z", dtype="complex128")
    value = cost(z)
    assert value.dtype == "float64"
    (gradient,) = evaluate([pt.grad(value, z)], {z: Z})

    def numeric(point: Array) -> float:
        return float(evaluate([value], {z: point})[0])

    np.testing.assert_allclose(gradient, jax_gradient(numeric, Z), rtol=1e-6, atol=1e-8)


def test_a_holomorphic_cost_differentiates_to_its_derivative() -> None:
    z = pt.vector("z", dtype="complex128")
    cost = (pt.exp(z) * z).sum()
    (gradient,) = evaluate([pt.grad(cost, z)], {z: Z})
    np.testing.assert_allclose(gradient, np.exp(Z) * (1 + Z), rtol=1e-12)


def test_forward_mode_matches_the_directional_difference() -> None:
    z = pt.vector("z", dtype="complex128")
    cost = pt.abs(pt.sin(z)) + pt.angle(z) * pt.imag(z)
    direction = np.array([0.3 - 0.2j, 1j, -0.5])
    (tangent,) = pt.jvp([cost], [z], [pt.constant(direction)])
    (got,) = evaluate([tangent], {z: Z})
    eps = 1e-6
    upper, lower = (evaluate([cost], {z: Z + s * eps * direction})[0] for s in (1, -1))
    np.testing.assert_allclose(got, (upper - lower) / (2 * eps), rtol=1e-6)


def test_a_real_input_of_a_complex_expression_gets_the_real_part() -> None:
    x = pt.vector("x")
    cost = pt.abs(x * (1 + 2j)).sum()
    (gradient,) = evaluate([pt.grad(cost, x)], {x: np.array([1.5, -2.0])})
    assert gradient.dtype == np.float64
    np.testing.assert_allclose(gradient, np.sqrt(5) * np.sign([1.5, -2.0]))


def test_parts_of_real_values_and_dtypes() -> None:
    x = pt.vector("x", dtype="int16")
    assert pt.real(x) is x and pt.conj(x) is x
    assert pt.imag(x).dtype == "int16"
    assert pt.conj(pt.vector("b", dtype="bool")).dtype == "int8"
    assert pt.angle(pt.vector("f", dtype="float32")).dtype == "float32"
    assert pt.abs(pt.vector("c", dtype="complex64")).dtype == "float32"
    assert pt.real(pt.vector("c", dtype="complex64")).dtype == "float32"
    assert pt.complex(pt.vector("a", dtype="float32"), 1.0).dtype == "complex64"


@pytest.mark.parametrize("function", [pt.sigmoid, pt.softplus, pt.log1mexp, pt.erf, pt.erfc])
def test_real_only_functions_refuse_complex_values(function: Callable[[Variable], Variable]) -> None:
    with pytest.raises(DTypeError, match="is not defined for complex values, got \\(complex64\\)"):
        function(pt.vector("z", dtype="complex64"))


def test_complex_parts_must_be_real() -> None:
    with pytest.raises(DTypeError, match="Complex: real and imaginary parts must be real"):
        pt.complex(pt.vector("c", dtype="complex128"), 1.0)


def test_casting_complex_to_real_keeps_the_real_part_without_a_warning() -> None:
    z = pt.vector("z", dtype="complex128")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's astype would warn (ComplexWarning)
        (value,) = evaluate([pt.cast(z, "float64")], {z: Z})
    np.testing.assert_array_equal(value, Z.real)
    imaginary = np.array([1j, 0j, 2 + 0j])
    (truth,) = evaluate([pt.cast(z, "bool")], {z: imaginary})
    np.testing.assert_array_equal(truth, imaginary.astype(bool))
