"""The alias analysis (`fgraph.aliasing`), on toy ops declaring their memory facts."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from fgraph import Constant, Graph, Op, TensorType, Variable
from fgraph.aliasing import Aliasing
from fgraph.op import Array
from tests.fgraph.builders import vector
from tests.fgraph.toy_ops import Add, Exp


@attrs.frozen
class View(Op):
    """May share memory with each input in `viewed` (which one is decided at run time);
    `read_only`: the result must never be written (say a broadcast)."""

    viewed: tuple[int, ...] = (0,)
    read_only: bool = False

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return tuple((0, slot) for slot in self.viewed)

    @property
    def read_only_outputs(self) -> tuple[int, ...]:
        return (0,) if self.read_only else ()

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[self.viewed[0]],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[self.viewed[0]],)


@attrs.frozen
class Overwrite(Op):
    """Doubles its input into the input's own buffer."""

    @property
    def destroy_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[0] * 2,)


def view(*inputs: Variable, read_only: bool = False) -> Variable:
    return View(tuple(range(len(inputs))), read_only)(*inputs)


def test_views_share_their_source_buffer_and_allocations_do_not() -> None:
    x = vector("x")
    fresh = Exp()(x)
    seen = view(fresh)
    seen_again = view(seen)
    other = Exp()(seen_again)
    memory = Aliasing.of(Graph([x], [other, seen_again]))
    assert memory.may_share(fresh, seen) and memory.may_share(fresh, seen_again)
    assert memory.buffer(seen_again) == fresh  # the class is named by its first value
    assert not memory.may_share(fresh, other) and not memory.may_share(x, fresh)


def test_values_sharing_an_input_or_a_constant_are_external_and_not_writable() -> None:
    x = vector("x")
    constant = Constant(np.ones(2))
    of_input, of_constant, fresh = view(x), view(constant), Exp()(x)
    memory = Aliasing.of(Graph([x], [of_input, of_constant, fresh]))
    assert memory.is_external(of_input) and memory.is_external(of_constant)
    assert not memory.is_writable(of_input) and not memory.is_writable(constant)
    assert not memory.is_external(fresh) and memory.is_writable(fresh)


def test_a_destroyed_input_shares_its_buffer_with_the_result() -> None:
    x = vector("x")
    fresh = Exp()(x)
    doubled = Overwrite()(fresh)
    memory = Aliasing.of(Graph([x], [Add()(doubled, x)]))
    assert memory.may_share(doubled, fresh) and not memory.is_external(doubled)


def test_a_view_of_several_inputs_joins_their_buffers() -> None:
    x = vector("x")
    a, b = Exp()(x), Exp()(Exp()(x))
    either = view(a, b)
    memory = Aliasing.of(Graph([x], [either]))
    assert memory.may_share(a, b) and memory.may_share(either, b)


def test_read_only_views_and_their_views_are_not_writable_but_their_source_is() -> None:
    x = vector("x")
    fresh = Exp()(x)
    broadcast = view(fresh, read_only=True)
    reversed_broadcast = view(broadcast)
    memory = Aliasing.of(Graph([x], [Add()(reversed_broadcast, fresh)]))
    assert not memory.is_writable(broadcast) and not memory.is_writable(reversed_broadcast)
    assert memory.is_writable(fresh)


def test_outputs_to_copy_are_external_repeated_overlapping_or_read_only() -> None:
    x = vector("x")
    fresh = Exp()(x)
    constant = Constant(np.ones(2))
    graph = Graph([x], [fresh, x, view(x), fresh, constant, view(fresh), Exp()(fresh)])
    assert Aliasing.of(graph).shared_outputs() == (False, True, True, True, True, True, False)
    assert Aliasing.of(Graph([x], [view(fresh)])).shared_outputs() == (False,)
    read_only = view(fresh, read_only=True)
    assert Aliasing.of(Graph([x], [read_only])).shared_outputs() == (True,)


def loop_body(*outputs: Variable) -> Graph:
    """A loop body over carries a, b, c (one per output given, at most three)."""
    return Graph(CARRIES[: len(outputs)], outputs)


CARRIES = (vector("a", length=2), vector("b", length=2), vector("c", length=2))


def test_a_fresh_carry_lives_one_step() -> None:
    a = CARRIES[0]
    fresh = Add()(a, a)
    assert Aliasing.of(loop_body(fresh)).steps_alive(fresh, 1) == 1


def test_a_carry_swapped_to_another_through_a_view_lives_two_steps() -> None:
    a, b, _ = CARRIES
    fresh = Add()(view(a), b)
    assert Aliasing.of(loop_body(b, fresh)).steps_alive(fresh, 2) == 2
    assert Aliasing.of(loop_body(view(b), fresh)).steps_alive(fresh, 2) == 2


def test_three_rotating_carries_keep_a_buffer_three_steps() -> None:
    a, b, c = CARRIES
    fresh = Add()(a, b)
    memory = Aliasing.of(loop_body(view(b), c, fresh))
    assert memory.steps_alive(fresh, 3) == 3


def test_a_value_no_carry_holds_is_dead_at_the_end_of_its_step() -> None:
    a, b, _ = CARRIES
    fresh, per_step = Add()(a, b), Exp()(a)
    memory = Aliasing.of(loop_body(fresh, b, per_step))
    assert memory.steps_alive(per_step, 2) == 0
    assert memory.steps_alive(fresh, 2) == 1  # b passes itself on, not the fresh value


def test_a_buffer_entering_a_cycle_of_views_lives_forever() -> None:
    a, b, _ = CARRIES
    fresh = Exp()(b)
    memory = Aliasing.of(loop_body(view(a, fresh), b))  # a may keep itself, or take fresh
    assert memory.steps_alive(fresh, 2) is None


def test_steps_alive_needs_as_many_inputs_and_outputs_as_carries() -> None:
    a = CARRIES[0]
    with pytest.raises(ValueError, match="2 carries needs at least that many"):
        Aliasing.of(loop_body(Exp()(a))).steps_alive(a, 2)


def test_a_value_of_another_graph_is_refused_by_name() -> None:
    x, stranger = vector("x"), vector("stranger")
    with pytest.raises(ValueError, match="stranger .* is not a value of"):
        Aliasing.of(Graph([x], [Exp()(x)])).buffer(stranger)


def test_a_long_chain_of_views_is_one_class() -> None:
    x = vector("x")
    value = Exp()(x)
    for _ in range(20_000):
        value = view(value)
    memory = Aliasing.of(Graph([x], [value]))
    assert memory.buffer(value) == Exp()(x)  # nodes are interned: the very same value
