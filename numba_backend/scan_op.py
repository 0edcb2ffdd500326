"""`Scan` as a `for` loop (a `while`-style `break` for while-loops), its body emitted as
a block of statements under the node's prefix. A loop is always an outlined kernel
(`numba_backend.kernels`): a function of its own, which graphs sharing the loop share.

- The body is lowered once per inner graph with elementwise fusion (`lowered_body`):
  the op's own inner graph stays as the rewrites left it, and fusion never runs inside
  the rewrite pipeline's inner graphs, where folding rules must not recurse.
- A body of scalars only (every value 0-d, every node elementwise or fused) becomes
  plain scalar statements: carries are local scalars, nothing is allocated per step.
  Other bodies run their kernels on arrays, as the entry function does.
- Traces are preallocated and written row by row (a carry's n + 1 rows start with its
  initial value); a per-step output whose row shape is unknown is allocated after the
  first step. Final values of array carries are
  copies, so they never alias an input the loop started from.
- Run-time checks (n_steps >= 0, the static length, sequences at least n_steps long)
  raise ValueError as `Scan.perform` does.
- An error raised in a step says which step of which loop, and names the body's params
  after the values feeding them (`Scan.param_names`), as `Scan.perform` does: the raise
  statements of the step get the step as a further `{}` argument (`_in_step`), so the
  message costs nothing until it is raised. Kernels a step calls (an inner loop, an
  outlined helper) say where in their own terms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from fgraph import Constant, Graph, Op, TensorType, Variable
from fgraph.aliasing import Aliasing
from numba_backend.block import emit_block
from numba_backend.intrinsics import PER_TUPLE
from numba_backend.loops import element_assignment, fresh_copy
from numba_backend.body import element_body
from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, message_text, numba_kernel,
    scalar_kernel,
)
from numba_backend.scalar_ops import sequential_code
from ops.elemwise import ElementwiseOp
from ops.loop_rows import RowLength, empty_row_lengths
from ops.scan_op import Scan
from rewrite.fusion import fuse_elemwise


@functools.lru_cache(maxsize=256)
def lowered_body(inner_graph: Graph) -> Graph:
    """The body as the backend compiles it: elementwise chains fused into loops."""
    return fuse_elemwise(inner_graph)


def is_scalar_body(body: Graph) -> bool:
    """Every value 0-d and every node elementwise: the body is plain scalar code."""
    if not all(isinstance(node.op, ElementwiseOp) for node in body.nodes):
        return False
    values = [*body.inputs, *(o for node in body.nodes for o in node.outputs), *body.outputs]
    return all(value.ndim == 0 for value in values)


def _read_as_scalar(op: Op, k: int) -> bool:
    """The step count is read as a scalar, and so are the 0-d initial values and
    non-sequences of a body of scalars."""
    if k == 0:
        return True
    assert isinstance(op, Scan)
    sequence = op.n_carries < k <= op.n_carries + op.n_sequences
    return not sequence and is_scalar_body(lowered_body(op.inner_graph))


@numba_kernel.register
@scalar_kernel(reads=_read_as_scalar, makes=False)
def _scan(op: Scan, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    body = lowered_body(op.inner_graph)
    scalar = is_scalar_body(body)
    p = node.prefix
    nc, ns = op.n_carries, op.n_sequences
    given = op.split_inputs(node.inputs)
    initials, sequences, non_sequences = given.initials, given.sequences, given.non_sequences
    carry_types = op.carry_types
    lines = [f"{p}n = int({node.scalar(0)})"]
    count = node.input_counts[0] if node.input_counts else None
    checked = tuple((j, sequence) for j, sequence in enumerate(sequences)
                    if count is None or node.input_lengths[1 + nc + j][0] != count)
    lines += _step_checks(op, p, checked, count is None)

    # Names the body reads its params through.
    carries = [f"{p}c{k}" for k in range(nc)]
    rows = [f"{p}r{j}" for j in range(ns)]
    shared = [f"{p}w{j}" for j in range(len(non_sequences))]
    for k, (name, initial, carry_type) in enumerate(zip(carries, initials, carry_types), 1):
        if carry_type.ndim == 0 and scalar:
            lines.append(f"{name} = {node.scalar(k)}")
        elif carry_type.ndim == 0:
            lines.append(f"{name} = {initial}")
        else:  # numba unifies the layouts of the initial and the next values
            lines.append(f"{name} = {initial}")
    for k, (name, value, param) in enumerate(
        zip(shared, non_sequences, body.inputs[nc + ns :]), 1 + nc + ns
    ):
        lines.append(f"{name} = {node.scalar(k)}" if scalar and param.ndim == 0 else f"{name} = {value}")

    # Buffers for the traces.
    traced = op.traced_carries
    trace_names = [f"{p}t{k}" for k in traced]
    # A carry's trace: n + 1 rows, the initial value at row 0 (at row n when reversed).
    initial_row = f"{p}n" if op.reverse else "0"
    # A trace keeping a window of w rows is a ring of w slots (see `_window_rows`).
    for name, k in zip(trace_names, traced):
        slots = str(op.window(k)) if op.window(k) else f"{p}n + 1"
        shape = f"({slots},)" + ("" if carry_types[k].ndim == 0 else f" + {carries[k]}.shape")
        lines.append(Allocation(name, shape, carry_types[k].dtype))
        lines += _write_row(name, initial_row, carries[k], carry_types[k], scalar, f"{p}q")
    ys_types = op.ys_types
    ys_names = [f"{p}y{y}" for y in range(op.n_ys)]
    for name, ys_type, lengths in zip(ys_names, ys_types, empty_row_lengths(op)):
        lines.append(Allocation(name, _empty_shape(ys_type, lengths, node.inputs, p), ys_type.dtype))
    if op.while_loop:
        lines.append(f"{p}done = 0")

    # The loop.
    order = f"range({p}n - 1, -1, -1)" if op.reverse else f"range({p}n)"
    step = f"{p}s"
    loop: list[str] = []
    # 0-d rows of sequences and 0-d per-step outputs (not also a carry's next value) are
    # plain scalars in a body of arrays: a 0-d array each step for each was allocated.
    carried = set(body.outputs[:nc])  # a carry's value is an array, whatever it is
    plain = {v for v in (*body.inputs[nc : nc + ns], *body.outputs[nc:]) if v not in carried}
    for name, sequence, param in zip(rows, sequences, body.inputs[nc : nc + ns]):
        if param.ndim == 0 and not scalar and param not in plain:  # passed on as a carry
            loop += [f"{name} = new_array((), {dtype_expression(param.dtype)})",
                     f"{name}[()] = {sequence}[{step}]"]
        else:
            loop.append(f"{name} = {sequence}[{step}]")
    names: dict[Variable, str] = dict(zip(body.inputs, (*carries, *rows, *shared)))
    if scalar:
        with sequential_code():
            loop += _scalar_block(body, names, module, f"{p}b_")
    else:
        labels = op.param_names(node.input_names)
        block = emit_block(body, names, module, f"{p}b_", plain_ends=plain, labels=labels)
        preallocated, block = _reuse_buffers(body, nc, names, block, step, f"{p}u")
        lines += preallocated
        loop += block
    results = [names[output] for output in body.outputs]
    next_values = [results[k] for k in range(nc)]
    loop += _carry_shape_checks(carries, next_values, body.outputs[:nc])  # before any write
    row = step if op.reverse else f"{step} + 1"
    for name, k in zip(trace_names, traced):
        slot = f"({row}) % {op.window(k)}" if op.window(k) else row
        loop += _write_row(name, slot, results[k], carry_types[k], scalar, f"{p}q")
    for y, (name, ys_type) in enumerate(zip(ys_names, ys_types)):
        value = results[nc + y]
        if ys_type.ndim and not ys_type.is_fully_static:
            first = f"{p}n - 1" if op.reverse else "0"
            loop += [
                f"if {step} == {first}:",
                f"    {name} = new_array(({p}n,) + {value}.shape, {dtype_expression(ys_type.dtype)})",
            ]
            loop += [
                f"if {value}.shape != {name}.shape[1:]:",
                f"    raise ValueError('Scan: per-step output {y} changed shape in a step; its "
                "rows must all have one shape')",
            ]
        plain_row = scalar or body.outputs[nc + y] in plain
        loop += _write_row(name, step, value, ys_type, plain_row, f"{p}q")
    if nc:  # one tuple assignment: a carry's next value may be another carry's current one
        loop.append(f"{''.join(c + ', ' for c in carries)}= {''.join(v + ', ' for v in next_values)}")
    if op.while_loop:
        stop = results[-1] + ("" if scalar or body.outputs[-1] in plain else "[()]")
        loop += [f"{p}done += 1", f"if {stop}:", "    break"]
    lines.append(f"for {step} in {order}:")
    in_step = _in_step(step, op.loop_name(node.input_names))
    lines += [f"    {in_step(line)}" for statement in loop for line in statement.splitlines()]

    # Outputs.
    outputs = op.split_outputs(node.outputs)
    for out, carry, carry_type in zip(outputs.finals, carries, carry_types):
        if carry_type.ndim == 0 and scalar:
            lines += [f"{out} = new_array((), {dtype_expression(carry_type.dtype)})",
                      f"{out}[()] = {carry}"]
        else:
            lines += fresh_copy(out, carry, carry_type, f"{p}f")
    for name, k in zip(trace_names, traced):
        out = f"{outputs.traces[k]}"
        if op.window(k):
            lines += _window_rows(out, name, op.window(k), carry_types[k], p)
        else:
            lines.append(f"{out} = {_executed_rows(op, name, p, boundary=True)}")
    for out, name in zip(outputs.ys, ys_names):
        lines.append(f"{out} = {_executed_rows(op, name, p, boundary=False)}")
    if outputs.executed is not None:
        lines += [f"{outputs.executed} = new_array((), np.int64)",
                  f"{outputs.executed}[()] = {p}done"]
    return lines


_RAISE = re.compile(r"(\s*raise \w+\()'((?:[^'\\]|\\.)*)'(.*)")
"""A raise statement of generated code: `raise E('message with {} slots', values...)`."""


def _in_step(step: str, loop_name: str) -> Callable[[str], str]:
    """The lines of a step with each raise saying which step of which loop, the step
    (`step`, the loop variable) passed as the value of a further `{}` slot."""
    context = f"in step {{}} of {message_text(loop_name)}: "

    def located(line: str) -> str:
        found = _RAISE.fullmatch(line)
        if found is None:
            return line
        start, message, rest = found.groups()
        return f"{start}'{context}{message}', {step}{rest}"

    return located


def _reuse_buffers(
    body: Graph, n_carries: int, names: dict[Variable, str], block: list[str], step: str,
    prefix: str,
) -> tuple[list[str], list[str]]:
    """Buffers allocated once per loop instead of every step.

    A value computed inside a step and dead at its end reuses one buffer. A buffer that
    a next carry is (or views) is still read during the following steps, for as long as
    the carries pass it on to each other (`Aliasing.steps_alive`: a carry swapped with
    another lives two steps), so it rotates through a ring of one slot more than that.
    A buffer the carries keep forever is allocated every step. Traces copy their rows
    out, and final values are copied, so no buffer escapes the loop.

    A value of static shape gets its buffer (ring) before the loop. One whose lengths
    are known only when it is computed gets an empty one of its rank there (so numba
    types it), allocated again in the step whose lengths differ from the buffer's: the
    first step, and in a loop whose lengths change from step to step, those steps (a
    ring given up that way stays alive for the carries still holding its slots)."""
    memory = Aliasing.of(body)
    allocations = {line.target: line for line in block if isinstance(line, Allocation)}
    before: list[str] = []
    replacements: dict[str, str] = {}  # per allocated name, the lines instead ("": none)
    for node in body.nodes:
        for output in node.outputs:
            allocation = allocations.get(names.get(output, ""))
            if allocation is None or not output.ndim:
                continue
            alive = memory.steps_alive(output, n_carries)
            if alive is None:
                continue
            name, number, dtype = allocation.target, len(replacements), output.dtype
            buffer = f"{prefix}{number}" if alive else name
            slots = f"{alive + 1}, " if alive else ""
            if output.type.is_fully_static:
                shape = "".join(f"{n}, " for n in output.type.shape)
                before.append(Allocation(buffer, f"({slots}{shape})", dtype))
                lines = []
            else:
                lengths = f"{prefix}{number}n"
                before.append(Allocation(buffer, f"({slots}{'0, ' * output.ndim})", dtype))
                buffer_lengths, shape = (
                    (f"{buffer}.shape[1:]", f"({slots}) + {lengths}") if alive
                    else (f"{buffer}.shape", lengths)
                )
                lines = [
                    f"{lengths} = {allocation.shape}",
                    f"if {buffer_lengths} != {lengths}:",
                    f"    {Allocation(buffer, shape, dtype)}",
                ]
            if alive:
                lines.append(f"{name} = {buffer}[{step} % {alive + 1}]")
            replacements[name] = "\n".join(lines)
    kept = [
        replacements.get(line.target, line) if isinstance(line, Allocation) else line
        for line in block
    ]
    return before, [line for line in kept if line]


def _carry_shape_checks(
    carries: list[str], next_values: list[str], results: tuple[Variable, ...]
) -> list[str]:
    """A carry keeps its initial value's shape, as `Scan.perform` checks: an array carry
    whose next value's type does not fix its shape is compared at every step."""
    lines: list[str] = []
    for number, (carry, value, result) in enumerate(zip(carries, next_values, results)):
        if result.ndim == 0 or result.type.is_fully_static:
            continue
        lines += [
            f"if {value}.shape != {carry}.shape:",
            f"    raise ValueError('Scan: carry {number} changed shape in a step; a carry "
            "keeps its initial value shape')",
        ]
    return lines


def _step_checks(op: Scan, p: str, sequences: tuple[tuple[int, str], ...],
                 may_be_negative: bool) -> list[str]:
    """Checks of the step count: not negative (unless it is a length), the loop's static
    count, and no fewer rows than steps in `sequences` (numbered among the loop's
    sequences: those that may have fewer, since a sequence whose length the count is
    read off has as many)."""
    lines: list[str] = []
    if may_be_negative:
        lines += [f"if {p}n < 0:",
                  "    raise ValueError('Scan: n_steps is negative; it must be >= 0')"]
    if op.length is not None:
        lines += [
            f"if {p}n != {op.length}:",
            f"    raise ValueError('Scan: n_steps differs from the {op.length} steps the loop "
            "was built for')",
        ]
    if len(sequences) == 1:
        (number, sequence), = sequences
        lines += [
            f"if {sequence}.shape[0] < {p}n:",
            f"    raise ValueError('Scan: sequence {{}} has fewer rows than n_steps', {number})",
        ]
    elif sequences:  # one raise for all (each raise costs numba compile time)
        rows = [f"{sequence}.shape[0], " for _, sequence in sequences]
        groups = ["(" + "".join(rows[k:k + PER_TUPLE]) + "), "
                  for k in range(0, len(rows), PER_TUPLE)]
        numbers = [number for number, _ in sequences]
        first = (f"{p}short" if numbers == list(range(len(numbers))) else
                 "(" + "".join(f"{number}, " for number in numbers) + f")[{p}short]")
        lines += [
            f"{p}short = first_below({p}n, ({''.join(groups)}))",
            f"if {p}short < {len(sequences)}:",
            f"    raise ValueError('Scan: sequence {{}} has fewer rows than n_steps', {first})",
        ]
    return lines


def _write_row(
    trace: str, row: str, value: str, row_type: TensorType, scalar: bool, counter: str
) -> list[str]:
    """`trace[row] = value` as explicit element loops: numba's setitem of an array into a
    slice is a broadcasting overload that costs about 1.8 s of compile time."""
    if row_type.ndim == 0:
        return [f"{trace}[{row}] = {value}" + ("" if scalar else "[()]")]
    return element_assignment(trace, value, value, row_type.ndim, counter, lead=row)


def _empty_shape(row: TensorType, lengths: tuple[RowLength, ...], inputs: Sequence[str], p: str) -> str:
    """The trace's shape before any step ran: n rows of the static row shape, or, when a
    row length is unknown, no rows of the shape `Scan.perform` gives after zero steps
    (`ops.loop_rows`: an outer input's length, else 0); the first step allocates it
    again with its rows' shape."""
    if row.is_fully_static:
        return "(" + "".join(f"{length}, " for length in (f"{p}n", *row.shape)) + ")"

    def written(length: RowLength) -> str:
        if isinstance(length, tuple):
            return f"{inputs[length[0]]}.shape[{length[1]}]"
        return str(length or 0)

    return "(0, " + "".join(f"{written(length)}, " for length in lengths) + ")"


def _window_rows(out: str, ring: str, window: int, row_type: TensorType, p: str) -> list[str]:
    """The last min(n + 1, window) boundary rows, in order, out of the ring of `window`
    slots where step t wrote slot (t + 1) % window (the initial value: slot 0)."""
    rows = f"{p}w{ring}"
    shape = f"({rows},)" + ("" if row_type.ndim == 0 else f" + {ring}.shape[1:]")
    lines = [f"{rows} = min({p}n + 1, {window})",
             Allocation(out, shape, row_type.dtype),
             f"for {p}i in range({rows}):"]
    source = f"{ring}[({p}n + 1 - {rows} + {p}i) % {window}]"
    lines += [f"    {line}" for line in _write_row(out, f"{p}i", source, row_type, True, f"{p}k")]
    return lines


def _executed_rows(op: Scan, name: str, p: str, boundary: bool) -> str:
    """A trace holds every step of a for-loop; a while-loop's only the executed ones (the
    top rows when it ran in reverse), plus the initial value's row for a carry."""
    if not op.while_loop:
        return name
    if op.reverse:
        return f"{name}[{p}n - {p}done:]"
    return f"{name}[:{p}done + 1]" if boundary else f"{name}[:{p}done]"


def _scalar_block(
    body: Graph, names: dict[Variable, str], module: ModuleBuilder, prefix: str
) -> list[str]:
    """A body of 0-d elementwise nodes as scalar statements (see `element_body`), each
    result cast to its dtype so a carry keeps one numba type across steps."""

    def scalar_of(variable: Variable) -> str:
        found = names.get(variable)
        if found is not None:
            return found
        if isinstance(variable, Constant):
            return f"{module.constant(variable, scope=prefix)}[()]"
        raise ValueError(f"{variable!r} is used before it is computed")

    lines: list[str] = []
    for number, node in enumerate(body.nodes):
        op = node.op
        if not isinstance(op, ElementwiseOp):
            raise TypeError(f"not a scalar body node: {op}")
        node_prefix = f"{prefix}n{number}_"
        info = NodeInfo(
            inputs=tuple(scalar_of(v) for v in node.inputs),
            outputs=tuple(f"{node_prefix}y{k}" for k in range(len(node.output_types))),
            input_types=tuple(v.type for v in node.inputs),
            output_types=node.output_types,
            prefix=node_prefix,
        )
        element = element_body(op, info, module)
        lines += [f"{scalar} = {source}" for scalar, source in zip(element.scalars, info.inputs)]
        lines += element.hoisted()
        lines += [f"{name} = {expression}" for name, expression in element.statements]
        for k, (value, output_type) in enumerate(zip(element.outputs, node.output_types)):
            lines.append(f"{node_prefix}y{k} = {dtype_expression(output_type.dtype)}({value})")
        names.update(zip(node.outputs, info.outputs))
    for output in body.outputs:
        names.setdefault(output, scalar_of(output))
    return lines
