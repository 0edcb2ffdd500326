"""The `function` wrapper: argument checks, no mutation or aliasing, output shapes of the
result, `graph`/`source`, pickling, and sharing of compiled dispatchers.

Compiles are shared between tests through module-scoped fixtures (each cold numba
compile costs about half a second).
"""

from __future__ import annotations

import importlib
import pickle
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from numba.core.errors import NumbaError

import ops as pt
from fgraph import Graph, Input, Variable, check_graph, evaluate
from numba_backend import CompiledFunction, function
from numba_backend.codegen import GeneratedModule, entry_name, generate
from numba_backend.compiled_function import _compiled
from rewrite import optimize

Array = np.ndarray[Any, np.dtype[Any]]


def mixed_inputs() -> tuple[Input, Input, Input, Input]:
    """A float vector, a float matrix, a matrix of static width 3, an unused int vector."""
    return (
        pt.vector("x"),
        pt.matrix("A"),
        pt.tensor("T", shape=(None, 3)),
        pt.vector("unused", dtype="int32"),
    )


def mixed_outputs(x: Variable, a: Variable, t: Variable) -> list[Variable]:
    """Outputs that tempt aliasing: an input itself, twice; a view of an input; a repeat."""
    computed = pt.exp(-x) * 2 + a.sum()
    return [computed, pt.expand_dims(a, 0), x, x, computed, t * 3, t.sum()]


@pytest.fixture(scope="module")
def mixed() -> tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]]:
    x, a, t, unused = mixed_inputs()
    outputs = mixed_outputs(x, a, t)
    return function([x, a, t, unused], outputs, mode="fast_run"), outputs, (x, a, t, unused)


@pytest.fixture(scope="module")
def single() -> CompiledFunction[Any]:
    x = pt.vector("x")
    return function([x], pt.log(pt.exp(x) + 1), mode="none")


def arguments(seed: int = 0) -> tuple[Array, Array, Array, Array]:
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=4),
        rng.normal(size=(2, 5)),
        rng.normal(size=(6, 3)),
        np.arange(7, dtype=np.int32),
    )


def test_values_match_the_reference_evaluator(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, outputs, inputs = mixed
    check_graph(compiled.graph)
    values = arguments()
    expected = evaluate(outputs, dict(zip(inputs, values)))
    results = compiled(*values)
    assert isinstance(results, list)
    assert len(results) == len(expected)
    for result, reference in zip(results, expected):
        assert isinstance(result, np.ndarray)
        assert result.dtype == reference.dtype
        np.testing.assert_allclose(result, reference, rtol=1e-12)


def test_wrong_argument_count_names_the_expected_inputs(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    compiled = mixed[0]
    with pytest.raises(TypeError, match=r"expected 4 arguments \(x, A, T, unused\), got 2"):
        compiled(*arguments()[:2])
    with pytest.raises(TypeError, match="got 5"):
        compiled(*arguments(), np.ones(3))


def test_unsafe_dtype_is_a_type_error_naming_input_expected_and_got(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    x, a, t, unused = arguments()
    with pytest.raises(TypeError, match="A: expected dtype float64, got complex128"):
        mixed[0](x, a.astype(np.complex128), t, unused)
    with pytest.raises(TypeError, match="unused: expected dtype int32, got float64"):
        mixed[0](x, a, t, unused.astype(np.float64))


def test_safe_casts_are_accepted(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    """Ints and float32 for float64 inputs, int8 for an int32 input, non-native byte order
    and Fortran order: all converted, with the same results."""
    compiled = mixed[0]
    x, a, t, unused = arguments()
    integer_x = np.arange(4, dtype=np.int64)
    converted = compiled(
        integer_x,
        np.asfortranarray(a).astype(">f8"),
        t.astype(np.float32),
        unused.astype(np.int8),
    )
    rounded_t = t.astype(np.float32).astype(np.float64)
    reference = compiled(integer_x.astype(np.float64), a, rounded_t, unused)
    for result, wanted in zip(converted, reference):
        np.testing.assert_array_equal(result, wanted)
    assert len(_compiled[compiled.graph.structure_digest, False].signatures) == 1


@pytest.mark.parametrize(
    ("position", "value", "pattern"),
    [
        (0, np.ones((4, 1)), r"x: expected shape \(\?,\), got \(4, 1\)"),
        (0, 2.0, r"x: expected shape \(\?,\), got \(\)"),
        (1, np.ones(5), r"A: expected shape \(\?, \?\), got \(5,\)"),
        (2, np.ones((6, 4)), r"T: expected shape \(\?, 3\), got \(6, 4\)"),
        (3, np.ones((2, 2), dtype=np.int32), r"unused: expected shape \(\?,\), got \(2, 2\)"),
    ],
)
def test_rank_and_static_shape_errors_are_value_errors(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
    position: int,
    value: object,
    pattern: str,
) -> None:
    values: list[object] = list(arguments())
    values[position] = value
    with pytest.raises(ValueError, match=pattern):
        mixed[0](*values)


def test_inputs_are_never_mutated(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    values = arguments(1)
    copies = [value.copy() for value in values]
    results = mixed[0](*values)
    for result in results:
        result[...] = 12345  # writing into outputs must not reach the inputs either
    for value, original in zip(values, copies):
        np.testing.assert_array_equal(value, original)


def test_outputs_never_alias_inputs_or_each_other(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    values = arguments(2)
    results = mixed[0](*values)
    for index, result in enumerate(results):
        assert result.flags.writeable
        for value in values:
            assert not np.may_share_memory(result, value)
        for other in results[index + 1 :]:
            assert not np.may_share_memory(result, other)


def test_constant_outputs_are_fresh_each_call() -> None:
    """A constant returned as is, or through a view, is copied: writing into one result
    changes neither the graph's constant nor the next call's result."""
    x = pt.vector("x")
    table = pt.constant(np.arange(6.0).reshape(2, 3))
    compiled = function([x], [table, pt.expand_dims(table, 0), x + 1], mode="none")
    first = compiled(np.zeros(2))
    for result in first:
        result[...] = -1
    second = compiled(np.zeros(2))
    np.testing.assert_array_equal(second[0], np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(second[1], np.arange(6.0).reshape(1, 2, 3))
    np.testing.assert_array_equal(table.data, np.arange(6.0).reshape(2, 3))


def test_single_output_gives_an_array_and_a_list_gives_a_list(single: CompiledFunction[Any]) -> None:
    x_value = np.linspace(-2, 2, 5)
    result = single(x_value)
    assert isinstance(result, np.ndarray)
    np.testing.assert_allclose(result, np.log(np.exp(x_value) + 1))
    (x,) = single.inputs
    as_list = function([x], [pt.log(pt.exp(x) + 1)], mode="none")(x_value)
    assert isinstance(as_list, list)
    assert len(as_list) == 1
    np.testing.assert_array_equal(as_list[0], result)


def test_a_scalar_output_is_a_zero_dimensional_array() -> None:
    x = pt.vector("x")
    total = function([x], x.sum(), mode="none")(np.arange(4.0))
    assert isinstance(total, np.ndarray)
    assert total.shape == ()
    assert total == 6.0


def test_python_scalars_are_accepted_for_scalar_inputs() -> None:
    s = pt.scalar("s")
    x = pt.vector("x")
    compiled = function([s, x], x * s, mode="none")
    np.testing.assert_array_equal(compiled(2, np.arange(3.0)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(compiled(0.5, [1, 2]), [0.5, 1.0])
    # Converted arguments match the signature compiled eagerly: no compile at call time.
    assert len(_compiled[compiled.graph.structure_digest, False].signatures) == 1


def test_unused_inputs_are_accepted_and_still_checked(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, _, inputs = mixed
    assert inputs[3] not in {v for node in compiled.graph.nodes for v in node.inputs}
    assert compiled.graph.inputs == inputs
    x, a, t, _ = arguments()
    first = compiled(x, a, t, np.zeros(1, dtype=np.int32))
    second = compiled(x, a, t, np.arange(100, dtype=np.int16))
    for result, other in zip(first, second):
        np.testing.assert_array_equal(result, other)
    with pytest.raises(TypeError, match="unused"):
        compiled(x, a, t, np.ones(3, dtype=np.float32))


def test_graph_is_the_optimized_graph_and_source_its_module(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    compiled, outputs, inputs = mixed
    assert isinstance(compiled.graph, Graph)
    assert compiled.graph == optimize(Graph(inputs, outputs), "fast_run")
    assert compiled.source == generate(compiled.graph).source
    assert f"def {entry_name(compiled.graph)}(" in compiled.source


def test_pickle_round_trip_gives_the_same_results(
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    compiled = mixed[0]
    restored = pickle.loads(pickle.dumps(compiled))
    assert isinstance(restored, CompiledFunction)
    assert restored.graph == compiled.graph
    assert restored.source == compiled.source
    values = arguments(3)
    for result, expected in zip(restored(*values), compiled(*values)):
        np.testing.assert_array_equal(result, expected)
    doubled = function(compiled.inputs[:1], compiled.inputs[0] * 2, mode="none")
    single_output = pickle.loads(pickle.dumps(doubled))
    np.testing.assert_array_equal(single_output(np.ones(2)), [2.0, 2.0])


def test_equal_graphs_share_one_compiled_dispatcher(single: CompiledFunction[Any]) -> None:
    """A graph built again from fresh inputs has the same digest: no second compile."""
    digest = single.graph.structure_digest
    dispatcher = _compiled[digest, False]
    x = pt.vector("x")
    again = function([x], pt.log(pt.exp(x) + 1), mode="none")
    assert again.graph.digest == single.graph.digest
    assert _compiled[digest, False] is dispatcher
    assert again.source == single.source
    np.testing.assert_array_equal(again(np.arange(3.0)), single(np.arange(3.0)))


def test_threads_compiling_one_graph_share_one_dispatcher() -> None:
    """Threads asking for the same new graph at once wait for one compile."""

    def compile_in_thread(_: int) -> CompiledFunction[Any]:
        x = pt.vector("x")
        return function([x], pt.exp(x) * 3 - x, mode="none")

    with ThreadPoolExecutor(max_workers=3) as pool:
        compiled = list(pool.map(compile_in_thread, range(3)))
    (digest,) = {one.graph.structure_digest for one in compiled}
    dispatcher = _compiled[digest, False]
    assert all(one._dispatcher is dispatcher for one in compiled)
    assert len(dispatcher.signatures) == 1
    for one in compiled:
        np.testing.assert_allclose(one(np.arange(3.0)), np.exp(np.arange(3.0)) * 3 - np.arange(3.0))


def test_code_numba_cannot_type_fails_once_without_dropping_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a damaged cache is worth a second, cold compile; a typing error is raised as
    it is, and numba's cache for the module is left alone."""
    x = pt.vector("x")
    graph = Graph([x], [pt.exp(pt.exp(x)) - 17])
    name = entry_name(graph)
    broken = f"import numba\n\n@numba.njit(cache=True)\ndef {name}(i0):\n    return (i0 + 'a',)\n"
    forgotten: list[str] = []
    # The module whose `generate` and `forget_numba_cache` a compile calls.
    module = importlib.import_module("numba_backend.compiled_function")
    monkeypatch.setattr(module, "generate", lambda *_: GeneratedModule(broken, name, ()))
    monkeypatch.setattr(module, "forget_numba_cache", lambda d: forgotten.append(d.__name__))
    try:
        with pytest.raises(NumbaError):
            function([x], graph.outputs[0], mode="none")
    finally:
        sys.modules.pop(name, None)  # the broken module must not serve a later compile
    assert forgotten == []
    assert (graph.structure_digest, False) not in _compiled


def test_symbol_and_module_names_derive_from_the_digest(
    single: CompiledFunction[Any],
    mixed: tuple[CompiledFunction[Any], list[Variable], tuple[Input, ...]],
) -> None:
    names: list[str] = []
    for compiled in (single, mixed[0]):
        digest = compiled.graph.structure_digest
        name = entry_name(compiled.graph)
        assert name == f"fgraph_{digest[:20]}"
        assert f"def {name}(" in compiled.source
        dispatcher = _compiled[digest, False]
        assert dispatcher.py_func.__name__ == name
        assert dispatcher.py_func.__module__ == name
        names.append(name)
    assert names[0] != names[1]



def test_graphs_differing_only_in_constants_share_compiled_code() -> None:
    """Constants are arguments, so the code is named by the structure digest."""
    x = pt.vector("x")
    by_two = function([x], x * np.array([2.0, 2.0]), mode="none")
    by_three = function([x], x * np.array([3.0, 3.0]), mode="none")
    assert by_two.graph.digest != by_three.graph.digest
    assert by_two.graph.structure_digest == by_three.graph.structure_digest
    assert by_two._dispatcher is by_three._dispatcher
    np.testing.assert_allclose(by_two(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(by_three(np.ones(2)), [3.0, 3.0])


def test_float16_is_computed_in_float32_and_refused_where_not_widened() -> None:
    """`function` widens float16 to float32 (numba_backend.float16); a float16 graph
    given to `from_optimized` directly is refused naming the variable."""
    from numba_backend.compiled_function import from_optimized

    x = pt.vector("half", dtype="float16")
    got = function([x], x * 2)(np.array([1.5, 3.0], np.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [3.0, 6.0])
    with pytest.raises(TypeError, match=r"float16 on the CPU: half has type float16\(\?,\)"):
        from_optimized(Graph([x], [x * 2]), True, False, None)


def test_outputs_that_may_alias_are_known_from_the_graph() -> None:
    from numba_backend.compiled_function import may_alias

    x = pt.vector("x")
    fresh = pt.exp(x)
    graph = Graph([x], [fresh, x, x[1:], fresh, pt.constant(np.ones(2))])
    assert may_alias(graph) == (False, True, True, True, True)
    f = function([x], [fresh, x, x[1:], fresh])
    value = np.arange(3.0)
    results = f(value)
    assert not any(np.shares_memory(r, value) for r in results)
    assert not np.shares_memory(results[0], results[3])


def test_scalar_arguments_take_the_fast_path_and_still_check() -> None:
    x = pt.scalar("x")
    f = function([x], x * 2)
    assert f(1.5) == 3.0 and f(np.float64(1.5)) == 3.0 and f(2) == 4.0
    with pytest.raises(TypeError):
        f("a")


@pytest.mark.parametrize("count", [2, 4, 31])
def test_element_loop_length_checks_share_one_raise_per_25(count: int) -> None:
    """An element loop checks its inputs' lengths with one condition and raise per 25
    (`intrinsics.first_unequal`): the error still names the first input of a wrong
    length, with its label, axis and both lengths, as one raise per check did; inputs of
    other types (a matrix, axis 1) are named by theirs."""
    xs = [pt.vector(f"x{k}") for k in range(count)]
    m = pt.matrix("m")
    total: Variable = xs[0]
    for x in xs[1:]:
        total = total * 0.5 + x
    compiled = function([*xs, m], total + m)
    assert compiled.source.count("raise ValueError('elementwise") == 2 + (count > 26)
    right = [np.arange(3.0) + k for k in range(count)] + [np.ones((2, 3))]
    wanted = right[0]
    for value in right[1:count]:
        wanted = wanted * 0.5 + value
    np.testing.assert_allclose(compiled(*right), np.broadcast_to(wanted + 1.0, (2, 3)))
    for k in sorted({1, count // 2, count - 1}):
        wrong = list(right)
        wrong[k] = np.ones(5)
        with pytest.raises(ValueError, match=rf"elementwise inputs .*\b(x0|x1) \(float64\(\?,\)\) and "
                                             rf"x{k} \(float64\(\?,\)\) differ in length along "
                                             r"axis 0: 3 and 5 \(broadcasting"):
            compiled(*wrong)
    with pytest.raises(ValueError, match=r"and m \(float64\(\?, \?\)\) differ in length along "
                                         r"axis 1: 3 and 4"):
        compiled(*right[:-1], np.ones((2, 4)))


def test_float16_intermediates_of_fused_loops_compile() -> None:
    small = pt.vector("small", dtype="int8")  # exp of int8 computes in float16
    values = np.array([-3, 0, 2, 5], np.int8)
    got = function([small], pt.cast(pt.exp(small), "float64"))(values)
    np.testing.assert_allclose(got, np.exp(values).astype("float64"), rtol=1e-3)


def test_run_time_errors_name_the_inputs_and_the_lengths_seen() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    with pytest.raises(ValueError, match=r"elementwise inputs x \(float64\(\?,\)\) and y "
                                         r"\(float64\(\?,\)\) differ in length along axis 0: 3 and 4"):
        function([x, y], pt.exp(x) + y)(np.ones(3), np.ones(4))
    a, b = pt.matrix("a"), pt.matrix("b")
    with pytest.raises(ValueError, match=r"MatMul of a .* and b .*the shapes are \(2, 3\) and \(4, 5\)"):
        function([a, b], a @ b)(np.ones((2, 3)), np.ones((4, 5)))
    i = pt.scalar("i", dtype="int64")
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for axis 0 of x .* length 3"):
        function([x, i], x[i])(np.ones(3), 7)


def test_reshape_errors_name_the_input_and_the_sizes() -> None:
    x, rows = pt.vector("x"), pt.scalar("rows", dtype="int64")
    with pytest.raises(ValueError, match=r"cannot reshape x \(float64\(\?,\)\), of 5 elements, "
                                         r"into shape \(2, -1\)"):
        function([x, rows], pt.reshape(x, (rows, -1)))(np.ones(5), 2)
    assert function([x, rows], pt.reshape(x, (rows, -1)))(np.ones(6), 2).shape == (2, 3)


@pytest.mark.parametrize("target", [(2, 3), (6,), (1, 6, 1)])
def test_reshape_to_a_static_shape_checks_only_the_size(target: tuple[int, ...]) -> None:
    """A result of static shape reshapes to its type's lengths (`-1` resolved): the
    values are NumPy's and a source of another size is refused naming it."""
    x = pt.vector("x")
    reshaped = pt.reshape(x, target)
    assert None not in reshaped.type.shape
    compiled = function([x], reshaped * 2.0)
    values = np.arange(6.0)
    np.testing.assert_array_equal(compiled(values), np.reshape(values, target) * 2.0)
    with pytest.raises(ValueError, match=r"cannot reshape x \(float64\(\?,\)\), of 5 "
                                         r"elements, into shape"):
        compiled(np.ones(5))
    flat = function([x], pt.reshape(pt.reshape(x, (2, 3)), (-1,)))  # of a static size
    np.testing.assert_array_equal(flat(values), values)


class Tagged(np.ndarray[Any, np.dtype[Any]]):
    """An ndarray subclass, as libraries make them (the call takes its values)."""


def test_strided_read_only_and_subclassed_arguments_are_converted() -> None:
    """Arguments that are not exactly a C-ordered array of the input's dtype (a strided
    view, a reversed one, a read-only array, a subclass) are converted: same values,
    no compile for other types."""
    x, m = pt.vector("x"), pt.matrix("m")
    compiled = function([x, m], [pt.exp(x) * 2.0, m.sum(axis=0), (m @ x).sum()])
    data = np.arange(12.0).reshape(3, 4)
    read_only = data.copy()
    read_only.setflags(write=False)
    cases = [(data[1, :3], data[:, 1:]),
             (data[2, ::-1][:3], data.T[1:, :3].T), (data[0, :3], read_only[:, :3]),
             (data[0, :3].view(Tagged), data[:3, :3].view(Tagged))]
    for vector, matrix in cases:
        plain_vector, plain_matrix = np.array(vector, dtype=float), np.array(matrix, dtype=float)
        want = evaluate(list(compiled.graph.outputs), {
            compiled.graph.inputs[0]: plain_vector, compiled.graph.inputs[1]: plain_matrix})
        for got, expected in zip(compiled(vector, matrix), want):
            assert type(got) is np.ndarray
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert len(_compiled[compiled.graph.structure_digest, False].signatures) == 1


def test_python_ints_for_int64_scalars_are_checked_for_range() -> None:
    i = pt.scalar("i", dtype="int64")
    x = pt.vector("x")
    compiled = function([x, i], x[i] * 2.0)
    assert compiled(np.arange(3.0), 2) == 4.0 and compiled(np.arange(3.0), np.int64(-1)) == 4.0
    with pytest.raises(TypeError, match="i: expected dtype int64, got uint64"):
        compiled(np.arange(3.0), 2**63)
    with pytest.raises(TypeError, match="i: expected dtype int64"):
        compiled(np.arange(3.0), 1.0)
    assert len(_compiled[compiled.graph.structure_digest, False].signatures) == 1


def test_zero_d_outputs_are_fresh_arrays_each_call() -> None:
    s = pt.scalar("s")
    compiled = function([s], [s, s * 2.0, s])
    first = compiled(1.5)
    assert [type(r) for r in first] == [np.ndarray] * 3 and all(r.shape == () for r in first)
    first[0][()] = 9.0
    assert first[2] == 1.5 and compiled(1.5)[0] == 1.5
    assert compiled(first[1])[1] == 6.0  # a 0-d output passed back in
    with pytest.raises(ValueError, match=r"s: expected shape \(\), got \(1,\)"):
        compiled(np.array([1.5]))
