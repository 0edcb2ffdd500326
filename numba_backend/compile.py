"""`function(inputs, outputs)`: the numba backend's entry point. It widens float16
(`numba_backend.float16`), optimizes the graph with the rewrite pipeline of its mode and
compiles it (`numba_backend.compiled_function`), or, with `specialize_shapes=True`,
returns a function that does so for each new set of argument shapes
(`numba_backend.specialize`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

from fgraph import Graph, Variable
from fgraph.op import Array
from numba_backend.collection import fewer_collections
from numba_backend.compiled_function import CompiledFunction, from_optimized
from numba_backend.float16 import widened
from numba_backend.specialize import ShapeSpecializedFunction
from numba_backend.threads import checked_threads
from rewrite import optimize
from rewrite.pipelines import pipeline_named


@overload
def function(
    inputs: Sequence[Variable],
    outputs: Variable,
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
    specialize_shapes: Literal[False] = ...,
) -> CompiledFunction[Array]: ...
@overload
def function(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
    specialize_shapes: Literal[False] = ...,
) -> CompiledFunction[list[Array]]: ...
@overload
def function(
    inputs: Sequence[Variable],
    outputs: Variable,
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
    specialize_shapes: Literal[True],
) -> ShapeSpecializedFunction[Array]: ...
@overload
def function(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
    specialize_shapes: Literal[True],
) -> ShapeSpecializedFunction[list[Array]]: ...


def function(
    inputs: Sequence[Variable],
    outputs: Variable | Sequence[Variable],
    mode: str = "fast_run",
    *,
    parallel: bool = False,
    threads: int | None = None,
    specialize_shapes: bool = False,
) -> CompiledFunction[Any] | ShapeSpecializedFunction[Any]:
    """Compile `outputs` as a function of `inputs` with the rewrite pipeline `mode`.

    A single output variable gives a function returning one array; a list of outputs
    gives a function returning a list. Inputs the outputs do not use are still checked.

    `parallel=True` runs elementwise loops over at least `loops.PARALLEL_MIN_SIZE`
    elements on all of numba's threads (smaller ones stay serial, with no thread
    launch). It pays on large arrays with costly elements; it adds compile time (numba
    compiles each parallel loop as a function of its own).

    Threads: by default a matrix product or LAPACK call of fewer than 2^30 multiply-adds
    runs on one BLAS thread (on a machine with a busy core a second thread stalls it,
    and quiet it gains little at such sizes); larger ones use OpenBLAS's thread count
    (`OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`, `threadpoolctl`), and parallel loops
    numba's (`NUMBA_NUM_THREADS`). `threads=n` lets each call use at most `n` threads,
    for every call OpenBLAS would split (and, with `parallel=True`, for its loops),
    within the counts those settings allow: `threads=1` runs the whole call on one
    thread. See `numba_backend.threads`.

    `specialize_shapes=True` compiles nothing yet: each call compiles the graph for its
    arguments' shapes, as if the inputs had been declared with them (loop bodies
    included), the first time it sees them, and calls that code for later arguments of
    the same shapes (`numba_backend.specialize.ShapeSpecializedFunction`). A graph of
    unknown lengths then runs at static-shape speed (the 3-state HMM forward algorithm
    and gradient: 1.31x faster), at the cost of a compile per new set of shapes.
    """
    threads = checked_threads(threads)
    single = isinstance(outputs, Variable)
    given = Graph(inputs, [outputs] if isinstance(outputs, Variable) else list(outputs))
    graph, float16_outputs = widened(given)
    if specialize_shapes:
        pipeline_named(mode)  # an unknown mode fails now, not at the first call
        return ShapeSpecializedFunction(graph.inputs, graph, mode, single, parallel, threads,
                                        float16_outputs)
    with fewer_collections():
        return from_optimized(optimize(graph, mode), single, parallel, threads, float16_outputs)
