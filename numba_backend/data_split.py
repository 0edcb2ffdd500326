"""Splitting an optimized graph along a data axis, for running it over chunked data.

Some inputs are split into chunks of rows along a data axis. Every variable of the
optimized graph is then either *rows* or *global*:
- a rows variable keeps the data axis, at a known position, and each chunk's rows depend
  only on that chunk's rows: elementwise work, transposes, reductions over other axes,
  and `X @ w` for a global `w`;
- a global variable is the same for the whole data set.

A node that reduces a rows variable over its data axis is a *boundary*: `Sum`, `Max`,
`Min`, `Prod`, `AllTrue`, `AnyTrue`, a `MatMul` contracting the data axis of both operands
(`X.T @ r`, the gradients of such sums), and the data axis's length (`Shape`,
`ShapeI`). Its value on the whole data set combines the values on the chunks: sums
add, maxima take the maximum, lengths add. Work that reads a combined value is
computed after it, so boundaries come in *levels*. `logsumexp`, for instance, first
takes a maximum (level 0), then sums the exponentials shifted by it (level 1). A mean
is a sum and a count.

Indexing keeps the rows when it takes every row (a full slice, or no entry, at the data
axis) with a global index: `X[:, 0]`, `X[:, 1:]`, `X[:, None]`, `X[:, [0, 2]]` are
per-row work. Any other use of the data axis raises `UnsplittableGraphError` naming the
node: sorting, indexing, reshaping or cumulating along it, or mixing rows with a global
value that has the full data axis.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from fgraph import Graph, Input, Op, TensorType, Variable, toposort
from fgraph.node import Apply
from ops.advanced_subtensor import AdvancedSubtensor
from ops.dimshuffle import DimShuffle
from ops.elemwise import ElementwiseOp
from ops.indexing import FULL_SLICE, NewAxis, Symbolic, types_per_entry
from ops.matmul_op import MatMul
from ops.reduction import Reduction
from ops.shape_vector import Shape, ShapeI
from ops.subtensor import Subtensor

Combine = np.ufunc | str
"""How a boundary's chunk values combine: a reduction's `combine` ufunc, `"shape"` (the
first chunk's shape with the data axis's entry summed) or `"first"` (any chunk's)."""


class UnsplittableGraphError(ValueError):
    """The graph uses its data axis in a way chunks cannot compute independently."""


@attrs.frozen
class Rows:
    """A variable that keeps the data axis at `axis`, computed per chunk at `level`."""

    axis: int
    level: int


@attrs.frozen
class Global:
    """A variable that is the same for the whole data set, available after the
    boundaries of levels below `level` are combined."""

    level: int


Kind = Rows | Global


@attrs.frozen
class Boundary:
    """A node reducing a rows variable over its data axis: its per-chunk value (the same
    op on the chunk) and how those combine."""

    node: Apply
    combine: Combine
    level: int
    data_axis: int
    placeholder: Input


@attrs.frozen
class SplitGraph:
    """The boundaries of a graph in level order and the kind of each output."""

    boundaries: tuple[Boundary, ...]
    output_kinds: tuple[Kind, ...]

    @property
    def levels(self) -> int:
        return 1 + max((b.level for b in self.boundaries), default=-1)


def split(graph: Graph, data_axes: Mapping[Variable, int]) -> SplitGraph:
    """Classify `graph`'s variables given the data axis of each chunked input."""
    kinds: dict[Variable, Kind] = {v: Rows(axis, 0) for v, axis in data_axes.items()}
    boundaries: list[Boundary] = []
    for node in toposort(graph.outputs):
        inputs = [kinds.get(v, Global(0)) for v in node.inputs]
        if not any(isinstance(kind, Rows) for kind in inputs):
            level = max((kind.level for kind in inputs), default=0)
            for output in node.outputs:
                kinds[output] = Global(level)
            continue
        result = _classify(node, inputs)
        if isinstance(result, Boundary):
            boundaries.append(result)
            kinds[node.outputs[0]] = Global(result.level + 1)
        else:
            for output in node.outputs:
                kinds[output] = result
    return SplitGraph(tuple(boundaries), tuple(kinds.get(o, Global(0)) for o in graph.outputs))


def _level(inputs: Sequence[Kind]) -> int:
    return max(kind.level for kind in inputs)


def _unsplittable(node: Apply, why: str) -> UnsplittableGraphError:
    return UnsplittableGraphError(f"cannot split {node.op} along the data axis: {why}")


def _classify(node: Apply, inputs: list[Kind]) -> Kind | Boundary:
    rows = [kind for kind in inputs if isinstance(kind, Rows)]
    return chunk_rule(node.op, node, inputs, _level(inputs), rows[0].axis)


@functools.singledispatch
def chunk_rule(op: Op, node: Apply, inputs: list[Kind], level: int, axis: int) -> Kind | Boundary:
    """What `node` (some of whose `inputs` are rows, the first with its data axis at
    `axis`) gives: rows, or a boundary. Registered per op class, found by the op's type."""
    raise _unsplittable(node, "it has no rule for chunked rows")


@chunk_rule.register
def _elementwise(op: ElementwiseOp, node: Apply, inputs: list[Kind], level: int, axis: int) -> Kind:
    if any(isinstance(kind, Rows) and kind.axis != axis for kind in inputs):
        raise _unsplittable(node, "its operands have the data axis at different positions")
    for value, kind in zip(node.inputs, inputs):
        if isinstance(kind, Global) and value.type.shape[axis] != 1:
            why = f"it mixes rows with {value.type}, a value that spans the data axis"
            raise _unsplittable(node, why)
    return Rows(axis, level)


@chunk_rule.register
def _dimshuffle(op: DimShuffle, node: Apply, inputs: list[Kind], level: int, axis: int) -> Kind:
    if axis not in op.order:
        raise _unsplittable(node, "it drops the data axis")
    return Rows(op.order.index(axis), level)


@chunk_rule.register
def _reduction(
    op: Reduction, node: Apply, inputs: list[Kind], level: int, axis: int
) -> Kind | Boundary:
    if axis in op.axes:
        return _boundary(node, op.combine, level, axis)
    return Rows(axis - sum(a < axis for a in op.axes), level)


@chunk_rule.register
def _shape(op: Shape, node: Apply, inputs: list[Kind], level: int, axis: int) -> Boundary:
    return _boundary(node, "shape", level, axis)


@chunk_rule.register
def _shape_i(op: ShapeI, node: Apply, inputs: list[Kind], level: int, axis: int) -> Boundary:
    return _boundary(node, np.add if op.axis == axis else "first", level, axis)


@chunk_rule.register(Subtensor)
@chunk_rule.register(AdvancedSubtensor)
def _indexing(op: Op, node: Apply, inputs: list[Kind], level: int, axis: int) -> Kind:
    return _indexed(node, inputs, level, axis)


@chunk_rule.register
def _matmul_rule(op: MatMul, node: Apply, inputs: list[Kind], level: int, axis: int) -> Kind | Boundary:
    return _matmul(node, inputs, level)


def _matmul(node: Apply, inputs: list[Kind], level: int) -> Kind | Boundary:
    rank = node.inputs[0].ndim
    x_kind, y_kind = inputs
    x_axis = x_kind.axis if isinstance(x_kind, Rows) else None
    y_axis = y_kind.axis if isinstance(y_kind, Rows) else None
    if x_axis == rank - 1 and y_axis == rank - 2:
        return _boundary(node, np.add, level, x_axis)  # the data axis is contracted
    if x_axis is not None and x_axis < rank - 1 and (y_axis == x_axis or (
            y_axis is None and (x_axis == rank - 2 or node.inputs[1].type.shape[x_axis] == 1))):
        return Rows(x_axis, level)
    if y_axis is not None and y_axis != rank - 2 and x_axis is None and (
            y_axis == rank - 1 or node.inputs[0].type.shape[y_axis] == 1):
        return Rows(y_axis, level)
    raise _unsplittable(node, "it contracts the data axis of one operand only, or mixes data axes")


PROBE = 2**40 + 3
"""A length no index spells out: the data axis's stand-in when finding where indexing
puts it."""


def _indexed(node: Apply, inputs: list[Kind], level: int, data_axis: int) -> Rows:
    """`x[index]` keeps the rows when the index takes every row of `x` and does not
    depend on the rows; the data axis then lands where the op's shape rule puts an axis
    of the probe length."""
    op = node.op
    assert isinstance(op, (Subtensor, AdvancedSubtensor))
    if not isinstance(inputs[0], Rows) or any(isinstance(kind, Rows) for kind in inputs[1:]):
        raise _unsplittable(node, "its index depends on the chunked rows")
    index_types = tuple(v.type for v in node.inputs[1:])
    axis = 0
    for entry, types in zip(op.idx_list, types_per_entry(op, op.idx_list, index_types)):
        mask = isinstance(entry, Symbolic) and types[0].dtype == "bool"
        taken = 0 if isinstance(entry, NewAxis) else types[0].ndim if mask else 1
        if axis <= data_axis < axis + taken and entry != FULL_SLICE:
            raise _unsplittable(node, "it indexes the data axis (only `:` keeps the rows)")
        axis += taken
    x = node.inputs[0].type
    probe = TensorType(x.dtype, tuple(PROBE if a == data_axis else None for a in range(x.ndim)))
    loose = [TensorType(t.dtype, (None,) * t.ndim) for t in index_types]
    (result,) = op.infer(probe, *loose)
    return Rows(result.shape.index(PROBE), level)


def _boundary(node: Apply, combine: Combine, level: int, data_axis: int) -> Boundary:
    output = node.outputs[0]
    placeholder = Input(output.type, f"combined {node.op}")
    return Boundary(node, combine, level, data_axis, placeholder)


def rebuilt(outputs: Sequence[Variable], replace: Mapping[Variable, Variable]) -> list[Variable]:
    """`outputs` recomputed with `replace` substituted, every op out of place (the
    optimized graph's inplace ops would write into what are now function inputs)."""
    memo: dict[Variable, Variable] = dict(replace)
    for node in toposort(outputs):
        if all(output in replace for output in node.outputs):
            continue  # a replaced node: what it read is not needed
        if all(v not in memo for v in node.inputs) and not node.op.destroy_map:
            continue
        op = node.op.with_destroy_map(()) if node.op.destroy_map else node.op
        for old, new in zip(node.outputs, op.apply(*(memo.get(v, v) for v in node.inputs))):
            memo[old] = new
    return [memo.get(output, output) for output in outputs]
