"""Which `for` loops of a generated function become `element_nest` calls
(`numba_backend.nest_lowering`), and the helper defining each.

A loop qualifies when it is all element code: `for` over `range`, assignments to names
and to array elements, and expressions of names, numbers, operators, calls of global
functions and `x.shape[k]`; a loop holding anything else (a raise, a kernel call, an
array created or sliced) stays numba's, and the loops inside it are looked at in turn.
Its parameters are the function's names it reads; a name it assigns that the function
also uses outside the loop is carried: passed in (it must be assigned before the loop)
and returned. Names are looked up on the function's AST, so a word inside a message
never counts as a use.
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from collections.abc import Iterator, Sequence

from numba_backend.registry import ModuleBuilder

_ALLOWED = (
    ast.For, ast.Assign, ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.IfExp, ast.Call, ast.Subscript, ast.Attribute, ast.Tuple,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context,
)


def outline_nests(lines: Sequence[str], parameters: Sequence[str],
                  module: ModuleBuilder) -> list[str]:
    """`lines` (a function body, indented) with each qualifying loop nest replaced by a
    call of an `element_nest` helper, which `module` receives."""
    if not any(line.lstrip().startswith("for ") for line in lines):
        return list(lines)
    text = f"def f({', '.join(parameters)}):\n" + "\n".join(lines) + "\n"
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef)
    uses = _uses(function)
    counters = {node.target.id for node in ast.walk(function)
                if isinstance(node, ast.For) and isinstance(node.target, ast.Name)}
    local = set(parameters) | counters | {name for name, (stores, _) in uses.items() if stores}
    result = list(lines)
    for loop in reversed(list(_candidates(function.body, local))):
        call = _call(loop, lines, uses, set(parameters), local, module)
        if call is not None:
            start, end = loop.lineno - 2, (loop.end_lineno or loop.lineno) - 1
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            result[start:end] = [indent + call]
    return result


def _uses(function: ast.FunctionDef) -> dict[str, tuple[list[int], list[int]]]:
    """Per name, the lines storing it and the lines reading it, apart from loop counters
    within their loops: generated code reads a counter only inside its loop, so a nest's
    counter is its own even where a sibling loop counts with the same name."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    pending: list[tuple[ast.AST, frozenset[str]]] = [(function, frozenset())]
    while pending:
        node, counters = pending.pop()
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            inner = counters | {node.target.id}
            pending.append((node.iter, counters))
            pending.extend((child, inner) for child in [*node.body, *node.orelse])
            continue
        if isinstance(node, ast.Name) and node.id not in counters:
            stores, loads = found.setdefault(node.id, ([], []))
            (stores if isinstance(node.ctx, ast.Store) else loads).append(node.lineno)
        pending.extend((child, counters) for child in ast.iter_child_nodes(node))
    return found


def _candidates(body: Sequence[ast.stmt], local: set[str]) -> Iterator[ast.For]:
    """The outermost qualifying loops of `body`, looking inside loops that do not."""
    for statement in body:
        if isinstance(statement, ast.For):
            if _qualifies(statement, local):
                yield statement
            else:
                yield from _candidates(statement.body, local)
        elif isinstance(statement, ast.If):
            yield from _candidates(statement.body, local)
            yield from _candidates(statement.orelse, local)


def _qualifies(loop: ast.For, local: set[str]) -> bool:
    for node in ast.walk(loop):
        if not isinstance(node, _ALLOWED):
            return False
        match node:
            case ast.For(target=ast.Name(), iter=ast.Call(func=ast.Name(id="range"),
                                                          keywords=[]), orelse=[]):
                pass
            case ast.For():
                return False
            case ast.Assign(targets=[ast.Name() | ast.Subscript(value=ast.Name())]):
                pass
            case ast.Assign():
                return False
            case ast.Call(func=ast.Name(id=name)) if name in local:
                return False
            case ast.Attribute(value=ast.Name(id=name), attr=attribute) if (
                    name in local and attribute != "shape"):
                return False
            case ast.Call(keywords=[_, *_]):
                return False
            case ast.Subscript(value=ast.Name() | ast.Attribute(value=ast.Name(), attr="shape")):
                pass
            case ast.Subscript():
                return False
    return True


def _call(loop: ast.For, lines: Sequence[str], uses: dict[str, tuple[list[int], list[int]]],
          parameters: set[str], local: set[str], module: ModuleBuilder) -> str | None:
    """The statement calling `loop` as a nest (registering its helper), or None when a
    name it assigns escapes in a way a call cannot carry."""
    first, last = loop.lineno, loop.end_lineno or loop.lineno
    read: set[str] = set()
    stored: set[str] = set()
    counters = {node.target.id for node in ast.walk(loop)
                if isinstance(node, ast.For) and isinstance(node.target, ast.Name)}
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id in local and node.id not in counters:
            (stored if isinstance(node.ctx, ast.Store) else read).add(node.id)
    carried: list[str] = []
    for name in sorted(stored):
        stores, loads = uses[name]
        if all(first <= line <= last for line in stores + loads):
            continue
        if name not in parameters and not any(line < first for line in stores):
            return None
        carried.append(name)
    passed = sorted((read - stored) | set(carried))
    source = textwrap.dedent("\n".join(lines[first - 2:last - 1]))
    quotes = "'" * 3
    assert quotes not in source and "\\" not in source  # the subset holds no strings
    definition = (f"element_nest(globals(), {tuple(passed)!r}, {tuple(carried)!r}, {quotes}\n"
                  f"{source}\n{quotes})")
    name = "nest_" + hashlib.sha256(definition.encode()).hexdigest()[:16]
    module.helpers.setdefault(name, f"{name} = {definition}\n")
    call = f"{name}({', '.join(passed)})"
    if len(carried) == 1:
        return f"{carried[0]} = {call}"
    return "".join(f"{name}, " for name in carried) + f"= {call}" if carried else call
