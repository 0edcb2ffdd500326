"""Batching: `vectorize_graph` (PyTensor's) and `vmap` (JAX's) on top of it.

`vectorize_graph(outputs, replace={x: x_batched})` rebuilds the graph from `outputs`
with `x_batched`, which has extra leading batch axes, in place of `x`. Each node whose
inputs carry batch axes is replaced by its op's `vectorize` rule, declared next to the op
(`Elemwise`, reductions, `DimShuffle`, `MatMul`, the linear-algebra ops, indexing, shape
ops, `Reshape`, ...): one batched operation. An op without a rule is looped over the
batch with a `scan` map, so every graph can be vectorized. Nodes that do not depend on
the replaced inputs are kept as they are. What the rules share (batch lengths, the
index updates' rule) is in `ops.batching`, below the ops; reads of a loop's traces that
would be ragged are refused first (`ops.loop_ragged`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from fgraph import DTypeError, Graph, Input, Param, ShapeError, TensorType, Variable, toposort
from fgraph.node import Apply
from ops.batching import batch_lengths, lengths_after
from ops.broadcast import broadcast_to
from ops.dimshuffle import expand_dims
from ops.loop_ragged import without_ragged_reads
from ops.numpy_functions import moveaxis
from ops.reshape_ops import reshape
from ops.scan_functions import scan

__all__ = ["vectorize_graph", "vmap"]


def vectorize_graph(
    outputs: Sequence[Variable], replace: Mapping[Variable, Variable]
) -> list[Variable]:
    """`outputs` computed for each element of the batch `replace` maps inputs to.

    Each replacement must have the replaced variable's dtype and trailing shape, after
    the same number of leading batch axes for all of them (their lengths broadcast along
    static length 1). Outputs that do not depend on a replaced variable come back
    unchanged, without batch axes."""
    return [value for value, _ in _vectorized(outputs, replace)]


def _vectorized(
    outputs: Sequence[Variable], replace: Mapping[Variable, Variable]
) -> list[tuple[Variable, bool]]:
    """Each output vectorized, and whether it carries the batch axes."""
    batch_ndim = _batch_ndim(replace)
    outputs = without_ragged_reads(outputs, replace)
    memo: dict[Variable, tuple[Variable, bool]] = {v: (b, True) for v, b in replace.items()}
    for node in toposort(outputs):
        values = [memo.get(v, (v, False)) for v in node.inputs]
        inputs = tuple(value for value, _ in values)
        flags = tuple(flag for _, flag in values)
        if not any(flags):
            if inputs != node.inputs:  # reads an unbatched value computed anew (a shape)
                for old, new in zip(node.outputs, node.op.apply(*inputs)):
                    memo[old] = (new, False)
            continue
        result = node.op.vectorize(inputs, flags, batch_ndim)
        new_outputs, new_flags = result if result is not None else _loop(node, inputs, flags, batch_ndim)
        for old, new, flag in zip(node.outputs, new_outputs, new_flags):
            memo[old] = (new, flag)
    return [memo.get(output, (output, False)) for output in outputs]


def _batch_ndim(replace: Mapping[Variable, Variable]) -> int:
    counts = set()
    for original, batched in replace.items():
        extra = batched.ndim - original.ndim
        if extra < 0 or not _fits(original.type.shape, batched.type.shape[extra:]):
            raise ShapeError(
                f"vectorize_graph: {batched.type} does not end in the shape of {original.type} "
                "(a replacement adds leading batch axes to the variable it replaces)"
            )
        if batched.dtype != original.dtype:
            raise DTypeError(
                f"vectorize_graph: {batched.type} replaces {original.type}, of another dtype"
            )
        counts.add(extra)
    if len(counts) > 1:
        raise ShapeError(
            f"vectorize_graph: replacements add different numbers of batch axes: {sorted(counts)}"
        )
    return counts.pop() if counts else 0


def _fits(want: tuple[int | None, ...], got: tuple[int | None, ...]) -> bool:
    return len(want) == len(got) and all(w is None or g is None or w == g for w, g in zip(want, got))


def _loop(
    node: Apply, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
) -> tuple[tuple[Variable, ...], tuple[bool, ...]]:
    """The node's op applied to each element of the batch by a `scan` map over the batch
    axes, flattened into one (and restored afterwards)."""
    lengths = batch_lengths([v for v, flag in zip(inputs, batched) if flag], batch_ndim)
    total: Variable | int = 1
    for length in lengths:
        total = length if isinstance(total, int) and total == 1 else total * length
    sequences = [
        reshape(broadcast_to(v, [*lengths, *lengths_after(v, batch_ndim)]),
                [total, *lengths_after(v, batch_ndim)])
        for v, flag in zip(inputs, batched) if flag
    ]
    constants = [v for v, flag in zip(inputs, batched) if not flag]
    op = node.op

    def step(*arguments: Variable) -> tuple[Variable, ...]:
        slices, rest = iter(arguments[: len(sequences)]), iter(arguments[len(sequences):])
        ordered = [next(slices) if flag else next(rest) for flag in batched]
        return op.apply(*ordered)

    mapped: object = scan(step, sequences=sequences, non_sequences=constants)
    # scan gives a single variable for a one-output step, a tuple otherwise.
    outputs = (mapped,) if isinstance(mapped, Variable) else tuple(cast(tuple[Variable, ...], mapped))
    restored = tuple(reshape(o, [*lengths, *lengths_after(o, 1)]) for o in outputs)
    return restored, (True,) * len(restored)


InAxes = int | None | Sequence[int | None]


def vmap(
    fn: Callable[..., Variable | Sequence[Variable]],
    in_axes: InAxes = 0,
    out_axes: int | Sequence[int] = 0,
) -> Callable[..., Variable | list[Variable]]:
    """`fn` mapped over an axis of its arguments, as JAX's `vmap`: `in_axes` gives, per
    argument (or for all), the axis it is mapped along, or None for an argument passed
    whole to every call; `out_axes` where the mapped axis goes in each output. Built on
    `vectorize_graph`, so `fn` runs once, on variables of one example."""

    def mapped(*arguments: Variable) -> Variable | list[Variable]:
        axes = list(in_axes) if isinstance(in_axes, Sequence) else [in_axes] * len(arguments)
        if len(axes) != len(arguments):
            raise ValueError(f"vmap: in_axes has {len(axes)} entries for {len(arguments)} arguments")
        examples: list[Variable] = []
        replace: dict[Variable, Variable] = {}
        for argument, axis in zip(arguments, axes):
            if axis is None:
                examples.append(argument)
                continue
            moved = moveaxis(argument, axis, 0)
            example = _example_input(moved)
            examples.append(example)
            replace[example] = moved
        if not replace:
            raise ValueError("vmap: no argument is mapped (every in_axes entry is None)")
        result = fn(*examples)
        single = isinstance(result, Variable)
        outputs = [result] if isinstance(result, Variable) else list(result)
        length = next(iter(replace.values())).shape[0]
        out = list(out_axes) if isinstance(out_axes, Sequence) else [out_axes] * len(outputs)
        final = [
            moveaxis(value if flag else _repeated(value, length), 0, axis)
            for (value, flag), axis in zip(_vectorized(outputs, replace), out)
        ]
        return final[0] if single else final

    return mapped


def _example_input(batched: Variable) -> Variable:
    """A fresh input of the type of one element of `batched` (its first axis dropped)."""
    return Input(TensorType(batched.dtype, batched.type.shape[1:]), "vmap example")


def _repeated(value: Variable, length: Variable) -> Variable:
    """An output that is the same for every element, repeated along the batch (JAX's
    `vmap` broadcasts such outputs too)."""
    return broadcast_to(expand_dims(value, 0), [length, *lengths_after(value, 0)])


def broadcast_batch(value: Variable, lengths: Sequence[Variable | int]) -> Variable:
    """An unbatched `value` repeated over batch axes of the given lengths."""
    return broadcast_to(expand_dims(value, tuple(range(len(lengths)))) if lengths else value,
                        [*lengths, *lengths_after(value, 0)])


def batched_body(
    body: Graph, n_carries: int, batched: Sequence[bool], batch_ndim: int,
    lengths: Sequence[Variable | int],
) -> tuple[Graph, tuple[bool, ...], tuple[bool, ...]]:
    """A loop body vectorized: (the new body, which params carry batch axes, which
    outputs do). A carry is batched when its initial value is or when the step makes it
    so (the body is then vectorized again with that carry batched: a fixpoint); its
    step result is broadcast to the batch where it does not depend on the batch."""
    flags = list(batched)
    static = tuple(length if isinstance(length, int) else None for length in lengths)
    while True:
        params = [
            Param(k, TensorType(p.dtype, (*static, *p.type.shape)) if flag else p.type)
            for k, (p, flag) in enumerate(zip(body.inputs, flags))
        ]
        replace = {old: new for old, new, flag in zip(body.inputs, params, flags) if flag}
        results = _vectorized(body.outputs, replace) if replace else [(o, False) for o in body.outputs]
        grown = [k for k in range(n_carries) if results[k][1] and not flags[k]]
        if not grown:
            break
        for k in grown:
            flags[k] = True
    reference = next(p for p, flag in zip(params, flags) if flag)
    inner_lengths = lengths_after(reference, 0)[:batch_ndim]
    outputs = [
        broadcast_batch(value, inner_lengths) if k < n_carries and flags[k] and not flag else value
        for k, (value, flag) in enumerate(results)
    ]
    output_flags = tuple(flags[k] if k < n_carries else flag for k, (_, flag) in enumerate(results))
    return Graph(params, outputs), tuple(flags), output_flags
