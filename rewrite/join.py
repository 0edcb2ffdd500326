"""Reads of joined arrays: indexing or splitting a `Concatenate` reads its parts.

Unrolled loops and the gradients of loops build traces by joining rows and read them
back by index (`stack(rows)[2]`, `concatenate([x0[None], trace[:-1]])`, the `Split` that
pulls a cotangent back through a concatenation). These rules make such reads read the
part itself, so that the joined array is no longer needed. All work on the joined axis
where every part's length there is static.
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.dimshuffle import DimShuffle
from ops.join import Concatenate, Split
from ops.subtensor import Subtensor
from rewrite.index_items import FULL, Item, SliceItem, slice_of_range, static_range, subtensor
from rewrite.index_items import unpack
from rewrite.patterns import replacement
from rewrite.rules import RuleSet, rule


def _part_bounds(parts: Sequence[Variable], axis: int) -> list[tuple[int, int]] | None:
    """Each part's [start, stop) along the joined axis, if all lengths are static."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for part in parts:
        length = part.type.shape[axis]
        if length is None:
            return None
        bounds.append((start, start + length))
        start += length
    return bounds


def _joined(pieces: list[Variable], axis: int) -> Variable:
    return pieces[0] if len(pieces) == 1 else Concatenate(axis)(*pieces)


def _pieces(
    parts: Sequence[Variable], bounds: list[tuple[int, int]], positions: range, axis: int
) -> list[Variable] | None:
    """The parts' slices holding `positions` (consecutive, increasing), in order."""
    if positions.step != 1 or len(positions) == 0:
        return None
    pieces: list[Variable] = []
    for part, (start, stop) in zip(parts, bounds):
        first, last = max(start, positions.start), min(stop, positions.stop)
        if first >= last:
            continue
        local = slice_of_range(range(first - start, last - start), stop - start)
        items: list[Item] = [*([FULL] * axis), local]
        pieces.append(subtensor(part, items))
    return pieces


@rule(Subtensor)
def subtensor_of_concatenate(node: Apply) -> Sequence[Variable] | None:
    """concatenate(parts)[i] -> part[i - offset]; concatenate(parts)[a:b] -> the slices
    of the parts it covers (on axis 0, for static indices)."""
    match node:
        case Apply(
            op=Subtensor(idx_list=idx_list),
            inputs=(Variable(owner=Apply(op=Concatenate(axis=0), inputs=parts)) as joined, *rest),
        ):
            bounds = _part_bounds(parts, 0)
            items = unpack(idx_list, rest)
            if bounds is None or not items:
                return None
            first, tail = items[0], list(items[1:])
            total = bounds[-1][1]
            if isinstance(first, int):
                if not -total <= first < total:
                    return None
                row = first % total
                for part, (start, stop) in zip(parts, bounds):
                    if start <= row < stop:
                        return replacement(subtensor(part, [row - start, *tail]), node.out)
            if isinstance(first, SliceItem):
                positions = static_range(first, joined.type.shape[0])
                if positions is None or positions == range(total):
                    return None
                pieces = _pieces(parts, bounds, positions, 0)
                if pieces is None:
                    return None
                return replacement(subtensor(_joined(pieces, 0), [FULL, *tail]), node.out)
    return None


@rule(Subtensor)
def subtensor_of_new_axis(node: Apply) -> Sequence[Variable] | None:
    """x[None][0] -> x (also -1): reading the one row of a new leading axis."""
    match node:
        case Apply(
            op=Subtensor(idx_list=(int(row), *_) as idx_list),
            inputs=(Variable(owner=Apply(op=DimShuffle(order=order), inputs=(x,))), *rest),
        ) if row in (0, -1) and order == (None, *range(x.ndim)):
            tail = list(unpack(idx_list, rest)[1:])
            return replacement(subtensor(x, tail), node.out)
    return None


@rule(Split)
def split_of_concatenate(node: Apply) -> Sequence[Variable] | None:
    """split(concatenate(parts), sizes) -> the parts (or their slices) each piece covers,
    when both cut the same axis at static places."""
    match node:
        case Apply(
            op=Split(axis=axis, sizes=sizes),
            inputs=(Variable(owner=Apply(op=Concatenate(axis=joined_axis), inputs=parts)), _),
        ) if axis == joined_axis:
            bounds = _part_bounds(parts, axis)
            if bounds is None or any(size is None for size in sizes):
                return None
            results: list[Variable] = []
            start = 0
            for size, output in zip(sizes, node.outputs):
                assert size is not None
                pieces = _pieces(parts, bounds, range(start, start + size), axis)
                if pieces is None:
                    return None
                fitted = replacement(_joined(pieces, axis), output)
                if fitted is None:
                    return None
                results.extend(fitted)
                start += size
            return results
    return None


@rule(Concatenate)
def concatenate_of_one(node: Apply) -> Sequence[Variable] | None:
    """concatenate([x]) -> x."""
    match node:
        case Apply(op=Concatenate(), inputs=(x,)):
            return replacement(x, node.out)
    return None


JOIN = RuleSet(
    "join",
    (subtensor_of_concatenate, subtensor_of_new_axis, split_of_concatenate, concatenate_of_one),
)
"""Reads of joined arrays as reads of their parts."""
