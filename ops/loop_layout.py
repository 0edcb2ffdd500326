"""The typed groups of a loop's inputs and outputs, so no consumer does index arithmetic.

A `Scan` node's outer inputs are `(n_steps, *initials, *sequences, *non_sequences)` and
its outer outputs `(*finals, *traces of the traced carries, *ys traces[, executed])`; its
body's params are `(*carries, *sequence rows, *non_sequences)` and its results
`(*next carries, *ys[, stop])`. Every consumer (the op itself, its derivatives, the loop
rewrites, vectorization, the backend) reads and builds these through the four groups
below, obtained from `Scan.split_inputs`, `split_outputs`, `split_params` and
`split_results` and turned back into flat tuples with `joined()`. The groups are generic
in what they hold: variables, types, arrays, cotangents (`Variable | None`) or the names
of generated code.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

T = TypeVar("T")


@attrs.frozen
class LoopInputs(Generic[T]):
    """A loop node's outer inputs by kind."""

    n_steps: T
    initials: tuple[T, ...]
    sequences: tuple[T, ...]
    non_sequences: tuple[T, ...]

    def joined(self) -> tuple[T, ...]:
        return (self.n_steps, *self.initials, *self.sequences, *self.non_sequences)


@attrs.frozen
class LoopOutputs(Generic[T]):
    """A loop node's outer outputs by kind. `traces[k]` is carry k's trace, or None when
    the op does not keep it (`Scan.traced[k]` is False); `executed` is the step count of
    a while-loop (None for a for-loop)."""

    finals: tuple[T, ...]
    traces: tuple[T | None, ...]
    ys: tuple[T, ...]
    executed: T | None

    def joined(self) -> tuple[T, ...]:
        """The flat outputs. Only for values every output has: a None trace is taken
        for a carry the op does not trace, and dropped."""
        kept = tuple(trace for trace in self.traces if trace is not None)
        last = () if self.executed is None else (self.executed,)
        return (*self.finals, *kept, *self.ys, *last)


@attrs.frozen
class StepParams(Generic[T]):
    """What one step reads: the carries, this step's sequence rows, the non-sequences."""

    carries: tuple[T, ...]
    rows: tuple[T, ...]
    non_sequences: tuple[T, ...]

    def joined(self) -> tuple[T, ...]:
        return (*self.carries, *self.rows, *self.non_sequences)


@attrs.frozen
class StepResults(Generic[T]):
    """What one step computes: the next carries, the per-step outputs and, for a
    while-loop, the stop condition."""

    carries: tuple[T, ...]
    ys: tuple[T, ...]
    stop: T | None

    def joined(self) -> tuple[T, ...]:
        return (*self.carries, *self.ys, *(() if self.stop is None else (self.stop,)))
