"""Advanced indexing (`AdvancedSubtensor`, `AdvancedIncSubtensor`) as explicit loops.

numba's fancy indexing covers little of NumPy's, so the index is split in two: slices
and new axes make a view (basic indexing numba supports), and the integer arrays,
masks (as their `nonzero()` arrays) and static ints broadcast together and are read
element by element in a loop nest over the result. Increments therefore accumulate
over repeated indices (`np.add.at`), and a set keeps the last write in C order, as
NumPy does. Indices are bounds-checked and negative ones wrap; an index out of bounds
is named in the error with its axis and the indexed variable, as basic indexing does
(which one failed is worked out only once one has). An update marked
`inplace` by the inplace rewrite writes into its input's buffer instead of a copy.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from fgraph import TensorType, broadcast_shapes
from fgraph.dtypes import is_bool
from numba_backend.subtensor import update_broadcast_check
from numba_backend.loops import fresh_copy
from numba_backend.registry import Allocation, ModuleBuilder, NodeInfo, numba_kernel
from numba_backend.shape_vector import tuple_expression
from ops.advanced_subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from ops.indexing import Entry, NewAxis, Slice, Symbolic


@attrs.frozen
class _Component:
    """One indexed axis of the view: an integer array of static `shape` (broadcast to
    the index shape when `rank` is set) or a static int (`rank` None, `array` the
    literal)."""

    array: str
    rank: int | None
    view_axis: int
    source_axis: int
    shape: tuple[int | None, ...] = ()

    @property
    def needs_broadcast(self) -> bool:
        """Whether the array may have to be stretched to the index shape: unless it has
        the full rank and static lengths other than 1, which the shape checks then make
        the index shape's."""
        return any(length in (None, 1) for length in self.shape)


@attrs.frozen
class _LoopNest:
    """Lines preparing the view and the index arrays, the result's shape and loop nest
    (`depth` loops), the innermost lines that compute, wrap and bounds-check each index,
    and the positions read from the view and written to the result."""

    setup: tuple[str, ...]
    shape: str
    depth: int
    loops: tuple[str, ...]
    indices: tuple[str, ...]
    read: str
    write: str


def _static_index_shape(components: list[_Component]) -> tuple[int, ...] | None:
    """The broadcast shape of the index arrays when all their lengths are static (no
    masks, whose lengths are their count of true values)."""
    shapes = [component.shape for component in components if component.rank is not None]
    if any(None in shape for shape in shapes):
        return None
    lengths = broadcast_shapes(*shapes)  # they broadcast: `infer` checked
    return tuple(length for length in lengths if length is not None)


def _loop_nest(
    source: str, entries: tuple[Entry, ...], values: tuple[str, ...],
    value_types: tuple[TensorType, ...], source_rank: int, prefix: str, label: str,
) -> _LoopNest:
    """`label`: how errors name the indexed variable."""
    view = f"{prefix}v"
    remaining = iter(zip(values, value_types))
    parts: list[str] = []
    components: list[_Component] = []
    basic_axes: list[int] = []  # view axes that slices, new axes and unindexed axes give
    advanced_positions: list[int] = []
    first_advanced_at = 0  # how many basic view axes precede the first advanced one
    bad = f"{prefix}bad"  # one raise for all checks: each raise slows numba's compile
    setup: list[str] = [f"{bad} = False"]
    axis = 0
    for position, entry in enumerate(entries):
        if isinstance(entry, (NewAxis, Slice)):
            basic_axes.append(len(parts))
            if isinstance(entry, NewAxis):
                parts.append("None")
                continue
            bounds = (
                "" if part is None else f"{next(remaining)[0]}[()]" if isinstance(part, Symbolic)
                else str(part)
                for part in entry.parts
            )
            parts.append(":".join(bounds))
            axis += 1
            continue
        if not advanced_positions:
            first_advanced_at = len(basic_axes)
        advanced_positions.append(position)
        if not isinstance(entry, Symbolic):
            components.append(_Component(str(entry), None, len(parts), axis))
            parts.append(":")
            axis += 1
            continue
        name, index_type = next(remaining)
        if not is_bool(index_type.dtype):
            components.append(
                _Component(name, index_type.ndim, len(parts), axis, index_type.shape)
            )
            parts.append(":")
            axis += 1
            continue
        nonzero = f"{prefix}z{len(components)}"
        setup.append(f"{nonzero} = np.nonzero({name})")
        for offset in range(index_type.ndim):
            mismatch = f"{name}.shape[{offset}] != {source}.shape[{axis + offset}]"
            setup.append(f"{bad} = {bad} or {mismatch}")
            components.append(
                _Component(f"{nonzero}[{offset}]", 1, len(parts), axis + offset, (None,))
            )
            parts.append(":")
        axis += index_type.ndim
    for _ in range(axis, source_rank):
        basic_axes.append(len(parts))
        parts.append(":")
    if advanced_positions and advanced_positions[-1] - advanced_positions[0] + 1 != len(
        advanced_positions
    ):
        first_advanced_at = 0  # advanced indices apart: NumPy puts their axes first
    index_rank = max((component.rank or 0 for component in components), default=0)
    static_lengths = _static_index_shape(components)
    if static_lengths is not None:
        # The index arrays' static shapes broadcast (`infer` checked): no run-time check.
        lengths = [str(length) for length in static_lengths]
    else:
        lengths = [f"{prefix}B{a}" for a in range(index_rank)]
    for a, length in enumerate(lengths if static_lengths is None else ()):
        setup.append(f"{length} = 1")
        for component in components:
            if component.rank is None or a < index_rank - component.rank:
                continue
            extent = f"{prefix}l"
            setup += [
                f"{extent} = {component.array}.shape[{a - (index_rank - component.rank)}]",
                f"{bad} = {bad} or ({extent} != 1 and {length} != 1 and {extent} != {length})",
                f"{length} = {length} if {extent} == 1 else {extent}",
            ]
    if len(setup) > 1:  # some line reads `bad`
        setup += [
            f"if {bad}:",
            "    raise IndexError('index arrays do not broadcast together, or a boolean "
            "index does not match the indexed axes')",
        ]
    else:
        setup.clear()
    # One entry is written without a trailing comma: `x[:]`, not `x[:,]`, whose tuple
    # index numba's parallel (parfor) lowering cannot cast.
    setup.insert(0, f"{view} = {source}[{', '.join(parts)}]")
    index_shape = tuple_expression(lengths)
    rank = len(basic_axes) + index_rank
    loop_names = [f"{prefix}j{t}" for t in range(rank)]
    index_names = loop_names[first_advanced_at : first_advanced_at + index_rank]
    basic_names = loop_names[:first_advanced_at] + loop_names[first_advanced_at + index_rank :]
    read = dict(zip(basic_axes, basic_names))
    indices: list[str] = []
    in_bounds: list[str] = []
    checked: list[tuple[str, str, int]] = []  # per index: its name, length, source axis
    for number, component in enumerate(components):
        index = f"{prefix}t{number}"
        length = f"{view}.shape[{component.view_axis}]"
        if component.rank is None:
            indices.append(f"{index} = {component.array}")
        elif component.rank == index_rank and not component.needs_broadcast:
            at = ", ".join(index_names)
            indices.append(f"{index} = np.int64({component.array}[{at}])")
        else:
            broadcast = f"{prefix}i{number}"
            setup.append(f"{broadcast} = broadcast_view({component.array}, {index_shape})")
            at = ", ".join(index_names) if index_rank else "()"
            indices.append(f"{index} = np.int64({broadcast}[{at}])")
        indices += [f"if {index} < 0:", f"    {index} += {length}"]
        in_bounds.append(f"0 <= {index} < {length}")
        checked.append((index, length, component.source_axis))
        read[component.view_axis] = index
    if checked:  # none for a 0-d mask
        indices += [f"if not ({' and '.join(in_bounds)}):"]
        indices += [f"    {line}" for line in _bounds_error(checked, label, prefix)]
    shape = [f"{view}.shape[{a}]" for a in basic_axes]
    shape[first_advanced_at:first_advanced_at] = lengths
    loops = [
        "    " * t + f"for {loop_names[t]} in range({length}):" for t, length in enumerate(shape)
    ]
    return _LoopNest(
        setup=tuple(setup),
        shape=tuple_expression(shape),
        depth=rank,
        loops=tuple(loops),
        indices=tuple("    " * rank + line for line in indices),
        read=", ".join(read[a] for a in range(len(parts))),
        write=", ".join(loop_names) if rank else "()",
    )


def _bounds_error(checked: list[tuple[str, str, int]], label: str, prefix: str) -> list[str]:
    """Lines run once an index is out of bounds: which one (the first, given back as it
    was before wrapping), and the one raise naming it, its axis and `label`. `checked`:
    per index, its name, the length it is checked against and the source axis.

    The three values are conditional expressions, not assignments in `if` blocks: numba
    0.65 raises the values of names assigned in nested blocks as zeros."""

    def first_out_of_bounds(value_of: Callable[[str, str, int], str]) -> str:
        chosen = value_of(*checked[-1])
        for index, extent, source_axis in reversed(checked[:-1]):
            chosen = (f"({value_of(index, extent, source_axis)}) if not 0 <= {index} < "
                      f"{extent} else ({chosen})")
        return chosen

    value, axis, length = f"{prefix}ei", f"{prefix}ea", f"{prefix}en"
    return [
        f"{value} = " + first_out_of_bounds(
            lambda index, extent, _: f"{index} - {extent} if {index} < 0 else {index}"),
        f"{axis} = " + first_out_of_bounds(lambda _, __, source_axis: str(source_axis)),
        f"{length} = " + first_out_of_bounds(lambda _, extent, __: extent),
        f"raise IndexError('index {{}} is out of bounds for axis {{}} of {label} with length "
        f"{{}}', {value}, {axis}, {length})",
    ]


@numba_kernel.register
def _advanced_subtensor(op: AdvancedSubtensor, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    source, *values = node.inputs
    (output,) = node.outputs
    nest = _loop_nest(
        source, op.idx_list, tuple(values), node.input_types[1:], node.input_types[0].ndim,
        node.prefix, node.label(0),
    )
    indent = "    " * nest.depth
    return [
        *nest.setup,
        Allocation(output, nest.shape, node.output_types[0].dtype),
        *nest.loops,
        *nest.indices,
        f"{indent}{output}[{nest.write}] = {node.prefix}v[{nest.read}]",
    ]


@numba_kernel.register
def _advanced_inc_subtensor(
    op: AdvancedIncSubtensor, node: NodeInfo, module: ModuleBuilder
) -> list[str]:
    source, value, *values = node.inputs
    (output,) = node.outputs
    prefix = node.prefix
    nest = _loop_nest(
        output, op.idx_list, tuple(values), node.input_types[2:], node.input_types[0].ndim,
        prefix, node.label(0),
    )
    indent = "    " * nest.depth
    assign = "=" if op.set_instead_of_inc else "+="
    # A value of the region's rank with no static length 1 has the region's shape once
    # checked: it is read as it is, without a broadcast view.
    value_type = node.input_types[1]
    stretched = value_type.ndim != nest.depth or 1 in value_type.shape
    read = f"{prefix}y" if stretched else value
    return [
        *([f"{output} = {source}"] if op.destroy_map
          else fresh_copy(output, source, node.input_types[0], f"{prefix}c")),
        *nest.setup,
        f"{prefix}rs = {nest.shape}",
        *update_broadcast_check(op, node, value, f"{prefix}rs", nest.depth),
        *([f"{prefix}y = broadcast_view({value}, {prefix}rs)"] if stretched else []),
        *nest.loops,
        *nest.indices,
        f"{indent}{prefix}v[{nest.read}] {assign} {read}[{nest.write}]",
    ]
