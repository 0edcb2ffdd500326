"""Automatic differentiation on graphs: reverse mode (`grad`, `vjp`), forward mode (`jvp`),
and `jacobian` / `hessian` built from them.

Derivatives are graphs built from each op's `pullback` / `pushforward`, so they can be
differentiated again (any order), rewritten and compiled like any other graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, overload

from fgraph import Variable, display_name, toposort
from fgraph.dtypes import is_inexact
from fgraph.node import Apply
from ops.elemwise import add, cast, ones_like, zeros_like

Disconnected = Literal["raise", "zero"]


class DisconnectedInputError(ValueError):
    """The cost does not depend on a variable its gradient was asked for."""


@overload
def grad(
    cost: Variable | None,
    wrt: Variable,
    *,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> Variable: ...


@overload
def grad(
    cost: Variable | None,
    wrt: Sequence[Variable],
    *,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> list[Variable]: ...


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    *,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> Variable | list[Variable]:
    """Gradient of the scalar `cost` with respect to `wrt` (a variable or a sequence).

    `known_grads` maps intermediate variables to cotangents to start from (with or
    without a cost). A `wrt` the cost does not depend on raises DisconnectedInputError,
    or gets zeros with `disconnected_inputs="zero"`.
    """
    targets = [wrt] if isinstance(wrt, Variable) else list(wrt)
    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        if cost.ndim != 0:
            raise TypeError(f"grad: cost must be a scalar, got {cost.type}; sum it or use jacobian")
        if not is_inexact(cost.dtype):
            raise TypeError(f"grad: cost must be a float, got {cost.dtype}")
        seeds[cost] = ones_like(cost)
    for variable, cotangent in (known_grads or {}).items():
        seeds[variable] = _checked(cotangent, variable, "known_grads")
    if not seeds:
        raise ValueError("grad: give a cost or known_grads")
    gradients = _pullback(seeds, targets)
    results: list[Variable] = []
    for target, gradient in zip(targets, gradients):
        if gradient is None:
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(
                    f"grad: the cost does not depend on {display_name(target)}; pass "
                    'disconnected_inputs="zero" to get zeros'
                )
            gradient = zeros_like(target)
        results.append(gradient)
    return results[0] if isinstance(wrt, Variable) else results


def vjp(
    outputs: Sequence[Variable], wrt: Sequence[Variable], cotangents: Sequence[Variable]
) -> list[Variable]:
    """Vector-Jacobian products: the cotangents of `wrt` given those of `outputs`
    (zeros for inputs the outputs do not depend on)."""
    if len(outputs) != len(cotangents):
        raise ValueError(f"vjp: {len(outputs)} outputs but {len(cotangents)} cotangents")
    return grad(
        None,
        list(wrt),
        known_grads=dict(zip(outputs, cotangents)),
        disconnected_inputs="zero",
    )


def jvp(
    outputs: Sequence[Variable], wrt: Sequence[Variable], tangents: Sequence[Variable]
) -> list[Variable]:
    """Jacobian-vector products (forward mode): tangents of `outputs` given those of `wrt`
    (zeros for outputs that do not depend on `wrt`)."""
    if len(wrt) != len(tangents):
        raise ValueError(f"jvp: {len(wrt)} inputs but {len(tangents)} tangents")
    known: dict[Variable, Variable] = {
        variable: _checked(tangent, variable, "jvp tangent") for variable, tangent in zip(wrt, tangents)
    }
    for node in toposort(outputs):
        input_tangents = tuple(known.get(input_) for input_ in node.inputs)
        if all(tangent is None for tangent in input_tangents):
            continue
        output_tangents = node.op.pushforward(node.inputs, node.outputs, input_tangents)
        _check_arity(node, output_tangents, "pushforward")
        for output, tangent in zip(node.outputs, output_tangents):
            if tangent is not None:
                known[output] = _checked(tangent, output, f"{node.op}.pushforward")
    results: list[Variable] = []
    for wanted in outputs:
        tangent = known.get(wanted)
        results.append(zeros_like(wanted) if tangent is None else tangent)
    return results


def jacobian(expression: Variable, wrt: Variable) -> Variable:
    """d expression[i] / d wrt, stacked along a new leading axis (static lengths only)."""
    from ops.shape import stack

    if expression.ndim == 0:
        return grad(expression, wrt, disconnected_inputs="zero")
    if expression.ndim != 1 or expression.type.shape[0] is None:
        raise TypeError(
            f"jacobian: expression must be a scalar or a vector of static length, got {expression.type}"
        )
    rows = [grad(expression[i], wrt, disconnected_inputs="zero") for i in range(expression.type.shape[0])]
    return stack(rows)


def hessian(cost: Variable, wrt: Variable) -> Variable:
    """Second derivatives of a scalar cost with respect to a vector `wrt` (static length)."""
    return jacobian(grad(cost, wrt), wrt)


def _pullback(seeds: Mapping[Variable, Variable], targets: Sequence[Variable]) -> list[Variable | None]:
    """Accumulate cotangents from `seeds` back to `targets`, through nodes on a path."""
    for target in targets:
        if not isinstance(target, Variable):
            raise TypeError(f"grad: wrt must hold variables, got {target!r}")
        if not is_inexact(target.dtype):
            raise TypeError(f"grad: {display_name(target)} has dtype {target.dtype}; gradients need floats")
    nodes = toposort(tuple(seeds))
    on_path: set[Variable] = set(targets)
    relevant: list[Apply] = []
    for node in nodes:
        if any(input_ in on_path for input_ in node.inputs):
            relevant.append(node)
            on_path.update(node.outputs)
    contributions: dict[Variable, list[Variable]] = {v: [c] for v, c in seeds.items()}
    for node in reversed(relevant):
        output_cotangents = tuple(_total(contributions.pop(output, None)) for output in node.outputs)
        if all(cotangent is None for cotangent in output_cotangents):
            continue
        input_cotangents = node.op.pullback(node.inputs, node.outputs, output_cotangents)
        _check_arity(node, input_cotangents, "pullback")
        for input_, cotangent in zip(node.inputs, input_cotangents):
            if cotangent is not None and input_ in on_path:
                checked = _checked(cotangent, input_, f"{node.op}.pullback")
                contributions.setdefault(input_, []).append(checked)
    return [_total(contributions.get(target)) for target in targets]


def _total(parts: list[Variable] | None) -> Variable | None:
    if not parts:
        return None
    total = parts[0]
    for part in parts[1:]:
        total = add(total, part)
    return total


def _check_arity(node: Apply, results: Sequence[Variable | None], method: str) -> None:
    expected = len(node.inputs) if method == "pullback" else len(node.outputs)
    if len(results) != expected:
        raise TypeError(f"{node.op}.{method} returned {len(results)} values, expected {expected}")


def _checked(derivative: Variable, primal: Variable, source: str) -> Variable:
    """A derivative must match its primal's rank and static shape; its dtype is cast."""
    if not isinstance(derivative, Variable):
        raise TypeError(f"{source}: expected a Variable for {display_name(primal)}, got {derivative!r}")
    if derivative.ndim != primal.ndim or any(
        want is not None and got is not None and want != got
        for want, got in zip(primal.type.shape, derivative.type.shape)
    ):
        raise TypeError(
            f"{source}: derivative for {display_name(primal)} has type {derivative.type}, "
            f"expected the shape of {primal.type}"
        )
    return derivative if derivative.dtype == primal.dtype else cast(derivative, primal.dtype)



