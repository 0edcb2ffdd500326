"""`function(..., specialize_shapes=True)`: compile for the argument shapes of each call,
as JAX's `jit` does, so a graph of unknown lengths runs at static-shape speed.

A graph whose lengths are unknown compiles to code that reads every length at run time:
loops over axes of unknown extent, temporaries allocated per step, shape checks kept. The
same graph with static input shapes lets the rewrites fold shapes to constants, and the
loops' bodies (`rewrite.input_shapes` re-types them too) compute with fixed lengths.

The first call with a set of argument shapes rebuilds the graph for them
(`with_input_shapes`), optimizes it with the function's mode and compiles it: the cost of
a `function` call (numba's disk cache makes a shape compiled in an earlier process a
load). Later calls with the same shapes find it by the tuple of the `.shape`s of their
arguments for the inputs with axes, and call it, checks included (a list, or a number
for such an input, takes the first call's path: converted, then looked up).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Generic, NoReturn

import attrs
import numpy as np

from fgraph import Graph, ShapeError, Variable, display_name, format_shape
from numba_backend.caller import argument, count_error, positional
from numba_backend.collection import fewer_collections
from numba_backend.compiled_function import CompiledFunction, Result, from_optimized
from rewrite import optimize
from rewrite.input_shapes import with_input_shapes

Shapes = tuple[tuple[int, ...], ...]
"""One shape per input (`()` for a 0-d input)."""


@attrs.frozen(eq=False, repr=False)
class ShapeSpecializedFunction(Generic[Result]):
    """A graph compiled anew for each set of argument shapes it is called with: call it
    as a `CompiledFunction` (same arguments, conversions, errors and outputs).

    `given_graph` is the graph as given to `function`, unoptimized; `specializations`
    maps the argument shapes seen so far to the `CompiledFunction` compiled for them,
    whose `graph` (inputs of static shapes), `source`, `numba_function`, `cfunc` and
    `low_level_callable` are those of that shape. The outer function has no compiled
    code of its own: its `numba_function`, `cfunc` and `low_level_callable` raise a
    `TypeError` saying so (take them from a specialization, or compile without
    `specialize_shapes`). Specializations are never dropped: a function called with
    many different lengths compiles once per length (as `jax.jit` does). A pickled copy
    carries no specialization: it compiles again on its first call per shape.
    """

    inputs: tuple[Variable, ...]
    given_graph: Graph
    mode: str
    single_output: bool
    parallel: bool
    threads: int | None
    float16_outputs: tuple[int, ...] = ()
    """Outputs computed in float32 and returned in float16 (`numba_backend.float16`)."""
    _specialized: dict[Shapes, CompiledFunction[Result]] = attrs.field(init=False, factory=dict)
    _by_array_shapes: dict[Shapes, CompiledFunction[Result]] = attrs.field(
        init=False, factory=dict)
    """The same functions keyed by the shapes of the arguments of the inputs with axes
    only: what a call looks up (0-d inputs have no lengths to specialize on)."""
    _array_positions: tuple[int, ...] = attrs.field(init=False)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    """Held while compiling: threads calling with a new shape at once compile it once."""

    @_array_positions.default
    def _positions_with_axes(self) -> tuple[int, ...]:
        return tuple(k for k, v in enumerate(self.inputs) if v.ndim)

    def __call__(self, *arguments: Any, **keywords: Any) -> Result:
        """Arguments by position, or by input name (`f(x=..., w=...)`), or both."""
        if keywords:
            arguments = positional(self.inputs, arguments, keywords)
        try:
            compiled = self._by_array_shapes[
                tuple([arguments[k].shape for k in self._array_positions])]
        except (LookupError, AttributeError):  # new shapes, a list, too few arguments
            compiled = self._specialize(arguments)
        return compiled(*arguments)  # which checks the arguments: dtypes, their count

    @property
    def specializations(self) -> Mapping[Shapes, CompiledFunction[Result]]:
        """The argument shapes called with so far, each with its compiled function."""
        return MappingProxyType(self._specialized)

    @property
    def numba_function(self) -> NoReturn:
        raise self._no_code("numba_function")

    @property
    def cfunc(self) -> NoReturn:
        raise self._no_code("cfunc")

    @property
    def low_level_callable(self) -> NoReturn:
        raise self._no_code("low_level_callable")

    def _specialize(self, arguments: tuple[Any, ...]) -> CompiledFunction[Result]:
        """The function compiled for the shapes of `arguments` once they are converted
        (which checks their count, dtypes, ranks and static lengths, naming the input)."""
        if len(arguments) != len(self.inputs):
            raise count_error(self.inputs, len(arguments))
        shapes = tuple(np.shape(argument(v, a)) for v, a in zip(self.inputs, arguments))
        with self._lock:
            compiled = self._specialized.get(shapes)
            if compiled is None:
                with fewer_collections():
                    graph = self._retyped(shapes)
                    compiled = self._specialized[shapes] = from_optimized(
                        optimize(graph, self.mode), self.single_output, self.parallel,
                        self.threads, self.float16_outputs,
                    )
                self._by_array_shapes[tuple(shapes[k] for k in self._array_positions)] = compiled
        return compiled

    def _retyped(self, shapes: Shapes) -> Graph:
        """The given graph for `shapes`; lengths that do not fit together fail here, as
        the graph's ops check static shapes, with the arguments' shapes named."""
        try:
            return with_input_shapes(self.given_graph, shapes)
        except ShapeError as error:
            named = ", ".join(f"{display_name(v)} {format_shape(s)}"
                              for v, s in zip(self.inputs, shapes))
            raise ShapeError(f"arguments of shapes {named}: {error}") from None

    def _no_code(self, name: str) -> TypeError:
        return TypeError(
            f"{name}: a function compiled with specialize_shapes=True has no code of its own, "
            f"only code per argument shapes: use f.specializations[shapes].{name} (compiled "
            "for those shapes), or compile without specialize_shapes"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (ShapeSpecializedFunction, (self.inputs, self.given_graph, self.mode,
                                           self.single_output, self.parallel, self.threads,
                                           self.float16_outputs))

    def __repr__(self) -> str:
        return f"ShapeSpecializedFunction({self.given_graph!r}, {len(self._specialized)} shapes)"
