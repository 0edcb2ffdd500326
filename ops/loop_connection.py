"""Which outputs of a loop depend on which of its inputs: what a loop's pullback reaches
and what its pushforward moves, so that a derivative through a loop is disconnected
(None) exactly where nothing it differentiates depends on the variable.

A step result depends on some of the body's params; a carry read by the step stands for
its initial value at the first step and for everything the carry depends on after it,
so what a carry depends on after one step or more is a fixed point over the carries the
step reads. Positions are those of the body's params, which are also those of the outer
inputs after `n_steps` (initial values, sequences, non-sequences, in that order).
"""

from __future__ import annotations

import attrs

from fgraph import Graph, Variable
from fgraph.dtypes import is_inexact
from fgraph.node import Apply
from ops.gradient_control import StopGradient
from ops.scan_op import Scan
from ops.shape_vector import Shape, ShapeI

Positions = frozenset[int]


def inner_dependencies(graph: Graph, differentiable: bool) -> tuple[Positions, ...]:
    """Per output of `graph`, the positions of the inputs it depends on: with
    `differentiable`, along float or complex values only (a derivative stops at an
    integer or boolean value, as `ops.gradients` stops it, and at a `disconnected_grad`);
    else along values, a shape read depending on no value (a batch's examples all have
    the same shape)."""

    def carries(variable: Variable) -> bool:
        return not differentiable or is_inexact(variable.dtype)

    found: dict[Variable, Positions] = {
        param: frozenset({k}) for k, param in enumerate(graph.inputs) if carries(param)
    }
    for node in graph.nodes:
        if reads_shape_only(node) or (differentiable and _disconnects(node)):
            continue
        reached = frozenset().union(*(found.get(input_, frozenset()) for input_ in node.inputs))
        if reached:
            found.update((output, reached) for output in node.outputs if carries(output))
    return tuple(found.get(output, frozenset()) for output in graph.outputs)


@attrs.frozen
class LoopDependencies:
    """Per outer output of a loop, the positions of the outer inputs it depends on.

    `finals[k]` includes initial value k unless the loop has a static length of one step
    or more (after zero steps the final value is the initial one); `step_rows[k]` is for
    the rows of carry k's trace that the steps wrote (its initial row is initial value k
    alone: `trace(k)` is the whole trace); `stop` is what a while-loop's stop condition,
    and so its step count, depends on (empty for a for-loop).
    """

    finals: tuple[Positions, ...]
    step_rows: tuple[Positions, ...]
    ys: tuple[Positions, ...]
    stop: Positions

    def trace(self, carry: int) -> Positions:
        return self.step_rows[carry] | {carry}


def _disconnects(node: Apply) -> bool:
    """Whether `node` is a `disconnected_grad`: no derivative passes it."""
    return isinstance(node.op, StopGradient) and node.op.disconnected


def reads_shape_only(node: Apply) -> bool:
    """Whether `node` reads only the shape of its input, not its values."""
    return isinstance(node.op, (Shape, ShapeI))


def loop_dependencies(op: Scan, differentiable: bool = True) -> LoopDependencies:
    """What each outer output of `op` depends on (see `LoopDependencies`)."""
    direct = op.split_results(inner_dependencies(op.inner_graph, differentiable))
    reach: list[Positions] = [frozenset()] * op.n_carries

    def through_carries(positions: Positions) -> Positions:
        """`positions` with each carry read replaced by its initial value and all the
        carry depends on after one step or more."""
        return positions.union(*(reach[k] for k in positions if k < op.n_carries))

    changed = True
    while changed:
        changed = False
        for k, positions in enumerate(direct.carries):
            grown = through_carries(positions)
            if grown != reach[k]:
                reach[k], changed = grown, True
    may_skip_steps = op.length is None or op.length == 0
    return LoopDependencies(
        tuple(
            frozenset({k}) if op.length == 0 else reach[k] | ({k} if may_skip_steps else set())
            for k in range(op.n_carries)
        ),
        tuple(reach),
        tuple(through_carries(positions) for positions in direct.ys),
        frozenset() if direct.stop is None else through_carries(direct.stop),
    )
