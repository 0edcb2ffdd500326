"""`scan` and its wrappers (`map`, `reduce`, `foldl`, `foldr`, `until`): PyTensor's loop
API without hidden updates, built on the one loop op `Scan`.

Everything PyTensor's Scan carries as machinery is desugared here, once, so the op has
none of it:

- **sequence taps** become shifted slices of the sequence, one op sequence per tap: taps
  are offsets from step t, counted from the first t at which every tap is in range as
  if tap 0 were among them (PyTensor's rule), so with lo = min(taps, 0) and
  hi = max(taps, 0) tap k reads `s[k - lo : len(s) - (hi - k)]`;
- **output taps** become a window of carries, one per depth: carry d holds y[t-d], the
  step shifts them (`c1' = y_t`, `cd' = c(d-1)`), and the user's output is the trace of
  the new value (a per-step output) unless the only tap is -1, where it is the carry's
  own trace;
- **go_backwards** reverses each tap's slice (a view) and runs forward, as PyTensor does:
  a tap keeps its offset in the sequence's own order (tap -1 is the row before tap 0's);
- **closures**: variables the step function uses without receiving them become extra
  non-sequences, and work in the body that reads none of the step's own values is
  computed once, before the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, overload

import attrs
import numpy as np

from fgraph import Constant, Graph, Input, Param, TensorType, Variable, display_name, toposort
from fgraph.dtypes import is_integer
from fgraph.operators import TensorLike
from fgraph.traverse import rebuild
from ops.convert import as_tensor
from ops.elementwise_functions import cast, minimum, neq
from ops.loop_layout import LoopInputs
from ops.scan_op import Scan
from ops.shape_vector import static_value

StepFunction: TypeAlias = Callable[..., Any]
"""Receives sequence taps, output taps, non-sequences (in that order), returns one
variable, a sequence of them, or either with a stop condition: `(outputs, until(cond))`."""
OneOutputStep: TypeAlias = "Callable[..., Variable | tuple[Variable, Until]]"
"""A step function returning one output: the loop returns one variable."""
SeveralOutputsStep: TypeAlias = (
    "Callable[..., tuple[Variable, ...] | list[Variable] | tuple[Sequence[Variable], Until]]"
)
"""A step function returning a tuple or list of outputs: the loop returns a tuple."""
SequenceSpec: TypeAlias = "TensorLike | Mapping[str, Any]"
OutputSpec: TypeAlias = "TensorLike | Mapping[str, Any] | None"


@attrs.frozen
class Until:
    """A while-loop's stop condition, returned by the step function: the loop ends after
    the first step whose condition is true."""

    condition: Variable


def until(condition: TensorLike) -> Until:
    """Mark `condition` (a scalar) as the loop's stop condition (PyTensor's `until`)."""
    variable = as_tensor(condition, name="until")
    if variable.ndim != 0:
        raise TypeError(f"until: the condition must be a scalar, got {variable.type}")
    return Until(variable if variable.dtype == "bool" else neq(variable, 0))


@attrs.frozen
class _Sequence:
    source: Variable
    taps: tuple[int, ...]


@attrs.frozen
class _Output:
    initial: Variable | None
    taps: tuple[int, ...]

    @property
    def depth(self) -> int:
        return -min(self.taps) if self.taps else 0


@overload
def scan(
    fn: OneOutputStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None = None,
    outputs_info: OutputSpec | Sequence[OutputSpec] = None,
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    n_steps: TensorLike | None = None,
    go_backwards: bool = False,
    truncate_gradient: int = -1,
) -> Variable: ...


@overload
def scan(
    fn: SeveralOutputsStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None = None,
    outputs_info: OutputSpec | Sequence[OutputSpec] = None,
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    n_steps: TensorLike | None = None,
    go_backwards: bool = False,
    truncate_gradient: int = -1,
) -> tuple[Variable, ...]: ...


@overload
def scan(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None = None,
    outputs_info: OutputSpec | Sequence[OutputSpec] = None,
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    n_steps: TensorLike | None = None,
    go_backwards: bool = False,
    truncate_gradient: int = -1,
) -> Any: ...


def scan(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None = None,
    outputs_info: OutputSpec | Sequence[OutputSpec] = None,
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    n_steps: TensorLike | None = None,
    go_backwards: bool = False,
    truncate_gradient: int = -1,
) -> Any:
    """Run `fn` in a loop, PyTensor-style; returns the stacked per-step outputs (one
    variable, or a tuple when `fn` returns several).

    sequences: variables iterated over their first axis, or `{"input": s, "taps": [...]}`.
    outputs_info: per output an initial value (fed back as tap -1), `{"initial": y0,
    "taps": [-2, -1]}` (`y0` holds one row per tap depth, oldest first), or None (not fed
    back). non_sequences: passed unchanged to every step. The step count is the shortest
    usable sequence, or `n_steps` (the bound of a while-loop); both are checked at run
    time when both are given. Zero steps give empty traces.
    """
    returned = _build(
        fn, sequences, outputs_info, non_sequences, n_steps, go_backwards, truncate_gradient, True
    )
    return returned[0] if len(returned) == 1 else returned


@overload
def map(
    fn: OneOutputStep,
    sequences: SequenceSpec | Sequence[SequenceSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
) -> Variable: ...


@overload
def map(
    fn: SeveralOutputsStep,
    sequences: SequenceSpec | Sequence[SequenceSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
) -> tuple[Variable, ...]: ...


@overload
def map(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
) -> Any: ...


def map(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
) -> Any:
    """`fn` applied to each row of the sequences, results stacked (PyTensor's `map`)."""
    return scan(fn, sequences, None, non_sequences, go_backwards=go_backwards)


@overload
def reduce(
    fn: OneOutputStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
    n_steps: TensorLike | None = None,
) -> Variable: ...


@overload
def reduce(
    fn: SeveralOutputsStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
    n_steps: TensorLike | None = None,
) -> tuple[Variable, ...]: ...


@overload
def reduce(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
    n_steps: TensorLike | None = None,
) -> Any: ...


def reduce(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
    go_backwards: bool = False,
    n_steps: TensorLike | None = None,
) -> Any:
    """The final values of a scan (the initial values after zero steps); no trace is
    kept. Outputs not fed back give their last step's value."""
    returned = _build(fn, sequences, outputs_info, non_sequences, n_steps, go_backwards, -1, False)
    return returned[0] if len(returned) == 1 else returned


@overload
def foldl(
    fn: OneOutputStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Variable: ...


@overload
def foldl(
    fn: SeveralOutputsStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> tuple[Variable, ...]: ...


@overload
def foldl(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Any: ...


def foldl(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Any:
    """`reduce` from the first row to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences)


@overload
def foldr(
    fn: OneOutputStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Variable: ...


@overload
def foldr(
    fn: SeveralOutputsStep,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> tuple[Variable, ...]: ...


@overload
def foldr(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Any: ...


def foldr(
    fn: StepFunction,
    sequences: SequenceSpec | Sequence[SequenceSpec] | None,
    outputs_info: OutputSpec | Sequence[OutputSpec],
    non_sequences: TensorLike | Sequence[TensorLike] | None = None,
) -> Any:
    """`reduce` from the last row to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _parse_sequence(number: int, spec: SequenceSpec) -> _Sequence:
    what = f"scan: sequences[{number}]"
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"input", "taps"}
        if unknown or "input" not in spec:
            raise TypeError(f"{what}: a dict needs 'input' and optionally 'taps', got {sorted(spec)}")
        taps = _taps(what, spec.get("taps"), (0,))
        source = as_tensor(spec["input"], name=what)
    else:
        taps, source = (0,), as_tensor(spec, name=what)
    if source.ndim == 0:
        raise TypeError(
            f"{what} is a scalar ({source.type}); sequences are iterated over their first axis"
        )
    if not taps or len(set(taps)) != len(taps):
        raise ValueError(f"{what}: taps must be distinct and not empty, got {list(taps)}")
    return _Sequence(source, taps)


def _parse_output(number: int, spec: OutputSpec) -> _Output:
    what = f"scan: outputs_info[{number}]"
    if spec is None:
        return _Output(None, ())
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"initial", "taps"}
        if unknown:
            raise TypeError(f"{what}: a dict takes 'initial' and 'taps', got {sorted(spec)}")
        if spec.get("initial") is None:
            if spec.get("taps") is not None:
                raise ValueError(
                    f"{what}: taps {spec['taps']!r} read earlier values of the output, which "
                    "need an initial value: give 'initial' too"
                )
            return _Output(None, ())
        taps = _taps(what, spec.get("taps"), (-1,))
        initial = as_tensor(spec["initial"], name=what)
        if not taps or any(tap >= 0 for tap in taps) or len(set(taps)) != len(taps):
            raise ValueError(f"{what}: output taps must be distinct and negative, got {list(taps)}")
        if taps != (-1,):
            depth = -min(taps)
            length = initial.type.shape[0] if initial.ndim else None
            if initial.ndim == 0 or (length is not None and length < depth):
                raise ValueError(
                    f"{what}: taps {list(taps)} need an initial value with {depth} rows (one "
                    f"per tap depth, oldest first), got {initial.type}"
                )
            if length != depth:  # PyTensor reads the first `depth` rows of a longer one
                initial = initial[:depth]
        return _Output(initial, taps)
    return _Output(as_tensor(spec, name=what), (-1,))


def _taps(what: str, given: object, default: tuple[int, ...]) -> tuple[int, ...]:
    """Taps as PyTensor reads them: a list, one int, or None for the default."""
    if given is None:
        return default
    listed = list(given) if isinstance(given, (list, tuple, np.ndarray)) else [given]
    return tuple(_tap(what, tap) for tap in listed)


def _tap(what: str, tap: object) -> int:
    if isinstance(tap, bool) or not isinstance(tap, (int, np.integer)):
        raise TypeError(f"{what}: taps must be integers, got {tap!r}")
    return int(tap)


def _tap_slice(source: Variable, tap: int, taps: tuple[int, ...]) -> Variable:
    """The rows tap `tap` reads, step by step: `source[t + tap]` for the steps t at which
    every tap is in range. Taps are offsets from step t, and step 0 is the first t at
    which the lowest tap, or tap 0 if it is higher, is in range (PyTensor's rule): the
    loop has `len(source) - (max(max(taps), 0) - min(min(taps), 0))` steps, so taps
    [-1] over 5 rows read rows 0..3 and taps [2] rows 2..4."""
    lowest, highest = min(*taps, 0), max(*taps, 0)
    start, end = tap - lowest, highest - tap
    if start == 0 and end == 0:
        return source
    return source[start:] if end == 0 else source[start:-end]


def _row_type(variable: Variable) -> TensorType:
    return TensorType(variable.dtype, variable.type.shape[1:])


def _as_steps(n_steps: TensorLike) -> Variable:
    if isinstance(n_steps, bool) or isinstance(n_steps, (float, np.floating)):
        raise TypeError(f"scan: n_steps must be an integer, got {n_steps!r}")
    steps = as_tensor(n_steps, name="scan: n_steps")
    if steps.ndim != 0 or not is_integer(steps.dtype):
        raise TypeError(f"scan: n_steps must be an integer scalar, got {steps.type}")
    return steps if steps.dtype == "int64" else cast(steps, "int64")


def _build(
    fn: StepFunction,
    sequences_spec: Any,
    outputs_spec: Any,
    non_sequences_spec: Any,
    n_steps: TensorLike | None,
    go_backwards: bool,
    truncate_gradient: int,
    keep_traces: bool,
) -> tuple[Variable, ...]:
    sequences = [_parse_sequence(k, s) for k, s in enumerate(_as_list(sequences_spec))]
    outputs_list = _as_list(outputs_spec)
    outputs = [_parse_output(k, o) for k, o in enumerate(outputs_list)]
    non_sequences = [
        as_tensor(v, name=f"scan: non_sequences[{k}]")
        for k, v in enumerate(_as_list(non_sequences_spec))
    ]

    # Sequences: one shifted slice per tap, reversed for go_backwards.
    rows: list[Variable] = []  # what the op iterates over, one per tap
    row_inputs: list[Input] = []  # what fn receives for each
    for sequence in sequences:
        for tap in sequence.taps:
            sliced = _tap_slice(sequence.source, tap, sequence.taps)
            rows.append(sliced[::-1] if go_backwards else sliced)
            name = f"{display_name(sequence.source)}[t{tap:+d}]" if tap else display_name(
                sequence.source
            ) + "[t]"
            row_inputs.append(Input(_row_type(sliced), name))
    if n_steps is not None:
        steps = _as_steps(n_steps)
        static_steps = static_value(steps)
    elif rows:
        steps = rows[0].shape[0]
        for row in rows[1:]:
            steps = minimum(steps, row.shape[0])
        lengths = [row.type.shape[0] for row in rows]
        static_steps = None if None in lengths else min(n for n in lengths if n is not None)
    else:
        raise ValueError("scan: give n_steps or at least one sequence")

    # Carries: one per depth of each fed-back output.
    carry_inputs: list[Input] = []
    carry_initials: list[Variable] = []
    tap_inputs: list[Input] = []  # what fn receives for output taps, in order
    first_carry: list[int] = []  # per output, the index of its depth-1 carry (or -1)
    for number, output in enumerate(outputs):
        if output.initial is None:
            first_carry.append(-1)
            continue
        first_carry.append(len(carry_inputs))
        initial = output.initial
        if output.taps == (-1,):
            carry_inputs.append(Input(initial.type, f"outputs_info[{number}][t-1]"))
            carry_initials.append(initial)
        else:
            for depth in range(1, output.depth + 1):
                carry_inputs.append(
                    Input(_row_type(initial), f"outputs_info[{number}][t-{depth}]")
                )
                carry_initials.append(initial[output.depth - depth])
        tap_inputs += [carry_inputs[first_carry[-1] - tap - 1] for tap in output.taps]

    # fn gets the non-sequences themselves (as PyTensor's scan does), so what it builds
    # keeps their relation to the outer graph (`grad(y[i], x)` for non-sequences y and
    # x); the body reads stand-ins put in their place afterwards.
    returned = fn(*row_inputs, *tap_inputs, *non_sequences)
    results, stop = _split_returned(returned)
    non_sequence_inputs = [
        Input(v.type, f"non_sequences[{k}]") for k, v in enumerate(non_sequences)
    ]
    stand_ins: dict[Variable, Variable] = {}
    for variable, stand_in in zip(non_sequences, non_sequence_inputs):
        if not isinstance(variable, Constant):  # a constant stays one in the body
            stand_ins.setdefault(variable, stand_in)
    if not outputs_list:
        outputs = [_Output(None, ()) for _ in results]
        first_carry = [-1] * len(results)
    if len(results) != len(outputs):
        raise ValueError(
            f"scan: the step function returned {len(results)} outputs, but outputs_info has "
            f"{len(outputs)} entries"
        )
    checked = [
        _check_step_value(number, result, output, carry_inputs, first_carry)
        for number, (result, output) in enumerate(zip(results, outputs))
    ]
    rebuilt = rebuild([*checked, *([] if stop is None else [stop])], stand_ins)
    step_values = list(rebuilt[: len(checked)])
    stop = None if stop is None else rebuilt[-1]

    # Next carries, per-step outputs, and what the user gets back.
    next_carries: list[Variable] = list(carry_inputs)
    ys: list[Variable] = []
    returned_from: list[tuple[str, int]] = []  # ("trace" | "ys" | "final", number)
    for number, (value, output) in enumerate(zip(step_values, outputs)):
        first = first_carry[number]
        if first < 0:
            returned_from.append(("ys", len(ys)))
            ys.append(value)
            continue
        for depth in range(output.depth, 1, -1):
            next_carries[first + depth - 1] = carry_inputs[first + depth - 2]
        next_carries[first] = value
        if not keep_traces:
            returned_from.append(("final", first))
        elif output.taps == (-1,):
            returned_from.append(("trace", first))
        else:
            returned_from.append(("ys", len(ys)))
            ys.append(value)
    traced = tuple(
        keep_traces and ("trace", k) in returned_from for k in range(len(carry_inputs))
    )
    inner_outputs = [*next_carries, *ys] + ([stop] if stop is not None else [])
    own_inputs = [*carry_inputs, *row_inputs, *non_sequence_inputs]
    captured = _close_over(own_inputs, inner_outputs)
    params = [Param(k, v.type) for k, v in enumerate((*own_inputs, *captured))]
    outer_values: list[Variable] = [*own_inputs, *captured]
    replacements: dict[Variable, Variable] = dict(zip(outer_values, params))
    body = Graph(params, rebuild(inner_outputs, replacements))
    op = Scan(
        body,
        n_carries=len(carry_inputs),
        n_sequences=len(rows),
        traced=traced,
        while_loop=stop is not None,
        truncate_gradient=truncate_gradient,
        length=None if stop is not None else static_steps,
    )
    loop = op.apply_loop(
        LoopInputs(steps, tuple(carry_initials), tuple(rows), (*non_sequences, *captured))
    )
    picked = []
    for kind, number in returned_from:
        trace = loop.traces[number] if kind == "trace" else None
        if trace is not None:
            picked.append(trace[1:])  # the rows after each step (row 0 is the initial value)
        elif kind == "final":
            picked.append(loop.finals[number])
        else:
            picked.append(loop.ys[number] if keep_traces else _last_row(loop.ys[number]))
    return tuple(picked)


def _last_row(ys: Variable) -> Variable:
    """`ys[-1]`; on a trace known to be empty, its index is left to the run, so a loop
    over a static empty sequence builds and reading the row raises IndexError, as it
    does after zero steps of unknown count."""
    if ys.type.shape[0] == 0:
        return ys[ys.shape[0] - 1]
    return ys[-1]


def _split_returned(returned: Any) -> tuple[list[Variable], Variable | None]:
    """The step's outputs and stop condition, from any of the forms `fn` may return."""
    stop: Variable | None = None
    if isinstance(returned, Until):
        return [], returned.condition
    if isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], Until):
        stop = returned[1].condition
        returned = returned[0]
    if isinstance(returned, Mapping):
        raise TypeError(
            "scan: the step function returned a dict; fgraph has no hidden updates: return "
            "new states as outputs and feed them back through outputs_info"
        )
    values = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    for number, value in enumerate(values):
        if isinstance(value, Until):
            raise TypeError("scan: until(...) must be returned last, as (outputs, until(cond))")
        if value is None:
            raise TypeError(f"scan: the step function returned None as output {number}")
    return values, stop


def _check_step_value(
    number: int,
    result: Any,
    output: _Output,
    carry_inputs: list[Input],
    first_carry: list[int],
) -> Variable:
    """The step's output `number` as a variable, checked against its carry's type."""
    first = first_carry[number]
    want = None if first < 0 else carry_inputs[first].type
    value: Variable = (
        result
        if isinstance(result, Variable)
        else as_tensor(
            result, dtype=None if want is None else want.dtype, name=f"scan: step output {number}"
        )
    )
    if want is None:
        return value
    same_rank = value.ndim == want.ndim
    compatible = same_rank and all(
        a is None or b is None or a == b for a, b in zip(value.type.shape, want.shape)
    )
    if value.dtype != want.dtype or not compatible:
        raise TypeError(
            f"scan: output {number} of the step function is {value.type}, but its initial "
            f"value (outputs_info[{number}]) makes the carry {want}; the type of a fed-back "
            "output cannot change between steps (cast or reshape one of them)"
        )
    return value


def _close_over(
    own_inputs: Sequence[Input], outputs: Sequence[Variable]
) -> list[Variable]:
    """Outer values the body reads: the variables outside the step function's own values
    that a node depending on them reads (or that an output is), in first-use order. Work
    reading only outer values stays outside the loop, computed once."""
    depends: set[Variable] = set(own_inputs)
    captured: list[Variable] = []
    seen: set[Variable] = set()

    def capture(variable: Variable) -> None:
        if variable not in depends and variable not in seen and not isinstance(variable, Constant):
            seen.add(variable)
            captured.append(variable)

    nodes = toposort(outputs)
    for node in nodes:
        if any(input_ in depends for input_ in node.inputs):
            depends.update(node.outputs)
    for node in nodes:
        if any(output in depends for output in node.outputs):
            for input_ in node.inputs:
                capture(input_)
    for output in outputs:
        capture(output)
    return captured
