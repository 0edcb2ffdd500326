"""Huge element bodies are spread over helpers run on blocks of elements (`split`):
values equal the reference evaluator's for every loop shape, with values crossing
helpers of several dtypes, outputs defined in any piece, sums and inplace outputs.

The thresholds are lowered so that small graphs take the split path (and compile fast);
each test builds graphs of its own, so no dispatcher compiled unsplit is reused."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import function, split
from numba_backend.codegen import generate
from rewrite import optimize

Array = np.ndarray[Any, np.dtype[Any]]
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "SPLIT_ABOVE", 6)
    monkeypatch.setattr(split, "PIECE", 4)
    monkeypatch.setattr(split, "BLOCK", 8)


def _chain(x: Variable, y: Variable, salt: float) -> tuple[Variable, Variable]:
    """Two outputs: one from the first statements, one from the last; a bool and an
    int value cross pieces."""
    early = pt.exp(x * salt)
    positive = x > y
    counted = pt.cast(positive, "int32") * 3
    acc = early
    for step in range(6):
        acc = pt.sin(acc * (0.5 + step / 10)) + y
    late = pt.where(positive, acc, -acc) + pt.cast(counted, "float64")
    return early, late


def _static(shape: tuple[int, ...]) -> tuple[int | None, ...]:
    """Static shape: lengths of 1 known (they broadcast), others unknown."""
    return tuple(1 if length == 1 else None for length in shape)


@pytest.mark.parametrize(
    ("x_shape", "y_shape"),
    [((), ()), ((37,), (37,)), ((5, 19), (1, 19)), ((3, 1, 17), (3, 4, 17))],
)
def test_split_loops_match_the_reference(
    x_shape: tuple[int, ...], y_shape: tuple[int, ...]
) -> None:
    x = pt.tensor("x", shape=_static(x_shape))
    y = pt.tensor("y", shape=_static(y_shape))
    early, late = _chain(x, y, 0.3 + len(x_shape))
    compiled = function([x, y], [early, late, late.sum()])
    assert "def k_" in compiled.source  # the split path was taken
    rng = np.random.default_rng(len(x_shape))
    values = [rng.normal(size=x_shape), rng.normal(size=y_shape)]
    wanted = evaluate([early, late, late.sum()], dict(zip([x, y], values)))
    for got, expected in zip(compiled(*values), wanted):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_split_summed_loop_and_inplace_output() -> None:
    x = pt.vector("x")
    _, late = _chain(x, pt.exp(x), 1.7)
    total = function([x], late.sum())
    doubled = function([x], late * 2)  # inplace: written into a temporary's buffer
    values = np.linspace(-1.0, 1.0, 1001)
    (wanted,) = evaluate([late], {x: values})
    np.testing.assert_allclose(total(values), wanted.sum(), rtol=1e-12)
    np.testing.assert_allclose(doubled(values), wanted * 2, rtol=1e-12)


SPLIT_SOURCE_SCRIPT = """
import hashlib
import ops as pt
from fgraph import Graph
from numba_backend import split
from numba_backend.codegen import generate
from rewrite import optimize
from tests.numba_backend.test_split import _chain
split.SPLIT_ABOVE, split.PIECE, split.BLOCK = 6, 4, 8
x, y = pt.vector("x"), pt.vector("y")
graph = optimize(Graph([x, y], list(_chain(x, y, 0.3))), "fast_run")
generated = generate(graph, False)
assert generated.kernels
print(hashlib.sha256(generated.text.encode()).hexdigest())
"""


def test_split_source_is_the_same_under_every_hash_seed() -> None:
    """The module text names the on-disk cache entry and is checked byte for byte when
    loaded: text that varied with the hash seed made a second process rewrite the module
    and recompile it (values crossing helpers were stored in set order)."""
    digests = set()
    for seed in ("0", "1", "2", "3", "4242"):
        completed = subprocess.run(
            [sys.executable, "-c", SPLIT_SOURCE_SCRIPT],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(completed.stdout.strip())
    assert len(digests) == 1


def test_split_pieces_are_kernels_called_by_symbol() -> None:
    """Each piece is an outlined kernel in a module of its own (`kernels`), which the
    entry calls by symbol: a plain njit helper was linked into the entry, whose LLVM
    then optimized and compiled every piece a second time (the 5 004-op graph: 1.0 s of
    its 4.3 s cold compile)."""
    x, y = pt.vector("x"), pt.vector("y")
    graph = optimize(Graph([x, y], list(_chain(x, y, 0.7))), "fast_run")
    generated = generate(graph, False)
    assert len(generated.kernels) >= 3
    assert generated.source.count("@numba.njit") == 1  # the entry alone
    for kernel in generated.kernels:
        assert f"import {kernel.name}\n" in generated.source
        assert f"def {kernel.name}_code(" in kernel.source
        assert kernel.source.count("@numba.njit") == 1
        assert len(re.findall(rf"\b{kernel.name}\(", generated.source)) == 1
