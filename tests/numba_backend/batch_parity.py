"""Parity cases compiled a few at a time: each cold compile costs about half a second,
so a test module collects its cases into a `Batch`, compiles them in chunks (from a
module-scoped fixture) and checks each case's outputs against the reference evaluator.
Chunks stay small because numba's compile time grows superlinearly with the size of
the entry function (32 batched matmuls in one function: about 35 s; in chunks of 8: 8 s)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate, root_variables
from numba_backend import function

Array = np.ndarray[Any, np.dtype[Any]]


class Batch:
    """Cases under construction: named outputs over inputs with known test values."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.inputs: list[Variable] = []
        self.values: list[Array] = []
        self.outputs: list[Variable] = []
        self.names: list[str] = []

    def input(
        self, value: Array | Sequence[int], static: Sequence[int | None] | None = None,
        dtype: str = "float64",
    ) -> Variable:
        """An input whose test value is `value`, or random of shape `value` (a tuple);
        `static` is its static shape (the value's shape by default)."""
        if isinstance(value, np.ndarray):
            array = value
        elif dtype == "bool":
            array = self.rng.random(tuple(value)) < 0.5
        else:
            array = (self.rng.normal(size=tuple(value)) * 4).astype(dtype)
        variable = pt.tensor(
            f"in{len(self.inputs)}", dtype=array.dtype.name,
            shape=array.shape if static is None else tuple(static),
        )
        self.inputs.append(variable)
        self.values.append(array)
        return variable

    def case(self, name: str, output: Variable) -> None:
        self.names.append(name)
        self.outputs.append(output)

    def results(self, chunk: int = 8) -> dict[str, tuple[Array, Array]]:
        """Each case's (numba, reference) output, compiling `chunk` cases per function."""
        found: dict[str, tuple[Array, Array]] = {}
        for start in range(0, len(self.outputs), chunk):
            outputs = self.outputs[start : start + chunk]
            roots = set(root_variables(outputs))
            used = [(v, value) for v, value in zip(self.inputs, self.values) if v in roots]
            inputs = [variable for variable, _ in used]
            values = [value for _, value in used]
            check_graph(Graph(inputs, outputs))
            compiled: list[Array] = function(inputs, outputs, mode="none")(*values)
            expected = evaluate(outputs, dict(zip(inputs, values)))
            for name, got, want in zip(self.names[start:], compiled, expected):
                found[name] = (got, np.asarray(want))
        return found


def assert_same(got: Array, want: Array, rtol: float = 1e-7) -> None:
    """Equal dtype, shape and values (close for inexact dtypes)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if np.issubdtype(want.dtype, np.inexact):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)
