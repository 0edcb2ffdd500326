"""Custom derivatives for any function, in JAX's form: `custom_vjp` (a forward rule that
saves residuals and a backward rule that maps output cotangents to input cotangents)
and `custom_jvp` (a rule mapping input tangents to output tangents).

Both are `op_from_graph` with an overridden pullback and pushforward: calling the
decorated function builds its graph once over stand-ins of the arguments' types and
applies it as one `OpFromGraph` (marked `inline`, so optimizing a graph replaces it by
what it computes and compiled code pays nothing for the wrapper), and the rules are
called on the op's inner variables when a derivative is taken. So a custom derivative
compiles, works inside loop bodies and under `vmap` (which loops over an op without a
batching rule), and is differentiated again where the rules are differentiable.

A `custom_jvp` rule also gives the reverse mode: the rule is linear in the tangents,
so its pullback is the rule's graph differentiated with respect to the tangents
(JAX transposes it likewise). A `custom_vjp` function has no forward mode, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, cast

import numpy as np

from fgraph import Input, MissingInputError, Variable, rebuild
from fgraph.dtypes import is_inexact
from ops.convert import as_tensor
from ops.elementwise_functions import zeros_like
from ops.gradients import backpropagate, sum_by_variable
from ops.from_graph import PullbackFunction, PushforwardFunction, op_from_graph

Result = Variable | tuple[Variable, ...]
"""What a decorated function returns: one variable or a tuple of them."""

Arguments = ParamSpec("Arguments")
Value = TypeVar("Value", bound=Result)
ForwardRule = Callable[..., object]
"""custom_vjp's forward rule: called like the function, returns (its value, residuals)."""
BackwardRule = Callable[[Any, Any], Sequence[Variable | None]]
"""custom_vjp's backward rule: (residuals, output cotangents) -> one cotangent per
argument (None for zero); the cotangents are one variable or a tuple, like the value."""
JvpRule = Callable[[tuple[Variable, ...], tuple[Variable, ...]], object]
"""custom_jvp's rule: (arguments, their tangents) -> (value, output tangents)."""


class _CustomDerivative(Generic[Arguments, Value]):
    """A function applied as one `OpFromGraph` whose derivatives the subclass defines;
    called with the function's own signature (arguments bound to its parameters)."""

    kind = "custom derivative"

    def __init__(self, function: Callable[Arguments, Value]) -> None:
        if not callable(function):
            raise TypeError(f"{self.kind}: expected a function, got {function!r}")
        self.function = function
        self._build: Callable[..., Result] = function  # called on stand-in variables
        self._overrides: dict[bool, tuple[PullbackFunction, PushforwardFunction]] = {}
        functools.update_wrapper(self, function)

    @property
    def name(self) -> str:
        return getattr(self.function, "__name__", type(self.function).__name__)

    def __call__(self, *args: Arguments.args, **kwargs: Arguments.kwargs) -> Value:
        bound = inspect.signature(self.function).bind(*args, **kwargs)
        if bound.kwargs:
            raise TypeError(f"{self.kind} {self.name}: keyword-only arguments are not supported")
        arguments = bound.args
        values = [
            as_tensor(argument, name=f"{self.name} argument {number}")
            for number, argument in enumerate(arguments)
        ]
        stand_ins = [Input(value.type, f"argument{number}") for number, value in enumerate(values)]
        result = self._build(*stand_ins)
        single = isinstance(result, Variable)
        outputs = [result] if isinstance(result, Variable) else _variables(
            result, f"{self.name} returned"
        )
        pullback, pushforward = self._rules_for(single)
        try:
            op = op_from_graph(
                stand_ins, outputs, inline=True, pullback=pullback, name=self.name,
                pushforward=pushforward,
            )
        except MissingInputError as error:
            raise MissingInputError(
                f"{self.kind} {self.name}: the function reads variables other than its "
                f"arguments; pass them as arguments: {error}"
            ) from error
        applied = op.apply(*values)
        return cast(Value, applied[0] if single else applied)

    def _rules_for(self, single: bool) -> tuple[PullbackFunction, PushforwardFunction]:
        """The override functions, made once per shape of result so that ops built by
        equal calls are equal (callables compare by identity)."""
        found = self._overrides.get(single)
        if found is None:
            found = self._overrides[single] = self._make_overrides(single)
        return found

    def _make_overrides(self, single: bool) -> tuple[PullbackFunction, PushforwardFunction]:
        raise NotImplementedError


class CustomVJP(_CustomDerivative[Arguments, Value]):
    """A function with a reverse-mode derivative of its own (JAX's `custom_vjp`): define
    the rules with `defvjp(forward, backward)` before taking a gradient."""

    kind = "custom_vjp"

    def __init__(self, function: Callable[Arguments, Value]) -> None:
        super().__init__(function)
        self._rules: tuple[ForwardRule, BackwardRule] | None = None

    def defvjp(self, forward: ForwardRule, backward: BackwardRule) -> None:
        """`forward(*arguments)` returns (the function's value, residuals); `backward(
        residuals, cotangents)` returns one cotangent per argument (None for zero), the
        cotangents being one variable or a tuple, like the value. Both build graphs."""
        self._rules = (forward, backward)
        self._overrides.clear()

    def _make_overrides(self, single: bool) -> tuple[PullbackFunction, PushforwardFunction]:
        def pullback(
            params: tuple[Variable, ...], outputs: tuple[Variable, ...],
            cotangents: tuple[Variable, ...],
        ) -> list[Variable | None]:
            if self._rules is None:
                raise TypeError(
                    f"custom_vjp {self.name}: no derivative rules; call "
                    f"{self.name}.defvjp(forward, backward) first"
                )
            forward, backward = self._rules
            pair = forward(*params)
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(
                    f"custom_vjp {self.name}: forward must return (value, residuals), "
                    f"got {pair!r}"
                )
            residuals = pair[1]
            given = backward(residuals, cotangents[0] if single else cotangents)
            return _argument_derivatives(given, params, f"custom_vjp {self.name}: backward")

        def pushforward(
            params: tuple[Variable, ...], outputs: tuple[Variable, ...],
            tangents: tuple[Variable, ...],
        ) -> list[Variable | None]:
            raise TypeError(
                f"custom_vjp {self.name}: forward-mode derivatives (jvp) are not defined "
                "for a custom_vjp function; use custom_jvp"
            )

        return pullback, pushforward


class CustomJVP(_CustomDerivative[Arguments, Value]):
    """A function with a forward-mode derivative of its own (JAX's `custom_jvp`), from
    which its reverse mode follows: define the rule with `defjvp(rule)`."""

    kind = "custom_jvp"

    def __init__(self, function: Callable[Arguments, Value]) -> None:
        super().__init__(function)
        self._rule: JvpRule | None = None

    def defjvp(self, rule: JvpRule) -> JvpRule:
        """`rule(arguments, tangents)` returns (the function's value, the output
        tangents: one variable or a tuple, like the value), built linear in the
        tangents. Returns `rule`, so it can decorate it."""
        self._rule = rule
        self._overrides.clear()
        return rule

    def _tangents_out(
        self, single: bool, params: tuple[Variable, ...], tangents: tuple[Variable, ...]
    ) -> list[Variable | None]:
        if self._rule is None:
            raise TypeError(
                f"custom_jvp {self.name}: no derivative rule; call {self.name}.defjvp(rule) first"
            )
        result = self._rule(params, tangents)
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError(
                f"custom_jvp {self.name}: the rule must return (value, tangents), got {result!r}"
            )
        found = result[1]
        if single:
            return [None if found is None else _variable(found, f"custom_jvp {self.name}")]
        return [
            None if tangent is None else _variable(tangent, f"custom_jvp {self.name}")
            for tangent in _entries(found, f"custom_jvp {self.name}: the rule's tangents")
        ]

    def _make_overrides(self, single: bool) -> tuple[PullbackFunction, PushforwardFunction]:
        def pushforward(
            params: tuple[Variable, ...], outputs: tuple[Variable, ...],
            tangents: tuple[Variable, ...],
        ) -> list[Variable | None]:
            found = self._tangents_out(single, params, tangents)
            _check_count(found, outputs, f"custom_jvp {self.name}: the rule's tangents")
            return found

        def pullback(
            params: tuple[Variable, ...], outputs: tuple[Variable, ...],
            cotangents: tuple[Variable, ...],
        ) -> list[Variable | None]:
            # The rule on stand-in tangents, differentiated with respect to them: the
            # transpose of a linear map. The result cannot depend on the tangents' values,
            # so the stand-ins are then replaced by zeros (of the right shapes).
            stand_ins = tuple(
                Input(param.type, f"tangent{number}") if is_inexact(param.dtype)
                else zeros_like(param)
                for number, param in enumerate(params)
            )
            found = self._tangents_out(single, params, stand_ins)
            _check_count(found, outputs, f"custom_jvp {self.name}: the rule's tangents")
            seeds = [
                (tangent, cotangent) for tangent, cotangent, output in zip(found, cotangents, outputs)
                if tangent is not None and is_inexact(output.dtype)
            ]
            if not seeds:
                return [None] * len(params)
            gradients = backpropagate(sum_by_variable(seeds), stand_ins)
            present = [gradient for gradient in gradients if gradient is not None]
            zeros: dict[Variable, Variable] = {s: zeros_like(p) for s, p in zip(stand_ins, params) if isinstance(s, Input)}
            replaced = iter(rebuild(present, zeros))
            return [None if gradient is None else next(replaced) for gradient in gradients]

        return pullback, pushforward


def custom_vjp(function: Callable[Arguments, Value]) -> CustomVJP[Arguments, Value]:
    """Give `function` (which builds a graph from variables) a reverse-mode derivative of
    your own, as JAX's `jax.custom_vjp`::

        @pt.custom_vjp
        def clip_gradient(x):
            return x

        def forward(x):
            return x, ()                      # the value and the residuals
        def backward(residuals, g):
            return (pt.clip(g, -1.0, 1.0),)   # one cotangent per argument

        clip_gradient.defvjp(forward, backward)

    Calling it applies the function as one op; `grad` uses the rules (called on the
    op's own variables, they may use only the arguments and what they compute), and so
    does the gradient of a loop or `vmap` around it. Forward mode (`jvp`) is an error.
    """
    return CustomVJP(function)


def custom_jvp(function: Callable[Arguments, Value]) -> CustomJVP[Arguments, Value]:
    """Give `function` (which builds a graph from variables) a derivative of your own,
    as JAX's `jax.custom_jvp`::

        @pt.custom_jvp
        def log1pexp(x):
            return pt.log1p(pt.exp(x))

        @log1pexp.defjvp
        def log1pexp_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return log1pexp(x), t * pt.sigmoid(x)

    The rule returns (value, output tangents) and must be linear in the tangents:
    `jvp` uses it, and `grad` its transpose (the rule differentiated with respect to
    the tangents), so both modes follow it, as in JAX.
    """
    return CustomJVP(function)


def _variables(result: object, source: str) -> list[Variable]:
    return [_variable(entry, source) for entry in _entries(result, source)]


def _entries(result: object, source: str) -> list[Any]:
    if not isinstance(result, (tuple, list)):
        raise TypeError(f"{source}: expected a variable or a tuple of them, got {result!r}")
    return list(result)


def _variable(value: object, source: str) -> Variable:
    """A variable, or a number or array made a constant."""
    if isinstance(value, Variable):
        return value
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        return as_tensor(value, name=source)
    raise TypeError(f"{source}: expected a variable, got {value!r}")


def _check_count(found: Sequence[object], outputs: Sequence[Variable], source: str) -> None:
    if len(found) != len(outputs):
        raise ValueError(f"{source}: got {len(found)} for {len(outputs)} outputs")


def _argument_derivatives(
    given: object, params: tuple[Variable, ...], source: str
) -> list[Variable | None]:
    """The backward rule's result: one entry per argument, None or a variable of its
    rank (array-likes become constants)."""
    entries = _entries(given, source)
    if len(entries) != len(params):
        raise ValueError(f"{source} returned {len(entries)} cotangents for {len(params)} arguments")
    found: list[Variable | None] = []
    for number, (entry, param) in enumerate(zip(entries, params)):
        if entry is None:
            found.append(None)
            continue
        variable = _variable(entry, f"{source}, cotangent {number}")
        if variable.ndim != param.ndim:
            raise TypeError(
                f"{source}: cotangent {number} has type {variable.type}, expected the shape "
                f"of argument {number}, {param.type}"
            )
        found.append(variable)
    return found


