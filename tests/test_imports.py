"""Every module of the four packages imports as a program's first import, and all of them
import one after another in several orders: an import cycle that only works when some
other module happens to be imported first fails here, not in a user's script.

One subprocess does it all (a process per module would take minutes): before each
trial it forgets every module of the packages, so each trial starts as a fresh process
would, with only third-party modules (numpy, numba) kept.

Importing a submodule first starts by importing its package (Python imports `ops`
before `ops.sort_ops`, and returns `ops.sort_ops` as it is once `ops` has loaded it),
so the first-import trial of a module its package's own import loads runs exactly the
package's trial, statement for statement: each package's trial runs once and stands
for every module it loaded; the modules it did not load have trials of their own.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("fgraph", "ops", "rewrite", "numba_backend")

TRIALS = r"""
import importlib, json, random, sys, traceback
packages, modules = json.loads(sys.argv[1])

def forget():
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            del sys.modules[name]

def trial(order):
    forget()
    for name in order:
        try:
            importlib.import_module(name)
        except Exception:
            return f"{name} (after {order[:order.index(name)][-3:]}):\n{traceback.format_exc()}"
    return None

failures = []
# Each module first: a package's trial is the trial of every module it loads (importing
# `ops.x` first imports `ops` first and, where that loaded `ops.x`, runs nothing more).
loaded_by_package = set()
for package in packages:
    failures.append(trial([package]))
    loaded_by_package.update(name for name in sys.modules if name.split(".")[0] == package)
alone = [m for m in modules if m not in packages and m not in loaded_by_package]
failures += [trial([m]) for m in alone]
orders = [sorted(modules), sorted(modules, reverse=True)]
for seed in range(2):
    shuffled = list(modules)
    random.Random(seed).shuffle(shuffled)
    orders.append(shuffled)
failures += [trial(order) for order in orders]
print(json.dumps([[f for f in failures if f], sorted(loaded_by_package), alone]))
"""


def package_modules() -> list[str]:
    """Every module of the packages, by name, from the source files."""
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_imports_first_and_in_any_order() -> None:
    modules = package_modules()
    assert "ops.elemwise" in modules and "numba_backend" in modules
    result = subprocess.run(
        [sys.executable, "-c", TRIALS, json.dumps([PACKAGES, modules])],
        capture_output=True, text=True, cwd=ROOT, timeout=900, check=False,
    )
    assert result.returncode == 0, result.stderr
    failures, loaded_by_package, alone = json.loads(result.stdout.strip().splitlines()[-1])
    assert not failures, "\n".join(failures)
    # Every module had its first-import trial: its package's or its own.
    assert set(modules) <= set(PACKAGES) | set(loaded_by_package) | set(alone)


# -- imports at the top -----------------------------------------------------------------
# An import inside a function hides a dependency, usually one that would close a cycle:
# every module imports at its top (or, for annotations only, under `if TYPE_CHECKING:`),
# and a lower module that needs something of a higher one gets it through a hook the
# higher one fills (`ops.scan_op.LOOP_DELEGATES`, `ops.elemwise.REDUCTION_OPS`,
# `ops.dimshuffle.SHAPE_FUNCTIONS`). These are the imports left inside functions, each
# for its reason; a new one fails here until it is moved, or listed with its reason.
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("fgraph.dot", "graphviz"): "an optional dependency, needed only to render",
    ("fgraph.op", "fgraph.node"): "an op makes nodes and a node checks that it holds an Op",
    ("fgraph.variable", "fgraph.evaluation"): "the evaluator walks variables; eval is sugar",
    ("ops.lu", "scipy.linalg"): "start-up: SciPy would slow every `import ops`",
    ("ops.matrix_exponential", "scipy.linalg"): "start-up: as above",
    ("ops.solves", "scipy.linalg"): "start-up: as above",
    ("ops.special", "scipy.special"): "start-up: as above",
    ("ops.special_bessel", "scipy.special"): "start-up: as above",
    ("numba_backend.dask", "dask"): "an optional dependency, needed only by dask_function",
    ("numba_backend.dask", "dask.array"): "an optional dependency, as above",
}


def _sources() -> dict[str, ast.Module]:
    """Each module of the packages, by name, parsed."""
    trees = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            trees[name] = ast.parse(path.read_text(), str(path))
    return trees


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names (`from a import b`: `a`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or ""]


def _inner_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of each import inside a function or class body (a module's own
    statements, `if TYPE_CHECKING:` and `try:` blocks included, are its top)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside:
                found.extend((child.lineno, name) for name in _imported(child))
            scope = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            visit(child, inside or isinstance(child, scope))

    visit(tree, False)
    return found


def test_imports_are_at_the_top_but_the_listed_ones() -> None:
    found = {
        (module, name): line
        for module, tree in _sources().items()
        for line, name in _inner_imports(tree)
    }
    new = [f"{module}:{line} imports {name} inside a function"
           for (module, name), line in found.items() if (module, name) not in LAZY_IMPORTS]
    assert not new, "\n".join(new)
    gone = sorted(set(LAZY_IMPORTS) - set(found))
    assert not gone, f"listed in LAZY_IMPORTS but no longer imported inside a function: {gone}"


# -- cycles at the top ------------------------------------------------------------------
# Module-level imports that form a cycle work only because each module reads the other's
# names at call time; these are the ones the design has, each for its reason. A new one
# fails here: break it by moving code down (or up), or by a hook the higher module fills.
TOP_LEVEL_CYCLES: dict[frozenset[str], str] = {
    frozenset({"ops.scalar_ops", "ops.elemwise", "ops.elementwise_functions"}):
        "a scalar op's partials are elementwise graphs of scalar ops: ops.scalar_ops "
        "imports ops.elementwise_functions as a whole and reads it when differentiating",
    frozenset({"ops", "ops._methods"}):
        "the variables' methods look NumPy's ufuncs up among the package's functions, "
        "when called",
}


def _top_level_imports(tree: ast.Module, modules: set[str]) -> set[str]:
    """The package modules a module imports outside functions, classes and
    `if TYPE_CHECKING:` (`from a import b` names a.b when b is a module, else a)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name in modules)
            elif isinstance(child, ast.ImportFrom) and child.module:
                names = [f"{child.module}.{alias.name}" for alias in child.names]
                found.update(name for name in names if name in modules)
                if child.module in modules and any(name not in modules for name in names):
                    found.add(child.module)
            visit(child)

    visit(tree)
    return found


def _cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(edges[module]):
            if target not in index:
                connect(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for module in sorted(edges):
        if module not in index:
            connect(module)
    return found


def test_the_only_top_level_import_cycles_are_the_listed_ones() -> None:
    trees = _sources()
    edges = {module: _top_level_imports(tree, set(trees)) - {module} for module, tree in trees.items()}
    cycles = _cycles(edges)
    assert cycles == set(TOP_LEVEL_CYCLES), (
        f"new: {[sorted(c) for c in cycles - set(TOP_LEVEL_CYCLES)]}, "
        f"gone: {[sorted(c) for c in set(TOP_LEVEL_CYCLES) - cycles]}"
    )


# -- no submodule shadowed ----------------------------------------------------------------
def test_each_submodule_is_its_packages_attribute() -> None:
    """`import ops.sort_ops` then `ops.sort_ops` is that module: no package exports a
    function or class under the name of one of its modules (`numba_backend.function`
    was the function `function` even after importing the module of that name)."""
    shadowed = []
    for name in package_modules():
        module = importlib.import_module(name)
        parent, _, child = name.rpartition(".")
        if parent and getattr(sys.modules[parent], child, None) is not module:
            shadowed.append(f"{name}: {parent}.{child} is {getattr(sys.modules[parent], child)!r}")
    assert not shadowed, shadowed
