"""Compiled graphs whose values share memory (views, inplace updates, loop carries that
pass buffers to each other through views, read-only broadcasts) compute what the
evaluator computes on the unoptimized graph (issue 18).

Loop carries have static shapes, or (in the swap and rotation tests) lengths known only
at run time, when the loop allocates its reused buffers at the first step: buffers
reused across steps are where a buffer still read by a carry used to be overwritten.
The random graphs keep static shapes: their broadcasting views need static lengths of 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ops as pt
from fgraph import Graph, Input, Variable, evaluate
from fgraph.aliasing import Aliasing
from fgraph.op import Array
from ops.broadcast import BroadcastTo
from numba_backend import function
from rewrite import optimize
from tests.graph_strategies import scaled_examples


def assert_compiled_matches(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    values: Sequence[Array],
    parallel: bool = False,
) -> list[Array]:
    """The compiled outputs equal the unoptimized graph's, and the arguments are intact."""
    expected = evaluate(outputs, dict(zip(inputs, values)))
    arguments = [np.array(value) for value in values]
    got = function(inputs, outputs, parallel=parallel)(*arguments)
    for number, (actual, wanted) in enumerate(zip(got, expected)):
        assert actual.shape == wanted.shape, f"output {number}"
        rtol = 1e-5 if actual.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(actual, wanted, rtol=rtol, atol=1e-6, err_msg=f"output {number}")
    for argument, value in zip(arguments, values):
        np.testing.assert_array_equal(argument, value)  # nothing wrote into an argument
    return got


# --- defect 2: carries that swap or rotate through views -----------------------------


def _steps(kind: str) -> tuple[int | Variable, list[Input], list[Array]]:
    """n_steps as a static int beyond the unrolling bound, or an int32 scalar input."""
    if kind == "static":
        return 12, [], []
    n = pt.scalar("n", dtype="int32")
    return n, [n], [np.array(12, dtype="int32")]


LENGTHS = pytest.mark.parametrize("length", [3, None], ids=["static", "unknown"])
"""A carry's static length, or None: known only at run time."""


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("steps", ["static", "int32"])
@pytest.mark.parametrize("traces", [False, True])
@LENGTHS
def test_swapped_carries_keep_the_buffer_the_other_still_reads(
    dtype: str, steps: str, traces: bool, length: int | None
) -> None:
    a0 = pt.vector("a0", dtype=dtype, shape=(length,))
    b0 = pt.vector("b0", dtype=dtype, shape=(length,))
    n, n_inputs, n_values = _steps(steps)
    a, b = pt.scan(lambda a, b: (b, a[::-1] + b), outputs_info=[a0, b0], n_steps=n)
    outputs = [a, b] if traces else [b[-1]]
    values = [np.array([1, 2, 3], dtype=dtype), np.array([10, 20, 30], dtype=dtype)]
    assert_compiled_matches([a0, b0, *n_inputs], outputs, [*values, *n_values])


def test_the_reported_swap_gives_the_reported_right_answer() -> None:
    a0 = pt.vector("a0", dtype="float32", shape=(3,))
    b0 = pt.vector("b0", dtype="float32", shape=(3,))
    n = pt.scalar("n", dtype="int32")
    a, b = pt.scan(lambda a, b: (b, a[::-1] + b), outputs_info=[a0, b0], n_steps=n)
    f = function([a0, b0, n], b[-1])
    result = f(np.array([1, 2, 3], "float32"), np.array([10, 20, 30], "float32"), np.int32(6))
    np.testing.assert_array_equal(result, [266, 276, 286])


@pytest.mark.parametrize("steps", ["static", "int32"])
@LENGTHS
def test_three_carries_rotating_through_views(steps: str, length: int | None) -> None:
    a0, b0, c0 = (pt.vector(name, shape=(length,)) for name in ("a0", "b0", "c0"))
    n, n_inputs, n_values = _steps(steps)
    a, b, c = pt.scan(
        lambda a, b, c: (b[::-1], c, a[::-1] * 0.5 + pt.tanh(b)),
        outputs_info=[a0, b0, c0],
        n_steps=n,
    )
    values = [np.array([1.0, 2, 3]), np.array([10.0, 20, 30]), np.array([100.0, 200, 300])]
    assert_compiled_matches([a0, b0, c0, *n_inputs], [a, b[-1], c[-1]], [*values, *n_values])


@LENGTHS
def test_swapped_matrix_carries_through_transposes(length: int | None) -> None:
    m0 = pt.matrix("m0", shape=(length, length))
    k0 = pt.matrix("k0", shape=(length, length))
    m, k = pt.scan(lambda m, k: (k.T, m * 0.5 + pt.tanh(k)), outputs_info=[m0, k0], n_steps=11)
    values = [np.arange(9.0).reshape(3, 3), np.arange(9.0).reshape(3, 3).T * 0.1]
    assert_compiled_matches([m0, k0], [m, k[-1]], values)


# --- defect 11: never overwrite a read-only broadcast --------------------------------


def test_a_broadcast_view_is_never_overwritten_in_place() -> None:
    x = pt.vector("x")
    y = pt.prod(pt.tanh(pt.broadcast_to(pt.tanh(pt.sum(x)), (3,))) * 0.5 + 1.0)
    graph = optimize(Graph([x], [y]), "fast_run")
    memory = Aliasing.of(graph)
    destroyed = [node.inputs[slot] for node in graph.nodes for _, slot in node.op.destroy_map]
    assert destroyed and all(memory.is_writable(value) for value in destroyed)
    (broadcast,) = [node.out for node in graph.nodes if isinstance(node.op, BroadcastTo)]
    assert not memory.is_writable(broadcast)
    assert_compiled_matches([x], [y], [np.array([0.1, 0.2])])


def test_an_update_of_a_view_of_a_broadcast_is_not_done_in_place() -> None:
    x = pt.vector("x", shape=(3,))
    stretched = pt.broadcast_to(pt.exp(x)[:1], (3,))  # (1,) stretched: one element thrice
    y = pt.set_subtensor(stretched[::-1][:1], x[:1])
    assert_compiled_matches([x], [y * 2.0], [np.array([0.1, 0.2, 0.3])])


def test_a_returned_broadcast_is_a_fresh_writable_array() -> None:
    x = pt.vector("x", shape=(2,))
    f = function([x], pt.broadcast_to(pt.exp(x), (3, 2)))
    result = f(np.array([0.0, 1.0]))
    assert result.flags.writeable and result.flags.owndata
    result[0, 0] = 5.0  # one element, not a column
    np.testing.assert_allclose(result[:, 0], [5.0, 1.0, 1.0])


# --- the same analysis for inlined OpFromGraph outputs ------------------------------


def test_op_from_graph_outputs_sharing_a_buffer_are_independent() -> None:
    p = pt.vector("p")
    inner = pt.exp(p)
    op = pt.op_from_graph([p], [inner, inner[::-1]])
    x = pt.vector("x")
    first, second = op.apply(x)
    outputs = [pt.sin(first), second * 1.0]  # the sine may overwrite the first output
    assert_compiled_matches([x], outputs, [np.array([0.1, 0.2, 0.3])])


# --- defect 12: parallel=True with a gather after a fused loop ----------------------


@pytest.mark.parametrize("length", [3, 70_000])  # serial and prange loops
def test_a_gather_after_a_parallel_fused_loop(length: int) -> None:
    x = pt.vector("x")
    y = pt.tanh(pt.sin(x) * 2.0)[np.array([1, 0, 1])]
    assert_compiled_matches([x], [y], [np.linspace(-1.0, 1.0, length)], parallel=True)


@pytest.mark.parametrize(
    "indexed",
    [
        lambda v: v[np.array([True, False, True, True])],
        lambda v: v[np.array([[1, 0], [3, 3]])],
        lambda v: pt.set_subtensor(v[np.array([1, 0])], 2.0),
    ],
    ids=["mask", "index matrix", "set"],
)
def test_advanced_indexing_of_a_vector_after_a_parallel_fused_loop(
    indexed: Callable[[Variable], Variable],
) -> None:
    x = pt.vector("x")
    y = indexed(pt.exp(pt.cos(x) * 0.5))
    assert_compiled_matches([x], [y], [np.linspace(-1.0, 1.0, 4)], parallel=True)


# --- random graphs with views, inplace updates and permuting carries ----------------

SHAPE = (3, 3)

VIEWS: Mapping[str, Callable[[Variable], Variable]] = MappingProxyType(
    {
        "same": lambda t: t,
        "reversed": lambda t: t[::-1],
        "transposed": lambda t: t.T,
        "columns reversed": lambda t: t[:, ::-1],
        "reshaped": lambda t: pt.reshape(t.T, (9,)).reshape(SHAPE),
        "row broadcast": lambda t: pt.broadcast_to(t[1], SHAPE),
        "column broadcast": lambda t: pt.broadcast_to(t[:, 2:], SHAPE),
    }
)
"""Views keeping the (3, 3) shape; the broadcasts are read-only."""

STEPS: Mapping[str, Callable[[Variable, Variable], Variable]] = MappingProxyType(
    {
        "tanh": lambda t, u: pt.tanh(t),
        "sin": lambda t, u: pt.sin(t),
        "affine": lambda t, u: t * 0.5 + u,
        "product": lambda t, u: pt.tanh(t * u),
        "set rows": lambda t, u: pt.set_subtensor(t[1:], u[:2]),
        "add every other row": lambda t, u: pt.inc_subtensor(t[::2], u[1:]),
    }
)
"""Computations over two (3, 3) terms, most of which the inplace pass may do in place."""


Loop = tuple[list[Variable], Variable | None, Input | None]


@st.composite
def _loop(draw: st.DrawFn, pool: list[Variable]) -> Loop:
    """A loop whose carries are permuted through views each step, some updated too.
    Returns its final values (as terms), one trace, and its int32 step-count input."""
    n_carries = draw(st.integers(2, 3))
    initials = [VIEWS[draw(st.sampled_from(sorted(VIEWS)))](draw(st.sampled_from(pool)))
                for _ in range(n_carries)]
    order = draw(st.permutations(range(n_carries)))
    views = [draw(st.sampled_from(sorted(VIEWS))) for _ in range(n_carries)]
    updated = draw(st.lists(st.booleans(), min_size=n_carries, max_size=n_carries))
    others = [draw(st.integers(0, n_carries - 1)) for _ in range(n_carries)]

    def step(*carries: Variable) -> tuple[Variable, ...]:
        moved = [VIEWS[views[k]](carries[order[k]]) for k in range(n_carries)]
        return tuple(
            moved[k] * 0.5 + pt.tanh(carries[others[k]]) if updated[k] else moved[k]
            for k in range(n_carries)
        )

    count = draw(st.sampled_from([5, 11, None]))  # 5 is unrolled; None: an int32 input
    n = pt.scalar("n", dtype="int32") if count is None else None
    traces = pt.scan(step, outputs_info=initials, n_steps=count if n is None else n)
    finals = [trace[-1] for trace in traces]
    return finals, draw(st.sampled_from([None, *traces])), n


@st.composite
def _alias_graphs(draw: st.DrawFn) -> tuple[list[Input], list[Variable], list[Array], bool]:
    """Inputs, outputs and values of a graph of (3, 3) terms, and whether to compile it
    with `parallel=True`."""
    x, y = pt.matrix("x", shape=SHAPE), pt.matrix("y", shape=SHAPE)
    inputs: list[Input] = [x, y]
    pool: list[Variable] = [x, y]
    extra_outputs: list[Variable] = []
    size = draw(st.integers(1, 5))
    loop_at = draw(st.integers(0, size - 1))  # every graph has a loop, some two
    for number in range(size):
        if number == loop_at or draw(st.integers(0, 3)) == 0:
            finals, trace, n = draw(_loop(pool))
            pool += finals
            extra_outputs += [] if trace is None else [trace]
            inputs += [] if n is None else [n]
            continue
        view = VIEWS[draw(st.sampled_from(sorted(VIEWS)))]
        other = VIEWS[draw(st.sampled_from(sorted(VIEWS)))]
        computed = STEPS[draw(st.sampled_from(sorted(STEPS)))]
        pool.append(computed(view(draw(st.sampled_from(pool))), other(draw(st.sampled_from(pool)))))
    chosen = draw(st.lists(st.sampled_from(pool), min_size=0, max_size=2))
    outputs = [pool[-1], *chosen, *extra_outputs]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    values: list[Array] = [rng.uniform(-1.0, 1.0, SHAPE) for _ in (x, y)]
    values += [np.array(draw(st.sampled_from([3, 7, 12])), dtype="int32") for _ in inputs[2:]]
    return inputs, outputs, values, draw(st.sampled_from([False, False, False, True]))


@settings(max_examples=scaled_examples(0.15))
@given(_alias_graphs())
def test_random_aliasing_graphs_compile_to_the_reference(
    example: tuple[list[Input], list[Variable], list[Array], bool],
) -> None:
    inputs, outputs, values, parallel = example
    assert_compiled_matches(inputs, outputs, values, parallel=parallel)
