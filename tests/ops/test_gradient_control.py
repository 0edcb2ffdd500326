"""Gradient control: `stop_gradient` / `zero_grad`, `disconnected_grad`, `grad`'s
`consider_constant`, `known_grads` and `disconnected_inputs` (PyTensor's semantics), and
custom derivatives (`custom_vjp`, `custom_jvp`, `op_from_graph` with overridden
derivatives): values, gradients against hand-derived ones and finite differences, the
stops gone from optimized graphs, compiled = evaluated, inside loops, under jvp and vmap.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, MissingInputError, Variable, check_graph, evaluate
from fgraph.op import Array
from numba_backend import function
from ops.gradient_control import StopGradient
from ops.from_graph import OpFromGraph
from rewrite import optimize
from tests.ops.checks import check_pullback, check_pushforward

RNG = np.random.default_rng(21)
X_VALUE = np.array([0.5, -1.2, 2.0])
A_VALUE = RNG.normal(size=(4, 4))


def values_of(outputs: Sequence[Variable], inputs: dict[Variable, Array]) -> list[Array]:
    check_graph(Graph(list(inputs), list(outputs)))
    return evaluate(list(outputs), inputs)


def compiled_equals_evaluated(
    inputs: list[Variable], outputs: list[Variable], values: list[Array]
) -> list[Array]:
    """The outputs compiled (fast_run) and evaluated agree; returns the evaluated."""
    expected = values_of(outputs, dict(zip(inputs, values)))
    got = function(inputs, outputs)(*values)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    return expected


def ops_of(graph: Graph) -> list[object]:
    return [node.op for node in graph.nodes]


# --- stop_gradient / zero_grad ---------------------------------------------------------------
@pytest.mark.parametrize("stop", [pt.stop_gradient, pt.zero_grad])
def test_stop_gradient_is_the_value_with_a_zero_derivative(stop: object) -> None:
    """PyTensor's TestZeroGrad.test_grad: the gradient treats the stopped part as a
    constant, and a wrt reached only through the stop gets zeros, not an error."""
    assert callable(stop)
    x = pt.matrix("x")
    cases = [
        (x * stop(x), x),
        (x * stop(pt.exp(x)), pt.exp(x)),
        (x**2 * stop(x), 2 * x**2),
        (stop(x), pt.zeros_like(x)),
        (stop(pt.exp(x)) * 3.0, pt.zeros_like(x)),
    ]
    for expression, expected in cases:
        gradient = pt.grad(expression.sum(), x)
        got, want, value = values_of([gradient, expected, expression], {x: A_VALUE})
        np.testing.assert_allclose(got, want)
    np.testing.assert_array_equal(values_of([stop(x)], {x: A_VALUE})[0], A_VALUE)


def test_stop_gradient_is_a_wall_for_what_lies_above_it() -> None:
    """Nothing is pulled back through a stop: an overflow above it cannot turn the zero
    into nan (0 * inf). What counts as connected is unchanged: a stop above an integer
    value (where derivatives end anyway) leaves the wrt disconnected."""
    x = pt.vector("x")
    above = pt.exp(pt.exp(x))  # inf at x = 10, whose derivative is inf too
    expression = (x * pt.stop_gradient(above)).sum() + (x * x).sum()
    gradient = pt.grad(expression, x)
    at = np.array([10.0, 0.0])
    got = values_of([gradient], {x: at})[0]
    np.testing.assert_array_equal(got[1], np.exp(1.0))
    assert got[0] == np.inf  # the value above the stop, not nan
    through_integer = pt.stop_gradient(pt.cast(pt.argmax(x), "float64"))
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on x"):
        pt.grad(through_integer, x)


def test_stop_gradient_forward_and_reverse_mode() -> None:
    """jvp through a stop is zero; around it, jvp and grad are those of the function
    with the stopped value held fixed (by hand, and by finite differences of that)."""
    x = pt.vector("x")
    (tangent,) = pt.jvp([pt.stop_gradient(pt.sin(x))], [x], [pt.ones_like(x)])
    np.testing.assert_array_equal(values_of([tangent], {x: X_VALUE})[0], np.zeros(3))
    held = np.cos(X_VALUE)
    stopped = pt.exp(x) * pt.stop_gradient(pt.cos(x))
    direction = RNG.normal(size=3)
    by_x = pt.grad((stopped * pt.constant(direction)).sum(), x)
    (along,) = pt.jvp([stopped], [x], [pt.constant(direction)])
    got_g, got_t = values_of([by_x, along], {x: X_VALUE})
    np.testing.assert_allclose(got_g, np.exp(X_VALUE) * held * direction)
    np.testing.assert_allclose(got_t, np.exp(X_VALUE) * held * direction)


def test_second_derivatives_through_a_stop() -> None:
    x = pt.vector("x")
    cost = (x**3 * pt.stop_gradient(x)).sum()  # d/dx = 3x^2 * x_s, d2 = 6x * x_s
    hessian = pt.hessian(cost, x)
    got = values_of([hessian], {x: X_VALUE})[0]
    np.testing.assert_allclose(got, np.diag(6 * X_VALUE * X_VALUE))


def test_stops_vanish_from_optimized_graphs_and_compile() -> None:
    """PyTensor's test_op_removed: no stop is left after fast_run or fast_compile; the
    unoptimized graph compiles too; values equal the reference evaluator's."""
    x = pt.vector("x")
    y = pt.exp(pt.stop_gradient(x)) * x + pt.disconnected_grad(x) + pt.zero_grad(x * 2)
    for mode in ("fast_run", "fast_compile"):
        graph = optimize(Graph([x], [y]), mode)
        assert not any(isinstance(op, StopGradient) for op in ops_of(graph)), mode
    expected = np.exp(X_VALUE) * X_VALUE + 3 * X_VALUE
    for mode in ("fast_run", "none"):
        np.testing.assert_allclose(function([x], y, mode=mode)(X_VALUE), expected)
    gradient = pt.grad(y.sum(), x)
    got = compiled_equals_evaluated([x], [y, gradient], [X_VALUE])
    np.testing.assert_allclose(got[1], np.exp(X_VALUE))


def test_stops_in_a_loop_body() -> None:
    """In a step function: the stopped value is a constant for the gradient (checked by
    hand), compiled = evaluated; a parameter read only through a stop gets zeros, one
    read only through disconnected_grad is disconnected (the loop's own rule)."""
    h0, w = pt.scalar("h0"), pt.scalar("w")

    def step(h: Variable, w: Variable) -> Variable:
        return h * pt.stop_gradient(w) + w * pt.stop_gradient(h)

    hs = pt.scan(step, outputs_info=h0, non_sequences=w, n_steps=3)
    gradient = pt.grad(hs[-1], [h0, w])
    h, wv = 0.7, 1.3
    # h_{k+1} = 2 w h_k in value; d h_{k+1} = w d h_k + h_k d w (each stopped half constant)
    values, dh, dw = [h], 1.0, 0.0
    for _ in range(3):
        dh, dw = wv * dh, wv * dw + values[-1]
        values.append(2 * wv * values[-1])
    got = compiled_equals_evaluated([h0, w], [hs, *gradient], [np.array(h), np.array(wv)])
    np.testing.assert_allclose(got[0], values[1:])
    np.testing.assert_allclose(got[1:], [dh, dw])

    only_stopped = pt.scan(
        lambda h, w: h + pt.stop_gradient(w), outputs_info=h0, non_sequences=w, n_steps=3
    )
    zeros = pt.grad(only_stopped[-1], w)
    assert values_of([zeros], {h0: np.array(h), w: np.array(wv)})[0] == 0.0
    only_disconnected = pt.scan(
        lambda h, w: h + pt.disconnected_grad(w), outputs_info=h0, non_sequences=w, n_steps=3
    )
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on w"):
        pt.grad(only_disconnected[-1], w)
    ignored = pt.grad(only_disconnected[-1], [h0, w], disconnected_inputs="ignore")
    got = values_of(ignored, {h0: np.array(h), w: np.array(wv)})
    np.testing.assert_array_equal(got, [1.0, 0.0])


def test_stops_under_vmap() -> None:
    """Batched by their own rule (no loop), with the same gradient as unbatched."""
    xs = pt.matrix("xs")

    def per_row(row: Variable) -> Variable:
        return (row * pt.stop_gradient(pt.exp(row))).sum() + pt.disconnected_grad(row).sum()

    out = pt.vmap(per_row)(xs)
    assert isinstance(out, Variable)
    assert not any(isinstance(op, pt.Scan) for op in ops_of(Graph([xs], [out])))
    gradient = pt.grad(out.sum(), xs)
    got = compiled_equals_evaluated([xs], [out, gradient], [A_VALUE])
    np.testing.assert_allclose(got[0], (A_VALUE * np.exp(A_VALUE)).sum(1) + A_VALUE.sum(1))
    np.testing.assert_allclose(got[1], np.exp(A_VALUE))


# --- disconnected_grad ----------------------------------------------------------------------
def test_disconnected_grad() -> None:
    """PyTensor's TestDisconnectedGrad: the same gradients as zero_grad where the wrt is
    connected otherwise; disconnected (an error, or zeros when asked) where it is not."""
    x = pt.matrix("x")
    cases = [
        (x * pt.disconnected_grad(x), x),
        (x * pt.disconnected_grad(pt.exp(x)), pt.exp(x)),
        (x**2 * pt.disconnected_grad(x), 2 * x**2),
    ]
    for expression, expected in cases:
        got, want = values_of([pt.grad(expression.sum(), x), expected], {x: A_VALUE})
        np.testing.assert_allclose(got, want)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on x"):
        pt.grad(pt.disconnected_grad(x).sum(), x)
    pt.grad((x + pt.disconnected_grad(x)).sum(), x)  # connected through x itself
    a, b = pt.matrix("a"), pt.matrix("b")
    y = a + pt.disconnected_grad(b)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on b"):
        pt.grad(y.sum(), b)
    pt.grad(y.sum(), a)
    (tangent,) = pt.jvp([pt.disconnected_grad(x)], [x], [pt.ones_like(x)])
    np.testing.assert_array_equal(values_of([tangent], {x: A_VALUE})[0], np.zeros((4, 4)))


# --- grad's disconnected_inputs, consider_constant, known_grads --------------------------------
def test_disconnected_inputs_raise_warn_ignore() -> None:
    x, unused = pt.vector("x"), pt.vector("unused_input")
    cost = pt.exp(x).sum()
    with pytest.raises(pt.DisconnectedInputError, match="unused_input"):
        pt.grad(cost, [x, unused])
    with pytest.warns(UserWarning, match="does not depend on unused_input"):
        warned = pt.grad(cost, [x, unused], disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ignored = pt.grad(cost, [x, unused], disconnected_inputs="ignore")
        zero = pt.grad(cost, [x, unused], disconnected_inputs="ignore")
    for by_x, zeros in (warned, ignored, zero):
        got_x, got_zeros = values_of([by_x, zeros], {x: X_VALUE, unused: X_VALUE[:2]})
        np.testing.assert_allclose(got_x, np.exp(X_VALUE))
        np.testing.assert_array_equal(got_zeros, np.zeros(2))
    with pytest.raises(ValueError, match="disconnected_inputs must be one of"):
        pt.grad(cost, x, disconnected_inputs="skip")  # type: ignore[call-overload]


def test_consider_constant() -> None:
    """PyTensor's: the listed variables are leaves (nothing flows to what computes them);
    their own gradient is still given; a wrt reached only through them is disconnected."""
    x, y = pt.scalar("x"), pt.scalar("y")
    g_x = pt.grad(x + y, x, consider_constant=[x])  # test_grad_constant: as for a constant
    assert values_of([g_x], {x: np.array(1.0), y: np.array(0.5)})[0] == 1.0
    v = pt.vector("v")
    hidden = pt.exp(v)
    cost = (v * hidden).sum()
    by_v, by_hidden = pt.grad(cost, [v, hidden], consider_constant=[hidden])
    got_v, got_hidden = values_of([by_v, by_hidden], {v: X_VALUE})
    np.testing.assert_allclose(got_v, np.exp(X_VALUE))  # not (1 + v) exp(v)
    np.testing.assert_allclose(got_hidden, X_VALUE)
    with pytest.raises(pt.DisconnectedInputError, match="does not depend on v"):
        pt.grad(hidden.sum(), v, consider_constant=[hidden])
    # the same as disconnected_grad in the graph
    expected = pt.grad((v * pt.disconnected_grad(hidden)).sum(), v)
    np.testing.assert_allclose(values_of([expected], {v: X_VALUE})[0], got_v)
    with pytest.raises(TypeError, match="consider_constant must be a list"):
        pt.grad(cost, v, consider_constant=hidden)
    with pytest.raises(TypeError, match="must hold variables"):
        pt.grad(cost, v, consider_constant=[np.ones(3)])  # type: ignore[list-item]


def test_known_grads_equal_the_chain_rule() -> None:
    """PyTensor's test_known_grads: for each layer of intermediate variables, their
    gradients given as known_grads (no cost) give the inputs' true gradients."""
    x, coefficients = pt.scalar("x"), pt.vector("c")
    t = pt.scalar("t", dtype="int64")
    power = pt.cast(t, "float64")
    coefficient = coefficients[t]
    p = x**power
    y = coefficient * p
    cost = y * y
    inputs = [coefficients, x]
    values: dict[Variable, Array] = {
        coefficients: RNG.normal(size=10), t: np.array(3), x: np.array(0.8)
    }
    true = values_of(pt.grad(cost, inputs), values)
    layers: list[list[Variable]] = [
        [cost], [y], [coefficient, p], [coefficient, x, power], [coefficients, x]
    ]
    for layer in layers:
        first = pt.grad(cost, layer, disconnected_inputs="ignore")
        known = dict(zip(layer, first))
        full = pt.grad(None, inputs, known_grads=known, disconnected_inputs="ignore")
        for got, want in zip(values_of(full, values), true):
            np.testing.assert_allclose(got, want)
    # known_grads with a cost: the known one is the variable's whole gradient
    both = pt.grad(cost, x, known_grads={y: pt.constant(np.float64(1.0))})
    only_known = pt.grad(None, x, known_grads={y: pt.constant(np.float64(1.0))})
    got, want = values_of([both, only_known], values)
    assert got == want


# --- custom derivatives ------------------------------------------------------------------------
@pt.custom_vjp
def clip_gradient(x: Variable) -> Variable:
    return x


def _clip_forward(x: Variable) -> tuple[Variable, tuple[()]]:
    return x, ()


def _clip_backward(residuals: tuple[()], g: Variable) -> tuple[Variable]:
    return (pt.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_forward, _clip_backward)


@pt.custom_vjp
def scaled_square(x: Variable, scale: Variable) -> Variable:
    return scale * x * x


def _square_forward(x: Variable, scale: Variable) -> tuple[Variable, tuple[Variable, Variable]]:
    return scale * x * x, (x, scale)


def _square_backward(
    residuals: tuple[Variable, Variable], g: Variable
) -> tuple[Variable, Variable]:
    x, scale = residuals
    return 2 * scale * x * g, (x * x * g).sum()


scaled_square.defvjp(_square_forward, _square_backward)


@pt.custom_jvp
def log1pexp(x: Variable) -> Variable:
    return pt.log1p(pt.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(
    primals: tuple[Variable, ...], tangents: tuple[Variable, ...]
) -> tuple[Variable, Variable]:
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * pt.sigmoid(x)


@pt.custom_jvp
def sin_cos(x: Variable, y: Variable) -> tuple[Variable, Variable]:
    return pt.sin(x) * y, pt.cos(x)


@sin_cos.defjvp
def _sin_cos_jvp(
    primals: tuple[Variable, ...], tangents: tuple[Variable, ...]
) -> tuple[tuple[Variable, Variable], tuple[Variable, Variable]]:
    (x, y), (tx, ty) = primals, tangents
    return sin_cos(x, y), (pt.cos(x) * y * tx + pt.sin(x) * ty, -pt.sin(x) * tx)


def test_custom_vjp_values_and_gradients() -> None:
    """The value is the function's; the gradient the backward rule's (clipped here, so
    not the true one); a rule equal to the true derivative matches finite differences."""
    x = pt.vector("x")
    y = clip_gradient(x * 3.0)
    by_x = pt.grad(y.sum(), x)
    (got_y, got_by_x) = compiled_equals_evaluated([x], [y, by_x], [X_VALUE])
    np.testing.assert_array_equal(got_y, 3 * X_VALUE)
    np.testing.assert_array_equal(got_by_x, [3.0, 3.0, 3.0])  # clip(1) * 3, not 3 * 3
    check_pullback(lambda v, s: scaled_square(v, s), [X_VALUE, np.array(1.7)])
    v, s = pt.vector("v"), pt.scalar("s")
    second = pt.grad(pt.grad(scaled_square(v, s).sum(), v).sum(), s)  # of 2 s v: 2 sum(v)
    assert np.isclose(values_of([second], {v: X_VALUE, s: np.array(1.7)})[0], 2 * X_VALUE.sum())
    first, again = scaled_square(v, s), scaled_square(v, s)
    assert first.owner is not None and again.owner is not None
    assert isinstance(first.owner.op, OpFromGraph) and first.owner.op == again.owner.op


def test_custom_vjp_errors() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match="custom_vjp clip_gradient: forward-mode"):
        pt.jvp([clip_gradient(x)], [x], [pt.ones_like(x)])

    @pt.custom_vjp
    def undefined(v: Variable) -> Variable:
        return v * 2

    with pytest.raises(TypeError, match=r"undefined.defvjp\(forward, backward\) first"):
        pt.grad(undefined(x).sum(), x)

    @pt.custom_vjp
    def wrong_count(v: Variable) -> Variable:
        return v * 2

    wrong_count.defvjp(lambda v: (v * 2, ()), lambda r, g: (g, g))
    with pytest.raises(ValueError, match="returned 2 cotangents for 1 arguments"):
        pt.grad(wrong_count(x).sum(), x)

    @pt.custom_vjp
    def wrong_rank(v: Variable) -> Variable:
        return v * 2

    wrong_rank.defvjp(lambda v: (v * 2, ()), lambda r, g: (g.sum(),))
    with pytest.raises(TypeError, match="cotangent 0 has type"):
        pt.grad(wrong_rank(x).sum(), x)
    outside = pt.vector("outside")

    @pt.custom_vjp
    def closes_over(v: Variable) -> Variable:
        return v * outside

    with pytest.raises(MissingInputError, match="pass them as arguments"):
        closes_over(x)


def test_custom_jvp_both_modes_and_second_derivatives() -> None:
    """Forward mode uses the rule, reverse mode its transpose; both match finite
    differences (the rule is the true derivative), for one and for two outputs; the
    rule's own derivative gives second derivatives."""
    check_pullback(log1pexp, [X_VALUE])
    check_pushforward(log1pexp, [X_VALUE])
    check_pullback(lambda a, b: sin_cos(a, b)[0] + sin_cos(a, b)[1] * 2.0, [X_VALUE, X_VALUE])
    check_pushforward(lambda a, b: sin_cos(a, b)[0] - sin_cos(a, b)[1], [X_VALUE, X_VALUE])
    x = pt.vector("x")
    gradient = pt.grad(log1pexp(x).sum(), x)
    second = pt.grad(gradient.sum(), x)
    sigmoid = 1 / (1 + np.exp(-X_VALUE))
    got = compiled_equals_evaluated([x], [gradient, second], [X_VALUE])
    np.testing.assert_allclose(got[0], sigmoid)
    np.testing.assert_allclose(got[1], sigmoid * (1 - sigmoid))
    # the rule is what is used: a wrong rule gives its wrong derivative in both modes
    @pt.custom_jvp
    def doubled(v: Variable) -> Variable:
        return v * 1.0

    @doubled.defjvp
    def _doubled_jvp(
        primals: tuple[Variable, ...], tangents: tuple[Variable, ...]
    ) -> tuple[Variable, Variable]:
        return doubled(primals[0]), 2.0 * tangents[0]

    (tangent,) = pt.jvp([doubled(x)], [x], [pt.ones_like(x)])
    by_x = pt.grad(doubled(x).sum(), x)
    got_t, got_g = values_of([tangent, by_x], {x: X_VALUE})
    np.testing.assert_array_equal(got_t, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(got_g, [2.0, 2.0, 2.0])


def test_custom_derivatives_are_inlined_and_compile() -> None:
    """fast_run replaces the op by what it computes (no OpFromGraph left), so the
    wrapper costs nothing; the compiled gradient equals the evaluated one."""
    x = pt.vector("x")
    y = log1pexp(x) + clip_gradient(x)
    gradient = pt.grad(y.sum(), x)
    graph = optimize(Graph([x], [y, gradient]), "fast_run")
    assert not any(isinstance(op, OpFromGraph) for op in ops_of(graph))
    compiled_equals_evaluated([x], [y, gradient], [X_VALUE])


def test_custom_derivatives_in_a_loop_body() -> None:
    """The rules hold inside a step function: a clipped gradient through three steps of
    h <- clip_gradient(h * w), by hand; compiled = evaluated."""
    w = pt.scalar("w")
    hs = pt.scan(
        lambda h, w: clip_gradient(h * w), outputs_info=pt.constant(1.0), non_sequences=w,
        n_steps=3,
    )
    by_w = pt.grad(hs[-1], w)
    got = compiled_equals_evaluated([w], [hs, by_w], [np.array(2.0)])
    np.testing.assert_array_equal(got[0], [2.0, 4.0, 8.0])
    # cotangent of h_k is clip(w * clip(...)) = 1 at every step: dw = h2 + h1 + h0
    assert got[1] == 4.0 + 2.0 + 1.0
    xs = pt.vector("xs")
    total = pt.scan(
        lambda x, acc: acc + log1pexp(x), sequences=xs, outputs_info=pt.constant(0.0)
    )
    by_xs = pt.grad(total[-1], xs)
    got = compiled_equals_evaluated([xs], [total, by_xs], [X_VALUE])
    np.testing.assert_allclose(got[1], 1 / (1 + np.exp(-X_VALUE)))


def test_custom_derivatives_under_vmap() -> None:
    xs = pt.matrix("xs")
    out = pt.vmap(lambda row: log1pexp(row).sum() + clip_gradient(row * 3.0).sum())(xs)
    assert isinstance(out, Variable)
    gradient = pt.grad(out.sum(), xs)
    got = compiled_equals_evaluated([xs], [out, gradient], [A_VALUE])
    np.testing.assert_allclose(got[0], np.log1p(np.exp(A_VALUE)).sum(1) + 3 * A_VALUE.sum(1))
    np.testing.assert_allclose(got[1], 1 / (1 + np.exp(-A_VALUE)) + 3.0)
    batched = pt.vmap(log1pexp)(xs)
    assert isinstance(batched, Variable)
    (tangent,) = pt.jvp([batched], [xs], [pt.ones_like(xs)])
    np.testing.assert_allclose(
        values_of([tangent], {xs: A_VALUE})[0], 1 / (1 + np.exp(-A_VALUE))
    )


def test_op_from_graph_pushforward_override() -> None:
    """op_from_graph's `pushforward` (PyTensor's rop_overrides) replaces forward mode."""
    a = pt.vector("a")
    op = pt.op_from_graph(
        [a], [pt.exp(a)], pushforward=lambda inputs, outputs, tangents: [tangents[0] * 10.0]
    )
    x = pt.vector("x")
    (tangent,) = pt.jvp([op(x)], [x], [pt.ones_like(x)])
    np.testing.assert_array_equal(values_of([tangent], {x: X_VALUE})[0], [10.0] * 3)
    wrong = pt.op_from_graph([a], [pt.exp(a)], pushforward=lambda i, o, t: [t[0], t[0]])
    with pytest.raises(ValueError, match="returned 2 tangents for 1 outputs"):
        pt.jvp([wrong(x)], [x], [pt.ones_like(x)])
