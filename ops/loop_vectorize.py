"""Vectorizing a loop: one loop with its body vectorized, never a loop over the batch.

- **Every example runs the same steps** (a for-loop whose step count is not batched, or a
  while-loop whose stop condition does not depend on the batch): the loop runs as it
  is, over batched carries and sequences (time axis first, batch axes behind it),
  traces coming back batch first.
- **Examples run different numbers of steps** (a batched `n_steps`, or a while-loop
  stopping on batched values): the loop runs until every example has stopped, each
  keeping its own state from the step it stopped at (a masked step: `where(alive, new,
  old)`), as JAX's `vmap` of a while-loop does. Final values and step counts are each
  example's own. Its traces would be ragged (one length per example), so
  `without_ragged_reads` (`ops.loop_ragged`), which the vectorizer runs first, refuses
  at build time a graph that reads them; the last row of a carry's trace,
  `scan(...)[-1]`, is the carry's final value when the loop runs at least one step, and
  is read as such.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Input, TensorType, Variable, rebuild
from fgraph.op import Vectorized
from ops.batching import batch_lengths
from ops.broadcast import broadcast_to
from ops.convert import constant
from ops.dimshuffle import DimShuffle, expand_dims
from ops.elementwise_functions import cast, invert, logical_and, lt, where, zeros_like
from ops.join import concatenate
from ops.loop_layout import LoopInputs, LoopOutputs, StepParams
from ops.reduction import any as any_of
from ops.reduction import max as max_of
from ops.reduction import min as min_of
from ops.reshape_ops import reshape
from ops.scan_grad import closed_scan
from ops.scan_op import LOOP_DELEGATES, Scan
from ops.shape_vector import shape_i
from ops.vectorize import batched_body, broadcast_batch, vectorize_graph

Lengths = Sequence[Variable | int]


def vectorize_loop(
    op: Scan, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
) -> Vectorized:
    """`op` applied to batched inputs (`batched` flags those with batch axes)."""
    given, flags = op.split_inputs(inputs), op.split_inputs(batched)
    lengths = batch_lengths([v for v, flag in zip(inputs, batched) if flag], batch_ndim)
    if not flags.n_steps:
        body, param_flags, result_flags = batched_body(
            op.inner_graph, op.n_carries, batched[1:], batch_ndim, lengths
        )
        results = op.split_results(result_flags)
        if not results.stop:
            return _same_steps(attrs.evolve(op, inner_graph=body), given, flags, batch_ndim,
                               lengths, op.split_params(param_flags).carries, results.ys)
    if op.reverse:
        raise ValueError(
            f"vectorize: {op} runs backwards a number of steps that differs per example; "
            "only forward loops can stop at different steps"
        )
    return _masked_steps(op, given, flags, batch_ndim, lengths)


def _same_steps(
    op: Scan,
    given: LoopInputs[Variable],
    flags: LoopInputs[bool],
    batch_ndim: int,
    lengths: Lengths,
    carry_flags: tuple[bool, ...],
    ys_flags: tuple[bool, ...],
) -> Vectorized:
    """Every example runs the same steps: `op` (with its body batched already) over
    batched initial values and time-first sequences."""
    initials = tuple(
        broadcast_batch(v, lengths) if batched and not given_batched else v
        for v, batched, given_batched in zip(given.initials, carry_flags, flags.initials)
    )
    sequences = tuple(_time_first(s, batch_ndim) if batched else s
                      for s, batched in zip(given.sequences, flags.sequences))
    loop = op.apply_loop(LoopInputs(given.n_steps, initials, sequences, given.non_sequences))
    outputs = LoopOutputs(
        loop.finals,
        tuple(_batch_first(t, batch_ndim) if t is not None and batched else t
              for t, batched in zip(loop.traces, carry_flags)),
        tuple(_batch_first(_with_batch_lengths(y, lengths), batch_ndim) if batched else y
              for y, batched in zip(loop.ys, ys_flags)),
        loop.executed,
    )
    output_flags = LoopOutputs(
        carry_flags,
        tuple(batched if keep else None for batched, keep in zip(carry_flags, op.traced)),
        ys_flags,
        None if loop.executed is None else False,
    )
    return outputs.joined(), output_flags.joined()


def _masked_steps(
    op: Scan, given: LoopInputs[Variable], flags: LoopInputs[bool], batch_ndim: int,
    lengths: Lengths,
) -> Vectorized:
    """Examples run different numbers of steps: a while-loop over the batch that runs
    until every example has stopped, each example's carries frozen from then on.

    Two carries are added: `alive` (per example: still running) and `count` (per
    example: steps run). A step computes every example and keeps the new carries of
    the live ones; an example stops after its stop condition holds or its own n_steps
    are done. Per-step outputs of stopped examples are zeros, their carries' trace rows
    repeat their final value (padding nothing may read: see `without_ragged_reads`).
    """
    static = tuple(n if isinstance(n, int) else None for n in lengths)

    def with_batch(variable: Variable) -> TensorType:
        return TensorType(variable.dtype, (*static, *variable.type.shape))

    params = op.params
    fresh = StepParams(
        tuple(Input(with_batch(p), f"carry{k}") for k, p in enumerate(params.carries)),
        tuple(Input(with_batch(p) if b else p.type, f"row{k}")
              for k, (p, b) in enumerate(zip(params.rows, flags.sequences))),
        tuple(Input(with_batch(p) if b else p.type, f"non_sequence{k}")
              for k, (p, b) in enumerate(zip(params.non_sequences, flags.non_sequences))),
    )
    param_flags = StepParams((True,) * op.n_carries, flags.sequences, flags.non_sequences)
    pairs = list(zip(params.joined(), fresh.joined(), param_flags.joined()))
    vectorized = vectorize_graph(op.inner_graph.outputs, {p: f for p, f, b in pairs if b})
    step = op.split_results(rebuild(vectorized, {p: f for p, f, b in pairs if not b}))

    alive = Input(TensorType("bool", static), "alive")
    count = Input(TensorType("int64", static), "count")
    inner_lengths = [n if n is not None else alive.shape[axis] for axis, n in enumerate(static)]

    def per_example(value: Variable, original: Variable) -> Variable:
        """A step value with the batch axes (repeated when it is the same for all)."""
        return value if value.ndim > original.ndim else broadcast_batch(value, inner_lengths)

    def where_alive(value: Variable, otherwise: Variable) -> Variable:
        row_axes = tuple(range(batch_ndim, value.ndim))
        return where(expand_dims(alive, row_axes) if row_axes else alive, value, otherwise)

    originals = op.results
    next_carries = [
        where_alive(per_example(new, original), carry)
        for new, original, carry in zip(step.carries, originals.carries, fresh.carries)
    ]
    ys = [where_alive(y, zeros_like(y))
          for y in (per_example(v, o) for v, o in zip(step.ys, originals.ys))]
    next_count = count + cast(alive, "int64")
    next_alive = alive if step.stop is None else logical_and(alive, invert(step.stop))
    steps_given: tuple[Input, ...] = ()
    if flags.n_steps:
        own_steps = Input(TensorType(given.n_steps.dtype, static), "n_steps")
        next_alive = logical_and(next_alive, lt(next_count, own_steps))
        steps_given = (own_steps,)
    loop_op = attrs.evolve(
        closed_scan(
            (*fresh.carries, alive, count), fresh.rows, (*fresh.non_sequences, *steps_given),
            [*next_carries, next_alive, next_count, *ys, invert(any_of(next_alive))],
            n_carries=op.n_carries + 2, traced=(*op.traced, False, False), reverse=False,
            while_loop=True, length=None,
        ),
        truncate_gradient=op.truncate_gradient,
    )

    initials = tuple(v if b else broadcast_batch(v, lengths)
                     for v, b in zip(given.initials, flags.initials))
    steps_of_each: tuple[Variable, ...] = ()
    if flags.n_steps:
        own = broadcast_to(given.n_steps, list(lengths))
        n_steps, steps_of_each = _bound(own), (own,)
        alive0 = lt(constant(np.int64(0)), own)
    else:
        n_steps = given.n_steps
        alive0 = broadcast_batch(constant(np.bool_(True)), lengths)
    loop = loop_op.apply_loop(LoopInputs(
        n_steps,
        (*initials, alive0, broadcast_batch(constant(np.int64(0)), lengths)),
        tuple(_time_first(s, batch_ndim) if b else s
              for s, b in zip(given.sequences, flags.sequences)),
        (*given.non_sequences, *steps_of_each),
    ))
    *finals, _, steps_run = loop.finals
    *traces, _, _ = loop.traces
    outputs = LoopOutputs(
        tuple(finals),
        tuple(None if t is None else _batch_first(t, batch_ndim) for t in traces),
        tuple(_batch_first(y, batch_ndim) for y in loop.ys),
        steps_run if op.while_loop else None,
    )
    return outputs.joined(), (True,) * len(outputs.joined())


def _bound(own_steps: Variable) -> Variable:
    """The batched loop's step count: the largest example's, or the most negative one if
    any is negative (so that the loop raises the error one example's loop would)."""
    flat = concatenate([reshape(own_steps, [-1]), constant(np.zeros(1, own_steps.dtype))])
    lowest = min_of(flat)
    return where(lt(lowest, 0), lowest, max_of(flat))


def _time_first(sequence: Variable, batch_ndim: int) -> Variable:
    """(batch..., time, row...) -> (time, batch..., row...)."""
    order = (batch_ndim, *range(batch_ndim), *range(batch_ndim + 1, sequence.ndim))
    return DimShuffle(order)(sequence)


def _with_batch_lengths(trace: Variable, lengths: Lengths) -> Variable:
    """A per-step output's (time, batch..., row...) trace with the batch lengths said:
    after zero steps its unknown row lengths are 0 (no step ran to give them), but the
    batch axes have the batch's lengths, as vectorizing promises."""
    batch = trace.type.shape[1 : 1 + len(lengths)]
    if all(isinstance(n, int) and n == b for n, b in zip(lengths, batch)):
        return trace
    rest = [shape_i(trace, axis) for axis in range(1 + len(lengths), trace.ndim)]
    return reshape(trace, [shape_i(trace, 0), *lengths, *rest])


def _batch_first(trace: Variable, batch_ndim: int) -> Variable:
    """(time, batch..., row...) -> (batch..., time, row...)."""
    order = (*range(1, batch_ndim + 1), 0, *range(batch_ndim + 1, trace.ndim))
    return DimShuffle(order)(trace)


LOOP_DELEGATES.vectorize = vectorize_loop
