"""Loop rewrites (`rewrite.loops`): each transformation on a tiny loop (structure and
values), the seed's derivatives after fast_run (acceptance and a golden printout), and
random loops keeping their values through the whole pipeline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ops as pt
from fgraph import Apply, Constant, Graph, Input, TensorType, Variable, check_graph, dprint
from fgraph import evaluate
from ops.join import Concatenate, split
from ops.scan_op import Scan
from tests.loop_steps import PLANS, planned_step
from numba_backend import function
from rewrite import RewriteError, RuleSet, Trace, optimize, rewrite_graph
from rewrite.loops import loop_pass
from rewrite.pipeline import Pipeline
from rewrite.pipelines import FAST_RUN
from rewrite.loops import loop_pass
from rewrite.loops_merge import merge_independent_loops, merge_loops, merge_traced_variants
from rewrite.loops_push_out import (
    accumulate_outside,
    push_out_invariants,
    push_out_sequence_work,
    repeat_invariant_outputs,
    vectorize_map,
)
from rewrite.loops_trace import (
    TraceTransform,
    final_instead_of_last_row,
    keep_last_rows,
    shorten_to_read_prefix,
    static_length,
    trim_traces,
)
from rewrite.loops_unroll import unroll
from rewrite.loops_unused import inline_constants, remove_unused
from rewrite.rules import AnyRule

Array = np.ndarray[Any, np.dtype[Any]]


def loops_of(graph: Graph) -> list[Apply]:
    return [node for node in graph.nodes if isinstance(node.op, Scan)]


def only_loop(graph: Graph) -> Scan:
    (node,) = loops_of(graph)
    assert isinstance(node.op, Scan)
    return node.op


def assert_lean(graph: Graph) -> None:
    """No loop keeps an input its body does not read (but a sequence whose length check
    could fail), a per-step output or trace nobody reads, or a carry nothing needs (its
    final value is always there)."""
    for node in loops_of(graph):
        op = node.op
        assert isinstance(op, Scan)
        body = op.inner_graph
        read = {v for n in body.nodes for v in n.inputs} | set(body.outputs)
        assert all(param in read for param in (*op.params.carries, *op.params.non_sequences)), (
            f"unused input in {op}"
        )

        def is_read(variable: Variable) -> bool:
            return bool(graph.clients.get(variable)) or variable in graph.outputs

        outputs = op.split_outputs(node.outputs)
        assert all(is_read(t) for t in outputs.traces if t is not None), f"unused trace in {op}"
        assert all(is_read(y) for y in outputs.ys), f"unused output in {op}"


def same_values(before: Graph, after: Graph, values: Sequence[Any]) -> None:
    check_graph(after)
    expected = evaluate(before.outputs, dict(zip(before.inputs, values)))
    got = evaluate(after.outputs, dict(zip(after.inputs, values)))
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def apply_once(rule: AnyRule, graph: Graph) -> Graph:
    """`graph` rewritten by the one-rule set of `rule`, which must fire."""
    trace = Trace()
    rewritten = rewrite_graph(graph, RuleSet(rule.name, (rule,)), trace=trace)
    assert rule.name in trace.rule_names, f"{rule.name} did not fire"
    return rewritten


def fires(rule: AnyRule, graph: Graph) -> bool:
    trace = Trace()
    rewrite_graph(graph, RuleSet(rule.name, (rule,)), trace=trace)
    return rule.name in trace.rule_names


def trimmed(transform: TraceTransform, graph: Graph) -> Graph | None:
    """`graph` with the trace transformation applied, or None if it does not apply."""
    rewritten = trim_traces(graph, (transform,))
    return None if rewritten is graph else rewritten


# -- one transformation at a time -------------------------------------------------------------
def test_static_length_from_a_constant_step_count() -> None:
    x0 = pt.scalar("x0")
    n = pt.scalar("n", dtype="int64")
    out = pt.scan(lambda p: p * 2, outputs_info=[x0], n_steps=n)
    graph = Graph([x0], [Graph([x0, n], [out]).replace({n: pt.constant(np.int64(3))}).outputs[0]])
    assert only_loop(graph).length is None
    rewritten = apply_once(static_length, graph)
    assert only_loop(rewritten).length == 3
    assert rewritten.outputs[0].type.shape == (3,)
    same_values(graph, rewritten, [1.5])


def test_final_value_instead_of_the_last_trace_row() -> None:
    x0 = pt.scalar("x0")
    trace = pt.scan(lambda p: p * 0.5, outputs_info=[x0], n_steps=30)  # too long to unroll
    assert trace.owner is not None
    full = trace.owner.inputs[0]  # the user's trace is full[1:]: row 0 is the initial value
    graph = Graph([x0], [full[30], full[0]])
    for output, expected in zip(graph.outputs, ("final", "initial")):
        assert output.owner is not None
        found = final_instead_of_last_row(output.owner)
        assert found is not None
        (new,) = found
        if expected == "final":
            assert new.owner is not None and isinstance(new.owner.op, Scan) and new.index == 0
        else:
            assert new is x0
    users = Graph([x0], [trace[-1]])
    rewritten = optimize(users, "fast_run")
    assert not only_loop(rewritten).traced[0]  # the trace is no longer kept
    same_values(users, rewritten, [1.5])


def test_remove_unused_outputs_state_groups_and_inputs() -> None:
    x0, y0, z0 = pt.scalar("x0"), pt.scalar("y0"), pt.scalar("z0")
    w, v = pt.scalar("w"), pt.scalar("v")

    def step(x: Variable, y: Variable, z: Variable, w: Variable, v: Variable) -> Any:
        # y and z only feed each other; the per-step output is never read.
        return x * w, z + v, y * v, x + 1

    xs, ys, zs, extra = pt.scan(step, outputs_info=[x0, y0, z0, None], non_sequences=[w, v],
                                n_steps=4)
    graph = Graph([x0, y0, z0, w, v], [xs])
    rewritten = apply_once(remove_unused, graph)
    op = only_loop(rewritten)
    assert (op.n_carries, op.n_ys, op.n_non_sequences) == (1, 0, 1)
    assert_lean(rewritten)
    same_values(graph, rewritten, [1.5, 2.0, 3.0, 0.5, 4.0])


def test_remove_unused_keeps_what_the_stop_condition_reads() -> None:
    x0, c0 = pt.scalar("x0"), pt.scalar("c0")

    def step(x: Variable, c: Variable) -> Any:
        return (x * 2, c + 1), pt.until(c + 1 > 3)

    xs, _ = pt.scan(step, outputs_info=[x0, c0], n_steps=10)
    graph = Graph([x0, c0], [xs])
    rewritten = loop_pass(graph)
    assert only_loop(rewritten).n_carries == 2
    same_values(graph, rewritten, [1.0, 0.0])


def test_inline_constant_non_sequences_and_uniform_sequences() -> None:
    x0 = pt.scalar("x0")
    rows = pt.constant(np.full(4, 0.25))
    out = pt.scan(lambda r, p, w: p * w + r, sequences=[rows], outputs_info=[x0],
                  non_sequences=[pt.constant(3.0)])
    graph = Graph([x0], [out])
    inlined = apply_once(inline_constants, graph)
    body = only_loop(inlined).inner_graph
    assert any(isinstance(v, Constant) for n in body.nodes for v in n.inputs)
    assert not any(p in n.inputs for n in body.nodes for p in body.inputs[1:])  # unread
    rewritten = apply_once(remove_unused, inlined)
    op = only_loop(rewritten)
    assert (op.n_sequences, op.n_non_sequences) == (0, 0)
    same_values(graph, inlined, [1.5])
    same_values(graph, rewritten, [1.5])


def test_push_out_invariant_work() -> None:
    x0, a, b = pt.vector("x0"), pt.matrix("a"), pt.vector("b")
    out = pt.scan(lambda p, a, b: pt.tanh(p + a @ b), outputs_info=[x0], non_sequences=[a, b],
                  n_steps=3)
    graph = Graph([x0, a, b], [out])
    assert any(type(n.op).__name__ == "MatMul" for n in only_loop(graph).inner_graph.nodes)
    rewritten = apply_once(push_out_invariants, graph)
    body = only_loop(rewritten).inner_graph
    assert not any(type(n.op).__name__ == "MatMul" for n in body.nodes)
    assert any(type(n.op).__name__ == "MatMul" for n in rewritten.nodes)
    rng = np.random.default_rng(0)
    same_values(graph, rewritten, [rng.normal(size=2), rng.normal(size=(2, 2)), rng.normal(size=2)])


def test_invariant_per_step_output_is_its_value_repeated() -> None:
    """Also after zero steps, where an empty trace would not know its rows' length."""
    n, z = pt.scalar("n", dtype="int64"), pt.vector("z")
    graph = Graph([n, z], [pt.scan(lambda z: z, outputs_info=[None], non_sequences=[z], n_steps=n)])
    rewritten = apply_once(repeat_invariant_outputs, graph)
    assert any(type(node.op).__name__ == "Alloc" for node in rewritten.nodes)
    same_values(graph, rewritten, [3, np.arange(2.0)])
    empty = evaluate(rewritten.outputs, dict(zip(rewritten.inputs, [np.array(0), np.arange(2.0)])))
    assert empty[0].shape == (0, 2)
    while_loop = pt.scan(lambda c, z: ((c + 1, z), pt.until(c > 2)),
                         outputs_info=[pt.constant(0), None], non_sequences=[z], n_steps=n)[1]
    assert not fires(repeat_invariant_outputs, Graph([n, z], [while_loop]))


def test_elementwise_map_becomes_one_vectorized_computation() -> None:
    xs = pt.vector("xs", shape=(5,))
    scale = pt.scalar("scale")
    out = pt.map(lambda x, s: pt.sin(x) * s + 1, xs, non_sequences=[scale])
    graph = Graph([xs, scale], [out])
    rewritten = loop_pass(graph)
    assert not loops_of(rewritten)
    same_values(graph, rewritten, [np.arange(5.0), 2.0])
    assert fires(vectorize_map, graph)


def test_sequence_work_runs_once_over_whole_sequences() -> None:
    xs = pt.matrix("xs", shape=(None, 3))
    u = pt.matrix("u", shape=(4, 3))
    h0 = pt.vector("h0", shape=(4,))
    out = pt.scan(lambda x, h, u: pt.tanh(h * 0.5 + pt.exp(u @ x)), sequences=[xs],
                  outputs_info=[h0], non_sequences=[u])
    graph = Graph([xs, u, h0], [out])
    rewritten = apply_once(push_out_sequence_work, graph)
    body = only_loop(rewritten).inner_graph
    assert not any("Exp" in str(n.op) for n in body.nodes)
    assert not any(type(n.op).__name__ == "MatMul" for n in body.nodes)
    optimized = optimize(graph, "fast_run")
    batched = [n for n in optimized.nodes if type(n.op).__name__ == "MatMul"]
    assert len(batched) == 1 and batched[0].inputs[0] is xs  # xs @ u.T, one product
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(5, 3)), rng.normal(size=(4, 3)), rng.normal(size=4)]
    same_values(graph, rewritten, values)
    same_values(graph, optimized, values)


def test_accumulated_outer_products_become_one_matrix_product() -> None:
    xs = pt.matrix("xs", shape=(None, 3))
    w = pt.matrix("w", shape=(3, 3))
    h0 = pt.vector("h0", shape=(3,))
    hs = pt.scan(lambda x, h, w: pt.tanh(w @ h + x), sequences=[xs], outputs_info=[h0],
                 non_sequences=[w])
    gradient = pt.grad((hs**2).sum(), w)
    graph = Graph([xs, w, h0], [gradient])
    (backward,) = [n for n in loops_of(graph) if _scan(n).reverse]
    assert _scan(backward).n_carries == 2  # the carried cotangent and the sum for w
    assert fires(accumulate_outside, graph)
    optimized = optimize(graph, "fast_run")
    (backward,) = [n for n in loops_of(optimized) if _scan(n).reverse]
    assert _scan(backward).n_carries == 1
    assert optimized.outputs[0].owner is not None
    assert type(optimized.outputs[0].owner.op).__name__ == "MatMul"
    rng = np.random.default_rng(2)
    same_values(graph, optimized, [rng.normal(size=(6, 3)), rng.normal(size=(3, 3)) * 0.5,
                                   rng.normal(size=3)])


def test_summed_products_of_sequence_rows_leave_no_loop() -> None:
    """The per-step product is pushed out as one batched product over the sequences,
    whose rows the step count is read off, so the sum needs no loop (and no check)."""
    a, b = pt.matrix("a"), pt.matrix("b")
    total = pt.reduce(lambda x, y, u: u + x @ y, [a[:, :, None], b[:, None, :]],
                      pt.zeros_like(a))
    graph = Graph([a, b], [total])
    optimized = optimize(graph, "fast_run")
    assert not loops_of(optimized)
    rng = np.random.default_rng(4)
    same_values(graph, optimized, [rng.normal(size=(4, 4)), rng.normal(size=(4, 4))])


def test_unroll_short_constant_loops_only() -> None:
    x0 = pt.scalar("x0")
    short = Graph([x0], [pt.scan(lambda p: pt.sin(p), outputs_info=[x0], n_steps=4)])
    long = Graph([x0], [pt.scan(lambda p: pt.sin(p), outputs_info=[x0], n_steps=50)])
    assert not fires(unroll, long)
    rewritten = apply_once(unroll, short)
    assert not loops_of(rewritten)
    same_values(short, rewritten, [0.7])


def test_merge_loops_differing_only_in_traced_carries() -> None:
    x0 = pt.scalar("x0")
    n = pt.scalar("n", dtype="int64")
    traced = pt.scan(lambda p: pt.sin(p), outputs_info=[x0], n_steps=n)
    final = pt.reduce(lambda p: pt.sin(p), None, x0, n_steps=n)
    graph = Graph([x0, n], [traced.sum() + final])
    assert len(loops_of(graph)) == 2
    assert merge_traced_variants(loops_of(graph), graph)
    assert len(loops_of(merge_loops(graph, (merge_traced_variants,)))) == 1
    rewritten = loop_pass(graph)
    assert len(loops_of(rewritten)) == 1
    same_values(graph, rewritten, [0.7, 5])


def test_reads_of_a_prefix_shorten_the_loop() -> None:
    x0 = pt.scalar("x0")
    trace = pt.scan(lambda p: pt.sin(p) + 1, outputs_info=[x0], n_steps=100)
    graph = Graph([x0], [trace[3], trace[:5].sum()])
    simplified = optimize(graph, "fast_compile")  # trace[3] reads row 4 of the loop's own
    assert trimmed(shorten_to_read_prefix, simplified)
    rewritten = loop_pass(simplified)
    assert not loops_of(rewritten)  # 5 steps are then short enough to unroll
    same_values(graph, rewritten, [0.3])
    last = optimize(Graph([x0], [trace[3], trace[-1]]), "fast_compile")
    assert trimmed(shorten_to_read_prefix, last) is None


def test_reading_the_last_rows_keeps_a_window_of_them() -> None:
    x0 = pt.vector("x0", shape=(2,))
    n = pt.scalar("n", dtype="int64")
    trace = pt.scan(lambda p: pt.sin(p) * 1.5 + 0.1, outputs_info=[x0], n_steps=n)
    graph = Graph([x0, n], [trace[-2], trace[-3] * 2])
    assert trimmed(keep_last_rows, graph)
    rewritten = optimize(graph, "fast_run")
    # trace[1:][-3] fails after two steps (trace[-3] would be the initial value): the
    # window keeps one row more than the reads reach, so it fails the same way.
    assert only_loop(rewritten).windows == (4,)
    for steps in (3, 7):
        values = [np.array([0.3, -0.2]), steps]
        expected = evaluate(graph.outputs, dict(zip(graph.inputs, values)))
        for got, want in zip(function([x0, n], list(graph.outputs))(*values), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        same_values(graph, rewritten, values)
    whole = Graph([x0, n], [trace[2]])  # a read from the start needs every row
    assert trimmed(keep_last_rows, whole) is None


def test_merge_independent_loops_over_the_same_steps() -> None:
    xs = pt.vector("xs")
    y0 = pt.scalar("y0")
    totals = pt.scan(lambda x, acc: acc + pt.sin(x), sequences=[xs], outputs_info=[y0])
    products = pt.scan(lambda x, acc: acc * pt.cos(x), sequences=[xs], outputs_info=[y0])
    chained = pt.scan(lambda t, acc: acc + t, sequences=[totals], outputs_info=[y0])
    graph = Graph([xs, y0], [totals, products, chained])
    assert merge_independent_loops(loops_of(graph), graph)
    rewritten = loop_pass(graph)
    # The first two run as one loop; the third reads the first, so it stays apart.
    assert len(loops_of(rewritten)) == 2
    same_values(graph, rewritten, [np.linspace(0, 1, 7), 0.5])


def broken_transform(node: Apply, graph: Graph) -> dict[Variable, Variable] | None:
    raise ZeroDivisionError("a bug")


def test_errors_of_whole_graph_transformations_name_them() -> None:
    x0 = pt.scalar("x0")
    graph = Graph([x0], [pt.scan(lambda p: p * 2, outputs_info=[x0], n_steps=3)])
    with pytest.raises(RewriteError, match=r"broken_transform raised ZeroDivisionError on Scan"):
        trim_traces(graph, (broken_transform,))
    with pytest.raises(RewriteError, match=r"broken_merge raised ZeroDivisionError"):
        other = pt.scan(lambda p: p + 1, outputs_info=[x0], n_steps=3)
        merge_loops(Graph([x0], [*graph.outputs, other]), (broken_merge,))


def broken_merge(loops: Sequence[Apply], graph: Graph) -> dict[Variable, Variable] | None:
    raise ZeroDivisionError("a bug")


# -- the seed: y_t = y_{t-1} ** 2 for 4 steps -------------------------------------------------
SEED_SECOND_DERIVATIVE = """\
Fused{Square,Square,Square,Mul,Mul,Mul,Mul,Mul,Mul,Mul,Mul,Add,Mul,Mul,Mul,Add,Mul,Mul,Mul,Mul,Add,Mul,Mul,Mul,Add} [id A] float64()
 └─ x0 [id B] float64()
"""


def seed(n_steps: int | Variable) -> tuple[Variable, Variable, Variable]:
    x0 = pt.scalar("x0")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=n_steps)
    g = pt.grad(ys[-1], x0)
    return x0, g, pt.grad(g, x0)


def test_seed_second_derivative_is_one_fused_expression() -> None:
    x0, _, h = seed(4)
    before = Graph([x0], [h])
    after = optimize(before, "fast_run")
    assert not loops_of(after) and len(after.nodes) < 21
    (value,) = evaluate(after.outputs, {x0: 1.1})
    assert float(value) == 911.3996005997793 or abs(float(value) - 911.3996005997793) < 1e-9
    printed = dprint(after, file=None)
    assert printed.split("\n\nInner graphs:")[0] + "\n" == SEED_SECOND_DERIVATIVE


def test_seed_first_derivative_with_a_symbolic_step_count() -> None:
    x0 = pt.scalar("x0")
    n = pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=n)
    g = pt.grad(ys[-1], x0)
    graph = optimize(Graph([x0, n], [g]), "fast_run")
    forward = [node for node in loops_of(graph) if not _scan(node).reverse]
    backward = [node for node in loops_of(graph) if _scan(node).reverse]
    assert len(forward) == 1 and len(backward) == 1
    # The cotangent of `ys[-1]` seeds the backward loop: it reads no one-hot sequence.
    assert _scan(backward[0]).n_sequences == 1
    assert_lean(graph)
    np.testing.assert_allclose(evaluate(graph.outputs, {x0: 1.1, n: 4})[0], 16 * 1.1**15)


def test_second_derivative_with_a_symbolic_step_count_stays_lean() -> None:
    x0 = pt.scalar("x0")
    n = pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=n)
    h = pt.grad(pt.grad(ys[-1], x0), x0)
    graph = optimize(Graph([x0, n], [h]), "fast_run")
    assert len(loops_of(graph)) <= 4 and len(graph.nodes) < 21
    assert_lean(graph)
    np.testing.assert_allclose(evaluate(graph.outputs, {x0: 1.1, n: 4})[0], 911.3996005997793)


def test_long_loop_gradient_is_one_forward_and_one_backward_loop() -> None:
    x0 = pt.scalar("x0")
    xs = pt.scan(lambda x: 0.5 * x + pt.sin(x) + 0.1, outputs_info=[x0], n_steps=1000)
    graph = optimize(Graph([x0], [xs[-1], pt.grad(xs[-1], x0)]), "fast_run")
    assert len(loops_of(graph)) == 2 and len(graph.nodes) <= 6
    assert_lean(graph)


def _scan(node: Apply) -> Scan:
    assert isinstance(node.op, Scan)
    return node.op


# -- general rules, outside loops -----------------------------------------------------------
def test_reads_of_concatenations_read_the_parts() -> None:
    a, b = pt.vector("a", shape=(2,)), pt.vector("b", shape=(3,))
    joined = pt.concatenate([a, b])
    outputs = [joined[3], joined[1:4], pt.stack([a[0], b[1]])[1], pt.concatenate([a])]
    graph = Graph([a, b], outputs)
    rewritten = optimize(graph, "fast_compile")
    for output in rewritten.outputs[:1] + rewritten.outputs[2:]:
        assert not any(isinstance(n.op, Concatenate) for n in Graph([a, b], [output]).nodes)
    same_values(graph, rewritten, [np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])])


def test_split_of_a_concatenation_gives_the_parts() -> None:
    a, b = pt.vector("a", shape=(2,)), pt.vector("b", shape=(3,))
    first, second = split(pt.concatenate([a, b]), [2, 3])
    rewritten = optimize(Graph([a, b], [first, second]), "fast_compile")
    assert rewritten.outputs == (a, b)


def test_shared_matrix_times_stacked_columns_is_one_product() -> None:
    a = pt.matrix("a", shape=(4, 3))
    v = pt.matrix("v", shape=(None, 3))
    batched = pt.matmul(pt.expand_dims(a, 0), pt.expand_dims(v, 2))  # (n, 4, 1)
    graph = Graph([a, v], [batched])
    rewritten = optimize(graph, "fast_compile")
    (product,) = [n for n in rewritten.nodes if type(n.op).__name__ == "MatMul"]
    assert product.inputs[0] is v and product.outputs[0].ndim == 2
    rng = np.random.default_rng(3)
    same_values(graph, rewritten, [rng.normal(size=(4, 3)), rng.normal(size=(5, 3))])


def test_the_seed_discussions_missing_simplifications_exist_outside_loops() -> None:
    """expand_dims then a sum over the new axis; an increment of a slice of zeros that
    covers everything; nested increments of one region; a slice selecting everything."""
    x, y = pt.vector("x"), pt.vector("y")
    cases = [
        (pt.expand_dims(x, 0).sum(axis=0), x),
        (pt.inc_subtensor(pt.zeros_like(x)[:], x), x),
        (x[0 : x.shape[0]], x),
        (x[::1], x),
    ]
    for expression, expected in cases:
        assert optimize(Graph([x], [expression]), "fast_run").outputs == (expected,)
    nested = pt.inc_subtensor(pt.inc_subtensor(x[1:3], y)[1:3], y)
    rewritten = optimize(Graph([x, y], [nested]), "fast_run")
    assert sum(type(n.op).__name__ == "IncSubtensor" for n in rewritten.nodes) == 1


def test_power_zero_is_one() -> None:
    x = pt.vector("x")
    graph = Graph([x], [x**0.0])
    rewritten = optimize(graph, "fast_compile")
    assert not any("Pow" in str(n.op) for n in rewritten.nodes)
    same_values(graph, rewritten, [np.array([np.nan, np.inf, 0.0, 2.0])])


# -- random loops through the whole pipeline --------------------------------------------------
@given(
    plan=PLANS,
    steps=st.sampled_from([0, 1, 3, 12]),
    static=st.booleans(),
    derivative=st.integers(0, 2),
    traced=st.booleans(),
)
def test_random_loops_keep_their_values_through_fast_run(
    plan: list[tuple[int, int]], steps: int, static: bool, derivative: int, traced: bool
) -> None:
    xs = Input(TensorType("float64", (steps if static else None, 2)), "xs")
    h0 = Input(TensorType("float64", (2,)), "h0")
    w = Input(TensorType("float64", ()), "w")

    step = planned_step(plan)
    hs = pt.scan(step, sequences=[xs], outputs_info=[h0], non_sequences=[w])
    cost = hs.sum() if traced else pt.reduce(step, xs, h0, [w]).sum()
    outputs = [cost]
    if derivative >= 1:
        first = pt.grad(cost, w, disconnected_inputs="ignore")  # a plan may not read w
        outputs.append(first)
        if derivative == 2:
            outputs.append(pt.grad(first, w, disconnected_inputs="ignore"))
    graph = Graph([xs, h0, w], outputs)
    optimized = optimize(graph, "fast_run")
    rng = np.random.default_rng(steps)
    values = [rng.normal(size=(steps, 2)), rng.normal(size=2), 0.7]
    expected = evaluate(graph.outputs, dict(zip(graph.inputs, values)))
    got = evaluate(optimized.outputs, dict(zip(optimized.inputs, values)))
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
    assert optimize(optimized, "fast_run") == optimized  # idempotent


def test_invariant_per_step_output_keeps_the_loops_sequence_check() -> None:
    """Found by the loop fuzzer: a loop of 4 steps over a sequence of 3 rows fails, and
    repeating its invariant output (the loop then unused and dropped) gave a value."""
    s, z = pt.vector("s"), pt.vector("z")

    def invariant(steps: Variable) -> Graph:
        ys = pt.scan(lambda row, z: z, sequences=[s], non_sequences=[z], n_steps=steps)
        return Graph([s, z], [ys[-1]])

    short = invariant(pt.constant(4))
    assert not fires(repeat_invariant_outputs, short)
    with pytest.raises(ValueError):
        evaluate(short.outputs, {s: np.zeros(3), z: np.ones(2)})
    covered = invariant(s.shape[0])
    rewritten = apply_once(repeat_invariant_outputs, covered)
    same_values(covered, rewritten, [np.zeros(3), np.arange(2.0)])


def test_vectorized_map_keeps_the_check_of_a_sequence_no_output_reads() -> None:
    """Found by the long fuzz profile: a map of 11 steps over a 9-row sequence it does not
    read fails; vectorized (after `static_length`), the check of that sequence went with
    the loop and the program gave a value."""
    s0, s1 = pt.vector("s0"), pt.tensor("s1", shape=(15,))
    ys = pt.scan(lambda a, b: pt.tanh(b), sequences=[s0, s1], n_steps=s1.shape[0] - 4)
    graph = Graph([s0, s1], [ys[-1]])
    with pytest.raises(ValueError, match="fewer than n_steps"):
        evaluate(graph.outputs, {s0: np.zeros(9), s1: np.zeros(15)})
    optimized = optimize(graph, "fast_run")
    with pytest.raises(ValueError, match="fewer than n_steps"):
        evaluate(optimized.outputs, dict(zip(optimized.inputs, [np.zeros(9), np.zeros(15)])))
    read = pt.scan(lambda a, b: pt.tanh(a + b), sequences=[s0, s1], n_steps=s1.shape[0] - 4)
    assert not any(isinstance(n.op, Scan) for n in optimize(Graph([s0, s1], [read]), "fast_run").nodes)


def test_sequence_work_of_a_loop_that_always_fails_is_left_alone() -> None:
    """Found by the long fuzz profile: taps leave a static 9-row and 11-row sequence for
    11 steps (the loop always fails); batching their sum failed to build (ShapeError)."""
    s0, s1 = pt.tensor("s0", shape=(10, 1, 1)), pt.tensor("s1", shape=(15, 1, 1))

    def step(a: Variable, a1: Variable, b3: Variable, b: Variable, b1: Variable,
             y1: Variable, y2: Variable) -> tuple[Variable, Variable, Variable]:
        return pt.tanh(pt.tanh(a + b3)), pt.tanh(y1), pt.tanh(y1)

    ys, _, _ = pt.scan(step, sequences=[{"input": s0, "taps": [0, 1]},
                                        {"input": s1, "taps": [-3, 0, 1]}],
                       outputs_info=[None, pt.constant(0.0), pt.constant(0.0)],
                       n_steps=s1.shape[0] - 4, go_backwards=True)
    before_loops = Pipeline("before_loops", FAST_RUN.passes[: FAST_RUN.passes.index(loop_pass)])
    graph = optimize(Graph([s0, s1], [ys[-1]]), before_loops)
    assert not fires(push_out_sequence_work, graph)
    with pytest.raises(ValueError, match="fewer than n_steps"):
        evaluate(graph.outputs, {s0: np.zeros((10, 1, 1)), s1: np.zeros((15, 1, 1))})
