"""Sums of indexed scalar terms and of their pullbacks (`rewrite.indexed_terms`): each rule
on small graphs (the structure it builds, values against the reference evaluator, where
it declines), the optimized gradient of the issue-19 model, and each rule alone on random
sums of terms (duplicate, negative and out-of-range indices, matrices, varying
constants, summands that are no terms)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Apply, Constant, Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from ops.advanced_subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from ops.subtensor import IncSubtensor, Subtensor
from rewrite import RuleSet, Trace, optimize, rewrite_graph
from rewrite.indexed_terms import (
    INDEXED_TERMS,
    MIN_TERMS,
    sum_of_indexed_terms,
    sum_of_scalar_updates,
    term_of,
)
from tests.rewrite.algebra_checks import assert_same_values

TERMS = RuleSet("terms", (sum_of_indexed_terms,))
UPDATES = RuleSet("updates", (sum_of_scalar_updates,))
RNG = np.random.default_rng(0)


def model(n: int) -> tuple[Variable, Variable, Variable]:
    """The issue's model: n terms `exp(x[i]) * w[i] + log1p(x[i] ** 2) * w[i + 1]`."""
    x, w = pt.vector("x"), pt.vector("w")
    cost = sum(pt.exp(x[i]) * w[i] + pt.log1p(x[i] ** 2) * w[i + 1] for i in range(n))
    assert isinstance(cost, Variable)
    return x, w, cost


def model_gradients(x: Array, w: Array) -> tuple[float, Array, Array]:
    """The model's value and gradients in NumPy (n = len(x), len(w) = n + 1)."""
    cost = float(np.sum(np.exp(x) * w[:-1] + np.log1p(x**2) * w[1:]))
    grad_x = np.exp(x) * w[:-1] + 2 * x / (1 + x**2) * w[1:]
    grad_w = np.zeros_like(w)
    grad_w[:-1] += np.exp(x)
    grad_w[1:] += np.log1p(x**2)
    return cost, grad_x, grad_w


def total(values: list[Variable]) -> Variable:
    """The chain of additions a Python loop builds, without `sum`'s leading 0."""
    result = values[0]
    for value in values[1:]:
        result = result + value
    return result


def indices_of(node: Apply) -> list[list[int]]:
    """The constant index vectors of a gather or scatter node."""
    first = 1 if isinstance(node.op, AdvancedSubtensor) else 2
    vectors = node.inputs[first:]
    assert all(isinstance(vector, Constant) for vector in vectors)
    return [np.asarray(vector.data).tolist() for vector in vectors if isinstance(vector, Constant)]


def op_types(graph: Graph) -> Counter[str]:
    return Counter(type(node.op).__name__ for node in graph.nodes)


def rewritten(graph: Graph, rules: RuleSet) -> Graph:
    check_graph(graph)
    result = rewrite_graph(graph, rules)
    check_graph(result)
    return result


# --- each rule on small graphs -----------------------------------------------------------------
def test_a_sum_of_terms_of_one_template_is_one_sum_over_gathers() -> None:
    x, w = pt.vector("x"), pt.vector("w")
    cost = total([pt.exp(x[i]) * w[2 * i] for i in range(8)])
    graph = Graph([x, w], [cost])
    result = rewritten(graph, TERMS)
    assert op_types(result) == {"AdvancedSubtensor": 2, "Elemwise": 2, "Sum": 1}
    gathers = [
        (node.inputs[0], indices_of(node))
        for node in result.nodes
        if isinstance(node.op, AdvancedSubtensor)
    ]
    assert sorted(gathers, key=lambda gather: gather[0] is w) == [
        (x, [list(range(8))]),
        (w, [list(range(0, 16, 2))]),
    ]
    assert_same_values(graph, result, RNG.normal(size=8), RNG.normal(size=16))


def test_terms_are_grouped_by_template_and_the_rest_is_kept() -> None:
    x, s = pt.vector("x"), pt.scalar("s")
    terms = [pt.exp(x[i]) for i in range(5)] + [pt.sin(x[i]) * s for i in range(4)]
    cost = s * 2.0 + sum(terms) + pt.cos(x[0])  # the first and last are no group
    graph = Graph([x, s], [cost])
    result = rewritten(graph, TERMS)
    assert op_types(result)["Sum"] == 2
    assert op_types(result)["Subtensor"] == 1  # cos(x[0]) stays scalar code
    assert_same_values(graph, result, RNG.normal(size=6), np.array(0.7))


def test_constants_that_vary_from_term_to_term_become_a_constant_vector() -> None:
    x = pt.vector("x")
    cost = sum(float(i + 1) * pt.log1p(x[i] ** 2) for i in range(6))
    assert isinstance(cost, Variable)
    graph = Graph([x], [cost])
    result = rewritten(graph, TERMS)
    assert op_types(result)["Subtensor"] == 0 and op_types(result)["Sum"] == 1
    assert_same_values(graph, result, RNG.normal(size=6))


def test_fewer_terms_than_the_minimum_stay_scalar_code() -> None:
    x = pt.vector("x")
    cost = sum(pt.exp(x[i]) for i in range(MIN_TERMS - 1))
    assert isinstance(cost, Variable)
    graph = Graph([x], [cost])
    assert rewrite_graph(graph, INDEXED_TERMS) is graph


def test_a_partial_sum_read_elsewhere_ends_a_chain() -> None:
    """The partial sum is an output too: it is vectorized on its own, and the chain
    reading it starts there (no term is computed twice)."""
    x = pt.vector("x")
    first = sum(pt.exp(x[i]) for i in range(5))
    total = first + sum(pt.exp(x[i]) for i in range(5, 10))
    assert isinstance(first, Variable) and isinstance(total, Variable)
    graph = Graph([x], [first, total])
    result = rewritten(graph, TERMS)
    gathered = [n for n in result.nodes if isinstance(n.op, AdvancedSubtensor)]
    assert [indices_of(n) for n in gathered] == [[list(range(5))], [list(range(5, 10))]]
    assert_same_values(graph, result, RNG.normal(size=10))


def test_a_term_too_large_is_left_alone() -> None:
    x, s = pt.vector("x"), pt.scalar("s")
    deep: Variable = s
    for _ in range(300):  # a shared computation larger than MAX_TERM_NODES
        deep = pt.sin(deep) + s
    assert term_of(pt.exp(x[0]) * deep) is None
    cost = sum(pt.exp(x[i]) * deep for i in range(6))
    assert isinstance(cost, Variable)
    graph = Graph([x, s], [cost])
    assert rewrite_graph(graph, TERMS) is graph


def test_updates_of_zeros_at_single_elements_become_one_scatter_add() -> None:
    x, w = pt.vector("x"), pt.vector("w")
    zeros = pt.zeros_like(x)
    gradient = sum(pt.set_subtensor(zeros[i], pt.exp(w[i])) for i in range(6))
    assert isinstance(gradient, Variable)
    graph = Graph([x, w], [gradient])
    result = rewritten(graph, UPDATES)
    (scatter,) = [n for n in result.nodes if isinstance(n.op, AdvancedIncSubtensor)]
    assert isinstance(scatter.op, AdvancedIncSubtensor)
    assert not scatter.op.set_instead_of_inc  # repeated positions accumulate
    assert op_types(result)["IncSubtensor"] == 0
    assert_same_values(graph, result, RNG.normal(size=6), RNG.normal(size=6))


def test_updates_whose_values_fit_no_template_are_increments_of_one_buffer() -> None:
    x = pt.vector("x")
    zeros = pt.zeros_like(x)
    gradient = pt.set_subtensor(zeros[0], pt.exp(x[1])) + pt.inc_subtensor(zeros[2], pt.sin(x[0]))
    graph = Graph([x], [gradient])
    result = rewritten(graph, UPDATES)
    assert op_types(result)["IncSubtensor"] == 2 and op_types(result)["Elemwise"] == 2
    updates = [n for n in result.nodes if isinstance(n.op, IncSubtensor)]
    assert updates[1].inputs[0] == updates[0].out  # the second increments the first
    assert_same_values(graph, result, RNG.normal(size=3))


def test_summands_of_written_values_are_grouped_apart() -> None:
    """Each value is a sum: its first summands form a template, the others do not; the
    first are one scatter-add, the others stay one increment each."""
    x = pt.vector("x")
    zeros = pt.zeros_like(x)
    others = [pt.sin(x[0]), pt.cos(x[1]), pt.tanh(x[2]), x[3] * x[0], pt.exp(x[1])]
    gradient = total(
        [pt.set_subtensor(zeros[k], pt.exp(x[k]) * 2.0 + other) for k, other in enumerate(others)]
    )
    graph = Graph([x], [gradient])
    result = rewritten(graph, UPDATES)
    assert op_types(result)["AdvancedIncSubtensor"] == 1
    assert op_types(result)["IncSubtensor"] == len(others)
    assert_same_values(graph, result, RNG.normal(size=5))


def test_repeated_and_negative_positions_accumulate() -> None:
    x = pt.vector("x")
    zeros = pt.zeros_like(x)
    positions = [0, 2, -1, 0, 3, -4]  # x[-1] and x[3], x[-4] and x[0] are the same element
    gradient = sum(pt.inc_subtensor(zeros[k], pt.exp(x[k]) * float(k)) for k in positions)
    assert isinstance(gradient, Variable)
    graph = Graph([x], [gradient])
    result = rewritten(graph, UPDATES)
    assert op_types(result)["AdvancedIncSubtensor"] == 1
    values = RNG.normal(size=4)
    expected = np.zeros(4)
    np.add.at(expected, positions, np.exp(values[positions]) * np.array(positions, dtype=float))
    (got,) = evaluate(result.outputs, {x: values})
    np.testing.assert_allclose(got, expected)


def test_updates_of_rows_are_left_alone() -> None:
    """Only single elements are scattered: updates of rows (values of rank 1) are not."""
    m, v = pt.matrix("m"), pt.vector("v")
    zeros = pt.zeros_like(m)
    gradient = sum(pt.set_subtensor(zeros[i], pt.exp(v) * float(i)) for i in range(5))
    assert isinstance(gradient, Variable)
    graph = Graph([m, v], [gradient])
    assert rewrite_graph(graph, INDEXED_TERMS) is graph


def test_scalar_reads_of_a_matrix_gather_with_one_index_vector_per_axis() -> None:
    m, v = pt.matrix("m"), pt.vector("v")
    positions = [(0, 1), (1, 2), (2, 0), (1, 1), (-1, -2)]
    cost = total([pt.exp(m[i, j]) * v[i] for i, j in positions])
    graph = Graph([m, v], [cost, pt.grad(cost, m)])
    result = rewritten(graph, INDEXED_TERMS)
    (gather,) = [n for n in result.nodes if isinstance(n.op, AdvancedSubtensor) and n.inputs[0] is m]
    # Terms in the order of their positions (so that groups reading alike share gathers).
    assert indices_of(gather) == [[-1, 0, 1, 1, 2], [-2, 1, 1, 2, 0]]
    assert op_types(result)["AdvancedIncSubtensor"] == 1
    assert_same_values(graph, result, RNG.normal(size=(3, 3)), RNG.normal(size=3))


def test_rows_of_a_matrix_read_by_each_term_are_left_alone() -> None:
    m, w = pt.matrix("m"), pt.vector("w")
    cost = sum(pt.sum(pt.exp(m[i])) * w[i] for i in range(6))  # a row each: no template
    assert isinstance(cost, Variable)
    graph = Graph([m, w], [cost, *pt.grad(cost, [m])])
    trace = Trace()
    rewrite_graph(graph, INDEXED_TERMS, trace=trace)
    assert trace.rule_names == ()


# --- the model through the pipelines ---------------------------------------------------
def scatters_into(gradient: Variable) -> list[list[list[int]]]:
    """The index vectors of the chain of scatter-adds computing `gradient`, last first."""
    found = []
    while gradient.owner is not None and isinstance(gradient.owner.op, AdvancedIncSubtensor):
        found.append(indices_of(gradient.owner))
        gradient = gradient.owner.inputs[0]
    return found


@pytest.mark.parametrize("mode", ["fast_run", "fast_compile"])
def test_the_optimized_gradient_of_n_terms_has_one_gather_and_one_scatter_per_read(
    mode: str,
) -> None:
    """x[i], w[i] and w[i + 1] (i < n) are each one gather of the cost and its gradient,
    and the pullbacks of each are one scatter-add: one into x's gradient, two into w's."""
    shapes = []
    for n in (10, 40):
        x, w, cost = model(n)
        graph = Graph([x, w], [cost, *pt.grad(cost, [x, w])])
        optimized = optimize(graph, mode)
        check_graph(optimized)
        types = op_types(optimized)
        assert types["Subtensor"] == types["IncSubtensor"] == 0, dict(types)
        gathers = [
            (node.inputs[0], indices_of(node))
            for node in optimized.nodes
            if isinstance(node.op, AdvancedSubtensor)
        ]
        first, second = list(range(n)), list(range(1, n + 1))
        assert sorted(gathers, key=str) == sorted(
            [(x, [first]), (w, [first]), (w, [second])], key=str
        )
        _, grad_x, grad_w = optimized.outputs
        assert scatters_into(grad_x) == [[first]]
        assert sorted(scatters_into(grad_w)) == [[first], [second]]
        shapes.append(types)
        values = RNG.normal(size=n), RNG.normal(size=n + 1)
        expected = model_gradients(*values)
        got = evaluate(optimized.outputs, dict(zip(optimized.inputs, values)))
        for have, want in zip(got, expected):
            np.testing.assert_allclose(have, np.asarray(want), rtol=1e-12)
    assert shapes[0] == shapes[1]  # the optimized graph does not grow with n


def test_out_of_range_reads_still_raise() -> None:
    x, w, cost = model(8)
    graph = Graph([x, w], [cost, *pt.grad(cost, [x, w])])
    optimized = optimize(graph, "fast_run")
    short = {x: RNG.normal(size=5), w: RNG.normal(size=9)}
    with pytest.raises(IndexError):
        evaluate(graph.outputs, short)
    with pytest.raises(IndexError):
        evaluate(optimized.outputs, dict(zip(optimized.inputs, short.values())))


# --- each rule alone on random sums of terms ---------------------------------------------------
class RandomTerms:
    """A random sum of scalar terms: a few templates (random expressions over read
    slots, constant slots and a shared scalar), each instantiated at random positions
    (repeated, negative, sometimes out of range) of a vector and a matrix, shuffled with
    summands that are no terms; outputs the sum and its gradients."""

    UNARY: tuple[Callable[[Variable], Variable], ...] = (pt.exp, pt.sin, pt.tanh, pt.log1p)

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.length = self.rng.randint(3, 6)
        static = self.rng.random() < 0.5
        self.x = pt.tensor("x", shape=(self.length,) if static else (None,))
        self.m = pt.matrix("m")
        self.s = pt.scalar("s")

    def leaf(self, kind: int) -> Variable:
        if kind == 0:
            if self.rng.random() < 0.03 and self.x.type.shape[0] is None:
                return self.x[self.length]
            return self.x[self.rng.randint(-self.length, self.length - 1)]
        if kind == 1:
            return self.m[self.rng.randint(-3, 2), self.rng.randint(0, 1)]
        if kind == 2:
            return pt.constant(self.rng.choice([0.5, 1.5, -2.0]))
        return self.s

    def template(self) -> Callable[[], Variable]:
        """A random expression shape; calling it instantiates it at fresh positions."""
        kinds = [self.rng.randint(0, 3) for _ in range(self.rng.randint(1, 3))]
        shape = [(self.rng.randint(0, 3), self.rng.randint(0, 3)) for _ in range(len(kinds))]

        def build() -> Variable:
            value = self.leaf(kinds[0])
            for kind, (unary, binary) in zip(kinds[1:], shape):
                value = self.UNARY[unary](value)
                other = self.leaf(kind)
                value = (value * other, value + other, value - other, value * value)[binary]
            return pt.tanh(value) if value.owner is None else value

        return build

    def graph(self) -> Graph:
        templates = [self.template() for _ in range(self.rng.randint(1, 3))]
        summands = [
            templates[self.rng.randrange(len(templates))]() for _ in range(self.rng.randint(4, 14))
        ]
        summands += [pt.sum(self.x) * self.s, pt.cos(self.s)][: self.rng.randint(0, 2)]
        self.rng.shuffle(summands)
        cost = summands[0]
        for summand in summands[1:]:
            cost = cost + summand
        gradients = pt.grad(cost, [self.x, self.m, self.s], disconnected_inputs="ignore")
        return Graph([self.x, self.m, self.s], [cost, *gradients])

    def values(self) -> tuple[Array, ...]:
        return (
            np.asarray(RNG.uniform(-1, 1, size=self.length)),
            np.asarray(RNG.uniform(-1, 1, size=(3, 2))),
            np.array(RNG.uniform(-1, 1)),
        )


def outputs_or_error(graph: Graph, values: tuple[Array, ...]) -> list[Array] | type[Exception]:
    try:
        return evaluate(graph.outputs, dict(zip(graph.inputs, values)))
    except IndexError:
        return IndexError


@pytest.mark.parametrize(
    "rules", [TERMS, UPDATES, INDEXED_TERMS], ids=lambda rules: rules.name
)
def test_each_rule_alone_keeps_values_and_errors_on_random_sums(rules: RuleSet) -> None:
    fired = errors = 0
    for seed in range(120):
        builder = RandomTerms(seed)
        graph = builder.graph()
        trace = Trace()
        check_graph(graph)
        result = rewrite_graph(graph, rules, trace=trace)
        check_graph(result)
        fired += bool(trace.rule_names)
        values = builder.values()
        want, got = outputs_or_error(graph, values), outputs_or_error(result, values)
        if want is IndexError:
            assert got is IndexError, f"seed {seed}: the out-of-range read no longer raises"
            errors += 1
            continue
        assert not isinstance(got, type), f"seed {seed}: raised where the original did not"
        assert not isinstance(want, type)
        for have, expected in zip(got, want):
            assert have.dtype == expected.dtype and have.shape == expected.shape
            np.testing.assert_allclose(have, expected, rtol=1e-10, atol=1e-12, err_msg=f"seed {seed}")
        assert rewrite_graph(result, rules) is result, f"seed {seed}: not a fixpoint"
    assert fired > 30 and errors > 0, (fired, errors)


def test_the_pipelines_keep_values_on_random_sums() -> None:
    for seed in range(40):
        builder = RandomTerms(seed)
        graph = builder.graph()
        values = builder.values()
        want = outputs_or_error(graph, values)
        for mode in ("fast_run", "fast_compile"):
            optimized = optimize(graph, mode)
            got = outputs_or_error(optimized, values)
            if want is IndexError or isinstance(got, type):
                assert got is want, f"seed {seed} {mode}"
                continue
            assert not isinstance(want, type)
            for have, expected in zip(got, want):
                np.testing.assert_allclose(have, expected, rtol=1e-9, atol=1e-12, err_msg=f"seed {seed}")
            assert optimize(optimized, mode) == optimized, f"seed {seed} {mode}: not idempotent"
