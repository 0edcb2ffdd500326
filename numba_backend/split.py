"""A huge element body spread over helper functions, each run over blocks of elements.

numba's compile time grows superlinearly with the size of one function (its front end
types and lowers every statement; LLVM is a small part): the 3 346-statement body of
`benchmarks/bench_rewrite.py`'s graph took 41 s as one function, and takes 11-13 s cut
into helpers of 100 to 450 statements (flat in that range; 50 gave 22 s, since every
function also has a fixed cost). So a body of more than `SPLIT_ABOVE` statements is cut
into consecutive pieces of `PIECE`. Each helper call handles a
block of up to `BLOCK` elements of the innermost axis, so the call costs little per
element; values one piece computes and a later piece reads pass through per-dtype
scratch arrays of `BLOCK` columns (no full-size temporaries).

Each piece is an outlined kernel (`numba_backend.kernels.outlined_function`), called by
symbol: as a plain njit helper it was linked into the caller, whose LLVM optimized and
compiled every piece once more (the 5 004-op graph of `benchmarks/compile_models.py`:
the entry's own compile 1.45 s, now 0.5 s; the whole 5.0 s, now 3.5 s).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import attrs

from numba_backend.body import ElementBody, element_position
from numba_backend.kernels import outlined_function
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression
from numba_backend.scalar_ops import Operand

SPLIT_ABOVE = 600
"""Statements from which a body is split (below it, one function compiles as fast)."""
PIECE = 200
"""Statements per helper."""
BLOCK = 256
"""Elements of the innermost axis per helper call."""


@attrs.frozen
class Summation:
    """Add the elements up instead of storing them: `add(accumulator, term)` is the
    update line, `value` the element's value (in terms of `{prefix}y0`)."""

    accumulator: str
    value: str
    zero: str
    add: Callable[[str, str], str]


@attrs.frozen
class _Piece:
    statements: tuple[tuple[Operand, str], ...]
    reads: frozenset[str]
    """Names the piece reads (of statements, inputs and constants) but does not define."""


def should_split(body: ElementBody) -> bool:
    return len(body.statements) > SPLIT_ABOVE


def split_loop(
    node: NodeInfo,
    body: ElementBody,
    lengths: Sequence[str],
    module: ModuleBuilder,
    summation: Summation | None,
) -> list[str]:
    """Lines running `body` over the loop `lengths` through helpers: storing outputs
    into `node.outputs` (allocated by the caller), or adding them into
    `summation.accumulator`."""
    prefix = node.prefix
    name_pattern = re.compile(rf"\b{re.escape(prefix)}(?:t\d+|x\d+|s_[a-z]+\d*_\d+)\b")
    final_reads = set(body.outputs)
    pieces: list[_Piece] = []
    for start in range(0, len(body.statements), PIECE):
        statements = body.statements[start : start + PIECE]
        defined = {name for name, _ in statements}
        read = {used for _, text in statements for used in name_pattern.findall(text)}
        if start + PIECE >= len(body.statements):
            read |= final_reads
        pieces.append(_Piece(tuple(statements), frozenset(read - defined)))
    dtypes: dict[str, str] = {name: name.dtype for name, _ in body.statements}
    crossing = sorted(
        {name for piece in pieces for name in piece.reads if name in dtypes},
        key=lambda name: int(name[len(prefix) + 1 :]),
    )
    slots: dict[str, tuple[str, int]] = {}  # name -> (scratch array, row)
    rows: dict[str, int] = {}
    for name in crossing:
        dtype = dtypes[name]
        slots[name] = (f"{prefix}scratch_{dtype}", rows.get(dtype, 0))
        rows[dtype] = rows.get(dtype, 0) + 1
    rank = len(lengths)
    lines = [
        f"{prefix}scratch_{dtype} = new_array(({count}, {BLOCK}), {dtype_expression(dtype)})"
        for dtype, count in rows.items()
    ]
    calls: list[str] = []
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        name, arguments = _helper(node, body, piece, slots, rank, module, last, summation)
        call = f"{name}({', '.join(arguments)})"
        calls.append(summation.add(summation.accumulator, call) if last and summation else call)
    if not rank:
        return lines + calls
    inner = rank - 1
    block, end = f"{prefix}b", f"{prefix}e"
    indent = ""
    for axis in range(inner):
        lines.append(f"{indent}for {prefix}j{axis} in range({lengths[axis]}):")
        indent += "    "
    lines += [
        f"{indent}for {block} in range(0, {lengths[inner]}, {BLOCK}):",
        f"{indent}    {end} = min({block} + {BLOCK}, {lengths[inner]})",
    ]
    return lines + [f"{indent}    {call}" for call in calls]


def _helper(
    node: NodeInfo,
    body: ElementBody,
    piece: _Piece,
    slots: dict[str, tuple[str, int]],
    rank: int,
    module: ModuleBuilder,
    last: bool,
    summation: Summation | None,
) -> tuple[str, list[str]]:
    """Register the helper running `piece` over one block; its name and the arguments
    to call it with (the caller's own names, which the helper takes as parameters)."""
    prefix = node.prefix
    defined = {name for name, _ in piece.statements}
    later = [name for name in slots if name in defined]  # slot order: text fixed per graph
    index = "k" if rank else "0"
    loads = [
        f"{scalar} = {source}" if node.holds_scalar(k)
        else f"{scalar} = {source}[{element_position(node, k)}]"
        for k, (scalar, source) in enumerate(zip(body.scalars, node.inputs))
        if scalar in piece.reads
    ]
    constants = [(name, source) for name, source in body.constants if name in piece.reads]
    reads = [
        f"{name} = {slots[name][0]}[{slots[name][1]}, {index}]"
        for name in slots
        if name in piece.reads
    ]
    writes = [f"{slots[name][0]}[{slots[name][1]}, {index}] = {name}" for name in later]
    element = loads + reads + [f"{name} = {text}" for name, text in piece.statements] + writes
    inputs = zip(body.scalars, node.inputs)
    arguments = [source for scalar, source in inputs if scalar in piece.reads]
    arguments += [source.split("[")[0] for _, source in constants]
    arguments += sorted({slots[name][0] for name in slots if name in piece.reads or name in later})
    finish: list[str] = []
    if last:
        outputs = [f"{prefix}y{k} = {value}" for k, value in enumerate(body.outputs)]
        element += outputs
        if summation is None:
            target = ", ".join(f"{prefix}j{axis}" for axis in range(rank)) if rank else "()"
            element += [f"{out}[{target}] = {prefix}y{k}" for k, out in enumerate(node.outputs)]
            arguments += list(node.outputs)
        else:
            element.append(summation.add(f"{prefix}part", summation.value))
            finish = [f"return {prefix}part"]
    arguments = list(dict.fromkeys(arguments))  # an array read twice is passed once
    arguments += [f"{prefix}j{axis}" for axis in range(rank - 1)]
    header = [f"{name} = {source}" for name, source in constants]
    if summation is not None and last:
        header.append(f"{prefix}part = {summation.zero}")
    if rank:
        arguments += [f"{prefix}b", f"{prefix}e"]
        loop = [
            f"for k in range({prefix}e - {prefix}b):",
            f"    {prefix}j{rank - 1} = {prefix}b + k",
            *(f"    {line}" for line in element),
        ]
    else:
        loop = element
    inner = ModuleBuilder(module.parallel)
    inner.scalars.update(module.scalars)
    kernel = outlined_function(arguments, [f"    {line}" for line in header + loop + finish], inner)
    module.kernels[kernel.name] = kernel
    return kernel.name, arguments

