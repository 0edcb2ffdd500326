"""`function`: optimize a graph, generate its module, compile it with numba, and wrap it
in a callable that checks its arguments and never hands out aliased arrays."""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any, Generic, TypeVar, cast, overload

import attrs
import numba
import numpy as np
from numba.core.errors import NumbaError

from fgraph import Graph, Variable, display_name
from fgraph.aliasing import Aliasing
from fgraph.op import Array, inner_graphs_of
from numba_backend.cache import load_module
from numba_backend.codegen import GeneratedModule, generate
from numba_backend.threads import checked_threads, limited_call

_compiled_lock = threading.Lock()
_compiled: dict[tuple[str, bool], numba.Dispatcher] = {}
"""Dispatchers by (structure digest, parallel)."""


Result = TypeVar("Result", covariant=True)
"""What a call returns: one array (`function(inputs, output)`) or a list of them."""


@attrs.frozen(eq=False, repr=False)
class CompiledFunction(Generic[Result]):
    """A compiled graph: call it with one array per input.

    Arguments are converted to the input types (safe casts only) with errors naming the
    input; outputs are fresh arrays (never a caller's array, a constant, or another
    output). `graph` is the optimized graph that was compiled, `source` the generated code
    (the modules of the kernels it calls, then its own). `threads`: the most threads a
    call uses (None: as `function` describes).
    """

    inputs: tuple[Variable, ...]
    graph: Graph
    source: str
    single_output: bool
    parallel: bool
    threads: int | None
    _dispatcher: numba.Dispatcher
    _constants: tuple[Array, ...]
    _may_alias: tuple[bool, ...]
    """Per output, whether it may share memory with an argument, a constant or another
    output (decided from the graph once, so the call checks only those)."""

    def __call__(self, *arguments: Any) -> Result:
        if len(arguments) != len(self.inputs):
            names = ", ".join(display_name(variable) for variable in self.inputs)
            raise TypeError(
                f"expected {len(self.inputs)} arguments ({names}), got {len(arguments)}"
            )
        arrays = tuple(map(_argument, self.inputs, arguments))
        try:
            if self.threads is None:
                results: tuple[Array, ...] = self._dispatcher(*arrays, *self._constants)
            else:
                results = limited_call(
                    self.threads, self.parallel, self._dispatcher, *arrays, *self._constants
                )
        except (ValueError, IndexError) as error:
            raise _formatted(error) from None
        if any(self._may_alias):
            outputs = _unaliased(results, (*arrays, *self._constants), self._may_alias)
        else:
            outputs = list(results)
        result: Any = outputs[0] if self.single_output else outputs
        return cast(Result, result)

    def __reduce__(self) -> tuple[object, ...]:
        return (_from_optimized, (self.graph, self.single_output, self.parallel, self.threads))

    def __repr__(self) -> str:
        return f"CompiledFunction({self.graph!r})"


@overload
def function(
    inputs: Sequence[Variable],
    outputs: Variable,
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
) -> CompiledFunction[Array]: ...
@overload
def function(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    mode: str = ...,
    *,
    parallel: bool = ...,
    threads: int | None = ...,
) -> CompiledFunction[list[Array]]: ...


def function(
    inputs: Sequence[Variable],
    outputs: Variable | Sequence[Variable],
    mode: str = "fast_run",
    *,
    parallel: bool = False,
    threads: int | None = None,
) -> CompiledFunction[Any]:
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
    """
    from rewrite import optimize

    threads = checked_threads(threads)
    single = isinstance(outputs, Variable)
    graph = Graph(inputs, [outputs] if isinstance(outputs, Variable) else list(outputs))
    return _from_optimized(optimize(graph, mode), single, parallel, threads)


def _from_optimized(
    graph: Graph, single_output: bool, parallel: bool, threads: int | None
) -> CompiledFunction[Any]:
    _check_compilable_dtypes(graph)
    generated = generate(graph, parallel)  # cheap; its constants are this graph's own
    dispatcher = _compile(graph, generated, parallel)
    return CompiledFunction(
        graph.inputs,
        graph,
        generated.text,
        single_output,
        parallel,
        threads,
        dispatcher,
        generated.constants,
        may_alias(graph),
    )


def _check_compilable_dtypes(graph: Graph) -> None:
    """numba has no float16 arithmetic on the CPU: say so, naming the variable, rather
    than let numba fail with a bare `NotImplementedError: float16`."""
    pending = [graph]
    while pending:  # inner graphs too: a fused body may compute in float16 (exp of int8)
        current = pending.pop()
        variables = [*current.inputs, *(out for node in current.nodes for out in node.outputs)]
        for variable in variables:
            if variable.dtype == "float16":
                where = "" if current is graph else " inside a fused or inner graph"
                raise TypeError(
                    f"numba cannot compile float16 on the CPU: {display_name(variable)} has "
                    f"type {variable.type}{where}; use float32 (evaluate() handles float16)"
                )
        pending.extend(g for node in current.nodes for g in inner_graphs_of(node.op))


def _compile(graph: Graph, generated: GeneratedModule, parallel: bool) -> numba.Dispatcher:
    """The dispatcher for `graph`'s structure, shared in this process by graphs that
    differ at most in constant values (those are arguments, not code).

    Compiling holds the lock: numba compiles one function at a time anyway, and threads
    asking for the same graph then wait for it instead of compiling it again."""
    with _compiled_lock:
        key = (graph.structure_digest, parallel)
        found = _compiled.get(key)
        if found is None:
            found = _compiled[key] = _compile_new(graph, generated)
        return found


def _compile_new(graph: Graph, generated: GeneratedModule) -> numba.Dispatcher:
    """Load `graph`'s generated module, after the kernel modules it imports, and compile
    it eagerly for C-contiguous arguments of the input types (numba's disk cache makes
    this a load in a second process, and kernels another graph compiled are loaded, not
    compiled again)."""
    for kernel in generated.kernels:
        load_module(kernel.digest, kernel.module_name, kernel.source)
    name = generated.entry
    module = load_module(graph.structure_digest, name, generated.source)
    dispatcher: numba.Dispatcher = getattr(module, name)
    signature = tuple(
        numba.typeof(np.empty((0,) * v.ndim, dtype=v.dtype)) for v in graph.inputs
    ) + tuple(numba.typeof(constant) for constant in generated.constants)
    try:
        dispatcher.compile(signature)
    except NumbaError:
        raise  # the code itself does not compile: a cold retry would only fail again
    except Exception:
        # A damaged numba cache entry (unpickling or rebuilding it fails) must not poison
        # every later run: drop it and compile once more from scratch (a kernel's module
        # does the same for the kernel's entry when it loads).
        forget_numba_cache(dispatcher)
        dispatcher.compile(signature)
    return dispatcher


def forget_numba_cache(dispatcher: numba.Dispatcher) -> None:
    """Empty the index of `dispatcher`'s numba disk cache, wherever numba keeps it (next
    to the module, or under `NUMBA_CACHE_DIR`): its entries are never read again, and
    the next compile writes fresh ones."""
    dispatcher._cache.flush()


def _argument(variable: Variable, value: Any) -> Array:
    """`value` as an array of `variable`'s type in native byte order and C order, the
    signature compiled eagerly (`ascontiguousarray` would also turn a 0-d array into a 1-d
    one). Arrays that already are one, the common case, pass through without the cost of
    a full conversion."""
    expected = variable.type
    kind = _SCALAR_FAST_PATH.get(type(value))
    if kind is not None and kind == expected.dtype and not expected.shape:
        return np.array(value, dtype=kind)  # a Python or NumPy scalar of the input's kind
    if (
        type(value) is np.ndarray
        and value.dtype == _native_dtype(expected.dtype)
        and value.flags.c_contiguous
        and expected.accepts_shape(value.shape)
    ):
        return value
    converted = expected.filter(value, display_name(variable))
    return np.asarray(converted, dtype=expected.dtype, order="C")


_SCALAR_FAST_PATH: dict[type, str] = {
    float: "float64", np.float64: "float64", np.int64: "int64", bool: "bool",
    np.bool_: "bool", np.float32: "float32", np.int32: "int32",
}
"""Scalar argument types that convert exactly to a 0-d input of the named dtype (Python
ints are left to `filter`, which names the input when one is out of range)."""


@functools.cache
def _native_dtype(name: str) -> np.dtype[Any]:
    return np.dtype(name)  # native byte order; `np.dtype(">f8")` compares unequal to it


def _formatted(error: ValueError | IndexError) -> ValueError | IndexError:
    """A run-time error of the generated code with its message completed: the code raises
    a message with `{}` slots and the lengths it saw as further arguments (numba builds no
    strings at run time); other errors pass unchanged."""
    message, *values = error.args or ("",)
    if not isinstance(message, str) or not values or message.count("{}") != len(values):
        return error
    return type(error)(message.format(*values))


def may_alias(graph: Graph) -> tuple[bool, ...]:
    """Per output, whether it may share memory with an argument, a constant or another
    output, or is read-only (`Aliasing.shared_outputs`): those are checked at call time
    and copied when they do. Outputs of nodes that allocate (most) need no check."""
    return Aliasing.of(graph).shared_outputs()


def _unaliased(
    results: Sequence[Array], arguments: Sequence[Array], may_share: Sequence[bool]
) -> list[Array]:
    """Copy any output that may share memory with an argument, a constant or an earlier
    output (views, pass-through inputs, repeated outputs)."""
    outputs: list[Array] = []
    for result, check in zip(results, may_share):
        array = np.asarray(result)
        if check and (not array.flags.writeable or _shares_memory(array, arguments, outputs)):
            array = array.copy()
        outputs.append(array)
    return outputs


def _shares_memory(array: Array, *groups: Sequence[Array]) -> bool:
    for group in groups:
        for other in group:
            if np.may_share_memory(array, other):
                return True
    return False
