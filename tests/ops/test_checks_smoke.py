"""The shared checks catch a wrong derivative, so they cannot pass vacuously."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import ops as pt
from fgraph import Op, TensorType, Variable
from fgraph.op import Array
from tests.ops.checks import check_pullback, check_pushforward


@attrs.frozen
class ExpWithWrongDerivative(Op):
    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.exp(inputs[0]),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (cotangent,) = cotangents
        assert cotangent is not None
        return (cotangent * outputs[0] * 2,)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (tangent,) = tangents
        assert tangent is not None
        return (tangent * outputs[0] * 2,)


def test_checks_accept_a_correct_derivative() -> None:
    values = [np.array([0.3, -0.2, 1.1])]
    check_pullback(lambda x: pt.exp(x) * x, values)
    check_pushforward(lambda x: pt.exp(x) * x, values)


def test_checks_reject_a_wrong_derivative() -> None:
    values = [np.array([0.3, -0.2, 1.1])]
    with pytest.raises(AssertionError):
        check_pullback(lambda x: ExpWithWrongDerivative()(x), values)
    with pytest.raises(AssertionError):
        check_pushforward(lambda x: ExpWithWrongDerivative()(x), values)
