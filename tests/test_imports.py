"""Every module of the four packages imports as a program's first import, and all of them
import one after another in several orders: an import cycle that only works when some
other module happens to be imported first fails here, not in a user's script.

One subprocess does it all (a process per module would take minutes): before each
trial it forgets every module of the packages, so each trial starts as a fresh process
would, with only third-party modules (numpy, numba) kept.
"""

from __future__ import annotations

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

orders = [[m] for m in modules]
orders += [sorted(modules), sorted(modules, reverse=True)]
for seed in range(2):
    shuffled = list(modules)
    random.Random(seed).shuffle(shuffled)
    orders.append(shuffled)
failures = [f for f in map(trial, orders) if f]
print(json.dumps(failures))
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
    failures = json.loads(result.stdout.strip().splitlines()[-1])
    assert not failures, "\n".join(failures)
