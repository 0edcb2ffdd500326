"""Constant folding: a node whose inputs are all constants is computed once, when the
graph is optimized, and replaced by its values as constants.

Folding is bounded: a node whose results hold more than `MAX_FOLDED_ELEMENTS` elements
or `MAX_FOLDED_BYTES` bytes is left to run, so `zeros((10_000, 10_000))` stays a cheap
node instead of becoming an 800 MB constant in the graph, its digest and every compiled
function's arguments. When the output types are fully static (as they are for creation
ops over constant shapes) the bound is checked before anything is computed.

A node whose computation fails (an out-of-bounds index, a run-time shape mismatch) is
left alone: the error belongs to whoever runs the graph, not to the optimizer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fgraph import Apply, Constant, DTypeError, ShapeError, TensorType, Variable, evaluate
from fgraph.op import Array
from rewrite.rules import RuleSet

MAX_FOLDED_ELEMENTS = 10_000
"""Most elements (over all outputs of a node) that folding materializes as constants."""

MAX_FOLDED_BYTES = 1 << 17
"""Most bytes (over all outputs of a node) that folding materializes as constants."""

# What a failing `perform` raises for data it cannot handle (not an op bug).
_RUN_TIME_ERRORS = (ShapeError, DTypeError, ValueError, IndexError, ArithmeticError)


def _within_bound(elements: int, size_in_bytes: int) -> bool:
    return elements <= MAX_FOLDED_ELEMENTS and size_in_bytes <= MAX_FOLDED_BYTES


def _static_size(types: Sequence[TensorType]) -> tuple[int, int] | None:
    """(elements, bytes) of values of these types, or None if a length is unknown."""
    elements = size_in_bytes = 0
    for output_type in types:
        if not output_type.is_fully_static:
            return None
        count = math.prod(length for length in output_type.shape if length is not None)
        elements += count
        size_in_bytes += count * np.dtype(output_type.dtype).itemsize
    return elements, size_in_bytes


def _fits(values: Sequence[Array]) -> bool:
    return _within_bound(sum(value.size for value in values), sum(v.nbytes for v in values))


def fold_constants(node: Apply) -> Sequence[Variable] | None:
    """A node over constants only -> its results as constants (within the size bound)."""
    if not all(isinstance(variable, Constant) for variable in node.inputs):
        return None
    static = _static_size(node.output_types)
    if static is not None and not _within_bound(*static):
        return None
    try:
        values = evaluate(node.outputs, {})
    except _RUN_TIME_ERRORS:
        return None
    if static is None and not _fits(values):
        return None
    return tuple(Constant(value) for value in values)


CONSTANT_FOLD = RuleSet("constant_fold", (fold_constants,))
"""Constant folding as a rule set (it applies to every op)."""
