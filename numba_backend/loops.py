"""Element loops: `Elemwise` and `Fused` nodes become one explicit loop nest, inlined
into the entry function (their kernels, `numba_backend.elemwise` and
`numba_backend.fused`, call `element_loop`).

Each output element is computed by inlined scalar expressions (no temporaries). Inputs
broadcast along axes whose static length is 1; every other axis must match the loop
length at run time, which the generated code checks with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from fgraph import TensorType
from fgraph.types import Shape as StaticShape

from numba_backend.body import ElementBody, element_position
from numba_backend.intrinsics import PER_TUPLE
from numba_backend.parallel import parallel_loop
from numba_backend.reduction import REASSOCIABLE
from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, element_index, is_size_one,
)
from numba_backend.split import Summation, should_split, split_loop


def loop_lengths(node: NodeInfo) -> tuple[list[str], list[str]]:
    """Per axis, the loop length's expression, and the lines computing and checking them:
    inputs broadcast only along static length-1 axes; others must match at run time,
    unless their types say they do (a static length) or the graph does (a length read
    off the same variable: `NodeInfo.same_length`)."""
    prefix = node.prefix
    lines: list[str] = []
    lengths: list[str] = []
    checks: list[_LengthCheck] = []
    for axis, static in enumerate(node.output_types[0].shape):
        sources = [k for k, t in enumerate(node.input_types) if t.shape[axis] != 1]
        if not sources:
            lengths.append("1")
            continue
        if static is not None:  # inputs of unknown length there are checked against it
            reference, length = None, str(static)
        else:
            reference, length = sources[0], f"{prefix}n{axis}"
            lines.append(f"{length} = {node.inputs[reference]}.shape[{axis}]")
        lengths.append(length)
        for other in sources:
            if other == reference or node.input_types[other].shape[axis] is not None:
                continue
            if reference is not None and node.same_length(reference, other, axis):
                continue
            checks.append(_LengthCheck(node.label(sources[0]), node.label(other), axis, length,
                                       f"{node.inputs[other]}.shape[{axis}]"))
    return lines + _checked(checks, prefix), lengths


@attrs.frozen
class _LengthCheck:
    """Input `other` (its label) must have the loop's `length` along `axis`, as `first`."""

    first: str
    other: str
    axis: int
    length: str
    got: str


def _checked(checks: Sequence[_LengthCheck], prefix: str) -> list[str]:
    """The lines raising the error of the first failing check: one condition and raise
    per group (`intrinsics.first_unequal`), since each raise costs numba compile time;
    the error's labels, axis and lengths are picked from tuples by the failing position
    (a part all checks share is written into the message)."""
    if len(checks) == 1:
        (check,) = checks
        return [
            f"if {check.got} != {check.length}:",
            f"    raise ValueError({_message(check.first, check.other, str(check.axis))}, "
            f"{check.length}, {check.got})",
        ]
    lines: list[str] = []
    for start in range(0, len(checks), PER_TUPLE):
        group = checks[start : start + PER_TUPLE]
        bad = f"{prefix}bad{start}"

        def part(values: Sequence[str], quoted: bool) -> tuple[str, list[str]]:
            """A field of the message: written in if every check has it, else a slot."""
            if len(set(values)) == 1:
                return values[0], []
            items = "".join(f"'{v}', " if quoted else f"{v}, " for v in values)
            return "{}", [f"({items})[{bad}]"]

        first, first_args = part([c.first for c in group], True)
        other, other_args = part([c.other for c in group], True)
        axis, axis_args = part([str(c.axis) for c in group], False)
        got = "".join(f"{c.got}, " for c in group)
        wanted = "".join(f"{c.length}, " for c in group)
        arguments = [*first_args, *other_args, *axis_args, f"({wanted})[{bad}]",
                     f"({got})[{bad}]"]
        lines += [
            f"{bad} = first_unequal(({got}), ({wanted}))",
            f"if {bad} < {len(group)}:",
            f"    raise ValueError({_message(first, other, axis)}, {', '.join(arguments)})",
        ]
    return lines


def _message(first: str, other: str, axis: str) -> str:
    """The quoted message of a length check; its parts may be `{}` slots, and the
    lengths always are."""
    return (f"'elementwise inputs {first} and {other} differ in length along axis {axis}: "
            "{} and {} (broadcasting needs a static length of 1)'")


def element_assignment(
    target: str, source: str, shape_of: str, rank: int, counter: str, assign: str = "=",
    lead: str = "", source_shape: StaticShape | None = None,
) -> list[str]:
    """`target[lead, ...] assign source[...]` element by element over the shape of
    `shape_of` (numba's setitem of an array into a slice is a broadcasting overload
    costing seconds of compile time); `lead` is an index before the element's. With
    `source_shape`, the source broadcasts as NumPy's would (its static shape: read at 0
    along its axes of static length 1, its leading missing axes not at all; a 0-d
    source is one scalar value assigned to every element)."""
    lines: list[str] = []
    indent = ""
    for axis in range(rank):
        lines.append(f"{indent}for {counter}{axis} in range({shape_of}.shape[{axis}]):")
        indent += "    "
    index = ", ".join(f"{counter}{axis}" for axis in range(rank))
    into = f"{target}[{lead}, {index}]" if lead else f"{target}[{index}]"
    if source_shape is None:
        value = f"{source}[{index}]"
    elif not source_shape:
        value = source
    else:
        missing = rank - len(source_shape)
        read = ("0" if n == 1 else f"{counter}{missing + a}" for a, n in enumerate(source_shape))
        value = f"{source}[{', '.join(read)}]"
    return [*lines, f"{indent}{into} {assign} {value}"]


def fresh_copy(target: str, source: str, source_type: TensorType, counter: str) -> list[str]:
    """`target = source.copy()` as an allocation and element loops: in a loop body the
    copy then reuses a buffer allocated once per loop (`scan._reuse_buffers`)."""
    if not source_type.ndim:
        return [Allocation(target, "()", source_type.dtype), f"{target}[()] = {source}[()]"]
    return [
        Allocation(target, f"{source}.shape", source_type.dtype),
        *element_assignment(target, source, source, source_type.ndim, counter),
    ]


PARALLEL_MIN_SIZE = 1 << 16
"""Elements from which a loop of a `parallel` function runs on all threads: below it, a
thread launch (several microseconds) costs more than it saves."""

CHUNKS = 64
"""Pieces a parallel summed loop is cut into along its first axis (each thread adds up
its own pieces; the pieces' totals are added at the end)."""


def _loop_nest(
    node: NodeInfo,
    lengths: Sequence[str],
    scalar_names: Sequence[str],
    indent: str = "",
    first_axis: str | None = None,
    start: int = 0,
) -> tuple[list[str], str]:
    """`for` headers over the axes from `start` on (`lengths` are theirs; the loops of
    earlier axes enclose these) and the loads of each input's scalar; returns the lines
    and the indentation of the loop body. `first_axis` replaces the header of axis 0
    (to run it in parallel or over one chunk)."""
    prefix = node.prefix
    lines: list[str] = []
    for axis, length in enumerate(lengths, start):
        header = f"for {prefix}j{axis} in range({length}):"
        lines.append(indent + (first_axis if axis == 0 and first_axis else header))
        indent += "    "
    for k, source in enumerate(node.inputs):
        read = source if node.holds_scalar(k) else f"{source}[{element_position(node, k)}]"
        lines.append(f"{indent}{scalar_names[k]} = {read}")
    return lines, indent


def _size(lengths: Sequence[str]) -> str:
    return " * ".join(lengths)


def _serial_or_parallel(
    node: NodeInfo,
    lengths: Sequence[str],
    module: ModuleBuilder,
    loop: Callable[[str, str | None], list[str]],
) -> list[str]:
    """`loop(indent, first_axis)` as is, or, with `module.parallel`, run with
    `numba.prange` over its first axis (in a helper, `parallel_loop`) when it has at
    least `PARALLEL_MIN_SIZE` elements (a serial copy below that: no thread launch for
    small arrays)."""
    if not (module.parallel and lengths):
        return loop("", None)
    prange = loop("", f"for {node.prefix}j0 in numba.prange({lengths[0]}):")
    return [
        f"if {_size(lengths)} >= {PARALLEL_MIN_SIZE}:",
        f"    {parallel_loop(prange, module)}",
        "else:",
        *loop("    ", None),
    ]


def element_loop(
    node: NodeInfo,
    body: ElementBody,
    module: ModuleBuilder,
    destroy_map: Sequence[tuple[int, int]] = (),
) -> list[str]:
    """Lines computing `node.outputs` elementwise. An output in `destroy_map` is written
    into its input's buffer: each element of every input is read before the same
    element of any output is written, so this is safe. With `module.parallel`, a large
    enough loop runs its first axis with `numba.prange`; a huge body is split into
    helpers (`split`), serially."""
    if is_size_one(node.output_types[0]) and not should_split(body):
        return scalar_element(node, body)
    if any(node.scalar_outputs):  # a huge body of one element: its helpers store into arrays
        return _into_arrays(node, body, module, destroy_map)
    prefix = node.prefix
    lines, lengths = loop_lengths(node)
    shape = "(" + "".join(f"{length}, " for length in lengths) + ")"
    reused = {k: source for k, source in destroy_map if not node.holds_scalar(source)}
    for k, (output, output_type) in enumerate(zip(node.outputs, node.output_types)):
        if k in reused:
            lines.append(f"{output} = {node.inputs[reused[k]]}")
        else:
            lines.append(Allocation(output, shape, output_type.dtype))
    if should_split(body):
        return lines + split_loop(node, body, lengths, module, None)
    lines += body.hoisted()
    rank = len(lengths)
    target = ", ".join(f"{prefix}j{axis}" for axis in range(rank)) if rank else "()"

    def loop(indent: str, first_axis: str | None) -> list[str]:
        nest, inner = _loop_nest(node, lengths, body.scalars, indent, first_axis)
        stores = [f"{inner}{out}[{target}] = {prefix}y{k}" for k, out in enumerate(node.outputs)]
        return nest + [inner + line for line in body.lines(prefix)] + stores

    return lines + _serial_or_parallel(node, lengths, module, loop)


def scalar_element(node: NodeInfo, body: ElementBody) -> list[str]:
    """Lines computing a node of one element (0-d, or static lengths all 1) as scalar
    statements: no loop, and no array where the block holds its inputs or outputs as
    scalars (an output's value is cast to its dtype unless float64 statements over
    float64 inputs give it). An output computed in place is a new value all the same:
    the scalar it overwrites is not read again."""
    reads = [f"{scalar} = {node.scalar(k)}" for k, scalar in enumerate(body.scalars)]
    float64 = all(t.dtype == "float64" for t in node.input_types)
    lines = reads + body.hoisted() + [f"{name} = {text}" for name, text in body.statements]
    for k, (value, output_type) in enumerate(zip(body.outputs, node.output_types)):
        cast = not (float64 and output_type.dtype == "float64")
        lines += node.assign_scalar(k, f"{dtype_expression(output_type.dtype)}({value})"
                                    if cast else value)
    return lines


def _into_arrays(
    node: NodeInfo, body: ElementBody, module: ModuleBuilder, destroy_map: Sequence[tuple[int, int]]
) -> list[str]:
    """`element_loop` of a node the block wants plain scalars of, computed into fresh
    one-element arrays (as split helpers store) and read back."""
    made = node.scalar_outputs
    arrays = [f"{node.prefix}out{k}" if scalar else name
              for k, (name, scalar) in enumerate(zip(node.outputs, made))]
    on_arrays = attrs.evolve(node, outputs=tuple(arrays), scalar_outputs=())
    lines = element_loop(on_arrays, body, module, destroy_map)
    return lines + [f"{name} = {array}[{element_index(output_type)}]" for name, array, output_type,
                    scalar in zip(node.outputs, arrays, node.output_types, made) if scalar]


def summed_loop(
    node: NodeInfo, body: ElementBody, module: ModuleBuilder, total: NodeInfo
) -> list[str]:
    """Lines adding up the elements of `node`'s single output over its trailing axes
    into `total`'s output (whose rank is the number of leading axes kept), in the same
    loop that computes them: no temporary array. A float sum is reassociable, so the
    loop vectorizes (`reduction.REASSOCIABLE`)."""
    lines, lengths = loop_lengths(node)
    total_type = total.output_types[0]
    summing = _summation(node, total_type.dtype)
    if total_type.ndim:
        sums = _partial_sums(node, body, lengths, summing, total.outputs[0], total_type, module)
        return lines + body.hoisted() + sums
    return lines + _full_sum(node, body, lengths, summing, total, module)


def _summation(node: NodeInfo, dtype: str) -> Summation:
    """How an element is added up in `dtype`: converted as an array store would be
    (numba widens small integers), through `assoc_add` for floats."""
    value = f"{node.prefix}y0"
    element_dtype = node.output_types[0].dtype
    if element_dtype != "float64":
        value = f"{dtype_expression(element_dtype)}({value})"
    if element_dtype != dtype:
        value = f"{dtype_expression(dtype)}({value})"

    def add(accumulator: str, term: str) -> str:
        if dtype in REASSOCIABLE:
            return f"{accumulator} = assoc_add({accumulator}, {term})"
        return f"{accumulator} = {accumulator} + {term}"

    return Summation(f"{node.prefix}total", value, f"{dtype_expression(dtype)}(0)", add)


def _summing_loop(
    node: NodeInfo,
    body: ElementBody,
    lengths: Sequence[str],
    summing: Summation,
    accumulator: str,
    indent: str,
    first_axis: str | None = None,
) -> list[str]:
    """The loop nest over `lengths` computing each element and adding it to
    `accumulator`."""
    nest, inner = _loop_nest(node, lengths, body.scalars, indent, first_axis)
    statements = [inner + line for line in body.lines(node.prefix)]
    return nest + statements + [inner + summing.add(accumulator, summing.value)]


def _full_sum(
    node: NodeInfo,
    body: ElementBody,
    lengths: Sequence[str],
    summing: Summation,
    total: NodeInfo,
    module: ModuleBuilder,
) -> list[str]:
    """Every element into `total`'s 0-d output. With `module.parallel`, a large enough
    loop is cut into `CHUNKS` pieces along its first axis, added up on all threads; a
    huge body is split into helpers (`split`), serially."""
    dtype = total.output_types[0].dtype
    prefix = node.prefix
    accumulator, zero = summing.accumulator, summing.zero
    lines = [f"{accumulator} = {zero}"]
    if should_split(body):
        lines += split_loop(node, body, lengths, module, summing)
    elif module.parallel and lengths:
        piece, part, first = f"{prefix}c", f"{prefix}part", lengths[0]
        chunk = f"for {prefix}j0 in range({piece} * {first} // {CHUNKS}, "
        chunk += f"({piece} + 1) * {first} // {CHUNKS}):"
        chunks = [
            f"for {piece} in numba.prange({CHUNKS}):",
            f"    {part} = {zero}",
            *_summing_loop(node, body, lengths, summing, part, "    ", chunk),
            f"    {prefix}parts[{piece}] = {part}",
        ]
        lines += [
            *body.hoisted(),
            f"if {_size(lengths)} >= {PARALLEL_MIN_SIZE}:",
            f"    {prefix}parts = new_array({CHUNKS}, {dtype_expression(dtype)})",
            f"    {parallel_loop(chunks, module)}",
            f"    for {piece} in range({CHUNKS}):",
            f"        {summing.add(accumulator, f'{prefix}parts[{piece}]')}",
            "else:",
            *_summing_loop(node, body, lengths, summing, accumulator, "    "),
        ]
    else:
        lines += body.hoisted() + _summing_loop(node, body, lengths, summing, accumulator, "")
    return lines + total.assign_scalar(0, accumulator)


def _partial_sums(
    node: NodeInfo,
    body: ElementBody,
    lengths: Sequence[str],
    summing: Summation,
    total: str,
    total_type: TensorType,
    module: ModuleBuilder,
) -> list[str]:
    """Each group of trailing elements into its element of `total`: the kept axes
    outside, one accumulator per group. With `module.parallel`, a large enough loop
    runs its first (kept) axis with `numba.prange`."""
    prefix = node.prefix
    kept = total_type.ndim
    shape = "(" + "".join(f"{length}, " for length in lengths[:kept]) + ")"
    target = ", ".join(f"{prefix}j{axis}" for axis in range(kept))
    accumulator = summing.accumulator

    def loop(indent: str, first_axis: str | None) -> list[str]:
        lines: list[str] = []
        for axis in range(kept):
            header = f"for {prefix}j{axis} in range({lengths[axis]}):"
            lines.append(indent + (first_axis if axis == 0 and first_axis else header))
            indent += "    "
        lines.append(f"{indent}{accumulator} = {summing.zero}")
        nest, inner = _loop_nest(node, lengths[kept:], body.scalars, indent, None, kept)
        statements = [inner + line for line in body.lines(prefix)]
        lines += nest + statements + [inner + summing.add(accumulator, summing.value)]
        return lines + [f"{indent}{total}[{target}] = {accumulator}"]

    allocate = Allocation(total, shape, total_type.dtype)
    return [allocate, *_serial_or_parallel(node, lengths, module, loop)]
