"""Run-time errors a user can act on (issue 21): an error inside a loop says which step
of which loop and names the user's variables, not the body's params (`p2`), in
`evaluate` and in compiled code alike; `evaluate` puts the node and its inputs' names
and shapes before NumPy's own message, keeping its type and chaining it; a compiled
advanced index out of bounds names the index, its axis and the indexed variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ops as pt
from ops.scan_op import Scan
from fgraph import Graph, Variable, evaluate
from fgraph.errors import reraise_in_context
from numba_backend import function

Array = np.ndarray[Any, np.dtype[Any]]
Run = Callable[[Sequence[Variable], Variable, Sequence[object]], Array]


def evaluated(inputs: Sequence[Variable], output: Variable, values: Sequence[object]) -> Array:
    return evaluate([output], dict(zip(inputs, values)))[0]


def compiled(inputs: Sequence[Variable], output: Variable, values: Sequence[object]) -> Array:
    return function(list(inputs), output)(*values)


BOTH = pytest.mark.parametrize("run", [evaluated, compiled], ids=["evaluate", "compiled"])


def _rnn() -> tuple[list[Variable], Variable]:
    X, h, W = pt.matrix("X"), pt.vector("h"), pt.matrix("W")
    hs = pt.scan(lambda x, h, W: pt.tanh(W @ h + x), sequences=[X], outputs_info=[h],
                 non_sequences=[W])
    return [X, h, W], hs


@BOTH
def test_a_step_error_names_the_users_variables_and_the_step(run: Run) -> None:
    inputs, hs = _rnn()
    with pytest.raises(ValueError) as raised:
        run(inputs, hs, [np.ones((5, 32)), np.ones(32), np.ones((64, 64))])
    message = str(raised.value)
    assert message.startswith("in step 0 of the loop over X carrying h: MatMul of W ")
    assert "the carry from h" in message
    assert "(64, 64)" in message and "32" in message  # the shapes that do not fit
    assert not re.search(r"\bp\d\b", message), message  # no param of the body


def _gather_loop() -> tuple[list[Variable], Variable]:
    """A loop whose step 3 reads past the end of `table`."""
    positions, table = pt.vector("positions", dtype="int64"), pt.vector("table")
    total = pt.scan(lambda i, acc, t: acc + t[i], sequences=[positions],
                    outputs_info=[pt.zeros(())], non_sequences=[table])
    return [positions, table], total


@BOTH
def test_the_failing_step_is_named(run: Run) -> None:
    inputs, total = _gather_loop()
    with pytest.raises(IndexError) as raised:
        run(inputs, total, [np.array([0, 1, 2, 9, 0]), np.arange(4.0)])
    message = str(raised.value)
    assert message.startswith("in step 3 of the loop over positions carrying ")
    assert "table" in message and "9" in message
    assert not re.search(r"\bp\d\b", message), message


@BOTH
def test_a_reversed_loop_names_the_step_it_ran(run: Run) -> None:
    positions, table = pt.vector("positions", dtype="int64"), pt.vector("table")
    total = pt.scan(lambda i, acc, t: acc + t[i], sequences=[positions],
                    outputs_info=[pt.zeros(())], non_sequences=[table], go_backwards=True)
    with pytest.raises(IndexError, match=r"^in step \d of the loop over "):
        run([positions, table], total, [np.array([9, 0, 1]), np.arange(4.0)])


@BOTH
def test_results_are_unchanged_without_an_error(run: Run) -> None:
    inputs, total = _gather_loop()
    values = [np.array([0, 1, 2, 3, 0]), np.arange(4.0)]
    np.testing.assert_allclose(run(inputs, total, values), [0.0, 1.0, 3.0, 6.0, 6.0])


def test_nested_loops_name_both_steps_in_evaluate() -> None:
    rows, table = pt.matrix("rows", dtype="int64"), pt.vector("table")

    def outer_step(row: Variable, t: Variable) -> Variable:
        partial: Variable = pt.scan(lambda i, acc, t: acc + t[i], sequences=[row],
                                    outputs_info=[pt.zeros(())], non_sequences=[t])
        return partial[-1]

    sums = pt.scan(outer_step, sequences=[rows], non_sequences=[table])
    with pytest.raises(IndexError) as raised:
        evaluate([sums], {rows: np.array([[0, 1], [2, 7]]), table: np.arange(4.0)})
    message = str(raised.value)
    assert message.startswith("in step 1 of the loop over rows: in step 1 of the loop over "
                              "the row of rows carrying ")
    assert "table" in message


def test_evaluate_keeps_numpys_error_type_and_chains_it() -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    with pytest.raises(ValueError) as raised:
        evaluate([a @ b], {a: np.ones((2, 3)), b: np.ones((4, 5))})
    assert type(raised.value) is ValueError
    assert str(raised.value).startswith("MatMul of a (2, 3) and b (4, 5): ")
    cause = raised.value.__cause__
    assert type(cause) is ValueError and str(raised.value).endswith(str(cause))


def test_evaluate_says_the_op_once() -> None:
    x, i = pt.matrix("x"), pt.vector("i", dtype="int64")
    with pytest.raises(IndexError) as raised:
        evaluate([x[i]], {x: np.ones((3, 4)), i: np.array([0, 5])})
    message = str(raised.value)
    assert message.startswith("AdvancedSubtensor{?} of x (3, 4) and i (2,): index 5 ")
    assert message.count("AdvancedSubtensor") == 1


def test_an_error_its_type_cannot_rebuild_gets_the_context_as_a_note() -> None:
    class TwoPartError(ValueError):
        def __init__(self, what: str, where: str) -> None:
            super().__init__(f"{what} at {where}")

    with pytest.raises(TwoPartError) as raised:
        try:
            raise TwoPartError("bad", "here")
        except TwoPartError as error:
            reraise_in_context(error, "in step 2 of the loop")
    assert str(raised.value) == "bad at here"
    assert raised.value.__notes__ == ["in step 2 of the loop"]


# --- compiled advanced indexing out of bounds -----------------------------------------------
@pytest.mark.parametrize(
    ("index", "positions", "want"),
    [
        ("rows", [np.array([0, 5])], "index 5 is out of bounds for axis 0 of x "),
        ("rows", [np.array([-4])], "index -4 is out of bounds for axis 0 of x "),
        ("both", [np.array([0, 1]), np.array([1, -7])],
         "index -7 is out of bounds for axis 1 of x "),
        ("columns", [np.array([4])], "index 4 is out of bounds for axis 1 of x "),
    ],
)
def test_a_compiled_advanced_index_out_of_bounds_is_named(
    index: str, positions: list[Array], want: str
) -> None:
    x = pt.matrix("x")
    i, j = pt.vector("i", dtype="int64"), pt.vector("j", dtype="int64")
    picked, inputs = {"rows": (x[i], [x, i]), "both": (x[i, j], [x, i, j]),
                      "columns": (x[:, i], [x, i])}[index]
    with pytest.raises(IndexError) as raised:
        compiled(inputs, picked, [np.ones((3, 4)), *positions])
    assert str(raised.value).startswith(want)
    assert str(raised.value).endswith(f"with length {4 if 'axis 1' in want else 3}")


def test_a_compiled_advanced_update_out_of_bounds_is_named() -> None:
    x, i = pt.matrix("x"), pt.vector("i", dtype="int64")
    updated = pt.inc_subtensor(x[i], 1.0)
    with pytest.raises(IndexError, match=r"^index 3 is out of bounds for axis 0 of x "):
        compiled([x, i], updated, [np.ones((3, 4)), np.array([1, 3])])
    np.testing.assert_allclose(
        compiled([x, i], updated, [np.zeros((3, 4)), np.array([1, 1, -1])]),
        evaluated([x, i], updated, [np.zeros((3, 4)), np.array([1, 1, -1])]),
    )



def test_a_loop_over_many_values_is_named_by_three_and_how_many_more() -> None:
    """A gradient's loop runs over a dozen traces: its name lists each value once, at
    most three, and counts the others, instead of every one (1 500 characters)."""
    xs = [pt.vector(f"x{k}") for k in range(4)]
    h0 = pt.scalar("h0")
    total = pt.scan(lambda a, b, c, d, e, h: h + a + b + c + d + e,
                    sequences=[*xs, xs[0]], outputs_info=[h0])[-1]
    (loop,) = [n.op for n in Graph(xs + [h0], [total]).nodes if isinstance(n.op, Scan)]
    names = ["steps", "h0", "x0", "x1", "x2", "x3", "x0"]
    assert loop.loop_name(names) == "the loop over x0, x1, x2 and 1 more carrying h0"
