"""A `numba.prange` loop outlined into a helper function of its own, the one kind of
function numba compiles with its `parallel` options.

numba's parallel compilation runs its array analysis over the whole function, and that
analysis gets some shapes wrong: the length of a slice whose negative start reaches
past the array's start (`x[-5:]` of 3 elements came back as 2, and data with it), and
of an array reassigned inside a sequential loop (it kept its first definition's shape).
A generated function holds slices and loops of every kind, so with `parallel=True` a
graph's outputs could silently differ from the serial ones. Outlined, each parallel
loop is analysed alone: its arrays arrive as arguments, its only indexing is by loop
counters, and the function holding the graph's slices compiles serially.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from numba_backend.registry import ModuleBuilder
from numba_backend.source import LIBRARY_NAMES, RUNTIME_NAMES

_GLOBAL_NAMES = frozenset(LIBRARY_NAMES) | frozenset(RUNTIME_NAMES) | frozenset(dir(builtins))


def parallel_loop(loop: Sequence[str], module: ModuleBuilder) -> str:
    """The line calling a helper that runs `loop` (lines of one `for ... in
    numba.prange(...)` statement, unindented) with numba's parallel options. The
    helper takes, in name order, every local the loop reads but does not assign; the
    loop's results must be stores into arrays it reads (assigned names stay inside)."""
    text = "\n".join(loop)
    read: set[str] = set()
    assigned: set[str] = set()
    for name in ast.walk(ast.parse(text)):
        if isinstance(name, ast.Name):
            (read if isinstance(name.ctx, ast.Load) else assigned).add(name.id)
    arguments = sorted(read - assigned - _GLOBAL_NAMES - module.helpers.keys() - module.kernels.keys())
    indented = "".join(f"\n    {line}" for line in text.splitlines())
    helper = module.add_helper(f"def NAME({', '.join(arguments)}):{indented}", parallel=True)
    return f"{helper}({', '.join(arguments)})"
