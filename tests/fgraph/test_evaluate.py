"""`evaluate`: the NumPy reference evaluator that every rewrite and backend is tested against."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest

from fgraph import (
    Constant,
    DTypeError,
    Graph,
    MissingInputError,
    OpContractError,
    Param,
    ShapeError,
    evaluate,
)
from fgraph.op import Array
from tests.fgraph.builders import VECTOR, checked_graph, vector
from tests.fgraph.toy_ops import (
    BrokenPerform,
    Composite,
    Exp,
    Passthrough,
    Scale,
    SplitSign,
    add,
    exp,
    sub,
)


def test_values_match_numpy() -> None:
    x, y = vector("x"), vector("y", length=3)
    positive, negative = SplitSign().apply(sub(x, y))
    outputs = [exp(add(positive, Constant(np.array([1.0, 2.0, 3.0])))), Scale(-2.0)(negative)]
    checked_graph([x, y], outputs)
    x_value, y_value = np.array([0.5, -1.0, 2.0]), np.array([1.0, 1.0, 1.0])
    got = evaluate(outputs, {x: x_value, y: y_value})
    difference = x_value - y_value
    np.testing.assert_allclose(got[0], np.exp(np.maximum(difference, 0) + [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(got[1], -2.0 * np.minimum(difference, 0))


def test_inner_graphs_evaluate_through_their_op() -> None:
    p = Param(0, VECTOR)
    composite = Composite(Graph([p], [Scale(3.0)(exp(p))]))
    x = vector("x")
    out = add(composite(x), x)
    checked_graph([x], [out])
    (got,) = evaluate([out], {x: [0.0, 1.0]})
    np.testing.assert_allclose(got, 3.0 * np.exp([0.0, 1.0]) + [0.0, 1.0])


def test_broadcasting_and_promotion_follow_numpy() -> None:
    narrow = vector("i", dtype="int32", length=1)
    wide = vector("f")
    out = add(narrow, wide)
    assert out.type.dtype == "float64" and out.type.shape == (None,)
    (got,) = evaluate([out], {narrow: np.array([2], dtype="int32"), wide: [0.5, 1.5]})
    assert got.dtype == np.float64 and got.tolist() == [2.5, 3.5]


def test_inputs_are_filtered_with_safe_casts_and_clear_errors() -> None:
    x = vector("x", length=2)
    (got,) = evaluate([exp(x)], {x: [0, 0]})
    assert got.tolist() == [1.0, 1.0]
    with pytest.raises(DTypeError, match="x: expected dtype float64, got complex128"):
        evaluate([exp(x)], {x: np.ones(2, dtype=complex)})
    with pytest.raises(ShapeError, match=r"x: expected shape \(2,\), got \(3,\)"):
        evaluate([exp(x)], {x: np.ones(3)})


def test_missing_input_is_named() -> None:
    x, y = vector("x"), vector("forgotten")
    with pytest.raises(MissingInputError, match="forgotten"):
        evaluate([add(x, y)], {x: np.ones(2)})
    with pytest.raises(MissingInputError, match="forgotten"):
        evaluate([y], {})
    with pytest.raises(MissingInputError, match="p4"):
        evaluate([exp(Param(4, VECTOR))], {})


def test_values_for_computed_variables_are_refused() -> None:
    x = vector("x")
    with pytest.raises(ValueError, match="inputs only"):
        evaluate([exp(exp(x))], {x: np.ones(1), exp(x): np.ones(1)})


def test_unused_inputs_and_root_outputs() -> None:
    x, y = vector("x"), vector("y")
    two = Constant(np.array([2.0]))
    x_got, two_got = evaluate([x, two], {x: [1.0], y: [5.0]})
    assert x_got.tolist() == [1.0] and two_got.tolist() == [2.0]
    assert evaluate([], {}) == []


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("dtype", r"output 0: inferred float64\(3,\), got float32\(3,\)"),
        ("shape", r"output 0: inferred float64\(3,\), got float64\(6,\)"),
        ("count", "returned 2 values for 1 outputs"),
    ],
)
def test_perform_breaking_its_infer_contract_is_caught(
    fault: Literal["dtype", "shape", "count"], message: str
) -> None:
    x = vector("x", length=3)
    out = BrokenPerform(fault)(x)
    with pytest.raises(OpContractError, match=message):
        evaluate([out], {x: np.ones(3)})


def test_outputs_never_alias_inputs_or_constants() -> None:
    x = vector("x")
    constant = Constant(np.array([7.0]))
    value = np.array([1.0, 2.0])
    passed, same, twice, const_out = evaluate(
        [Passthrough()(x), x, Passthrough()(Passthrough()(x)), Passthrough()(constant)],
        {x: value},
    )
    for result in (passed, same, twice):
        assert not np.shares_memory(result, value)
        result[0] = 99.0
    assert value.tolist() == [1.0, 2.0]
    assert not np.shares_memory(passed, same) and not np.shares_memory(passed, twice)
    assert not np.shares_memory(const_out, constant.data)
    assert const_out.flags.writeable
    const_out[0] = 0.0
    assert constant.data.tolist() == [7.0]


def test_shared_subexpressions_are_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Array] = []

    def counting_exp(self: Exp, *inputs: Array) -> tuple[Array, ...]:
        calls.append(inputs[0])
        return (np.exp(inputs[0]),)

    monkeypatch.setattr(Exp, "perform", counting_exp)
    x = vector("x")
    shared = exp(x)
    out = add(add(shared, shared), shared)
    assert len(checked_graph([x], [out]).nodes) == 3
    (got,) = evaluate([out], {x: [0.0]})
    assert got.tolist() == [3.0]
    assert len(calls) == 1
