"""The row shape of a per-step output when the loop runs no step.

A per-step output's trace has a row per step, and after zero steps no step ran to give
the rows their shape. Where the row type is static the shape is known; where a length
is unknown, it is very often a length of an input (`c[0]` of a sequence row has the
length of the sequence's second axis), and a gradient of the loop builds arrays of the
input's shape that meet the empty trace. So the trace must have that length, not an
arbitrary one, or the optimized gradient meets rows of two shapes and fails where the
unoptimized one does not.

`empty_row_lengths` finds, for each unknown row length, the outer input axis it equals,
by type inference alone (nothing runs): each unknown axis of each body param gets a
distinct probe length no index or constant spells out, the body's types are inferred
node by node, and a row length that comes out as a probe is that param axis, traced
back to its outer input. Where a probe does not fit a node (an unknown length
contracted with a static 1: the program runs only if they are equal), that axis alone
is unknown again there. Anything else (a length computed from values, a sliced or
joined length) stays unknown and is 0 after zero steps.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fgraph import Apply, TensorType, Variable, toposort

if TYPE_CHECKING:  # for the annotation only: ops.scan_op imports this module
    from ops.scan_op import Scan

RowLength = int | tuple[int, int] | None
"""A row length after zero steps: static, the length of (outer input, axis), or
unknown (0)."""

_PROBE_STRIDE = 2**32
_PROBE_OFFSET = 7_919


@functools.lru_cache(maxsize=4096)
def empty_row_lengths(op: Scan) -> tuple[tuple[RowLength, ...], ...]:
    """Per per-step output, the length of each row axis after zero steps."""
    params = op.inner_graph.inputs
    outer_axis: dict[int, tuple[int, int]] = {}
    typed: dict[Variable, TensorType] = {}
    for number, param in enumerate(params):
        shift = 1 if op.n_carries <= number < op.n_carries + op.n_sequences else 0
        shape: list[int | None] = []
        for axis, length in enumerate(param.type.shape):
            if length is None:
                probe = _PROBE_STRIDE * (1 + len(outer_axis)) + _PROBE_OFFSET
                outer_axis[probe] = (1 + number, axis + shift)  # outer input 0 is n_steps
                length = probe
            shape.append(length)
        typed[param] = TensorType(param.type.dtype, tuple(shape))
    for node in toposort(op.results.ys):
        given = tuple(typed.get(v, v.type) for v in node.inputs)
        typed.update(zip(node.outputs, _inferred(node, given, outer_axis)))
    return tuple(
        tuple(_traced(length, row_length, outer_axis)
              for length, row_length in zip(y.type.shape, typed.get(y, y.type).shape))
        for y in op.results.ys
    )


def _inferred(node: Apply, given: tuple[TensorType, ...], probes: Mapping[int, object]) -> tuple[TensorType, ...]:
    """The node's output types for inputs of the `given` (probed) types. Where a probe
    does not fit (an unknown length contracted with a static 1, two unknown lengths
    that must be equal), that one axis is taken as unknown again, as the body's own
    types have it, so the other probes still pass through; if no single axis does it,
    the body's own output types."""
    candidates = [given] + [
        tuple(_forget(t, axis) if k == number else t for k, t in enumerate(given))
        for number, type_ in enumerate(given)
        for axis, length in enumerate(type_.shape) if length in probes
    ]
    for types in candidates:
        try:
            return node.op.infer(*types)
        except (ValueError, TypeError, IndexError):
            continue
    return tuple(v.type for v in node.outputs)


def _forget(type_: TensorType, axis: int) -> TensorType:
    return TensorType(type_.dtype, tuple(None if a == axis else n for a, n in enumerate(type_.shape)))


def _traced(declared: int | None, inferred: int | None, outer_axis: dict[int, tuple[int, int]]) -> RowLength:
    if declared is not None:
        return declared
    return outer_axis.get(inferred) if inferred is not None else None
