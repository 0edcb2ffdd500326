"""`dask_function`: a compiled graph run over data split into chunks of rows, on Dask.

The graph is optimized once and split at build time (`numba_backend.data_split`).
Then, for each level of its reductions over the data axis:
- the work on rows is one compiled function, run per chunk as a Dask task; it computes
  each reduction's value on its chunk;
- the values combine across chunks (sums add, maxima take the maximum, lengths add);
- the combined values feed the next level.
A last compiled function computes the outputs that are the same for the whole data set
from the combined values. Outputs that keep the data axis stay chunked Dask arrays.

Everything is lazy: the callable returns Dask objects and `dask.compute(*f(...))`
evaluates them, on whatever scheduler is active. To use a cluster, create
`distributed.Client(address)` first. Compiled functions travel to the workers by pickle,
as their optimized graphs. A worker loads the generated module from fgraph's
digest-keyed cache, or generates it; it never optimizes again. A task that is lost with
its worker is rerun by Dask, and the tasks are pure, so the answer is unchanged.

Each compiled function runs on one thread (`threads=1`, carried through the pickle):
Dask runs chunks in parallel already, and with two worker processes per machine a
worker's second BLAS thread would wait for a core the other worker holds (see
`numba_backend.threads`). `distributed`'s nanny starts its workers with
`OPENBLAS_NUM_THREADS=1` too; this also covers the threaded scheduler and workers
started otherwise.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fgraph import Graph, Input, Variable
from numba_backend.data_split import (
    Boundary,
    Combine,
    Global,
    Rows,
    SplitGraph,
    UnsplittableGraphError,
    rebuilt,
    split,
)
from numba_backend.compile import function
from numba_backend.compiled_function import CompiledFunction
from rewrite import optimize

__all__ = ["DaskFunction", "UnsplittableGraphError", "dask_function"]

Array = np.ndarray[Any, np.dtype[Any]]
def combine(how: Combine, data_axis: int, partials: Sequence[Array]) -> Array:
    """One boundary's value on the whole data set from its values on the chunks."""
    if how == "first":
        return partials[0]
    if how == "shape":
        shape = np.array(partials[0], copy=True)
        shape[data_axis] = sum(int(p[data_axis]) for p in partials)
        return shape
    assert isinstance(how, np.ufunc)
    return np.asarray(functools.reduce(how, partials))


class DaskFunction:
    """The callable `dask_function` returns: the per-level chunk functions, the final
    function, and how arguments map onto them."""

    def __init__(
        self, graph: Graph, plan: SplitGraph, data_axes: Mapping[Variable, int],
        level_functions: Sequence[tuple[CompiledFunction[Any], tuple[Boundary, ...], tuple[int, ...]]],
        final: CompiledFunction[Any] | None, global_outputs: tuple[int, ...],
    ) -> None:
        self.graph = graph
        self.plan = plan
        self.data_axes = dict(data_axes)
        self.level_functions = tuple(level_functions)
        self.final = final
        self.global_outputs = global_outputs

    def __call__(self, *arguments: Any) -> list[Any]:
        import dask
        import dask.array as da

        inputs = self.graph.inputs
        if len(arguments) != len(inputs):
            raise TypeError(f"dask_function: expected {len(inputs)} arguments, got {len(arguments)}")
        blocks, lengths = self._blocks(arguments)
        whole = [argument if variable not in self.data_axes else None
                 for variable, argument in zip(inputs, arguments)]
        combined: dict[Input, Any] = {}
        results: list[Any] = [None] * len(self.graph.outputs)
        for level, (compiled, boundaries, rows_outputs) in enumerate(self.level_functions):
            task = dask.delayed(compiled)
            known = [combined[b.placeholder] for b in self._below(level)]
            per_chunk = [
                task(*[block if block is not None else value for block, value in zip(chunk, whole)],
                     *known)
                for chunk in blocks
            ]
            for number, boundary in enumerate(boundaries):
                partials = [dask.delayed(operator.getitem)(p, number) for p in per_chunk]
                combined[boundary.placeholder] = dask.delayed(combine)(
                    boundary.combine, boundary.data_axis, partials)
            for offset, output_number in enumerate(rows_outputs, start=len(boundaries)):
                results[output_number] = self._rows_output(per_chunk, offset, output_number, lengths)
        if self.final is not None:
            every = [combined[b.placeholder] for b in self.plan.boundaries]
            globals_ = [a for v, a in zip(inputs, arguments) if v not in self.data_axes]
            final = dask.delayed(self.final)(*globals_, *every)
            for index, output_number in enumerate(self.global_outputs):
                output = self.graph.outputs[output_number]
                # Dask arrays for every output (lengths unknown at build time are nan):
                # dask.compute orders mixed collections by type, not as given.
                shape = tuple(np.nan if n is None else n for n in output.type.shape)
                results[output_number] = da.from_delayed(
                    dask.delayed(operator.getitem)(final, index), shape=shape, dtype=output.dtype)
        return results

    def _below(self, level: int) -> list[Boundary]:
        return [b for b in self.plan.boundaries if b.level < level]

    def _blocks(self, arguments: Sequence[Any]) -> tuple[list[list[Any]], list[int]]:
        """Per chunk, each chunked argument's block (None for the others), and the chunks'
        lengths along the data axis: every chunked argument is rechunked to the first
        one's chunks there and to one chunk along its other axes."""
        import dask.array as da

        chunked = [
            (k, self.data_axes[v]) for k, v in enumerate(self.graph.inputs) if v in self.data_axes
        ]
        first_index, first_axis = chunked[0]
        first = da.asarray(arguments[first_index])
        lengths = [int(n) for n in first.chunks[first_axis]]
        per_input: dict[int, list[Any]] = {}
        for k, axis in chunked:
            array = da.asarray(arguments[k])
            if array.shape[axis] != sum(lengths):
                raise ValueError(
                    f"dask_function: {self.graph.inputs[k]} has {array.shape[axis]} rows along its data "
                    f"axis, the first chunked argument {sum(lengths)}"
                )
            layout = {axis: tuple(lengths), **{a: -1 for a in range(array.ndim) if a != axis}}
            per_input[k] = list(array.rechunk(layout).to_delayed().ravel())
        blocks = [[per_input[k][i] if k in per_input else None for k in range(len(arguments))]
                  for i in range(len(lengths))]
        return blocks, lengths

    def _rows_output(
        self, per_chunk: list[Any], offset: int, output_number: int, lengths: list[int]
    ) -> Any:
        import dask
        import dask.array as da

        output = self.graph.outputs[output_number]
        kind = self.plan.output_kinds[output_number]
        assert isinstance(kind, Rows)
        pieces = []
        for task, length in zip(per_chunk, lengths):
            shape = tuple(
                length if axis == kind.axis else (n if n is not None else np.nan)
                for axis, n in enumerate(output.type.shape)
            )
            pieces.append(da.from_delayed(dask.delayed(operator.getitem)(task, offset), shape=shape,
                                          dtype=output.dtype))
        return da.concatenate(pieces, axis=kind.axis, allow_unknown_chunksizes=True)


def _require_dask() -> None:
    try:
        import dask.array  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "dask_function needs Dask: install the `dask` extra (pip install -e '.[dask]')"
        ) from error


def dask_function(
    inputs: Sequence[Variable], outputs: Sequence[Variable], chunked: Mapping[Variable, int],
    mode: str = "fast_run",
) -> DaskFunction:
    """Compile `outputs` of `inputs` to run over data split along a data axis: `chunked`
    maps each input split into chunks of rows to its data axis. The callable takes Dask
    arrays for those (NumPy arrays too) and NumPy arrays for the rest, and returns lazy
    Dask objects: chunked Dask arrays for outputs that keep the data axis, combined
    values for reductions over it. A graph that cannot be split raises
    `UnsplittableGraphError` naming the node."""
    _require_dask()
    if not chunked:
        raise ValueError("dask_function: name at least one chunked input and its data axis")
    for variable, axis in chunked.items():
        if variable not in inputs:
            raise ValueError(f"dask_function: the chunked variable {variable} is not an input")
        if not 0 <= axis < variable.ndim:
            raise ValueError(f"dask_function: data axis {axis} is out of range for {variable.type}")
    graph = optimize(Graph(inputs, list(outputs)), mode)
    data_axes = {v: chunked[v] for v in graph.inputs if v in chunked}
    plan = split(graph, data_axes)
    placeholders: dict[Variable, Variable] = {b.node.outputs[0]: b.placeholder for b in plan.boundaries}
    rows_levels = {k: kind.level for k, kind in enumerate(plan.output_kinds) if isinstance(kind, Rows)}
    levels = max(plan.levels, 1 + max(rows_levels.values(), default=-1))
    level_functions = []
    for level in range(levels):
        boundaries = tuple(b for b in plan.boundaries if b.level == level)
        known: dict[Variable, Variable] = {
            b.node.outputs[0]: b.placeholder for b in plan.boundaries if b.level < level
        }
        partials = [b.node.op.with_destroy_map(()).apply(*rebuilt(b.node.inputs, known))[0]
                    for b in boundaries]
        rows_outputs = tuple(k for k, lvl in rows_levels.items() if lvl == level)
        values = rebuilt([graph.outputs[k] for k in rows_outputs], known)
        compiled = function(
            [*graph.inputs, *known.values()], [*partials, *values], mode, threads=1
        )
        level_functions.append((compiled, boundaries, rows_outputs))
    global_outputs = tuple(k for k, kind in enumerate(plan.output_kinds) if isinstance(kind, Global))
    final = None
    if global_outputs:
        finals = rebuilt([graph.outputs[k] for k in global_outputs], placeholders)
        unchunked = [v for v in graph.inputs if v not in data_axes]
        final = function([*unchunked, *placeholders.values()], finals, mode, threads=1)
    return DaskFunction(graph, plan, data_axes, level_functions, final, global_outputs)
