"""Which runs of `for` loops of a generated function become `element_nest` calls
(`numba_backend.nest_lowering`), and the helper defining each.

A loop qualifies when it is all element code: `for` over `range`, assignments to names,
to array elements and of views, and expressions of names, numbers, operators, calls of
global functions and `x.shape[k]`; a loop holding anything else (a raise, a kernel call,
an array created) stays numba's, and the loops inside it are looked at in turn.
Consecutive qualifying loops make one run, with the reads of known scalars
(`ModuleBuilder.scalars`) and the views made among them (`numba_backend.nest_views`
first moves views next to the loops using them). Its parameters are the function's
names it reads; a name it assigns that the function also uses outside the run is a
result: carried (passed in too) when assigned before the run, computed when the run
assigns it outside its loops, and otherwise the run stays numba's. A view used outside
the run stays numba's and splits the run (made in a nest, it has no reference count,
so it must die with the nest). Names are looked up on the function's AST, so a word
inside a message never counts as a use.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from collections.abc import Iterator, Sequence

from numba_backend.nest_views import makes_view, parsed_body, placed_views
from numba_backend.registry import ModuleBuilder

_ALLOWED = (
    ast.For, ast.Assign, ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Call, ast.Subscript, ast.Attribute, ast.Tuple, ast.Slice,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context,
)


def outline_nests(lines: Sequence[str], parameters: Sequence[str],
                  module: ModuleBuilder) -> list[str]:
    """`lines` (a function body, indented, with its `return`: what it returns is used)
    with each qualifying run of statements (loop nests, with the reads of scalars they
    need, `module.scalars`, and the views only they use) replaced by a call of an
    `element_nest` helper, which `module` receives."""
    if not any(line.lstrip().startswith("for ") for line in lines):
        return list(lines)
    function = parsed_body(lines, parameters)
    placed = placed_views(function, lines, module.scalars)
    if placed is not None:
        lines = placed
        function = parsed_body(lines, parameters)
    uses, counters = _uses(function)
    local = set(parameters) | counters | {name for name, (stores, _) in uses.items() if stores}
    result = list(lines)
    runs = [(piece, per_step) for run, per_step in _runs(function.body, local, module.scalars)
            for piece in _pieces(run, uses, module.scalars)]
    for run, per_step in sorted(runs, key=lambda run: -run[0][0][0].lineno):
        call = _call(run, lines, uses, set(parameters), local, module, per_step)
        if call is not None:
            first, last = run[0][0], run[-1][0]
            start, end = first.lineno - 2, (last.end_lineno or last.lineno) - 1
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            result[start:end] = [indent + call]
    return result


def _uses(function: ast.FunctionDef) -> tuple[dict[str, tuple[list[int], list[int]]], set[str]]:
    """Per name, the lines storing it and the lines reading it, apart from loop counters
    within their loops (generated code reads a counter only inside its loop, so a nest's
    counter is its own even where a sibling loop counts with the same name); and the
    names of all loop counters."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    all_counters: set[str] = set()
    pending: list[tuple[ast.AST, frozenset[str]]] = [(function, frozenset())]
    while pending:
        node, counters = pending.pop()
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            all_counters.add(node.target.id)
            inner = counters | {node.target.id}
            pending.append((node.iter, counters))
            pending.extend((child, inner) for child in [*node.body, *node.orelse])
            continue
        if isinstance(node, ast.Name) and node.id not in counters:
            stores, loads = found.setdefault(node.id, ([], []))
            (stores if isinstance(node.ctx, ast.Store) else loads).append(node.lineno)
        pending.extend((child, counters) for child in ast.iter_child_nodes(node))
    return found, all_counters


Run = list[tuple[ast.stmt, list[ast.Name], set[str]]]
"""Statements of a run, each with the names it mentions and its loops' counters."""


def _runs(body: Sequence[ast.stmt], local: set[str], scalars: set[str],
          per_step: bool = False) -> Iterator[tuple[Run, bool]]:
    """The qualifying runs of `body`: consecutive qualifying loops, with the reads of
    known scalars among them, holding at least one loop; inside loops that do not
    qualify, their own runs. Each comes with whether it runs once per step of an
    enclosing loop (`per_step`)."""
    run: Run = []
    for statement in [*body, None]:
        found = None
        match statement:
            case ast.For():
                found = _element_names(statement, local)
            case ast.Assign(targets=[ast.Name(id=name)]) if name in scalars:
                found = _element_names(statement, local)
            case ast.Assign(targets=[ast.Name()], value=value) if makes_view(value):
                found = _element_names(statement, local)
        if statement is not None and found is not None:
            run.append((statement, *found))
            continue
        while run and not isinstance(run[-1][0], ast.For):
            run.pop()  # scalar reads after the last loop stay numba's
        if run:
            yield run, per_step
        run = []
        match statement:
            case ast.For():
                yield from _runs(statement.body, local, scalars, True)
            case ast.If():
                yield from _runs(statement.body, local, scalars, per_step)
                yield from _runs(statement.orelse, local, scalars, per_step)


def _pieces(run: Run, uses: dict[str, tuple[list[int], list[int]]], scalars: set[str]
            ) -> Iterator[Run]:
    """`run` split where a view it makes is also used outside it: a view made in a nest
    has no reference count, so it must die with the nest; that statement stays numba's
    and the statements around it make two runs (each ending with a loop)."""
    pending = [run]
    while pending:
        piece = pending.pop()
        while piece and not isinstance(piece[-1][0], ast.For):
            piece = piece[:-1]
        if not any(isinstance(statement, ast.For) for statement, _, _ in piece):
            continue
        first = piece[0][0].lineno
        last = piece[-1][0].end_lineno or piece[-1][0].lineno
        escaping = next((
            position for position, (statement, _, _) in enumerate(piece)
            if isinstance(statement, ast.Assign) and makes_view(statement.value)
            and isinstance(target := statement.targets[0], ast.Name)
            and target.id not in scalars
            and not all(first <= line <= last for line in sum(uses[target.id], []))
        ), None)
        if escaping is None:
            yield piece
        else:
            pending += [piece[:escaping], piece[escaping + 1:]]


def _element_names(statement: ast.stmt, local: set[str]
                    ) -> tuple[list[ast.Name], set[str]] | None:
    """The names `statement` mentions and its loops' counters, if it is all element code
    (else None)."""
    names: list[ast.Name] = []
    counters: set[str] = set()
    for node in ast.walk(statement):
        if not isinstance(node, _ALLOWED):
            return None
        match node:
            case ast.Name():
                names.append(node)
            case ast.For(target=ast.Name(id=counter), iter=ast.Call(
                    func=ast.Name(id="range"), keywords=[]), orelse=[]):
                counters.add(counter)
            case ast.For():
                return None
            case ast.Assign(targets=[ast.Name() | ast.Subscript(value=ast.Name())]):
                pass
            case ast.Assign():
                return None
            case ast.Call(func=ast.Name(id=name)) if name in local:
                return None
            case ast.Attribute(value=ast.Name(id=name), attr=attribute) if (
                    name in local and attribute != "shape"):
                return None
            case ast.Call(keywords=[_, *_]):
                return None
            case ast.Subscript(value=ast.Name() | ast.Attribute(value=ast.Name(), attr="shape")):
                pass
            case ast.Subscript():
                return None
    return names, counters


def _call(run: Run, lines: Sequence[str], uses: dict[str, tuple[list[int], list[int]]],
          parameters: set[str], local: set[str], module: ModuleBuilder,
          per_step: bool) -> str | None:
    """The statement calling `run` as a nest (registering its helper), or None when a
    name it assigns escapes in a way a call cannot carry (assigned only inside a loop,
    where it may never be, and read after the run). A nest run once per step of an
    enclosing loop (a loop body's) chooses libm or vecmath at run time
    (`nest_lowering.element_nest`'s `per_step`)."""
    statements = [statement for statement, _, _ in run]
    first, last = statements[0].lineno, statements[-1].end_lineno or statements[-1].lineno
    read: set[str] = set()
    stored: set[str] = set()
    counters = {counter for _, _, loops in run for counter in loops}
    for _, names, _ in run:
        for node in names:
            if node.id in local and node.id not in counters:
                (stored if isinstance(node.ctx, ast.Store) else read).add(node.id)
    always = {target.id for statement in statements if isinstance(statement, ast.Assign)
              for target in statement.targets if isinstance(target, ast.Name)}
    carried: list[str] = []
    results: list[str] = []
    for name in sorted(stored):
        stores, loads = uses[name]
        if all(first <= line <= last for line in stores + loads):
            continue
        if name in parameters or any(line < first for line in stores):
            carried.append(name)
        elif name not in always:
            return None
        results.append(name)
    passed = sorted((read - stored) | set(carried))
    source = textwrap.dedent("\n".join(lines[first - 2:last - 1]))
    quotes = "'" * 3
    assert quotes not in source and "\\" not in source  # the subset holds no strings
    step = ", per_step=True" if per_step else ""
    definition = (f"element_nest(globals(), {tuple(passed)!r}, {tuple(results)!r}, {quotes}\n"
                  f"{source}\n{quotes}{step})")
    name = "nest_" + hashlib.sha256(definition.encode()).hexdigest()[:16]
    module.helpers.setdefault(name, f"{name} = {definition}\n")
    call = f"{name}({', '.join(passed)})"
    if len(results) == 1:
        return f"{results[0]} = {call}"
    return "".join(f"{name}, " for name in results) + f"= {call}" if results else call
