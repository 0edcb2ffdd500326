"""`op_from_graph`: a graph packaged as one op, `OpFromGraph`, holding it as a closed inner
graph over positional `Param`s.

Because the inner graph is canonical (inputs renamed to params, nodes interned), two
ops built from structurally equal graphs are equal and hash equal, whatever the user's
variables were called, and comparing them is O(1). Derivatives are ops of the same
kind: the pullback (or pushforward) of the inner graph wrapped as another
`OpFromGraph`, built once per op and per pattern of connected cotangents (tangents),
so the derivative of a graph that applies one op many times holds one derivative op.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from fgraph import DTypeError, Graph, MissingInputError, Op, Param, ShapeError, TensorType
from fgraph import Variable, evaluate
from fgraph.dtypes import is_inexact
from fgraph.evaluation import input_names
from fgraph.op import Array
from ops.elementwise_functions import zeros_like
from ops.gradients import backpropagate, propagate_tangents, sum_by_variable

# A pullback gets the inner graph's params, its outputs and one cotangent per output
# (zeros for the outputs that receive none); it returns one gradient per input, or None
# where the input gets none.
PullbackFunction = Callable[
    [tuple[Variable, ...], tuple[Variable, ...], tuple[Variable, ...]], Sequence[Variable | None]
]
# Called like a `PullbackFunction`, but returns the gradient of one input (or None).
InputPullback = Callable[
    [tuple[Variable, ...], tuple[Variable, ...], tuple[Variable, ...]], Variable | None
]
PullbackOverride = PullbackFunction | tuple[InputPullback | None, ...] | None
# A pushforward gets the inner graph's params, its outputs and one tangent per input
# (zeros for the inputs that receive none); it returns one tangent per output, or None
# where the output gets none.
PushforwardFunction = Callable[
    [tuple[Variable, ...], tuple[Variable, ...], tuple[Variable, ...]], Sequence[Variable | None]
]
Kind = Literal["pullback", "pushforward"]


def _as_override(
    value: PullbackFunction | Sequence[InputPullback | None] | None,
) -> PullbackOverride:
    """A callable or None stays; a list of per-input entries becomes a tuple."""
    if value is None or callable(value):
        return value
    entries = tuple(value)
    for number, entry in enumerate(entries):
        if entry is not None and not callable(entry):
            raise TypeError(f"pullback entry {number} must be a callable or None, got {entry!r}")
    return entries


def _check_inner_graph(instance: object, attribute: object, graph: Graph) -> None:
    for number, variable in enumerate(graph.inputs):
        if not isinstance(variable, Param) or variable.index != number:
            raise TypeError(
                f"OpFromGraph: inner input {number} must be Param({number}), got {variable!r}"
            )
    if not graph.dedup_nodes:
        raise ValueError("OpFromGraph: the inner graph must be deduplicated (dedup_nodes=True)")
    if not graph.outputs:
        raise ValueError("OpFromGraph: the inner graph has no outputs")


# Kernel: numba_backend.from_graph._op_from_graph
@attrs.frozen(cache_hash=True)
class OpFromGraph(Op):
    """A closed inner graph applied as one op.

    `pullback_override` replaces the default gradient: a `PullbackFunction`, or a tuple
    with one entry per input (an `InputPullback`, or None for the default gradient of
    that input). `pushforward_override`, a `PushforwardFunction`, replaces the default
    forward-mode derivative. Callables compare by identity, as functions do. `inline` is a request
    recorded for the rewrite pass that expands inline ops. `op(a, b)` applies a
    single-output op; `op.apply(a, b)` returns the outputs of any op.
    """

    inner_graph: Graph = attrs.field(validator=_check_inner_graph)
    inline: bool = False
    pullback_override: PullbackOverride = attrs.field(default=None, converter=_as_override)
    name: str | None = None
    pushforward_override: PushforwardFunction | None = None

    def __attrs_post_init__(self) -> None:
        override = self.pullback_override
        count = len(self.inner_graph.inputs)
        if isinstance(override, tuple) and len(override) != count:
            raise ValueError(
                f"{self}: the pullback list has {len(override)} entries for {count} inputs"
            )

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        expected = tuple(variable.type for variable in self.inner_graph.inputs)
        if len(input_types) != len(expected):
            raise TypeError(f"{self}: expected {len(expected)} inputs, got {len(input_types)}")
        for number, (got, want) in enumerate(zip(input_types, expected)):
            if got.dtype != want.dtype:
                raise DTypeError(f"{self}: input {number} must be {want}, got {got}")
            if got.ndim != want.ndim or any(
                a is not None and b is not None and a != b for a, b in zip(got.shape, want.shape)
            ):
                raise ShapeError(f"{self}: input {number} must be {want}, got {got}")
        return tuple(output.type for output in self.inner_graph.outputs)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        graph = self.inner_graph
        names = dict(zip(graph.inputs, input_names()))  # errors name the outer values
        return tuple(evaluate(graph.outputs, dict(zip(graph.inputs, inputs)), names=names))

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        connected = tuple(
            cotangent is not None and is_inexact(output.dtype)
            for cotangent, output in zip(cotangents, outputs)
        )
        given = [c for c, keep in zip(cotangents, connected) if keep and c is not None]
        return _apply_derivative(_derivative_op(self, "pullback", connected), (*inputs, *given))

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        connected = tuple(
            tangent is not None and is_inexact(input_.dtype)
            for tangent, input_ in zip(tangents, inputs)
        )
        given = [t for t, keep in zip(tangents, connected) if keep and t is not None]
        return _apply_derivative(_derivative_op(self, "pushforward", connected), (*inputs, *given))

    def __str__(self) -> str:
        flags = [flag for flag in (self.name, "inline" if self.inline else None) if flag]
        return f"OpFromGraph{{{', '.join(flags)}}}" if flags else "OpFromGraph"


def op_from_graph(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    inline: bool = False,
    pullback: PullbackFunction | Sequence[InputPullback | None] | None = None,
    name: str | None = None,
    pushforward: PushforwardFunction | None = None,
) -> OpFromGraph:
    """Package the graph from `inputs` to `outputs` as one reusable op.

    The op applies to variables of the inputs' types (`op(a, b)` for one output,
    `op.apply(a, b)` for all); applying it many times keeps one copy of the graph.
    `pullback` overrides the gradient, either as one function `(inputs, outputs,
    cotangents) -> gradients` or as a list with one entry per input (a function
    returning that input's gradient, or None for the default). These functions receive
    the op's inner params, inner outputs and cotangent params, and must build the
    gradients from them alone: the result becomes the inner graph of the gradient op.
    `pushforward` likewise overrides the forward-mode derivative: a function `(inputs,
    outputs, tangents) -> output tangents` (PyTensor's `rop_overrides`). This is how to
    give any function a derivative of your own; `custom_vjp` and `custom_jvp` wrap it in
    JAX's form.
    """
    user_graph = Graph(inputs, outputs)
    params = tuple(Param(number, variable.type) for number, variable in enumerate(inputs))
    graph = Graph(params, user_graph.canonical_outputs)
    return OpFromGraph(graph, inline, pullback, name, pushforward)


# A derivative op and, per output of the derivative, which position it fills (input
# gradients for a pullback, output tangents for a pushforward); None when all are None.
_Derivative = tuple[OpFromGraph | None, tuple[bool, ...]]
_DerivativeKey = tuple[Kind, tuple[bool, ...]]
_derivatives: weakref.WeakKeyDictionary[OpFromGraph, dict[_DerivativeKey, _Derivative]] = (
    weakref.WeakKeyDictionary()
)
_derivatives_lock = threading.Lock()


def _derivative_op(op: OpFromGraph, kind: Kind, connected: tuple[bool, ...]) -> _Derivative:
    """The op's pullback or pushforward for this pattern of connected derivatives, built
    once per op (equal ops share it) and kept as long as the op lives."""
    key = (kind, connected)
    with _derivatives_lock:
        found = _derivatives.get(op, {}).get(key)
    if found is not None:
        return found
    # Built outside the lock: building may differentiate nested ops.
    if kind == "pullback":
        built = _build_pullback(op, connected)
    else:
        built = _build_pushforward(op, connected)
    with _derivatives_lock:
        return _derivatives.setdefault(op, {}).setdefault(key, built)


def _apply_derivative(
    derivative: _Derivative, arguments: tuple[Variable, ...]
) -> tuple[Variable | None, ...]:
    derivative_op, filled = derivative
    if derivative_op is None:
        return (None,) * len(filled)
    results = iter(derivative_op.apply(*arguments))
    return tuple(next(results) if present else None for present in filled)


def _wrap(
    op: OpFromGraph, kind: Kind, inputs: tuple[Param, ...], results: Sequence[Variable | None]
) -> _Derivative:
    kept = [result for result in results if result is not None]
    filled = tuple(result is not None for result in results)
    if not kept:
        return None, filled
    try:
        graph = Graph(inputs, kept)
    except MissingInputError as error:
        raise MissingInputError(
            f"{op}.{kind}: derivatives must be built from the inner params, outputs and "
            f"derivative params they receive: {error}"
        ) from error
    return OpFromGraph(graph, op.inline, None, f"{op.name or 'OpFromGraph'}.{kind}"), filled


def _build_pullback(op: OpFromGraph, connected: tuple[bool, ...]) -> _Derivative:
    params = tuple(_params_of(op.inner_graph))
    outputs = op.inner_graph.outputs
    cotangent_params = _extra_params(len(params), [o for o, c in zip(outputs, connected) if c])
    given = iter(cotangent_params)
    cotangents = tuple(next(given) if c else zeros_like(o) for o, c in zip(outputs, connected))
    override = op.pullback_override

    def default() -> list[Variable | None]:
        seeds = [(o, c) for o, c, keep in zip(outputs, cotangents, connected) if keep]
        return backpropagate(sum_by_variable(seeds), params)

    if override is None:
        gradients = default()
    elif callable(override):
        gradients = list(override(params, outputs, cotangents))
        if len(gradients) != len(params):
            raise ValueError(
                f"{op}: the pullback returned {len(gradients)} gradients for {len(params)} inputs"
            )
    else:
        defaults = default() if any(entry is None for entry in override) else []
        gradients = [
            defaults[number] if entry is None else entry(params, outputs, cotangents)
            for number, entry in enumerate(override)
        ]
    gradients = [g if is_inexact(p.dtype) else None for p, g in zip(params, gradients)]
    return _wrap(op, "pullback", (*params, *cotangent_params), gradients)


def _build_pushforward(op: OpFromGraph, connected: tuple[bool, ...]) -> _Derivative:
    params = tuple(_params_of(op.inner_graph))
    outputs = op.inner_graph.outputs
    tangent_params = _extra_params(len(params), [p for p, c in zip(params, connected) if c])
    override = op.pushforward_override
    if override is None:
        seeds = zip([p for p, c in zip(params, connected) if c], tangent_params)
        tangents = propagate_tangents(dict(seeds), outputs)
    else:
        given = iter(tangent_params)
        filled = tuple(next(given) if c else zeros_like(p) for p, c in zip(params, connected))
        tangents = list(override(params, outputs, filled))
        if len(tangents) != len(outputs):
            raise ValueError(
                f"{op}: the pushforward returned {len(tangents)} tangents for "
                f"{len(outputs)} outputs"
            )
    tangents = [t if is_inexact(o.dtype) else None for o, t in zip(outputs, tangents)]
    return _wrap(op, "pushforward", (*params, *tangent_params), tangents)


def _params_of(graph: Graph) -> list[Param]:
    return [variable for variable in graph.inputs if isinstance(variable, Param)]


def _extra_params(first: int, like: Sequence[Variable]) -> tuple[Param, ...]:
    """Params numbered from `first`, typed like `like`: the derivative inputs."""
    return tuple(Param(first + number, variable.type) for number, variable in enumerate(like))
