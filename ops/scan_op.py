"""`Scan`: a loop as one frozen op holding its step function as a closed inner graph.

The loop has four kinds of values and nothing else (taps, reversed iteration and
closures are desugared by `ops.scan_functions.scan` before the op is built):

- **carries**: state fed from one step to the next, given an initial value;
- **sequences**: arrays whose row `t` the step `t` reads;
- **non-sequences**: values every step reads unchanged;
- **per-step outputs** ("ys"): values each step computes and nothing feeds back.

The inner graph's params are `(*carries, *sequence rows, *non_sequences)` and its outputs
`(*next carries, *ys[, stop])`, where `stop`, present for while-loops, is a bool scalar:
the loop ends after the first step that computes True. Outer inputs are
`(n_steps, *initial carries, *sequences, *non_sequences)`; outer outputs are

    (*final carries, *traces of the carries marked in `traced`, *traces of ys[, executed])

A carry's final value always exists (the state is computed anyway; an unused one costs
nothing and the remove-unused rewrite drops the carry as a whole). Which carries keep
their trace is a fixed field: no later pass infers it.

A carry's trace holds its value at every step boundary, the initial value included:
n + 1 rows. Row `t + 1` is what step `t` produced and row 0 the initial value; with
`reverse=True` (steps run `t = n-1, ..., 0`) row `t` is what step `t` produced and row
`n` the initial value. Either way the values entering and leaving the steps are two
views of one buffer, which is what a gradient loop reads, running the other way
without copying or flipping anything (PyTensor's scan keeps the initial state in its
output buffers for the same reason). `pt.scan` returns the rows after each step. A
per-step output's trace has n rows, row `t` written by step `t`. `executed`, the number
of steps a while-loop ran, is an int64 output; the traces of a while-loop hold only the
rows of the executed steps.

Equal bodies give equal ops (the inner graph is interned and over positional params),
so comparing two loops is O(1), and `evaluate`, `dprint`, digests and pickling handle
loops as they do any op with an inner graph.

A run-time error in a step says which step, of which loop, in the user's names: the
body's params are named after the outer values feeding them (`param_names`: the row of
a sequence, the carry from an initial value, a non-sequence's own name), in `evaluate`
and in compiled code alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from fgraph import DTypeError, Graph, Op, Param, ShapeError, TensorType, Variable, evaluate
from fgraph.dtypes import is_integer
from fgraph.errors import RUN_TIME_ERRORS, reraise_in_context
from fgraph.evaluation import input_names
from fgraph.op import Array, Vectorized
from ops.loop_layout import LoopInputs, LoopOutputs, StepParams, StepResults, T
from ops.loop_rows import RowLength, empty_row_lengths

ScanDerivative = Callable[
    ["Scan", tuple[Variable, ...], tuple[Variable | None, ...]], tuple[Variable | None, ...]
]
"""A pullback (or pushforward): the op, its inputs and the outputs' cotangents (tangents
of the inputs) to the inputs' cotangents (the outputs' tangents)."""
ScanVectorize = Callable[["Scan", tuple[Variable, ...], tuple[bool, ...], int], Vectorized]


def _listed(names: Sequence[str], most: int = 3) -> str:
    """Names for a message: each once, at most `most` of them and how many more (a
    gradient's loop runs over a dozen traces, whose names filled 1 500 characters)."""
    unique = list(dict.fromkeys(names))
    if len(unique) <= most:
        return ", ".join(unique)
    return f"{', '.join(unique[:most])} and {len(unique) - most} more"


@attrs.define
class LoopDelegates:
    """What `Scan` delegates to the modules that build loops themselves, and so import this
    one: its derivatives (`ops.scan_grad` sets `pullback` and `pushforward`) and its
    vectorization (`ops.loop_vectorize` sets `vectorize`), each set when its module is
    imported. The `ops` package imports both."""

    pullback: ScanDerivative | None = None
    pushforward: ScanDerivative | None = None
    vectorize: ScanVectorize | None = None


LOOP_DELEGATES = LoopDelegates()


def _check_inner_graph(instance: Scan, attribute: object, graph: Graph) -> None:
    for number, variable in enumerate(graph.inputs):
        if not isinstance(variable, Param) or variable.index != number:
            raise TypeError(f"Scan: inner input {number} must be Param({number}), got {variable!r}")
    if not graph.dedup_nodes:
        raise ValueError("Scan: the inner graph must be deduplicated (dedup_nodes=True)")


# Kernel: numba_backend.scan_op._scan
@attrs.frozen(cache_hash=True)
class Scan(Op):
    """A loop: see the module docstring for the layout of inputs and outputs.

    `truncate_gradient=k > 0` lets only the last k steps propagate gradient (-1: all).
    """

    inner_graph: Graph = attrs.field(validator=_check_inner_graph)
    n_carries: int
    n_sequences: int
    traced: tuple[bool, ...]
    reverse: bool = False
    while_loop: bool = False
    truncate_gradient: int = -1
    length: int | None = None
    """The step count when it is known statically (the traces' static length); checked
    against `n_steps` at run time. Never set for while-loops."""
    windows: tuple[int, ...] = ()
    """Per carry, how many of its trace's last rows the trace keeps (0: all). Empty: all
    of every trace. A forward for-loop whose trace is read only near its end keeps a
    window of k rows (k slots of memory, not n + 1)."""

    def __attrs_post_init__(self) -> None:
        inner = self.inner_graph
        if len(self.traced) != self.n_carries:
            raise ValueError(f"Scan: traced has {len(self.traced)} flags for {self.n_carries} carries")
        if self.n_carries + self.n_sequences > len(inner.inputs):
            raise ValueError(
                f"Scan: {self.n_carries} carries and {self.n_sequences} sequences need more than "
                f"the inner graph's {len(inner.inputs)} params"
            )
        if self.n_carries + int(self.while_loop) > len(inner.outputs):
            raise ValueError("Scan: the inner graph has fewer outputs than carries")
        for number in range(self.n_carries):
            param, result = inner.inputs[number], inner.outputs[number]
            if not _fits(result.type, param.type):
                raise TypeError(
                    f"Scan: carry {number} is {param.type} but the step computes {result.type}"
                )
        if self.while_loop:
            stop = inner.outputs[-1].type
            if stop.dtype != "bool" or stop.ndim != 0:
                raise TypeError(f"Scan: the stop condition must be a bool scalar, got {stop}")
        if self.length is not None and (self.while_loop or self.length < 0):
            raise ValueError(f"Scan: a static length ({self.length}) needs a for-loop of >= 0 steps")
        if self.windows:
            if len(self.windows) != self.n_carries or any(
                w < 0 or (w and not keep) for w, keep in zip(self.windows, self.traced)
            ):
                raise ValueError(f"Scan: windows {self.windows} must give each traced carry 0 "
                                 "(all rows) or a positive count")
            if any(self.windows) and (self.reverse or self.while_loop):
                raise ValueError("Scan: trace windows are for forward for-loops")
        if self.truncate_gradient == 0 or self.truncate_gradient < -1:
            raise ValueError(
                f"Scan: truncate_gradient must be -1 (all steps) or positive, got "
                f"{self.truncate_gradient}"
            )

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The loop with its body vectorized, not a loop over the batch; examples that
        stop at different steps each keep their own final state (`ops.loop_vectorize`)."""
        assert LOOP_DELEGATES.vectorize is not None, "ops.loop_vectorize registers it"
        return LOOP_DELEGATES.vectorize(self, inputs, batched, batch_ndim)

    # -- layout ---------------------------------------------------------------------------
    @property
    def n_non_sequences(self) -> int:
        return len(self.inner_graph.inputs) - self.n_carries - self.n_sequences

    @property
    def n_ys(self) -> int:
        """Per-step outputs: inner outputs that are neither next carries nor the stop."""
        return len(self.inner_graph.outputs) - self.n_carries - int(self.while_loop)

    @property
    def carry_types(self) -> tuple[TensorType, ...]:
        return tuple(p.type for p in self.inner_graph.inputs[: self.n_carries])

    @property
    def ys_types(self) -> tuple[TensorType, ...]:
        start = self.n_carries
        return tuple(o.type for o in self.inner_graph.outputs[start : start + self.n_ys])

    @property
    def traced_carries(self) -> tuple[int, ...]:
        """Indices of the carries whose trace is an output, in output order."""
        return tuple(k for k, keep in enumerate(self.traced) if keep)

    def window(self, carry: int) -> int:
        """How many last rows carry `carry`'s trace keeps (0: all)."""
        return self.windows[carry] if self.windows else 0

    def trace_rows(self, carry: int) -> int | None:
        """The static row count of carry `carry`'s trace: the n + 1 step boundaries, or
        its window of last rows when shorter; None when the step count is not static."""
        if self.length is None:
            return None
        window = self.window(carry)
        return self.length + 1 if not window else min(self.length + 1, window)

    # -- typed groups (ops.loop_layout) ---------------------------------------------------
    def split_inputs(self, values: Sequence[T]) -> LoopInputs[T]:
        """The outer inputs (or anything laid out like them: types, arrays, tangents)
        by kind."""
        c, s = self.n_carries, self.n_sequences
        if len(values) != 1 + len(self.inner_graph.inputs):
            raise ValueError(f"{self}: {len(values)} inputs, expected {1 + len(self.inner_graph.inputs)}")
        return LoopInputs(values[0], tuple(values[1 : 1 + c]), tuple(values[1 + c : 1 + c + s]),
                          tuple(values[1 + c + s :]))

    def split_outputs(self, values: Sequence[T]) -> LoopOutputs[T]:
        """The outer outputs (or anything laid out like them) by kind; untraced carries
        get None as their trace."""
        c, n_traced = self.n_carries, len(self.traced_carries)
        expected = c + n_traced + self.n_ys + int(self.while_loop)
        if len(values) != expected:
            raise ValueError(f"{self}: {len(values)} outputs, expected {expected}")
        kept = iter(values[c : c + n_traced])
        traces = tuple(next(kept) if keep else None for keep in self.traced)
        ys = tuple(values[c + n_traced : c + n_traced + self.n_ys])
        return LoopOutputs(tuple(values[:c]), traces, ys, values[-1] if self.while_loop else None)

    def split_params(self, values: Sequence[T]) -> StepParams[T]:
        """The body's params (or anything laid out like them) by kind."""
        c, s = self.n_carries, self.n_sequences
        return StepParams(tuple(values[:c]), tuple(values[c : c + s]), tuple(values[c + s :]))

    def split_results(self, values: Sequence[T]) -> StepResults[T]:
        """The body's results (or anything laid out like them) by kind."""
        c = self.n_carries
        return StepResults(tuple(values[:c]), tuple(values[c : c + self.n_ys]),
                           values[-1] if self.while_loop else None)

    @property
    def params(self) -> StepParams[Variable]:
        return self.split_params(self.inner_graph.inputs)

    @property
    def results(self) -> StepResults[Variable]:
        return self.split_results(self.inner_graph.outputs)

    def param_names(self, outer_names: Sequence[str]) -> dict[Variable, str]:
        """How run-time errors in a step name the body's params, given how they name the
        loop's outer inputs (`n_steps` first; none: the params keep their own names)."""
        if not outer_names:
            return {}
        given = self.split_inputs(outer_names)
        params = self.params
        return {
            **{p: f"the carry from {name}" for p, name in zip(params.carries, given.initials)},
            **{p: f"the row of {name}" for p, name in zip(params.rows, given.sequences)},
            **dict(zip(params.non_sequences, given.non_sequences)),
        }

    def loop_name(self, outer_names: Sequence[str]) -> str:
        """The loop as run-time errors name it: `the loop over X carrying h0`."""
        if not outer_names:
            return "the loop"
        given = self.split_inputs(outer_names)
        over = f" over {_listed(given.sequences)}" if given.sequences else ""
        carrying = f" carrying {_listed(given.initials)}" if given.initials else ""
        return f"the loop{over}{carrying}"

    def apply_loop(self, inputs: LoopInputs[Variable]) -> LoopOutputs[Variable]:
        """Apply the loop to grouped inputs and group its outputs."""
        return self.split_outputs(self.apply(*inputs.joined()))

    # -- Op protocol ----------------------------------------------------------------------
    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        params = self.inner_graph.inputs
        if len(input_types) != 1 + len(params):
            raise TypeError(
                f"{self}: expected {1 + len(params)} inputs (n_steps, carries, sequences, "
                f"non-sequences), got {len(input_types)}"
            )
        steps = input_types[0]
        if steps.ndim != 0 or not is_integer(steps.dtype):
            raise TypeError(f"{self}: n_steps must be an integer scalar, got {steps}")
        for number, (got, param) in enumerate(zip(input_types[1:], params)):
            want = param.type
            if self.n_carries <= number < self.n_carries + self.n_sequences:
                want = TensorType(want.dtype, (None, *want.shape))
                if got.ndim == want.ndim:
                    want = TensorType(want.dtype, (got.shape[0], *param.type.shape))
            _check_input(self, self._describe(number), got, want)
        carries = self.carry_types
        return LoopOutputs(
            carries,
            tuple(_traced(row, self.trace_rows(k)) if keep else None
                  for k, (row, keep) in enumerate(zip(carries, self.traced))),
            tuple(_traced(row, self.length) for row in self.ys_types),
            TensorType("int64", ()) if self.while_loop else None,
        ).joined()

    def _describe(self, number: int) -> str:
        if number < self.n_carries:
            return f"initial value of carry {number}"
        if number < self.n_carries + self.n_sequences:
            return f"sequence {number - self.n_carries}"
        return f"non-sequence {number - self.n_carries - self.n_sequences}"

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        given = self.split_inputs(inputs)
        n_steps = int(given.n_steps)
        carries = list(given.initials)
        initials = list(carries)
        sequences, non_sequences = given.sequences, given.non_sequences
        check_steps(n_steps, tuple(len(s) for s in sequences), self.length)
        params = self.inner_graph.inputs
        outputs = self.inner_graph.outputs
        traces: list[list[Array]] = [[] for _ in self.traced_carries]
        ys: list[list[Array]] = [[] for _ in range(self.n_ys)]
        order = range(n_steps - 1, -1, -1) if self.reverse else range(n_steps)
        executed = 0
        outer_names = input_names()
        names, loop_name = self.param_names(outer_names), self.loop_name(outer_names)
        for step in order:
            rows = [sequence[step] for sequence in sequences]
            arguments = dict(zip(params, (*carries, *rows, *non_sequences)))
            try:
                values = evaluate(outputs, arguments, names=names)
            except RUN_TIME_ERRORS as error:
                reraise_in_context(error, f"in step {step} of {loop_name}")
            for number in range(self.n_carries):
                check_carry_shape(number, step, carries[number].shape, values[number].shape)
            carries = values[: self.n_carries]
            for trace, k in zip(traces, self.traced_carries):
                trace.append(carries[k])
            for number, (trace, value) in enumerate(zip(ys, self.split_results(values).ys)):
                if trace and trace[0].shape != value.shape:
                    raise ValueError(
                        f"Scan: per-step output {number} changed shape from {trace[0].shape} "
                        f"to {value.shape} at step {step}; its rows must all have one shape"
                    )
                trace.append(value)
            executed += 1
            if self.while_loop and bool(values[-1]):
                break
        carry_types = self.carry_types
        kept = iter(traces)
        return LoopOutputs(
            tuple(carries),
            tuple(
                _stack([initials[k], *next(kept)], carry_types[k], carries[k].shape, self.reverse)[
                    -self.window(k) if self.window(k) else 0 :
                ] if keep else None
                for k, keep in enumerate(self.traced)
            ),
            tuple(
                _stack(trace, t, _row_shape(lengths, inputs), self.reverse)
                for trace, t, lengths in zip(ys, self.ys_types, empty_row_lengths(self))
            ),
            np.array(executed, dtype="int64") if self.while_loop else None,
        ).joined()

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        assert LOOP_DELEGATES.pullback is not None, "ops.scan_grad registers it"
        return LOOP_DELEGATES.pullback(self, inputs, cotangents)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        assert LOOP_DELEGATES.pushforward is not None, "ops.scan_grad registers it"
        return LOOP_DELEGATES.pushforward(self, inputs, tangents)

    def __str__(self) -> str:
        flags = [f"carries={self.n_carries}", f"sequences={self.n_sequences}"]
        if any(self.traced):
            flags.append("traced=" + "".join("T" if keep else "-" for keep in self.traced))
        flags += ["reverse"] * self.reverse + ["while"] * self.while_loop
        if self.length is not None:
            flags.append(f"length={self.length}")
        if any(self.windows):
            flags.append("windows=" + ",".join(str(w) for w in self.windows))
        if self.truncate_gradient != -1:
            flags.append(f"truncate={self.truncate_gradient}")
        return f"Scan{{{', '.join(flags)}}}"


def check_steps(n_steps: int, sequence_lengths: tuple[int, ...], length: int | None) -> None:
    """The run-time checks of a loop's step count: n_steps is not negative, equals the
    static length if there is one, and no sequence is shorter."""
    if n_steps < 0:
        raise ValueError(f"Scan: n_steps is {n_steps}; it must be >= 0")
    if length is not None and n_steps != length:
        raise ValueError(f"Scan: n_steps is {n_steps}, but the loop was built for {length} steps")
    for number, length in enumerate(sequence_lengths):
        if length < n_steps:
            raise ValueError(
                f"Scan: sequence {number} has {length} rows, fewer than n_steps={n_steps}"
            )


def check_carry_shape(number: int, step: int, before: tuple[int, ...], after: tuple[int, ...]) -> None:
    if before != after:
        raise ValueError(
            f"Scan: carry {number} changed shape from {before} to {after} at step {step}; a "
            "carry keeps its initial value's shape"
        )


def _fits(got: TensorType, want: TensorType) -> bool:
    """Same dtype and rank, and no conflicting static length."""
    return (
        got.dtype == want.dtype
        and got.ndim == want.ndim
        and all(a is None or b is None or a == b for a, b in zip(got.shape, want.shape))
    )


def _check_input(op: Op, what: str, got: TensorType, want: TensorType) -> None:
    if got.dtype != want.dtype:
        raise DTypeError(f"{op}: the {what} must be {want}, got {got}")
    if not _fits(got, want):
        raise ShapeError(f"{op}: the {what} must be {want}, got {got}")


def _traced(row: TensorType, length: int | None) -> TensorType:
    return TensorType(row.dtype, (length, *row.shape))


def _row_shape(lengths: tuple[RowLength, ...], inputs: Sequence[Array]) -> tuple[int, ...]:
    """A per-step output's row shape after zero steps (`ops.loop_rows`)."""
    return tuple(
        length if isinstance(length, int) else 0 if length is None else inputs[length[0]].shape[length[1]]
        for length in lengths
    )


def _stack(
    rows: list[Array], row_type: TensorType, known: tuple[int, ...] | None, reverse: bool
) -> Array:
    """The trace of `rows` (in the order the steps ran, a carry's initial value first,
    or last for a reversed loop), indexed by step. With no rows, an empty trace of the
    `known` row shape (the carry's, or `ops.loop_rows`'), else with 0 for unknown
    lengths."""
    if rows:
        return np.stack(rows[::-1] if reverse else rows)
    shape = known if known is not None else tuple(n or 0 for n in row_type.shape)
    return np.empty((0, *shape), dtype=row_type.dtype)
