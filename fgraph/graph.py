"""`Graph`: a frozen pair of input and output variables, with derived data computed once.

Two graphs built independently with the same structure are equal and hash equal,
whatever their inputs are called: equality compares the *canonical form*, the outputs
rebuilt over positional `Param`s. Because nodes are interned, equal canonical forms
are the very same objects, so the comparison is O(number of outputs) once built, and
inner graphs (already over params) get it for free.

`Graph(inputs, outputs, dedup_nodes=False)` is position-aware: every node is re-created
with its toposort index as `position`, so structurally identical nodes (two `zeros(5)`
buffers destroyed by two inplace updates) stay distinct objects, while two identical
graphs still line up and compare equal.

`digest` is a sha256 over a canonical serialization (the end of this module). It names a
graph across processes and hash seeds (it keys the compile cache), so it never uses
`hash()`, `id()` or set order: ops are encoded from their class's qualified name and
their fields, variables by their position in the toposort, inputs by their index (so
the digest, like graph equality, ignores input names). An op's inner graph is encoded
by its own digest, so the encoding and `Graph` refer to each other: one module.
"""

from __future__ import annotations

import enum
import functools
import hashlib
from collections.abc import Hashable, Iterable, Mapping
from typing import ClassVar
from types import MappingProxyType

import attrs
import numpy as np

from fgraph.errors import MissingInputError, ShapeError
from fgraph.frozen import Frozen
from fgraph.intern import exact_key
from fgraph.node import Apply
from fgraph.serialize import FlatGraph, flatten, unflatten
from fgraph.traverse import rebuild, toposort
from fgraph.types import TensorType
from fgraph.variable import Constant, Input, Param, Variable, display_name

Clients = Mapping[Variable, tuple[tuple[Apply, int], ...]]


@attrs.frozen(init=False, eq=False, repr=False, weakref_slot=True)
class Graph(Frozen):
    """Inputs, outputs and the deterministic toposort of the nodes between them."""

    keyed_by_equality: ClassVar[bool] = True  # canonical-form equality is exact

    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    dedup_nodes: bool
    nodes: tuple[Apply, ...]

    def __init__(
        self, inputs: Iterable[Variable], outputs: Iterable[Variable], dedup_nodes: bool = True
    ) -> None:
        inputs = tuple(inputs)
        outputs = tuple(outputs)
        _check_inputs(inputs)
        for number, output in enumerate(outputs):
            if not isinstance(output, Variable):
                raise TypeError(f"graph output {number} must be a Variable, got {output!r}")
        nodes = toposort(outputs)
        _check_closed(inputs, outputs, nodes)
        if not dedup_nodes:
            outputs = rebuild(outputs, {}, position=lambda number, node: number)
            nodes = toposort(outputs)
        elif any(node.position for node in nodes):
            outputs = rebuild(outputs, {}, position=lambda number, node: 0)
            nodes = toposort(outputs)
        self.__attrs_init__(inputs, outputs, dedup_nodes, nodes)

    @functools.cached_property
    def clients(self) -> Clients:
        """For each variable, the (node, input index) pairs that read it, in toposort order."""
        uses: dict[Variable, list[tuple[Apply, int]]] = {}
        for node in self.nodes:
            for number, input_ in enumerate(node.inputs):
                uses.setdefault(input_, []).append((node, number))
        return MappingProxyType({variable: tuple(found) for variable, found in uses.items()})

    @functools.cached_property
    def node_set(self) -> frozenset[Apply]:
        return frozenset(self.nodes)

    @functools.cached_property
    def digest(self) -> str:
        """sha256 hex of the canonical serialization: equal across processes and seeds."""
        return graph_digest(self)

    @functools.cached_property
    def structure_digest(self) -> str:
        """Like `digest`, but constants count by dtype and shape only: graphs differing just
        in constant values share it, and so share compiled code (constants are arguments)."""
        return graph_digest(self, constant_values=False)

    @functools.cached_property
    def canonical_outputs(self) -> tuple[Variable, ...]:
        """The outputs rebuilt over `Param(i, type)` in place of the i-th input."""
        params = {
            variable: Param(number, variable.type) for number, variable in enumerate(self.inputs)
        }
        if all(params[variable] is variable for variable in self.inputs):
            return self.outputs
        return rebuild(self.outputs, params)

    @functools.cached_property
    def _structure_hash(self) -> int:
        return hash((self.dedup_nodes, self.canonical_outputs, tuple(v.type for v in self.inputs)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Graph):
            return NotImplemented
        return (
            self._structure_hash == other._structure_hash
            and self.dedup_nodes == other.dedup_nodes
            and tuple(v.type for v in self.inputs) == tuple(v.type for v in other.inputs)
            and self.canonical_outputs == other.canonical_outputs
        )

    def __hash__(self) -> int:
        return self._structure_hash

    def replace(self, replacements: Mapping[Variable, Variable]) -> Graph:
        """A new graph with each key variable replaced by its value (the old one is untouched).

        A replacement must have the replaced variable's dtype and rank and no conflicting
        static length; the new graph keeps these inputs.
        """
        for old, new in replacements.items():
            _check_replacement(old, new)
        return Graph(self.inputs, rebuild(self.outputs, replacements), self.dedup_nodes)

    def __repr__(self) -> str:
        names = ", ".join(display_name(variable) for variable in self.inputs)
        return f"Graph(inputs=[{names}], outputs={len(self.outputs)}, nodes={len(self.nodes)})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_unpickle_graph, (self.inputs, flatten(self.outputs), self.dedup_nodes))


def _unpickle_graph(inputs: tuple[Variable, ...], flat: FlatGraph, dedup_nodes: bool) -> Graph:
    return Graph(inputs, unflatten(flat), dedup_nodes)


def _check_inputs(inputs: tuple[Variable, ...]) -> None:
    seen: set[Variable] = set()
    for number, variable in enumerate(inputs):
        if not isinstance(variable, (Input, Param)):
            raise TypeError(
                f"graph input {number} must be an Input or Param, got {variable!r}"
                + (" (constants are not inputs)" if isinstance(variable, Constant) else "")
            )
        if variable in seen:
            raise ValueError(f"graph input {number} ({display_name(variable)}) is repeated")
        seen.add(variable)


def _check_closed(
    inputs: tuple[Variable, ...], outputs: tuple[Variable, ...], nodes: tuple[Apply, ...]
) -> None:
    """Every root variable the outputs depend on is an input or a constant."""
    declared = set(inputs)
    for node in nodes:
        for input_ in node.inputs:
            if input_.owner is None and input_ not in declared and not isinstance(input_, Constant):
                raise MissingInputError(
                    f"{display_name(input_)} ({input_.type}) is used by {node.op} but is not "
                    "one of the graph's inputs"
                )
    for number, output in enumerate(outputs):
        if output.owner is None and output not in declared and not isinstance(output, Constant):
            raise MissingInputError(
                f"graph output {number} is {display_name(output)}, which is not an input"
            )


def _check_replacement(old: Variable, new: Variable) -> None:
    if not isinstance(new, Variable):
        raise TypeError(f"replacement for {display_name(old)} must be a Variable, got {new!r}")
    if old.type.dtype != new.type.dtype or old.type.ndim != new.type.ndim:
        raise TypeError(
            f"cannot replace {display_name(old)}: expected {old.type}, got {new.type}"
        )
    for want, got in zip(old.type.shape, new.type.shape):
        if want is not None and got is not None and want != got:
            raise ShapeError(
                f"cannot replace {display_name(old)}: expected shape {old.type.shape}, "
                f"got {new.type.shape}"
            )


# -- stable digests ----------------------------------------------------------------------
FORMAT_VERSION = b"fgraph-digest-1"


def encode_value(value: object, *, constant_values: bool = True) -> bytes:
    """A canonical byte encoding of an op parameter (raises TypeError for unknown kinds).

    With `constant_values=False`, inner graphs are encoded by their structure digest (see
    `graph_digest`).
    """

    def encode(item: object) -> bytes:
        return encode_value(item, constant_values=constant_values)

    match value:
        case None:
            return b"N"
        case bool():
            return b"T" if value else b"F"
        case int():
            return b"i%d;" % value
        case float():
            return b"f" + value.hex().encode() + b";"
        case complex():
            return b"z" + value.real.hex().encode() + b"," + value.imag.hex().encode() + b";"
        case str():
            data = value.encode()
            return b"s%d:" % len(data) + data
        case bytes():
            return b"b%d:" % len(value) + value
        case tuple() | list():
            return b"(" + b"".join(encode(item) for item in value) + b")"
        case frozenset():
            return b"{" + b"".join(sorted(encode(item) for item in value)) + b"}"
        case enum.Enum():
            return b"e" + _class_name(value) + b"." + value.name.encode() + b";"
        case np.ndarray() | np.generic():
            # Not `np.ascontiguousarray`: it turns a 0-d array into shape (1,), which made a
            # scalar constant digest like a length-1 vector. `tobytes` is C-ordered anyway.
            array = np.asarray(value)
            header = b"a" + encode((array.dtype.name, tuple(array.shape)))
            return header + encode(array.tobytes())
        case TensorType():
            return b"t" + encode((value.dtype, value.shape))
        case Graph():
            digest = value.digest if constant_values else value.structure_digest
            return b"G" + digest.encode() + b";"
        case _ if attrs.has(type(value)):
            fields: tuple[attrs.Attribute[object], ...] = getattr(type(value), "__attrs_attrs__")
            body = b"".join(
                encode(field.name) + encode(getattr(value, field.name)) for field in fields
            )
            return b"A" + _class_name(value) + b"[" + body + b"]"
        case _ if callable(value) and hasattr(value, "__qualname__"):
            # A function parameter (op_from_graph's pullback override) is named by where it
            # is defined. Two lambdas of one scope share a name; that is harmless because
            # such functions only build derivative graphs, never what the op computes.
            name = f"{getattr(value, '__module__', None)}.{getattr(value, '__qualname__')}"
            return b"c" + encode(name)
    raise TypeError(
        f"cannot digest a parameter of type {type(value).__qualname__} ({value!r}); "
        "op fields must be plain values, tuples, enums, arrays, types, graphs or attrs classes"
    )


def _class_name(value: object) -> bytes:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}".encode()


def graph_digest(graph: Graph, *, constant_values: bool = True) -> str:
    """The sha256 hex digest of `graph`'s canonical serialization.

    With `constant_values=False` constants count by dtype and shape only: the *structure*
    digest, which names compiled code (constants are passed to it as arguments).
    """
    hasher = hashlib.sha256(FORMAT_VERSION + (b"" if constant_values else b"-structure"))
    hasher.update(encode_value((graph.dedup_nodes, tuple(v.type for v in graph.inputs))))
    references: dict[Variable, bytes] = {variable: b"i%d;" % i for i, variable in enumerate(graph.inputs)}
    op_encodings: dict[Hashable, bytes] = {}  # keyed exactly: Scale(-0.0) is not Scale(0.0)
    constants = 0

    def reference(variable: Variable) -> bytes:
        nonlocal constants
        found = references.get(variable)
        if found is None:
            if not isinstance(variable, Constant):
                raise ValueError(f"{variable!r} is not computed by the graph being digested")
            data = variable.data
            hasher.update(
                b"C"
                + (
                    encode_value(data)
                    if constant_values
                    else encode_value((data.dtype.name, tuple(data.shape)))
                )
            )
            found = references[variable] = b"c%d;" % constants
            constants += 1
        return found

    for number, node in enumerate(graph.nodes):
        op_key = exact_key(node.op)
        encoded_op = op_encodings.get(op_key)
        if encoded_op is None:
            encoded_op = encode_value(node.op, constant_values=constant_values)
            op_encodings[op_key] = encoded_op
        input_references = b"".join(reference(input_) for input_ in node.inputs)
        hasher.update(b"n%d;" % node.position + encoded_op + b"(" + input_references + b")")
        for output in node.outputs:
            references[output] = b"o%d,%d;" % (number, output.index)
    hasher.update(b"->" + b"".join(reference(output) for output in graph.outputs))
    return hasher.hexdigest()
