"""Small test-only ops, so the core is tested without the op library."""

from __future__ import annotations

import itertools
from typing import Literal

import attrs
import numpy as np

from fgraph import Graph, Op, TensorType, Variable, broadcast_shapes, promote
from fgraph.op import Array


@attrs.frozen
class Add(Op):
    """Elementwise addition of two tensors."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        x, y = input_types
        return (TensorType(promote(x.dtype, y.dtype), broadcast_shapes(x.shape, y.shape)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.add(*inputs),)


@attrs.frozen
class Sub(Op):
    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        x, y = input_types
        return (TensorType(promote(x.dtype, y.dtype), broadcast_shapes(x.shape, y.shape)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.subtract(*inputs),)


@attrs.frozen
class Scale(Op):
    """Multiply by a fixed factor: an op with a parameter."""

    factor: float

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return ((inputs[0] * self.factor).astype(inputs[0].dtype),)


@attrs.frozen
class Exp(Op):
    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (x,)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.exp(inputs[0]),)


@attrs.frozen
class Zeros(Op):
    """A buffer creator with no inputs: the node position-aware graphs keep apart."""

    length: int

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (TensorType("float64", (self.length,)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.zeros(self.length),)


@attrs.frozen
class SplitSign(Op):
    """Two outputs: the positive and negative parts."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (x, x)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        return (np.maximum(x, 0), np.minimum(x, 0))


@attrs.frozen
class Composite(Op):
    """An op holding an inner graph over params."""

    inner_graph: Graph

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return tuple(output.type for output in self.inner_graph.outputs)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        from fgraph import evaluate

        return tuple(evaluate(self.inner_graph.outputs, dict(zip(self.inner_graph.inputs, inputs))))


@attrs.frozen
class Passthrough(Op):
    """Returns its input array itself: the evaluator must still not hand out aliases."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (x,)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[0],)


@attrs.frozen
class BrokenPerform(Op):
    """A buggy op: `perform` breaks the promise `infer` made in the way `fault` names."""

    fault: Literal["dtype", "shape", "count"]

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (x,)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        if self.fault == "dtype":
            return (x.astype("float32"),)
        if self.fault == "shape":
            return (np.concatenate([x, x]),)
        return (x, x)


_flaky_calls = itertools.count(1)


@attrs.frozen
class FlakyInfer(Op):
    """A buggy op: `infer` answers differently on every call (static length 1, 2, 3, ...)."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (TensorType("float64", (next(_flaky_calls),)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        raise NotImplementedError("FlakyInfer only exists to be caught by check_graph")


def add(x: Variable, y: Variable) -> Variable:
    return Add()(x, y)


def sub(x: Variable, y: Variable) -> Variable:
    return Sub()(x, y)


def exp(x: Variable) -> Variable:
    return Exp()(x)
