"""The differential loop fuzzer (issue 18): random loop programs (`tests.loop_programs`)
computed every way the project computes them, which must all agree.

For each drawn program (its transform, `pt.grad`, a Hessian-vector product, `pt.jvp` or
`pt.vmap`, included):

- (a) `evaluate` of the graph as built: the reference;
- the NumPy model of PyTensor's loop semantics (`loop_programs.model`), an oracle
  independent of fgraph: values, and derivatives along a direction by central (and,
  for Hessians, second) differences;
- (b) `evaluate` after each loop rewrite rule alone (`loop_rules`), on the graph the
  passes before the loop pass leave and on that graph once `remove_unused` ran
  (translation validation: every rule preserves values and errors);
- (c) `evaluate` after `optimize(graph, "fast_run")`;
- (d) the compiled function (also with `parallel=True`, once its open defect is fixed:
  see `OPEN_DEFECTS`).

Errors must match errors: where the reference raises ValueError or IndexError the others
raise the same class, and a rewrite never turns an error into a value (nor a value into
an error). A rewrite that builds a broken graph (a missing input, a TypeError) or code
numba rejects fails the test as such.

Throughput: an example holds several programs; those the reference computes are
compiled as the outputs of one function and the erroring ones one by one (an error ends
the whole call). A disagreement of a group is narrowed to the program that shows it
alone. The uncompiled checks (everything but (d)) run on more programs of their own.
The default "ci" profile runs half the uncompiled examples; `--hypothesis-profile=long`
runs their full share. (The compiled examples' time is that of a few costly compiles,
with `parallel=True` mostly: fewer examples draw other programs, not cheaper ones.)
`LOOP_FUZZ_COUNTS` counts what was checked; the module prints it at its end (`-s`).
`test_every_loop_rule_fires_on_drawn_programs` keeps the translation validation from
being empty.
"""

from __future__ import annotations

import functools
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fgraph import Apply, Graph, MissingInputError, Variable, evaluate
from fgraph.traverse import rebuild
from numba_backend import function
from ops.scan_op import Scan
from ops.subtensor import Subtensor
from rewrite import optimize
from rewrite.engine import rewrite_graph
from rewrite.loops import LOOP_RULES as RULE_SET
from rewrite.loops import loop_pass
from rewrite.loops_merge import MERGES, merge_loops
from rewrite.loops_trace import TRACE_TRANSFORMS, trim_traces
from rewrite.rules import RuleSet
from rewrite.inner import map_inner_graphs
from rewrite.pipeline import Pass, Pipeline
from rewrite.pipelines import FAST_RUN
from tests.graph_strategies import scaled_examples
from tests.loop_programs import Array, Built, Program, build, enabled, model, programs

LOOP_FUZZ_COUNTS: Counter[str] = Counter()
"""Programs and their loops checked (uncompiled and compiled), functions compiled, and
firings of each loop rule over the examples of this run."""
LOOP_FUZZ_SECONDS: defaultdict[str, float] = defaultdict(float)
"""CPU seconds (this process's, so other work on the machine does not count) spent on
the uncompiled and the compiled examples, and on compiling."""


# --- the loop rules, one at a time ------------------------------------------------------------
PRE_LOOPS = Pipeline("before_loops", FAST_RUN.passes[: FAST_RUN.passes.index(loop_pass)])
"""The fast_run passes before its first loop pass: the loop rules see graphs as
canonicalized as they are there."""


@attrs.frozen
class RuleAlone:
    """One loop rewrite applied alone, in loop bodies (innermost first) and then in the
    graph: a one-rule `RuleSet` run by `rewrite_graph`, one trace transformation, or one
    merge."""

    name: str
    apply: Callable[[Graph], Graph]

    def __call__(self, graph: Graph) -> Graph:
        return self.apply(map_inner_graphs(graph, self))


def loop_rules() -> dict[str, Pass]:
    """Each loop rewrite alone, by name, as a pass: the rules of `rewrite.loops.LOOP_RULES`,
    the trace transformations of `trim_traces` and the merges of `merge_loops`."""
    rules: dict[str, Pass] = {}
    for entry in RULE_SET.rules:
        one = RuleSet(entry.name, (entry,))
        rules[entry.name] = RuleAlone(entry.name, functools.partial(rewrite_graph, rules=one))
    for transform in TRACE_TRANSFORMS:
        name = transform.__name__
        rules[name] = RuleAlone(name, functools.partial(trim_traces, transforms=(transform,)))
    for merge in MERGES:
        name = merge.__name__
        rules[name] = RuleAlone(name, functools.partial(merge_loops, merges=(merge,)))
    return rules


LOOP_RULES = loop_rules()


def changed(before: Graph, after: Graph) -> bool:
    """Whether a rule changed the graph. Structural equality, not identity: a pass may
    rebuild an unchanged graph (`map_inner_graphs` swaps an inner graph for an equal
    one)."""
    return after is not before and after != before


# --- outcomes and their comparison ------------------------------------------------------------
@attrs.frozen
class Raised:
    """A run that raised one of the errors a user may see at run time."""

    kind: str
    message: str


Outcome = list[Array] | Raised


def outcome(run: Callable[[], Sequence[Array]]) -> Outcome:
    """The results of `run`, or the run-time error it raised: IndexError or ValueError
    (a graph missing an input is a broken rewrite, never what a user's values cause)."""
    try:
        return [np.asarray(value) for value in run()]
    except IndexError as error:  # before ValueError: neither derives from the other
        return Raised("IndexError", str(error))
    except MissingInputError as error:
        return Raised("MissingInputError", str(error))
    except ValueError as error:
        return Raised("ValueError", str(error))


def _same_empty(got: tuple[int, ...], want: tuple[int, ...]) -> bool:
    """Empty arrays equal up to their first empty axis: the lengths after it are the
    row shape of an empty trace, which a loop takes from static types (unknown: 0), a
    rewritten graph sometimes from the values the rows would be made of, and the NumPy
    model from a call of the step."""
    if len(got) != len(want) or 0 not in want:
        return False
    first = want.index(0) + 1
    return got[:first] == want[:first]


def tolerances(dtype: np.dtype[np.generic]) -> tuple[float, float]:
    """(rtol, atol) for results of `dtype`: rewrites reorder float operations."""
    if dtype == np.float32:
        return 2e-3, 2e-3
    if dtype.kind == "f":
        return 1e-7, 1e-9
    return 0.0, 0.0


def disagreement(
    got: Outcome, want: Outcome, same_error: bool = True, tolerance: float | None = None
) -> str | None:
    """What differs between two outcomes (None: they agree). `same_error`: errors must
    be of the same class (against the NumPy model any error will do: fgraph raises some
    at build time, before the run-time checks PyTensor would raise first). Empty results
    agree up to their first empty axis: a rewrite may know the rows of an empty trace
    better than the loop (a repeated invariant output's rows have its value's lengths,
    where the loop's unknown ones are 0). `tolerance`:
    rtol and atol instead of the dtype's, and no dtype check (finite differences)."""
    if isinstance(want, Raised) or isinstance(got, Raised):
        if isinstance(want, Raised) and isinstance(got, Raised):
            same = _error_class(got.kind) == _error_class(want.kind) or not same_error
            return None if same else f"raised {got} where the reference raised {want}"
        return f"gave {got!r} where the reference gave {want!r}"
    if len(got) != len(want):
        return f"{len(got)} results where the reference has {len(want)}"
    for number, (g, w) in enumerate(zip(got, want)):
        if tolerance is None and g.dtype != w.dtype:
            return f"result {number}: dtype {g.dtype}, reference {w.dtype}"
        if g.shape != w.shape and not _same_empty(g.shape, w.shape):
            return f"result {number}: shape {g.shape}, reference {w.shape}"
        if g.size == 0:
            continue
        rtol, atol = tolerances(w.dtype) if tolerance is None else (tolerance, tolerance)
        finite = np.abs(w[np.isfinite(w)]) if w.dtype.kind == "f" else np.zeros(0)
        scale = max(1.0, float(np.max(finite, initial=0.0)))  # an inf would pass anything
        if not np.allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True):
            return f"result {number}:\n{g}\nreference:\n{w}"
    return None


_RUN_TIME_CHECKS = frozenset({"IndexError", "ValueError", "ShapeError"})
"""The errors of run-time checks (an index out of bounds, a length that does not fit).
A program can fail two of them in independent nodes, and which runs first is not fixed:
a rewrite may order them otherwise (a static loop length lets a pullback's zeros, and
the out-of-bounds update into them, run before the loop whose sequence is too short)."""


def _error_class(kind: str) -> str:
    return "a run-time check" if kind in _RUN_TIME_CHECKS else kind


# --- one program: the reference and the NumPy model ----------------------------------------------
@attrs.frozen(eq=False)
class Checked:
    """A program built and evaluated as built."""

    program: Program
    built: Built
    reference: Outcome


def reference_of(program: Program) -> Checked | None:
    """The program built and its reference outcome, checked against the NumPy model;
    None when building it raised (the model must then raise too)."""
    expected = _model_outcome(program)
    try:
        built = build(program)
    except (ValueError, IndexError) as error:
        found = disagreement(outcome(lambda: _raise(error)), expected, same_error=False)
        assert found is None, _report("building (a static check)", found, [program])
        return None
    reference = outcome(lambda: evaluate(list(built.outputs), dict(zip(built.inputs, built.values))))
    checked = Checked(program, built, reference)
    if isinstance(reference, Raised) or isinstance(expected, Raised) or program.transform.kind in (
        "none", "vmap"
    ):
        found = disagreement(reference, expected, same_error=False)
        assert found is None, _report("the reference against the NumPy model", found, [program])
    else:
        _check_derivatives(checked, expected)
    return checked


def _raise(error: Exception) -> list[Array]:
    raise error


def _model_outcome(program: Program) -> Outcome:
    """The model's results of the program's transform where they are values (vmap), else
    of the program itself (the derivatives are checked against differences)."""
    transform = program.transform
    if transform.kind != "vmap":
        return outcome(lambda: model(program))
    batched = transform.wrt[0]
    examples = [_model_with(program, {batched: value}) for value in transform.directions[0].value()]
    for example in examples:
        if isinstance(example, Raised):
            return example
    return [np.stack(results) for results in zip(*(e for e in examples if not isinstance(e, Raised)))]


def _model_with(program: Program, values: Mapping[str, Array]) -> Outcome:
    return outcome(lambda: model(program, values))


EPSILON = 1e-6
"""The step of the central differences (float64 programs only)."""
EPSILON_SECOND = 1e-4
"""The step of the second differences (Hessians)."""


def _check_derivatives(checked: Checked, forward: list[Array]) -> None:
    """grad: the cost against the model's, and the gradient along the directions against
    central differences of the model's cost; hessian: the Hessian along the directions
    twice against second differences of the model's cost; jvp: the tangents against
    central differences of the model's results."""
    program, reference = checked.program, checked.reference
    assert not isinstance(reference, Raised)
    transform = program.transform
    if transform.kind == "jvp":
        primal, derivatives = reference[: len(forward)], reference[len(forward) :]
        found = disagreement(primal, forward, same_error=False)
    else:
        primal, derivatives = reference[:1], reference[1:]
        found = disagreement(primal, [np.asarray(_cost(program, forward), dtype=primal[0].dtype)])
    assert found is None, _report("the results against the NumPy model", found, [program])
    if not program.float64 or not program.exact_derivatives:
        return
    directions = [d.value() for d in transform.directions]
    step = EPSILON_SECOND if transform.kind == "hessian" else EPSILON
    shifted = [_model_along(program, sign * step) for sign in (1.0, -1.0)]
    if transform.kind == "jvp":
        differences = [(shifted[0][k] - shifted[1][k]) / (2 * step) for k in transform.float_results]
        found = disagreement(derivatives, differences, same_error=False, tolerance=1e-4)
    else:
        products = [g * d for g, d in zip(derivatives, directions)]
        along = sum(float(np.sum(p)) for p in products)
        scale = 1.0 + sum(float(np.sum(np.abs(p))) for p in products)
        difference = _difference(program, forward, shifted, step)
        coarse = _difference(
            program, forward, [_model_along(program, sign * 4 * step) for sign in (1.0, -1.0)],
            4 * step,
        )
        converged = abs(coarse - difference) <= 1e-3 * (1.0 + abs(difference))
        if not (np.isfinite([difference, coarse]).all() and converged):
            # Not converged at this step (a recurrence such as `y + (y @ y) / 2` reaches
            # 1e6 in 9 steps, where the cost's `sin` turns the step into noise), or
            # overflowed to inf or nan: the differences say nothing. Converged is
            # measured against the difference itself, not the gradient: a gradient of
            # 7e12 would take differences of noise as converged.
            return
        found = None if abs(difference - along) <= 1e-3 * scale else (
            f"the {transform.kind} along the directions is {along}, the difference {difference}"
        )
    assert found is None, _report(f"{transform.kind} against differences of the NumPy model", found, [program])


def _difference(
    program: Program, forward: Sequence[Array], shifted: Sequence[Sequence[Array]], step: float
) -> float:
    """The central first (grad) or second (Hessian) difference of the cost along the
    directions, from the results moved by +step and -step."""
    plus, minus = (_cost(program, s) for s in shifted)
    if program.transform.kind == "grad":
        return float((plus - minus) / (2 * step))
    return float((plus - 2 * _cost(program, forward) + minus) / step**2)


def _model_along(program: Program, step: float) -> list[Array]:
    """The model's results with the inputs moved by `step` times the directions."""
    transform = program.transform
    base = {s.name: s.value() for s in program.parameters}
    return model(program, {
        name: base[name] + step * direction.value()
        for name, direction in zip(transform.wrt, transform.directions)
    })


def _cost(program: Program, forward: Sequence[Array]) -> float:
    """The cost `pt.grad` differentiates in the program's script."""
    return sum(float(np.sin(forward[k]).sum()) for k in program.transform.float_results)


# --- groups of programs: rewrites and compiled ----------------------------------------------------
@attrs.frozen(eq=False, slots=False)
class Group:
    """Programs computed together (one graph, one compiled function)."""

    members: tuple[Checked, ...]

    @functools.cached_property
    def before_loops(self) -> Graph:
        return PRE_LOOPS(self.graph)

    @functools.cached_property
    def unused_removed(self) -> Graph:
        return LOOP_RULES["remove_unused"](self.before_loops)

    @functools.cached_property
    def graph(self) -> Graph:
        return Graph(
            [v for m in self.members for v in m.built.inputs],
            [v for m in self.members for v in m.built.outputs],
        )

    @property
    def values(self) -> list[Array]:
        return [v for m in self.members for v in m.built.values]

    @property
    def reference(self) -> Outcome:
        found: list[Array] = []
        for member in self.members:
            if isinstance(member.reference, Raised):
                return member.reference
            found += member.reference
        return found

    def evaluated(self, rewritten: Callable[[Graph], Graph]) -> Outcome:
        """The outcome of evaluating the rewritten graph; an error a rewrite raises (a
        read past a statically known end) counts as the outcome."""

        def run() -> list[Array]:
            graph = rewritten(self.graph)
            return evaluate(list(graph.outputs), dict(zip(graph.inputs, self.values)))

        return outcome(run)


Stage = Callable[[Group], Outcome | None]
"""One way of computing a group (None: not applicable, e.g. a rule that did not fire)."""


def check_group(group: Group, stages: Mapping[str, Stage]) -> None:
    """Every stage agrees with the group's reference; a disagreement is narrowed to a
    program that shows it alone."""
    for name, stage in stages.items():
        found = _stage_disagreement(group, stage)
        if found is None:
            continue
        culprits = [group]
        if len(group.members) > 1:
            alone = [Group((m,)) for m in group.members]
            culprits = [g for g in alone if _stage_disagreement(g, stage) is not None] or [group]
            found = _stage_disagreement(culprits[0], stage) or found
        raise AssertionError(_report(name, found, [m.program for m in culprits[0].members]))


def _stage_disagreement(group: Group, stage: Stage) -> str | None:
    got = stage(group)
    return None if got is None else disagreement(got, group.reference)


def _rule_stage(name: str, rule: Pass, point: Callable[[Group], Graph]) -> Stage:
    """Rule `name` alone on the graph `point` gives (None where it does not fire)."""

    def run(group: Group) -> Outcome | None:
        try:
            before = point(group)
            after = rule(before)
        except (ValueError, IndexError) as error:  # a read past a statically known end
            return outcome(lambda: _raise(error))
        if not changed(before, after):
            return None
        LOOP_FUZZ_COUNTS[f"fired {name}"] += 1
        return group.evaluated(lambda _: after)

    return run


RULE_POINTS: Mapping[str, Callable[[Group], Graph]] = {
    "": lambda group: group.before_loops,
    " after remove_unused": lambda group: group.unused_removed,
}
"""Where each rule is validated: on the graph the passes before the loop pass leave, and
on that graph once `remove_unused` has run (which enables most other rules: a dropped
carry or output changes what the rest of a loop looks like)."""


def uncompiled_stages() -> dict[str, Stage]:
    """(b) and (c): the passes before the loop pass, each loop rule alone after them, and
    the whole fast_run pipeline, all evaluated."""
    stages: dict[str, Stage] = {
        "evaluate after the passes before the loop pass": lambda g: g.evaluated(PRE_LOOPS),
    }
    for where, point in RULE_POINTS.items():
        stages |= {
            f"evaluate after loop rule {name} alone{where}": _rule_stage(name, rule, point)
            for name, rule in LOOP_RULES.items()
            if not (where and name == "remove_unused")
        }
    stages["evaluate after optimize(graph, 'fast_run')"] = lambda g: g.evaluated(optimize)
    return stages


def compiled_stage(parallel: bool) -> Stage:
    def run(group: Group) -> Outcome:
        graph = group.graph

        def run_compiled() -> list[Array]:
            started = time.process_time()
            compiled = function(list(graph.inputs), list(graph.outputs), parallel=parallel)
            LOOP_FUZZ_COUNTS["functions compiled"] += 1
            LOOP_FUZZ_SECONDS["compiling"] += time.process_time() - started
            return compiled(*group.values)

        return outcome(run_compiled)

    return run


def _report(stage: str, found: str | None, programs_shown: Sequence[Program]) -> str:
    shown = "\n".join(f"--- program {k} ---\n{p}" for k, p in enumerate(programs_shown))
    return f"{stage} disagrees: {found}\n{shown}"


def groups_of(checked: Sequence[Checked]) -> list[Group]:
    """The programs the reference computes, together, and each erroring one alone."""
    computed = tuple(c for c in checked if not isinstance(c.reference, Raised))
    groups = [Group(computed)] if computed else []
    return groups + [Group((c,)) for c in checked if isinstance(c.reference, Raised)]


def _references(drawn: Sequence[Program]) -> list[Checked]:
    found = [reference_of(p) for p in drawn]
    return [c for c in found if c is not None]


# --- the tests ------------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _print_counts() -> Iterator[None]:
    started = time.perf_counter()
    yield
    elapsed = time.perf_counter() - started
    counts = dict(sorted(LOOP_FUZZ_COUNTS.items()))
    seconds = {name: round(value, 1) for name, value in sorted(LOOP_FUZZ_SECONDS.items())}
    print(f"\nloop fuzz: {elapsed:.1f} s wall, CPU seconds {seconds}, {counts}")


@settings(max_examples=scaled_examples(2.0, ci_share=1.0))
@given(st.lists(programs(compiled=False), min_size=1, max_size=4))
def test_loop_programs_agree_uncompiled(drawn: list[Program]) -> None:
    """Reference, NumPy model, each loop rule alone and fast_run agree (no compiling)."""
    started = time.process_time()
    checked = _references(drawn)
    stages = uncompiled_stages()
    for group in groups_of(checked):
        check_group(group, stages)
    LOOP_FUZZ_COUNTS["programs checked uncompiled"] += len(drawn)
    LOOP_FUZZ_COUNTS["loops checked uncompiled"] += sum(len(p.loops) for p in drawn)
    LOOP_FUZZ_SECONDS["uncompiled examples"] += time.process_time() - started


@settings(max_examples=scaled_examples(0.3))
@given(
    st.lists(programs(), min_size=2, max_size=5),
    st.sampled_from([False, False, False, enabled("parallel")]),
)
def test_loop_programs_agree_compiled(drawn: list[Program], parallel: bool) -> None:
    """The compiled functions agree with the reference too (values and errors)."""
    started = time.process_time()
    checked = _references(drawn)
    stages = {**uncompiled_stages(), f"compiled (parallel={parallel})": compiled_stage(parallel)}
    for group in groups_of(checked):
        check_group(group, stages)
    LOOP_FUZZ_COUNTS["programs checked compiled"] += len(drawn)
    LOOP_FUZZ_COUNTS["loops checked compiled"] += sum(len(p.loops) for p in drawn)
    LOOP_FUZZ_SECONDS["compiled examples"] += time.process_time() - started


def test_every_loop_rule_fires_on_drawn_programs() -> None:
    """The translation validation is not empty: each loop rule fires on some programs of
    the fuzzer's distribution, where the fuzzer validates it (drawn here, derandomized,
    so it holds under any profile and with the tests spread over workers)."""
    fired: Counter[str] = Counter()

    @settings(max_examples=150, derandomize=True, database=None, deadline=None)
    @given(programs(compiled=False))
    def collect(program: Program) -> None:
        built = build_or_none(program)
        if built is None:
            return
        group = Group((Checked(program, built, []),))
        for point in RULE_POINTS.values():
            try:
                before = point(group)
            except (ValueError, IndexError):  # a static error before the rules
                continue
            for name, rule in LOOP_RULES.items():
                try:
                    fired[name] += changed(before, rule(before))
                except (ValueError, IndexError):  # a static error the rule's change exposed
                    fired[name] += 1

    collect()
    never = sorted(name for name in LOOP_RULES if not fired[name])
    assert never == [], dict(fired)


def build_or_none(program: Program) -> Built | None:
    """The program built, or None where building it raises (a static check)."""
    try:
        return build(program)
    except (ValueError, IndexError):
        return None
