"""Bessel functions of real order as elementwise ops: J_v (`jv`), K_v (`kv`) and
K_v e^x (`kve`), with their derivatives in x by the recurrences
J_v' = (J_{v-1} - J_{v+1}) / 2 and K_v' = -(K_{v-1} + K_{v+1}) / 2. The derivative in
the order v is not implemented (it needs the derivative of the series in the order):
differentiating along v raises, naming it (`ops.undefined_gradient`).

References are `scipy.special`'s; the compiled forms are
`numba_backend.bessel_functions`, called by the expressions in `numba_backend.special`
(the `Elemwise` kernel inlines them). `ops.special` exports them with the rest."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np
from fgraph import Variable
from fgraph.op import Array
from fgraph.operators import TensorLike
import ops.elementwise_functions as ew
from ops.scalar_ops import Partials, ScalarOp
from ops.undefined_gradient import undefined_gradient


class SciPyOp(ScalarOp):
    """A scalar op whose reference is the `scipy.special` function `scipy_name`
    (imported when first used: `scipy.special` costs every `import ops` 40 ms)."""

    __slots__ = ()
    scipy_name: ClassVar[str]

    def impl(self, *inputs: Array) -> Array:
        import scipy.special  # here, not at import: it would slow every `import ops`

        return np.asarray(getattr(scipy.special, self.scipy_name)(*inputs))


def order_not_differentiable(name: str, v: Variable) -> Variable:
    """The partial in the order `v` of the function `name`, which is not implemented."""
    return undefined_gradient(v, f"{name}: the derivative in the order v is not implemented")


@attrs.frozen
class Jv(SciPyOp):
    """J_v(x), the Bessel function of the first kind of real order."""

    nin = 2
    scipy_name = "jv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        v, x = inputs
        return (order_not_differentiable("jv", v), (jv(v - 1, x) - jv(v + 1, x)) / 2)


@attrs.frozen
class Kv(SciPyOp):
    """K_v(x), the modified Bessel function of the second kind of real order."""

    nin = 2
    scipy_name = "kv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        v, x = inputs
        return (order_not_differentiable("kv", v), -(kv(v - 1, x) + kv(v + 1, x)) / 2)


@attrs.frozen
class Kve(SciPyOp):
    """K_v(x) e^x, finite where K_v underflows."""

    nin = 2
    scipy_name = "kve"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        v, x = inputs
        return (order_not_differentiable("kve", v), output - (kve(v - 1, x) + kve(v + 1, x)) / 2)


def jv(v: TensorLike, x: TensorLike) -> Variable:
    """J_v(x) for real order v (`scipy.special.jv`; negative x for integer v only, else
    nan, and nan at x = inf, as SciPy). Differentiable in x only."""
    return ew.elemwise(Jv(), v, x)


def j0(x: TensorLike) -> Variable:
    """J_0(x) (`scipy.special.j0`), as jv(0, x)."""
    return jv(0.0, x)


def j1(x: TensorLike) -> Variable:
    """J_1(x) (`scipy.special.j1`), as jv(1, x)."""
    return jv(1.0, x)


def kv(v: TensorLike, x: TensorLike) -> Variable:
    """K_v(x) for real order v (`scipy.special.kv`; inf at x = 0, nan for x < 0).
    Differentiable in x only."""
    return ew.elemwise(Kv(), v, x)


def kve(v: TensorLike, x: TensorLike) -> Variable:
    """K_v(x) e^x (`scipy.special.kve`). Differentiable in x only."""
    return ew.elemwise(Kve(), v, x)
