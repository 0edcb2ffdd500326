"""Random step functions for property tests of loops: a plan draws the step
`h -> tanh(f_k(...f_1(h) + operand_1...) + operand_k)`, each operand the sequence row,
the carry or the carry scaled by the non-sequence."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

import ops as pt
from fgraph import Variable

UNARY: tuple[Callable[[Variable], Variable], ...] = (
    pt.sin, pt.tanh, lambda a: a * a * 0.5, lambda a: pt.exp(a * 0.3),
)

Plan = list[tuple[int, int]]

PLANS = st.lists(
    st.tuples(st.integers(0, len(UNARY) - 1), st.integers(0, 2)), min_size=1, max_size=3
)
"""Strategy for a plan: (unary function, operand) pairs."""


def planned_step(plan: Plan) -> Callable[[Variable, Variable, Variable], Variable]:
    """The step function `(row, carry, non_sequence) -> next carry` of `plan`."""

    def step(x: Variable, h: Variable, w: Variable) -> Variable:
        value = h
        for unary, operand in plan:
            value = UNARY[unary](value) + (x, h, w * h)[operand]
        return pt.tanh(value)

    return step
