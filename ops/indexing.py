"""What the indexing ops share: the index structure they hold as parameters, its static
checks and run-time form, and the forward mode of updates.

An index is held as `idx_list`, one entry per index position: an `int`, a `Slice`,
`NEW_AXIS`, or `SYMBOLIC`, a placeholder for a value the node takes as an extra input
(after the indexed variable, in order of appearance; a slice's symbolic parts in the
order start, stop, step). Like PyTensor's `idx_list`, the op then says how the index is
built and the graph says where its run-time values come from, so `x[i:j]` for any `i`,
`j` is one op applied to different inputs, and static bounds stay visible to `infer`.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable, format_shape
from fgraph.dtypes import is_inexact, is_integer
from fgraph.op import Array
from ops.convert import constant
from ops.elementwise_functions import cast, zeros_like
from ops.broadcast import sum_to


@attrs.frozen
class Symbolic:
    """Placeholder for an index value the node takes as an input."""

    def __repr__(self) -> str:
        return "?"


SYMBOLIC = Symbolic()
Bound = int | Symbolic | None


def _as_bound(value: object) -> Bound:
    if value is None or isinstance(value, Symbolic):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"slice bounds must be ints, None or SYMBOLIC, got {value!r}")
    return int(value)


def _nonzero_step(instance: object, attribute: object, value: Bound) -> None:
    if value == 0:
        raise ValueError("slice step cannot be zero")


@attrs.frozen
class Slice:
    """A slice whose parts are static ints, None, or SYMBOLIC (a scalar int input)."""

    start: Bound = attrs.field(default=None, converter=_as_bound)
    stop: Bound = attrs.field(default=None, converter=_as_bound)
    step: Bound = attrs.field(default=None, converter=_as_bound, validator=_nonzero_step)

    @property
    def parts(self) -> tuple[Bound, Bound, Bound]:
        return (self.start, self.stop, self.step)

    def __repr__(self) -> str:
        start, stop, step = ("" if part is None else repr(part) for part in self.parts)
        return f"{start}:{stop}" + ("" if self.step is None else f":{step}")


FULL_SLICE = Slice()


@attrs.frozen
class NewAxis:
    """A new axis of length 1 (`None` in a NumPy index)."""

    def __repr__(self) -> str:
        return "None"


NEW_AXIS = NewAxis()
Entry = int | Symbolic | Slice | NewAxis


def as_entries(entries: Iterable[object]) -> tuple[Entry, ...]:
    """Validate and normalize an `idx_list` (NumPy ints become Python ints)."""
    normalized: list[Entry] = []
    for entry in entries:
        if isinstance(entry, (Slice, NewAxis, Symbolic)):
            normalized.append(entry)
        elif isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_)):
            normalized.append(int(entry))
        else:
            raise TypeError(f"index entries are ints, Slice, NEW_AXIS or SYMBOLIC; got {entry!r}")
    return tuple(normalized)


def format_entries(name: str, entries: tuple[Entry, ...]) -> str:
    """`Subtensor{1, ?:-1, None}`: how an indexing op prints (`?` is a node input)."""
    return f"{name}{{{', '.join(repr(entry) for entry in entries)}}}"


def symbolic_count(entries: tuple[Entry, ...]) -> int:
    """How many index inputs a node with this `idx_list` takes after the indexed variable."""
    count = 0
    for entry in entries:
        if isinstance(entry, Slice):
            count += sum(isinstance(part, Symbolic) for part in entry.parts)
        elif isinstance(entry, Symbolic):
            count += 1
    return count


# --- static checks ---------------------------------------------------------------------
def types_per_entry(
    op: object, entries: tuple[Entry, ...], index_types: Sequence[TensorType]
) -> list[tuple[TensorType, ...]]:
    """The index input types each entry takes (a slice's symbolic parts, or the one
    input of a SYMBOLIC entry); raises unless there are as many as the entries take."""
    expected = symbolic_count(entries)
    if len(index_types) != expected:
        raise TypeError(f"{op}: expected {expected} index inputs, got {len(index_types)}")
    remaining = iter(index_types)
    grouped: list[tuple[TensorType, ...]] = []
    for entry in entries:
        count = symbolic_count((entry,))
        grouped.append(tuple(next(remaining) for _ in range(count)))
    return grouped


def check_scalar_int(op: object, index_type: TensorType, what: str) -> None:
    """Symbolic ints and slice bounds must be integer scalars."""
    if not is_integer(index_type.dtype):
        raise TypeError(f"{op}: {what} must have an integer dtype, got {index_type.dtype}")
    if index_type.ndim != 0:
        raise TypeError(f"{op}: {what} must be a scalar, got {index_type}")


def check_in_bounds(op: object, index: int, axis: int, length: int | None) -> None:
    if length is not None and not -length <= index < length:
        raise IndexError(
            f"{op}: index {index} is out of bounds for axis {axis} with length {length}"
        )


def check_rank(op: object, x: TensorType, consumed: int) -> None:
    if consumed > x.ndim:
        raise IndexError(f"{op}: too many indices for {x}: rank {x.ndim}, {consumed} indexed")


def slice_length(
    op: object, entry: Slice, length: int | None, bound_types: tuple[TensorType, ...]
) -> int | None:
    """The static length of a sliced axis, or None; checks the types of symbolic bounds."""
    for bound_type in bound_types:
        check_scalar_int(op, bound_type, "a slice bound")
    if length == 0:
        return 0
    if length is None or bound_types:
        return None
    start, stop, step = (part if isinstance(part, int) else None for part in entry.parts)
    return len(range(*slice(start, stop, step).indices(length)))


def check_update_shape(op: object, value: TensorType, region: tuple[int | None, ...]) -> None:
    """The value written into a region must broadcast to it: equal rank or lower, and
    along each aligned axis a static length 1, an unknown length, or the region's."""
    lead = len(region) - value.ndim
    if lead < 0 or any(
        got not in (1, None) and want is not None and got != want
        for got, want in zip(value.shape, region[lead:])
    ):
        raise ShapeError(
            f"{op}: the value of shape {format_shape(value.shape)} does not broadcast to the "
            f"indexed region of shape {format_shape(region)}"
        )


def check_update_broadcast(
    op: object, value: TensorType, shape: tuple[int, ...], region: tuple[int, ...]
) -> None:
    """At run time: the value's length equals the region's along every aligned axis
    whose static length is not 1 (numpy would broadcast a length-1 axis there)."""
    lead = len(region) - len(shape)
    for axis, (static, got) in enumerate(zip(value.shape, shape)):
        want = region[lead + axis] if lead + axis >= 0 else None
        if static != 1 and want is not None and got != want:
            raise ShapeError(
                f"{op}: the value ({value}) has length {got} along axis {axis} at run time "
                f"where the indexed region has {want}; broadcasting needs a static length "
                "of 1 (declare it in the value's shape or use specify_shape)"
            )


def check_update_dtype(op: object, x: TensorType, value: TensorType) -> None:
    if value.dtype != x.dtype:
        raise DTypeError(f"{op}: the value has dtype {value.dtype}, the indexed variable {x.dtype}")


# --- run time --------------------------------------------------------------------------
def numpy_index(
    entries: tuple[Entry, ...], values: Sequence[Array], advanced: bool
) -> tuple[Any, ...]:
    """The NumPy index for `entries` given the node's index inputs (arrays stay arrays
    for advanced indexing; scalars become ints)."""
    remaining = iter(values)

    def bound(part: Bound) -> int | None:
        return int(next(remaining)) if isinstance(part, Symbolic) else part

    index: list[Any] = []
    for entry in entries:
        if isinstance(entry, NewAxis):
            index.append(None)
        elif isinstance(entry, Slice):
            index.append(slice(bound(entry.start), bound(entry.stop), bound(entry.step)))
        elif isinstance(entry, Symbolic):
            value = next(remaining)
            index.append(value if advanced else int(value))
        else:
            index.append(entry)
    return tuple(index)


# --- forward mode of updates -----------------------------------------------------------
def update_tangent(
    op: Op,
    set_instead_of_inc: bool,
    x: Variable,
    tangent_x: Variable | None,
    tangent_y: Variable | None,
    indices: Sequence[Variable],
) -> Variable | None:
    """Forward mode of an update `op(x, y, *indices)`, linear in `x` and `y`: the same
    update applied to the tangents (a set with no tangent for `y` writes zeros)."""
    if (tangent_x is None and tangent_y is None) or not is_inexact(x.dtype):
        return None
    if tangent_y is None:
        if not set_instead_of_inc:
            return tangent_x
        tangent_y = constant(np.zeros((), dtype=x.dtype))
    tangent_x = zeros_like(x) if tangent_x is None else tangent_x
    return op(cast(tangent_x, x.dtype), cast(tangent_y, x.dtype), *indices)


class IndexRead(Op, abc.ABC):
    """What `Subtensor` and `AdvancedSubtensor` share: `x[idx]`, whose inputs are `x` and
    then the SYMBOLIC entries of `idx_list`. The gradient scatters the cotangent back
    with the matching increment op; the tangent is indexed the same way."""

    __slots__ = ()
    idx_list: tuple[Entry, ...]
    advanced: ClassVar[bool]

    @abc.abstractmethod
    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        """The static shape of the result (validating the index against `x`)."""

    @abc.abstractmethod
    def scatter(self) -> Op:
        """The increment op adding a cotangent back at this index (the pullback)."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        x, *index_types = input_types
        return (TensorType(x.dtype, self.indexed_shape(x, tuple(index_types))),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, *values = inputs
        index = numpy_index(self.idx_list, values, advanced=self.advanced)
        try:
            return (np.asarray(x[index]),)
        except (IndexError, ValueError) as error:
            raise type(error)(f"{self}: {error}") from error

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, *indices = inputs
        (cotangent,) = cotangents
        no_indices = (None,) * len(indices)
        if cotangent is None or not is_inexact(x.dtype):
            return (None, *no_indices)
        scattered = self.scatter()(zeros_like(x), cast(cotangent, x.dtype), *indices)
        return (scattered, *no_indices)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        _, *indices = inputs
        tangent = tangents[0]
        return (None if tangent is None else self(tangent, *indices),)

    def __str__(self) -> str:
        return format_entries(type(self).__name__, self.idx_list)


class IndexUpdate(Op, abc.ABC):
    """What `IncSubtensor` and `AdvancedIncSubtensor` share: `x` with `x[idx]` replaced
    by (`set_instead_of_inc`) or incremented by `y`; inputs are `x`, `y`, then the index
    inputs. A `destroy_map` of `((0, 0),)` (set by the inplace rewrite) writes the result
    into `x`'s buffer."""

    __slots__ = ()
    idx_list: tuple[Entry, ...]
    set_instead_of_inc: bool
    advanced: ClassVar[bool]

    @abc.abstractmethod
    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        """The static shape of the updated region (validating the index against `x`)."""

    @abc.abstractmethod
    def read(self) -> Op:
        """The op reading the region this one updates (for the gradient of `y`)."""

    @abc.abstractmethod
    def setting(self) -> Op:
        """This update as a set (for clearing the region in the gradient of `x`)."""

    @abc.abstractmethod
    def increment(self, result: Array, index: Any, y: Array) -> None:
        """Add `y` into `result[index]` in place."""

    def inplace_candidates(
        self, input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
    ) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result has `x`'s type: the update can be written into `x`

    def with_destroy_map(self, destroy_map: tuple[tuple[int, int], ...]) -> Op:
        if destroy_map not in ((), ((0, 0),)):
            raise TypeError(f"{self} can only write its result into x: got {destroy_map}")
        evolve: Any = attrs.evolve
        updated = evolve(self, destroy_map=destroy_map)
        assert isinstance(updated, Op)
        return updated

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        x, y, *index_types = input_types
        check_update_dtype(self, x, y)
        check_update_shape(self, y, self.indexed_shape(x, tuple(index_types)))
        return (x,)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        """`y` broadcasts only along its static length-1 axes, as elementwise inputs do:
        its gradient sums the region over exactly those axes."""
        x, y, *values = inputs
        index = numpy_index(self.idx_list, values, advanced=self.advanced)
        try:  # the region's shape, without copying x (a zero-stride view of it)
            region = np.broadcast_to(np.zeros((), dtype=np.int8), x.shape)[index].shape
        except IndexError:
            return  # perform reports the bad index
        check_update_broadcast(self, input_types[1], y.shape, region)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, y, *values = inputs
        index = numpy_index(self.idx_list, values, advanced=self.advanced)
        result = x.copy()
        try:
            if self.set_instead_of_inc:
                result[index] = y
            else:
                self.increment(result, index, y)
        except (IndexError, ValueError) as error:
            raise type(error)(f"{self}: {error}") from error
        return (result,)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, y, *indices = inputs
        (cotangent,) = cotangents
        no_indices = (None,) * len(indices)
        if cotangent is None or not is_inexact(x.dtype):
            return (None, None, *no_indices)
        cotangent = cast(cotangent, x.dtype)
        if self.set_instead_of_inc:
            zero = constant(np.zeros((), dtype=x.dtype))
            grad_x = self.setting()(cotangent, zero, *indices)
        else:
            grad_x = cotangent
        region = self.read()(cotangent, *indices)
        return (grad_x, sum_to(region, y.type), *no_indices)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, _, *indices = inputs
        tangent_x, tangent_y = tangents[0], tangents[1]
        return (update_tangent(self, self.set_instead_of_inc, x, tangent_x, tangent_y, indices),)

    def __str__(self) -> str:
        name = ("Advanced" if self.advanced else "") + (
            "SetSubtensor" if self.set_instead_of_inc else "IncSubtensor"
        )
        return format_entries(name, self.idx_list) + ("{inplace}" if self.destroy_map else "")
