"""Automatic differentiation on graphs: reverse mode (`grad`, `vjp`), forward mode (`jvp`),
and `jacobian` / `hessian` built from them.

Derivatives are graphs built from each op's `pullback` / `pushforward`, so they can be
differentiated again (any order), rewritten and compiled like any other graph. A
logarithm with a stable form (`ops.stable`: `log(sigmoid(x))`, `log(sum(exp(x)))`, ...)
is differentiated through that form, whose derivative is finite where the naive chain
rule gives `inf * 0`. Only
float and complex variables carry derivatives: a derivative flowing into an integer or
boolean variable stops there (its `None` means zero, as in the op protocol).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal, get_args, overload

import numpy as np

from fgraph import Input, Variable, display_name, rebuild, toposort
from fgraph.dtypes import is_inexact
from fgraph.node import Apply
from ops.convert import constant
from ops.creation import arange
from ops.dimshuffle import DimShuffle
from ops.elementwise_functions import add, cast, second, zeros_like
from ops.gradient_control import StopGradient
from ops.join import stack
from ops.scan_functions import map as loop_map
from ops.stable import StableForm, stable_form
from ops.undefined_gradient import undefined_message

Disconnected = Literal["raise", "warn", "ignore"]
"""What `grad` does for a `wrt` the cost does not depend on (PyTensor's names): raise
DisconnectedInputError, or give zeros with a warning (`"warn"`) or silently
(`"ignore"`)."""


class DisconnectedInputError(ValueError):
    """The cost does not depend on a variable its gradient was asked for."""


@overload
def grad(
    cost: Variable | None,
    wrt: Variable,
    *,
    consider_constant: Iterable[Variable] | None = None,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> Variable: ...


@overload
def grad(
    cost: Variable | None,
    wrt: Sequence[Variable],
    *,
    consider_constant: Iterable[Variable] | None = None,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> list[Variable]: ...


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    *,
    consider_constant: Iterable[Variable] | None = None,
    known_grads: Mapping[Variable, Variable] | None = None,
    disconnected_inputs: Disconnected = "raise",
) -> Variable | list[Variable]:
    """Gradient of the scalar `cost` with respect to `wrt` (a variable or a sequence), as
    PyTensor's `grad`.

    `consider_constant` lists variables treated as constants: no gradient flows through
    them to what computes them (their own gradient, if asked for, is still given).
    `known_grads` maps variables to their known gradients, with or without a cost: each
    is the whole gradient of that variable (what the cost would send it is not added; a
    known gradient of the cost itself replaces the seed 1). A `wrt` the cost does not
    depend on (or only through `disconnected_grad` or `consider_constant`) raises
    DisconnectedInputError, or gets zeros with `disconnected_inputs="warn"` (and a
    warning) or `"ignore"`; one reached only through
    `stop_gradient` gets zeros in any case.
    """
    if disconnected_inputs not in get_args(Disconnected):
        raise ValueError(
            f"grad: disconnected_inputs must be one of {get_args(Disconnected)}, "
            f"got {disconnected_inputs!r}"
        )
    targets = [wrt] if isinstance(wrt, Variable) else list(wrt)
    _check_differentiable(targets, "grad")
    known = dict(known_grads or {})
    _check_differentiable(known, "grad known_grads")
    pairs: list[tuple[Variable, Variable]] = []
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a Variable or None, got {cost!r}")
        if cost.ndim != 0:
            raise TypeError(f"grad: cost must be a scalar, got {cost.type}; sum it or use jacobian")
        if not is_inexact(cost.dtype):
            raise TypeError(f"grad: cost must be a float, got {cost.dtype}")
        if cost not in known:
            # The constant 1, not ones_like(cost): a seed reading the cost would make every
            # derivative depend on the whole cost (each term of a sum on all the others).
            pairs.append((cost, constant(np.ones((), dtype=cost.dtype))))
    for variable, cotangent in known.items():
        pairs.append((variable, _checked(cotangent, variable, "grad known_grads")))
    if not pairs:
        raise ValueError("grad: give a cost or known_grads")
    constants = _constants(consider_constant)
    gradients = backpropagate(
        sum_by_variable(pairs), targets, constants=constants, final=frozenset(known)
    )
    results: list[Variable] = []
    for target, gradient in zip(targets, gradients):
        if gradient is None:
            _disconnected(target, disconnected_inputs)
            gradient = zeros_like(target)
        results.append(gradient)
    return results[0] if isinstance(wrt, Variable) else results


def _constants(consider_constant: Iterable[Variable] | None) -> frozenset[Variable]:
    if consider_constant is None:
        return frozenset()
    if isinstance(consider_constant, Variable) or not isinstance(consider_constant, Iterable):
        raise TypeError(
            f"grad: consider_constant must be a list of variables, got {consider_constant!r}"
        )
    variables = list(consider_constant)
    for variable in variables:
        if not isinstance(variable, Variable):
            raise TypeError(f"grad: consider_constant must hold variables, got {variable!r}")
    return frozenset(variables)


def _disconnected(target: Variable, rule: Disconnected) -> None:
    """Apply `grad`'s `disconnected_inputs` rule to a `wrt` the cost does not depend on."""
    message = f"grad: the cost does not depend on {display_name(target)}"
    if rule == "raise":
        raise DisconnectedInputError(
            f'{message}; pass disconnected_inputs="ignore" (or "warn") to get zeros'
        )
    if rule == "warn":
        warnings.warn(f"{message}; its gradient is zeros", UserWarning, stacklevel=3)


def vjp(
    outputs: Sequence[Variable], wrt: Sequence[Variable], cotangents: Sequence[Variable]
) -> list[Variable]:
    """Vector-Jacobian products: the cotangents of `wrt` given those of `outputs`
    (zeros for inputs the outputs do not depend on)."""
    if len(outputs) != len(cotangents):
        raise ValueError(f"vjp: {len(outputs)} outputs but {len(cotangents)} cotangents")
    targets = list(wrt)
    _check_differentiable(targets, "vjp")
    _check_differentiable(outputs, "vjp outputs")
    pairs = [
        (output, _checked(cotangent, output, "vjp cotangent"))
        for output, cotangent in zip(outputs, cotangents)
    ]
    gradients = backpropagate(sum_by_variable(pairs), targets)
    return [
        zeros_like(target) if gradient is None else gradient
        for target, gradient in zip(targets, gradients)
    ]


def jvp(
    outputs: Sequence[Variable], wrt: Sequence[Variable], tangents: Sequence[Variable]
) -> list[Variable]:
    """Jacobian-vector products (forward mode): tangents of `outputs` given those of `wrt`
    (zeros for outputs that do not depend on `wrt`)."""
    if len(wrt) != len(tangents):
        raise ValueError(f"jvp: {len(wrt)} inputs but {len(tangents)} tangents")
    _check_differentiable(wrt, "jvp")
    pairs = [
        (variable, _checked(tangent, variable, "jvp tangent"))
        for variable, tangent in zip(wrt, tangents)
    ]
    found = propagate_tangents(sum_by_variable(pairs), outputs)
    return [
        zeros_like(output) if tangent is None else tangent
        for output, tangent in zip(outputs, found)
    ]


def jacobian(expression: Variable, wrt: Variable) -> Variable:
    """d expression[i] / d wrt, stacked along a new leading axis: shape
    expression.shape + wrt.shape. The expression is a scalar or a vector: one reverse
    pass per entry, unrolled for a static length, a loop over the entries otherwise."""
    if expression.ndim == 0:
        return grad(expression, wrt, disconnected_inputs="ignore")
    if expression.ndim != 1:
        raise TypeError(f"jacobian: expression must be a scalar or a vector, got {expression.type}")
    length = expression.type.shape[0]
    if length is None:
        return _jacobian_loop(expression, wrt)
    if length == 0:
        # Zeros of shape (0,) + wrt.shape: an empty constant broadcast against wrt (so the
        # result does not need the expression's value).
        empty = DimShuffle((0, *(None,) * wrt.ndim))(constant(np.zeros(0, dtype=wrt.dtype)))
        return second(empty, zeros_like(DimShuffle((None, *range(wrt.ndim)))(wrt)))
    rows = [grad(expression[i], wrt, disconnected_inputs="ignore") for i in range(length)]
    return stack(rows)


def _jacobian_loop(expression: Variable, wrt: Variable) -> Variable:
    """The rows of the jacobian of a vector of unknown length, as a loop over its entries
    (the loop reads the expression's values from outside; each step pulls one one-hot
    cotangent back)."""
    def row(entry: Variable) -> Variable:
        return grad(expression[entry], wrt, disconnected_inputs="ignore")

    rows: Variable = loop_map(row, arange(expression.shape[0]))
    return rows


def hessian(cost: Variable, wrt: Variable) -> Variable:
    """Second derivatives of a scalar cost with respect to a vector `wrt` (zeros where the
    cost does not depend on it)."""
    return jacobian(grad(cost, wrt, disconnected_inputs="ignore"), wrt)


def backpropagate(
    seeds: Mapping[Variable, Variable],
    targets: Sequence[Variable],
    *,
    constants: Collection[Variable] = frozenset(),
    final: Collection[Variable] = frozenset(),
) -> list[Variable | None]:
    """Cotangents of `targets` given those of `seeds` (float or complex variables),
    accumulated through the nodes on a path from a target to a seed; None where no path
    exists (disconnected) and for integer targets.

    The variables in `constants` pass no cotangent on to what computes them (`grad`'s
    consider_constant); the seeds in `final` keep their cotangent as given, their
    consumers adding nothing (`grad`'s known_grads). A target connected to the seeds only
    through `stop_gradient`s gets zeros: nothing is pulled back through a stop, but the
    variables above one, on a path from a target, are marked as reached.
    """
    on_path: set[Variable] = {target for target in targets if is_inexact(target.dtype)}
    relevant: list[Apply] = []
    for node in toposort(tuple(seeds)):
        if any(input_ in on_path for input_ in node.inputs):
            relevant.append(node)
            on_path.update(
                output for output in node.outputs
                if is_inexact(output.dtype) and output not in constants
            )
    contributions: dict[Variable, list[Variable]] = {
        variable: [cotangent] for variable, cotangent in seeds.items()
    }
    stopped: set[Variable] = set()  # reached with a zero cotangent (through stop_gradient)
    kept = {*targets, *seeds, *constants}
    for node in reversed(relevant):
        output_cotangents = tuple(
            None if output in constants else _collect(contributions, output)
            for output in node.outputs
        )
        reached_zero = any(
            output in stopped and output not in constants for output in node.outputs
        )
        if isinstance(node.op, StopGradient) and not node.op.disconnected:
            reached_zero = reached_zero or output_cotangents[0] is not None
        if reached_zero:
            stopped.update(input_ for input_ in node.inputs if input_ in on_path)
        if all(cotangent is None for cotangent in output_cotangents):
            continue
        form = _stable_form_keeping(node, kept)
        cotangent = output_cotangents[0]
        if form is not None and cotangent is not None:
            reached = [(form.operand, _through_formula(form, cotangent, reverse=True))]
        else:
            input_cotangents = node.op.pullback(node.inputs, node.outputs, output_cotangents)
            _check_arity(node, input_cotangents, "pullback")
            reached = list(zip(node.inputs, input_cotangents))
        for input_, cotangent in reached:
            if cotangent is not None and input_ in on_path and input_ not in final:
                checked = _checked(cotangent, input_, f"{node.op}.pullback")
                contributions.setdefault(input_, []).append(checked)
    found = [_collect(contributions, target) for target in targets]
    return [
        zeros_like(target) if gradient is None and target in stopped else gradient
        for target, gradient in zip(targets, found)
    ]


def propagate_tangents(
    tangents: Mapping[Variable, Variable], outputs: Sequence[Variable]
) -> list[Variable | None]:
    """Tangents of `outputs` given those of some variables they depend on; None for the
    outputs that do not depend on them. A tangent given for an intermediate variable adds
    to what flows into it, mirroring `backpropagate` (so jvp and vjp stay adjoint)."""
    known = dict(tangents)
    for node in toposort(outputs):
        input_tangents = tuple(known.get(input_) for input_ in node.inputs)
        if all(tangent is None for tangent in input_tangents):
            continue
        form = _stable_form_keeping(node, tangents)
        if form is None:
            output_tangents = node.op.pushforward(node.inputs, node.outputs, input_tangents)
            _check_arity(node, output_tangents, "pushforward")
        else:
            operand_tangent = known.get(form.operand)
            output_tangents = (
                None if operand_tangent is None
                else _through_formula(form, operand_tangent, reverse=False),
            )
        for output, tangent in zip(node.outputs, output_tangents):
            if tangent is not None and is_inexact(output.dtype):
                pushed = _checked(tangent, output, f"{node.op}.pushforward")
                given = tangents.get(output)
                known[output] = pushed if given is None else add(given, pushed)
    return [known.get(output) for output in outputs]


def _through_formula(form: StableForm, derivative: Variable, reverse: bool) -> Variable | None:
    """`derivative` carried through the stable formula of `form`: in reverse, the
    logarithm's cotangent to its operand's; forward, the operand's tangent to the
    logarithm's. The formula is differentiated on stand-ins, which are then replaced, so
    the work is the formula's size, not the size of the operand's graph."""
    operand = Input(form.operand.type, "operand")
    given = Input(derivative.type, "derivative")
    value = form.value_of(operand)
    if reverse:
        (found,) = backpropagate({value: given}, [operand])
    else:
        (found,) = propagate_tangents({operand: given}, [value])
    if found is None:
        return None
    (result,) = rebuild([found], {operand: form.operand, given: derivative})
    return result


def _stable_form_keeping(node: Apply, kept: Collection[Variable]) -> StableForm | None:
    """The stable form (`ops.stable`) of the logarithm `node` computes, to differentiate
    through instead of the naive chain (whose `inf * 0` gives nan), unless a variable in
    `kept` (a target or a seed) lies inside the pattern and so needs its own derivative."""
    form = stable_form(node)
    if form is None:
        return None
    inside: set[Variable] = set()
    pending = list(node.inputs)
    while pending:
        variable = pending.pop()
        if variable == form.operand or variable in inside:
            continue
        if variable in kept:
            return None
        inside.add(variable)
        if variable.owner is not None:
            pending.extend(variable.owner.inputs)
    return form


def _check_differentiable(variables: Iterable[Variable], caller: str) -> None:
    for variable in variables:
        if not isinstance(variable, Variable):
            raise TypeError(f"{caller}: expected variables, got {variable!r}")
        if not is_inexact(variable.dtype):
            raise TypeError(
                f"{caller}: {display_name(variable)} has dtype {variable.dtype}; "
                "derivatives need float or complex variables"
            )


def sum_by_variable(pairs: Iterable[tuple[Variable, Variable]]) -> dict[Variable, Variable]:
    """Derivatives per variable, adding those given twice for the same variable."""
    totals: dict[Variable, Variable] = {}
    for variable, derivative in pairs:
        found = totals.get(variable)
        totals[variable] = derivative if found is None else add(found, derivative)
    return totals


def _collect(contributions: dict[Variable, list[Variable]], variable: Variable) -> Variable | None:
    """The sum of the contributions to `variable`, stored back so it is built once."""
    parts = contributions.get(variable)
    if not parts:
        return None
    total = parts[0]
    for part in parts[1:]:
        total = add(total, part)
    contributions[variable] = [total]
    return total


def _check_arity(node: Apply, results: Sequence[Variable | None], method: str) -> None:
    expected = len(node.inputs) if method == "pullback" else len(node.outputs)
    if len(results) != expected:
        raise TypeError(f"{node.op}.{method} returned {len(results)} values, expected {expected}")


def _checked(derivative: Variable, primal: Variable, source: str) -> Variable:
    """A derivative must match its primal's rank and static shape; its dtype is cast.
    An undefined one (`ops.undefined_gradient`) raises its message here."""
    if not isinstance(derivative, Variable):
        raise TypeError(
            f"{source}: expected a Variable for {display_name(primal)}, got {derivative!r}"
        )
    message = undefined_message(derivative)
    if message is not None:
        raise NotImplementedError(f"{message} (needed for {display_name(primal)})")
    if derivative.ndim != primal.ndim or any(
        want is not None and got is not None and want != got
        for want, got in zip(primal.type.shape, derivative.type.shape)
    ):
        raise TypeError(
            f"{source}: derivative for {display_name(primal)} has type {derivative.type}, "
            f"expected the shape of {primal.type}"
        )
    return derivative if derivative.dtype == primal.dtype else cast(derivative, primal.dtype)
