"""Translation validation of the loop rewrites: each loop rule alone, each trace
transformation alone, and the merge pass, on small random loop programs, leave the
values and the errors of the graph they rewrite as they were (an error before is an
error of the same class after).

The programs mix what the rewrites look at: carries that are also per-step outputs,
sums a carry accumulates, work on rows or on non-sequences alone, unread or doubled
sequences, constant inputs, sequence taps, reversed iteration, while-loops, zero, one
or many steps, step counts that are constant, folded to a constant, symbolic or read
off the sequence, sequences shorter than the step count, traces read as `[-1]`, `[0]`,
`[:k]`, `[-k:]`, rows near the end and sums, a second loop over the same steps, the
twin a loop's derivative builds. Each is rewritten at a few stages of the `fast_run`
pipeline (rules fire on simplified loops too), and one deterministic sample checks
that every rule fires on some of them.
"""

from __future__ import annotations

import collections
import functools
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import attrs
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from rewrite import RewriteError, RuleSet, Trace, rewrite_graph, rule_pass
from rewrite.loops import LOOP_RULES, loop_pass
from rewrite.loops_merge import MERGES, merge_loops
from rewrite.loops_trace import TRACE_TRANSFORMS, trim_traces
from rewrite.pipelines import SIMPLIFY, SIMPLIFY_AND_LIFT
from rewrite.rules import AnyRule

T = TypeVar("T")
Outcome = tuple[str, Any]


class Choices(Protocol):
    def integer(self, low: int, high: int) -> int: ...


@attrs.frozen
class DataChoices:
    data: st.DataObject

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


@attrs.frozen
class RandomChoices:
    rng: random.Random

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


def pick(choose: Choices, options: Sequence[T]) -> T:
    return options[choose.integer(0, len(options) - 1)]


@attrs.frozen
class Program:
    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    values: tuple[Any, ...]


# -- drawing a program -------------------------------------------------------------------------
def draw_program(choose: Choices) -> Program | None:
    """A random loop program, or None when `pt.scan` rejects it as built."""
    rng = np.random.default_rng(choose.integer(0, 1000))
    rows = choose.integer(0, 6)
    s = pt.matrix("s", shape=(pick(choose, (rows, None)), 2))
    w, c0 = pt.vector("w", shape=(2,)), pt.vector("c0", shape=(2,))
    inputs: list[Variable] = [s, w, c0]
    values: list[Any] = [rng.normal(size=(rows, 2)), rng.normal(size=2), rng.normal(size=2)]
    mode = pick(choose, ("sequence", "constant", "folded", "symbolic", "constant only",
                         "symbolic only"))
    steps: Variable | int | None = None
    if mode in ("constant", "constant only"):
        steps = choose.integer(0, 6)
    elif mode == "folded":  # a constant only once simplified
        steps = pt.constant(np.int64(choose.integer(0, 6))) + 0
    elif mode in ("symbolic", "symbolic only"):
        n = pt.scalar("n", dtype="int64")
        inputs.append(n)
        values.append(choose.integer(-1, 6))
        steps = n
    sequences: list[Any] = []
    if not mode.endswith("only"):
        sequences = pick(choose, (
            [s], [s], [dict(input=s, taps=[-1, 0])], [s, s],
            [pt.constant(np.full((rows, 2), 0.5))],
        ))
    backwards = bool(sequences) and choose.integer(0, 3) == 0
    shared = pick(choose, (w, w, pt.constant(np.array([0.5, -0.25]))))
    n_carries = choose.integer(0, 2)
    updates = [pick(choose, ("row sum", "row sum", "invariant sum", "recurrence", "shift",
                             "carry sum")) for _ in range(n_carries)]
    n_ys = choose.integer(0 if n_carries else 1, 2)
    ys_kinds = [pick(choose, ("new carry", "new carry", "row work", "invariant", "carry twice"))
                for _ in range(n_ys)]
    stop = n_carries > 0 and choose.integer(0, 4) == 0
    traced = choose.integer(0, 2) > 0

    def step(*arguments: Variable) -> Any:
        row_values = arguments[: len(arguments) - n_carries - 1]
        carries = arguments[len(row_values) : len(row_values) + n_carries]
        weights = arguments[-1]
        invariant = pt.exp(weights) * 0.5
        row_work = pt.sin(row_values[0]) * weights if row_values else weights * 0.3
        for extra in row_values[1:]:
            row_work = row_work + extra
        new: list[Variable] = []
        for k, (carry, update) in enumerate(zip(carries, updates)):
            other = carries[(k + 1) % n_carries]
            new.append({
                "row sum": carry + row_work,
                "invariant sum": carry + invariant,
                "recurrence": pt.tanh(carry * 0.5 + row_work),
                "shift": other * 1.0 if other is not carry else carry + 1.0,
                "carry sum": carry + other * 0.5,
            }[update])
        ys = []
        for kind in ys_kinds:
            if kind == "new carry" and new:
                ys.append(new[0])
            elif kind == "carry twice" and carries:
                ys.append(carries[-1] * 2.0)
            elif kind == "invariant":
                ys.append(invariant + row_work)
            else:
                ys.append(row_work * 1.5)
        returned = (*new, *ys)
        return (returned, pt.until(new[0].sum() > 1.5)) if stop else returned

    arguments: dict[str, Any] = dict(sequences=sequences, outputs_info=[c0] * n_carries
                                     + [None] * n_ys, non_sequences=[shared])
    try:
        outputs = _build(choose, step, steps, backwards, arguments, traced, w, c0)
    except (TypeError, ValueError, IndexError):  # rejected as built (a static misfit)
        return None
    return Program(tuple(inputs), tuple(outputs), tuple(values))


def _build(choose: Choices, step: Callable[..., Any], steps: Variable | int | None,
           backwards: bool, arguments: dict[str, Any], traced: bool, w: Variable,
           c0: Variable) -> list[Variable]:
    """The loop, its twin (the other of scan/reduce), and the reads of the program."""
    build, other = (pt.scan, pt.reduce) if traced else (pt.reduce, pt.scan)
    results = build(step, n_steps=steps, go_backwards=backwards, **arguments)
    returned = list(results) if isinstance(results, tuple) else [results]
    outputs = [_read(choose, value, traced) for value in returned]
    extra = pick(choose, ("none", "none", "twin", "second loop", "gradient"))
    if extra == "twin":
        twin = other(step, n_steps=steps, go_backwards=backwards, **arguments)
        outputs.append((twin[0] if isinstance(twin, tuple) else twin).sum())
    elif extra == "second loop" and arguments["sequences"]:
        outputs.append(pt.reduce(lambda *a: a[-1] + pt.cos(a[0]), arguments["sequences"][:1],
                                 c0, n_steps=steps).sum())
    elif extra == "gradient":
        cost = sum((o.sum() for o in outputs), (w * w).sum())
        outputs.append(pt.grad(cost, w, disconnected_inputs="ignore"))
    return outputs


def _read(choose: Choices, value: Variable, traced: bool) -> Variable:
    if not traced:
        return value
    k = choose.integer(1, 3)
    read = pick(choose, ("last", "first", "prefix", "suffix", "sum", "near end", "whole",
                         "initial row"))
    if read == "initial row" and value.owner is not None and value.owner.inputs:
        return value.owner.inputs[0][0]
    return {
        "last": lambda: value[-1],
        "first": lambda: value[0],
        "prefix": lambda: value[:k],
        "suffix": lambda: value[-k:],
        "sum": lambda: value.sum(),
        "near end": lambda: value[-k],
        "whole": lambda: value,
    }.get(read, lambda: value[-1])()


# -- checking ---------------------------------------------------------------------------------
def outcome(graph: Graph, values: Sequence[Any]) -> Outcome:
    try:
        return "values", evaluate(graph.outputs, dict(zip(graph.inputs, values)))
    except Exception as error:  # the error itself is the outcome being compared
        return "error", type(error)


def assert_same_outcome(before: Outcome, after: Outcome, what: str) -> None:
    if after[0] == "build error":  # see `rewritten_outcome`
        assert before[0] == "error", f"{what}: values became {after[1].__name__} when built"
        return
    if before[0] == "error":
        assert after[0] == "error", f"{what}: {before[1].__name__} became values"
        assert issubclass(after[1], before[1]), f"{what}: {before[1]} became {after[1]}"
        return
    assert after[0] == "values", f"{what}: values became {after[1].__name__}"
    for got, expected in zip(after[1], before[1]):
        assert got.shape == expected.shape and got.dtype == expected.dtype, what
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=what)


def _one_rule(entry: AnyRule) -> Callable[[Graph], Graph]:
    rules = RuleSet(entry.name, (entry,))

    def run(graph: Graph) -> Graph:
        trace = Trace()
        rewritten = rewrite_graph(graph, rules, trace=trace)
        assert (rewritten is not graph) == bool(trace.fired)
        return rewritten

    return run


REWRITES: dict[str, Callable[[Graph], Graph]] = {
    **{entry.name: _one_rule(entry) for entry in LOOP_RULES.rules},
    **{t.__name__: functools.partial(trim_traces, transforms=(t,)) for t in TRACE_TRANSFORMS},
    **{m.__name__: functools.partial(merge_loops, merges=(m,)) for m in MERGES},
    "merge_loops": merge_loops,
}
"""Each loop rule alone, each trace transformation alone, each merge and the merge pass."""


def stages(graph: Graph) -> list[Graph]:
    """The graph as written, simplified, with static lengths, and after the loop pass."""
    simplified = rule_pass(SIMPLIFY)(graph)
    with_lengths = rule_pass(SIMPLIFY)(REWRITES["static_length"](simplified))
    looped = rule_pass(SIMPLIFY_AND_LIFT)(loop_pass(with_lengths))
    return [graph, simplified, with_lengths, looped]


def rewritten_outcome(rewrite: Callable[[Graph], Graph], graph: Graph,
                      values: Sequence[Any]) -> tuple[Graph | None, Outcome]:
    """The rewritten graph and its outcome. A static length a rewrite gives a trace can
    make a read of it fail as it is built (a row out of range), as it does when a user
    builds the read with a constant step count: such a "build error", raised while
    rewriting a graph that fails when run, is its outcome then, whatever its class (the
    run-time failure it stands for may be another one, raised first). A rule that raises
    is a `RewriteError`, never taken for one."""
    try:
        rewritten = rewrite(graph)
    except (IndexError, ValueError) as error:
        assert not isinstance(error, RewriteError)
        return None, ("build error", type(error))
    return rewritten, outcome(rewritten, values)


def check_program(program: Program) -> collections.Counter[str]:
    """Check every rewrite on every stage; returns how often each changed a graph."""
    graph = Graph(program.inputs, program.outputs)
    expected = outcome(graph, program.values)
    fired: collections.Counter[str] = collections.Counter()
    try:
        staged = stages(graph)
    except (IndexError, ValueError) as error:  # as in `rewritten_outcome`
        assert not isinstance(error, RewriteError)
        assert_same_outcome(expected, ("build error", type(error)), "stages")
        return fired
    for number, stage in enumerate(staged):
        before = outcome(stage, program.values)
        assert_same_outcome(expected, before, f"stage {number}")
        for name, rewrite in REWRITES.items():
            rewritten, after = rewritten_outcome(rewrite, stage, program.values)
            if rewritten is stage:
                continue
            fired[name] += 1
            if rewritten is not None:
                check_graph(rewritten)
            assert_same_outcome(before, after, f"{name} at stage {number}")
    return fired


@given(st.data())
def test_each_loop_rewrite_keeps_values_and_errors(data: st.DataObject) -> None:
    program = draw_program(DataChoices(data))
    if program is not None:
        check_program(program)


def test_every_loop_rewrite_fires_on_some_programs() -> None:
    choose = RandomChoices(random.Random(18))
    fired: collections.Counter[str] = collections.Counter()
    for _ in range(150):
        program = draw_program(choose)
        if program is not None:
            fired += check_program(program)
    assert set(REWRITES) <= set(fired), f"never fired: {sorted(set(REWRITES) - set(fired))}"
