"""`Apply` (a node: an op applied to input variables) and `Output` (one of its results).

Nodes are hash-consed: building a node structurally identical to a live one (same op,
same input objects, same position) returns that very object. Equality is identity,
the structural hash is computed once at creation, and common-subexpression
elimination happens as a side effect of construction.

`Output` is a small value object `(owner, index)` made on demand, so that a node does
not hold its outputs and no reference cycle keeps dropped graphs alive: dropping the
last reference to a graph frees its nodes immediately, and their intern entries with
them.

Both pickle flat, as a record list (`fgraph.serialize`, which builds nodes and so
registers their pickling with `copyreg` rather than being imported here).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from fgraph.frozen import Frozen
from fgraph.intern import InternedMeta, InternTable, exact_key
from fgraph.op import Op
from fgraph.types import TensorType
from fgraph.variable import Variable


def _apply_key(
    op: object, inputs: object, position: object = 0
) -> tuple[Hashable, tuple[object, ...]]:
    """Normalize constructor arguments to the exact intern key, validating them. The op is
    keyed by `exact_key` (its class and exact field values), not by `==`."""
    if not isinstance(op, Op):
        raise TypeError(f"Apply needs an Op, got {op!r}")
    if not isinstance(inputs, Sequence):
        raise TypeError(f"Apply inputs must be a sequence of variables, got {inputs!r}")
    inputs = tuple(inputs)
    for number, variable in enumerate(inputs):
        if not isinstance(variable, Variable):
            raise TypeError(
                f"{op}: input {number} must be a Variable, got {type(variable).__name__} "
                f"{variable!r} (wrap values with ops.constant / ops.as_tensor)"
            )
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or position < 0:
        raise TypeError(f"Apply position must be a non-negative int, got {position!r}")
    return (exact_key(op), inputs, int(position)), (op, inputs, int(position))


class _ApplyMeta(InternedMeta):
    _table = InternTable["Apply"]("Apply")

    def _intern_key(cls, *args: Any, **kwargs: Any) -> tuple[Hashable, tuple[object, ...]]:
        return _apply_key(*args, **kwargs)


@attrs.frozen(eq=False, repr=False, weakref_slot=True)
class Apply(Frozen, metaclass=_ApplyMeta):
    """An op applied to inputs. `position` is 0 except in position-aware graphs, where it
    keeps structurally identical nodes (say two buffers two inplace ops destroy) apart."""

    keyed_by_equality: ClassVar[bool] = True  # interned: equality is identity

    op: Op
    inputs: tuple[Variable, ...]
    position: int = 0
    output_types: tuple[TensorType, ...] = attrs.field(init=False)
    structural_hash: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        output_types = tuple(self.op.infer(*[variable.type for variable in self.inputs]))
        for output_type in output_types:
            if not isinstance(output_type, TensorType):
                raise TypeError(f"{self.op}.infer must return TensorTypes, got {output_types!r}")
        object.__setattr__(self, "output_types", output_types)
        object.__setattr__(self, "structural_hash", hash((self.op, self.inputs, self.position)))

    def __hash__(self) -> int:
        return self.structural_hash

    @property
    def outputs(self) -> tuple[Output, ...]:
        return tuple(
            Output(self, index, output_type) for index, output_type in enumerate(self.output_types)
        )

    @property
    def out(self) -> Output:
        """The only output of a single-output node."""
        if len(self.output_types) != 1:
            raise TypeError(f"{self.op} has {len(self.output_types)} outputs; use .outputs")
        return Output(self, 0, self.output_types[0])

    def __repr__(self) -> str:
        return f"Apply({self.op}, inputs={len(self.inputs)}, position={self.position})"


@attrs.frozen(repr=False, order=False)
class Output(Variable):
    """The `index`-th output of `owner`. Equal outputs are those of the same node and index."""

    owner: Apply
    index: int
    type: TensorType = attrs.field(eq=False)

    def __repr__(self) -> str:
        suffix = f".{self.index}" if len(self.owner.output_types) > 1 else ""
        return f"Output({self.owner.op}{suffix}: {self.type})"
