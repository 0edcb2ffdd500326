"""Putting a generated function's views next to the loops that use them, so that they
join the loops' element nest (`numba_backend.nests`).

A view numba makes (`v = x[s]`, `dimshuffled(x, 'x,0')`) costs a typing of the subscript
(12-18 ms of compile) and, each time it runs, an atomic increment and decrement of its
source's reference count, which in a loop body is every step. Made inside a nest, it is
a data pointer, lengths and strides in registers, with no reference count at all. But
generated code makes a view where its op comes, and the shape checks and allocations of
the ops after it read its lengths, so the view is rarely next to its loops and rarely
used by them alone. `placed_views` rewrites the function's source three ways, from one
parse of it:

- lengths forwarded: reads of a view's lengths after the statement making it are
  written as its source's (`v.shape[k]` as `x.shape[a]`, 1 for a new axis; `v.shape` as
  a tuple of those), until either name is assigned again; a length a slice clips is left;
- unused views dropped: a view nothing else reads is gone (making a view has no effect
  but the view);
- views moved to their use: a view moves down its block to just before the first
  statement mentioning it otherwise, past statements that assign none of the names it
  reads.

The function computes what it computed: a view is the same view wherever it is made
while its source is not assigned, and has the same lengths.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Sequence

VIEWS = ("dimshuffled", "with_layout_of")
"""The generated code's view intrinsics (`numba_backend.intrinsics`)."""

Lengths = tuple[str, str, Callable[[int], str | None], str | None]
"""A view's name, its source's name, the expression of its length along an axis (None
where a slice clips it) and the expression of its whole shape (None if not known)."""


def makes_view(value: ast.expr) -> bool:
    """Whether an assigned `value` is a view of an array (or an element read): basic
    indexing of a name, or a view intrinsic."""
    match value:
        case ast.Subscript(value=ast.Name()):
            return True
        case ast.Call(func=ast.Name(id=name)):
            return name in VIEWS
    return False


def parsed_body(lines: Sequence[str], parameters: Sequence[str]) -> ast.FunctionDef:
    """`lines` parsed as the body of a function of `parameters` (line L of the tree is
    `lines[L - 2]`)."""
    text = f"def f({', '.join(parameters)}):\n" + "\n".join(lines) + "\n"
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef)
    return function


def view_lengths(statement: ast.stmt, scalars: set[str]) -> Lengths | None:
    """What a one-line view statement `v = <view of x>` says of v's lengths; else None
    (also for a read of a known scalar: a name in `scalars`)."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id not in scalars
            and statement.lineno == statement.end_lineno):
        return None
    view = statement.targets[0].id
    match statement.value:
        case ast.Call(func=ast.Name(id="dimshuffled"),
                      args=[ast.Name(id=source), ast.Constant(value=str(order))]):
            named = order.split(",") if order else []
            axes = ["1" if part == "x" else f"{source}.shape[{part}]" for part in named]
            whole = "(" + "".join(f"{text}, " for text in axes) + ")"
            return view, source, lambda k: axes[k] if k < len(axes) else None, whole
        case ast.Call(func=ast.Name(id="with_layout_of"),
                      args=[ast.Subscript(value=ast.Name(id=source), slice=index),
                            ast.Name(id=same)]) if same == source:
            pass
        case ast.Subscript(value=ast.Name(id=source), slice=index):
            pass
        case _:
            return None
    explicit: list[str | None] = []  # the view's leading axes, up to the last indexed one
    axis = 0
    for part in index.elts if isinstance(index, ast.Tuple) else [index]:
        match part:
            case ast.Constant(value=None):
                explicit.append("1")
                continue
            case ast.Slice(lower=None, upper=None, step=None):
                explicit.append(f"{source}.shape[{axis}]")
            case ast.Slice():
                explicit.append(None)
        axis += 1
    rest = axis

    def length(k: int) -> str | None:
        return explicit[k] if k < len(explicit) else f"{source}.shape[{rest + k - len(explicit)}]"

    known = [text for text in explicit if text is not None]
    shape = None if len(known) < len(explicit) else (
        ("(" + "".join(f"{text}, " for text in known) + ") + " if known else "")
        + f"{source}.shape[{rest}:]")
    return view, source, length, shape


Read = tuple[ast.Name, int, int, int, int | None]
"""A one-line read of a name's lengths: the name's node, the line, the columns it spans,
and the axis (None for the whole shape)."""


class _Function:
    """One walk over a function: where each name is mentioned and assigned (lines), and
    its length reads."""

    def __init__(self, function: ast.FunctionDef):
        self.mentions: dict[str, list[tuple[int, int]]] = {}  # (line, node id), in order
        self.stores: dict[str, list[int]] = {}
        self.reads: dict[str, list[Read]] = {}
        indexed: set[int] = set()
        shapes: list[ast.Attribute] = []
        for node in ast.walk(function):
            match node:
                case ast.Name(id=name, ctx=context):
                    self.mentions.setdefault(name, []).append((node.lineno, id(node)))
                    if isinstance(context, ast.Store):
                        self.stores.setdefault(name, []).append(node.lineno)
                case ast.Subscript(value=ast.Attribute(value=ast.Name() as name_node,
                                                       attr="shape") as shape,
                                   slice=ast.Constant(value=int(axis))) if axis >= 0:
                    indexed.add(id(shape))
                    if node.lineno == node.end_lineno:
                        self.reads.setdefault(name_node.id, []).append(
                            (name_node, node.lineno, node.col_offset, node.end_col_offset or 0,
                             axis))
                case ast.Attribute(value=ast.Name(), attr="shape"):
                    shapes.append(node)
        for node in shapes:
            if id(node) not in indexed and node.lineno == node.end_lineno:
                assert isinstance(node.value, ast.Name)
                self.reads.setdefault(node.value.id, []).append(
                    (node.value, node.lineno, node.col_offset, node.end_col_offset or 0, None))
        for table in (self.mentions, self.stores):
            for found in table.values():
                found.sort()


def _first(lines: list[int], after: int, last: int) -> int | None:
    """The first of the sorted `lines` in (after, last], if any."""
    found = bisect.bisect_right(lines, after)
    return lines[found] if found < len(lines) and lines[found] <= last else None


def placed_views(function: ast.FunctionDef, lines: Sequence[str], scalars: set[str]
                 ) -> list[str] | None:
    """`lines` (a function body, `function` parsed) with its views' lengths forwarded,
    its unused views dropped and its views moved to their use (see the module's
    docstring); None if it has no views to place."""
    index = _Function(function)
    blocks: list[list[ast.stmt]] = []
    pending = [function.body]
    while pending:
        block = pending.pop()
        blocks.append(block)
        pending += [inner for statement in block if not _element_loop(statement)
                    for inner in (getattr(statement, "body", None),
                                  getattr(statement, "orelse", None))
                    if isinstance(inner, list) and inner]
    views = {id(statement): found for block in blocks for statement in block
             if (found := view_lengths(statement, scalars)) is not None}
    if not views:
        return None
    edits: list[tuple[int, int, int, str]] = []
    forwarded: set[int] = set()  # the name nodes of the length reads forwarded
    for block in blocks:
        last = block[-1].end_lineno or block[-1].lineno
        for position, statement in enumerate(block[:-1]):
            found = views.get(id(statement))
            if found is None or found[0] not in index.reads:
                continue
            view, source, length, shape = found
            stores = [line for name in (view, source)
                      if (line := _first(index.stores.get(name, []), statement.lineno, last))]
            end = min(stores, default=last + 1)  # forward reads before either is assigned
            start = _statement_start(block, end)  # not into the statement assigning them
            for node, line, begin, stop, axis in index.reads[view]:
                text = shape if axis is None else length(axis)
                if statement.lineno < line < start and text is not None:
                    edits.append((line - 2, begin, stop, text if axis is not None else f"({text})"))
                    forwarded.add(id(node))
    left = {name: sum(1 for _, node in found if node not in forwarded)
            for name, found in index.mentions.items()}  # mentions not forwarded
    dropped: set[int] = set()
    for block in blocks:
        unused = [id(statement) for statement in block if id(statement) in views
                  and left[views[id(statement)][0]] == 1]  # its own assignment alone
        dropped.update(unused[: len(block) - 1])  # a block keeps a statement
    result = list(lines)
    for line, begin, stop, text in sorted(edits, reverse=True):
        result[line] = result[line][:begin] + text + result[line][stop:]

    def ordered(block: list[ast.stmt]) -> list[int]:
        """Line indices of `block` with its views moved."""
        last = block[-1].end_lineno or block[-1].lineno
        starts = [statement.lineno for statement in block]
        targets: dict[int, int] = {}
        for position, statement in enumerate(block):
            found = views.get(id(statement))
            if found is None or id(statement) in dropped:
                continue
            assert isinstance(statement, ast.Assign)
            read = {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
            used = [line for line, node in index.mentions.get(found[0], [])
                    if node not in forwarded and statement.lineno < line <= last]
            limits = [line for name in read
                      if (line := _first(index.stores.get(name, []), statement.lineno, last))]
            if used and not any(line < used[0] for line in limits):
                target = bisect.bisect_right(starts, used[0]) - 1
                if target > position + 1:
                    targets[position] = target
        placed: dict[int, list[int]] = {}
        for position, target in targets.items():
            if target not in targets:  # a view moving before another one that moves stays
                placed.setdefault(target, []).append(position)
        order: list[int] = []
        for position, statement in enumerate(block):
            for moved in placed.get(position, []):
                order += _lines_of(block[moved], ordered)
            if id(statement) not in dropped and (
                    position not in targets or targets[position] in targets):
                order += _lines_of(statement, ordered)
        return order

    return [result[line] for line in ordered(function.body)]


def _element_loop(statement: ast.stmt) -> bool:
    """Whether `statement` is a loop of assignments and loops only: its element reads
    are where they belong already (inside what will be a nest)."""
    pending = [statement]
    while pending:
        match pending.pop():
            case ast.For(body=body, orelse=[]):
                pending += body
            case ast.Assign():
                pass
            case _:
                return False
    return isinstance(statement, ast.For)


def _statement_start(block: list[ast.stmt], line: int) -> int:
    """The first line of the statement of `block` holding `line` (past its end: `line`)."""
    for statement in block:
        if statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            return statement.lineno
    return line


def _lines_of(statement: ast.stmt, ordered: Callable[[list[ast.stmt]], list[int]]) -> list[int]:
    """The indices of `statement`'s lines, its blocks' statements in the order `ordered`
    gives them."""
    result: list[int] = []
    cursor = statement.lineno - 2
    for block in (getattr(statement, "body", None), getattr(statement, "orelse", None)):
        if isinstance(block, list) and block:
            start, end = block[0].lineno - 2, (block[-1].end_lineno or block[-1].lineno) - 1
            result += list(range(cursor, start)) + ordered(block)
            cursor = end
    return result + list(range(cursor, (statement.end_lineno or statement.lineno) - 1))
